/* The store relay: in vdsql's HDF5 helper process (which may open no file and no
 * socket), every read the store would make is asked of the parent over the helper's
 * channel instead, and the parent makes it with its own store: its credentials, its
 * cache, its counters, its rules. The client side (relay_client.c) is what store.c and
 * the file backend call once vd_relay_install has run; the serving side (relay_serve.c)
 * is what the parent runs for each request while it waits for the helper. */
#ifndef VD_RELAY_H
#define VD_RELAY_H

#include <stdint.h>
#include <sys/stat.h>

#include "store.h"
#include "util/chan.h"

/* Requests of the helper (1..15); the parent answers each but CACHE_PUT with ANSWER. */
enum {
  VD_RELAY_GET = 1,   /* vd_get_many: every request in one message, answered in one */
  VD_RELAY_HEAD,      /* vd_head */
  VD_RELAY_CACHE_GET, /* vd_cache_lookup / vd_cache_peek of a whole VTKHDF file */
  VD_RELAY_CACHE_PUT, /* vd_cache_store of one: no answer */
  VD_RELAY_OPEN,      /* vd_file_open_regular (read-only): the descriptor comes back */
  VD_RELAY_EXISTS,    /* vd_file_exists */
  VD_RELAY_ANSWER = 15
};
#define VD_RELAY_MAX 15
/* The longest answer the helper takes: whole bodies of a get_many (bounded by max_alloc
 * each on the parent's side). */
#define VD_RELAY_MAX_MSG ((size_t)1 << 31)

/* Helper side: from now on this process's store reads go over sock. */
void vd_relay_install(int sock);
int vd_relay_on(void);
/* What store.c and the file backend call when the relay is on. */
vd_code vd_relay_get_many(vd_getreq *reqs, int n);
vd_code vd_relay_head(const char *url, vd_objinfo *info, vd_err *err);
vd_blob *vd_relay_cache_get(const char *url, const char *key, int count);
void vd_relay_cache_put(const char *key, const vd_blob *b);
vd_code vd_relay_open(const char *path, int *fd, struct stat *st, vd_err *err);
int vd_relay_exists(const char *path);

/* Parent side: answers the helper's request m on sock with ctx's store. check(arg, url,
 * local, err) says whether the helper may have url read (the rule of the file it is
 * reading; local: a path for VD_RELAY_OPEN / EXISTS); a refused request is answered with
 * that error, never made. 0, or -1 when the answer could not be sent. */
typedef vd_code (*vd_relay_check)(void *arg, const char *url, int local, vd_err *err);
int vd_relay_serve(vd_ctx *ctx, int sock, const vd_msg *m, vd_relay_check check, void *arg);

/* The objinfo codec both sides share */
int vd_relay_put_info(vd_buf *b, const vd_objinfo *i);
void vd_relay_get_info(vd_rd *r, vd_objinfo *i);

#endif
