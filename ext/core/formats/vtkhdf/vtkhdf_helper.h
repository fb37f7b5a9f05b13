/* The VTKHDF reader run in a helper process: libhdf5 never parses a file vdsql did not
 * write itself inside the process that loaded vdsql (the sqlite3 shell, a PostgreSQL
 * backend). Each vd_ctx has one long-lived helper (build/vdsql-h5helper, installed next
 * to the module), spawned on first use by posix_spawn; it runs the reader of vtkhdf.h
 * unchanged, and every byte it reads it asks of this process, which makes the request
 * with its own store (credentials, cache, allowed_hosts, counters) under the rule of the
 * file being read (store/relay.h). The helper opens no file and no socket, runs with
 * no_new_privs, a memory limit and a seccomp filter (ext/h5helper/). When it dies the
 * call fails naming the file and the signal, and the next call spawns a new one; while
 * this process waits for it, it asks ctx's interrupt check, and on an interrupt kills
 * the helper and returns VD_INTERRUPTED.
 *
 * The API mirrors vh_open / vh_rows_*: the doc comes back filled as vh_open fills it
 * (its partition rows only through vhp_rows). Docs design: docs/vtkhdf.md. */
#ifndef VD_VTKHDF_HELPER_H
#define VD_VTKHDF_HELPER_H

#include <stdint.h>

#include "util/chan.h"
#include "vtkhdf.h"

#define VHP_BATCH 65536 /* partition rows the helper sends at a time, at most (about 4 bytes each) */
#define VHP_FIRST 64   /* in the first batch (then twice as many each time): a LIMIT reads no more than before */

typedef struct vhp_rows {
  vh_doc *doc;
  uint32_t handle;  /* the helper's doc, 0: none (not VH_PARTS, or closed) */
  uint64_t gen;     /* which helper holds it (a new one after a death knows nothing of it) */
  int eof, heof;    /* no more rows here / none left in the helper */
  const vh_part *cur;
  vh_part row;      /* the current row, decoded in place from the batch (each row is sent */
  vh_topo topo;     /* as what differs from the one before: vtkhdf_wire.h) */
  uint32_t seg;     /* its leaf segment, and whether it was streamed */
  int streamed;
  int held;         /* row decoded but not handed out yet (a skip read one row past its leaf) */
  int broken;       /* a row of the batch did not decode: the next call says so */
  uint32_t left;    /* rows of the batch not decoded yet, from rd on */
  vd_rd rd;
  vd_code pend;     /* the error that ended the helper's batch, after its rows */
  uint32_t pend_seg;
  char pend_msg[sizeof(((vd_err *)0)->msg)];
  int skip;         /* the helper is to drop the rest of leaf skip_seg first */
  uint32_t skip_seg;
  int drop;         /* rows of leaf skip_seg still to come (asked for before the skip): dropped */
  uint32_t want;    /* rows to ask for next */
  void *ahead;      /* the batch being handed out, and the next one asked for before it is needed (vtkhdf_proxy.c) */
} vhp_rows;

/* vh_open in the helper: doc as vh_open fills it but for its partition rows, which rows
 * (with VH_PARTS) walks. Close both with vhp_close, also after a failure. */
vd_code vhp_open(vd_ctx *ctx, const char *url, unsigned what, vh_doc *doc, vhp_rows *rows, vd_err *err);
vd_code vhp_rows_next(vhp_rows *r, vd_err *err);
int vhp_rows_streamed(const vhp_rows *r);
void vhp_rows_skip_leaf(vhp_rows *r);
void vhp_close(vh_doc *doc, vhp_rows *rows);

/* Other calls through the same helper (vtkhdf_main's, vtkhdf_main_proxy.c). A request
 * starts with vhp_put_env (this context's settings without credentials, the current
 * directory); vhp_call sends it as type for the local file path (shown in errors) and
 * waits: VD_OK with ans->rd on the answer after its head, else the helper's error or its
 * death. vhp_call_done gives the answer back; vhp_malformed, for an answer that does not
 * decode, stops the helper and says so. */
typedef struct vhp_ans {
  vd_msg a;
  vd_rd rd;
} vhp_ans;
int vhp_put_env(vd_ctx *ctx, vd_buf *q);
vd_code vhp_call(vd_ctx *ctx, const char *path, const char *shown, uint32_t type, const vd_buf *q, vhp_ans *ans,
                 vd_err *err);
void vhp_call_done(vd_ctx *ctx, vhp_ans *ans);
vd_code vhp_malformed(vd_ctx *ctx, const char *shown, vd_err *err);

/* The helper's side: serves requests on sock until it closes (ext/h5helper runs it). */
int vhp_serve(int sock);

#endif
