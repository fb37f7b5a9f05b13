/* A message channel over one end of a socketpair, between vdsql and its HDF5 helper
 * process: each message is a type, a length and that many bytes, and may carry file
 * descriptors. Neither side trusts the other's lengths: a message longer than the
 * receiver's bound is an error, not an allocation. Sends never raise SIGPIPE (a helper
 * that died must not end the process that spawned it). */
#ifndef VD_CHAN_H
#define VD_CHAN_H

#include <stddef.h>
#include <stdint.h>

#include "vd_buf.h"

typedef struct vd_msg {
  uint32_t type;
  vd_buf body;
  int fd; /* a descriptor that came with it, -1 none (the receiver closes it) */
} vd_msg;

/* Sends one message (body[0, len)) with fd attached (-1: none). 0, or -1 with errno. */
int vd_chan_send(int sock, uint32_t type, const void *body, size_t len, int fd);
/* Waits for one message, at most max bytes long, into *m, whose body's room is used
 * again (start from vd_msg m = {0}; vd_msg_free when done). While nothing has arrived it calls
 * idle(arg) every 100 ms (NULL: never), and stops with 1 when it returns nonzero.
 * 0: *m filled (free with vd_msg_free); -1: the other end closed, or a broken or
 * over-long message (errno says which: EPIPE / EPROTO / EMSGSIZE / ENOMEM). */
int vd_chan_recv(int sock, size_t max, vd_msg *m, int (*idle)(void *arg), void *arg);
void vd_msg_free(vd_msg *m);

/* Little-endian fields into a buffer, and out of one with bounds checked: the reader
 * sets bad instead of reading past the end, and every later read gives zeros. */
typedef struct vd_rd {
  const unsigned char *p, *end;
  int bad;
} vd_rd;
int vd_wr_u32(vd_buf *b, uint32_t v);
int vd_wr_u64(vd_buf *b, uint64_t v);
int vd_wr_f64(vd_buf *b, double v);
/* A string: its length + 1 (0 for NULL), then its bytes */
int vd_wr_str(vd_buf *b, const char *s);
int vd_wr_bytes(vd_buf *b, const void *p, size_t n); /* length, then the bytes */
uint32_t vd_rd_u32(vd_rd *r);
uint64_t vd_rd_u64(vd_rd *r);
double vd_rd_f64(vd_rd *r);
/* A string put by vd_wr_str, malloc'd (NULL for NULL; bad set on a malformed one or
 * no memory) */
char *vd_rd_str(vd_rd *r);
/* Bytes put by vd_wr_bytes, pointing into the message (not copied) */
const void *vd_rd_bytes(vd_rd *r, size_t *n);

#endif
