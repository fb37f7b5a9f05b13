/* The HDF5 helper's side of the VTKHDF reader (vtkhdf_helper.h): vh_open and the row
 * walk run here, on this process's own vd_ctx, whose store asks the parent for every
 * byte (store/relay.h); the results go back encoded (vtkhdf_wire.h). One request at a
 * time: the parent waits for each answer. */
#include "vtkhdf_helper.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/relay.h"
#include "vtkhdf_main_wire.h"
#include "vtkhdf_wire.h"

#define MAX_DOCS 256 /* docs open at once (cursors of one statement, or a few) */

typedef struct hdoc {
  uint32_t handle;
  vh_doc doc;
  vh_rows rows;
  vhw_ids ids;
} hdoc;

static hdoc *docs[MAX_DOCS];
static uint32_t next_handle = 1;
static vd_ctx *ctx;
static vd_stats sent[VD_BE_COUNT]; /* the counters as last reported */

static hdoc *find(uint32_t h) {
  for (int i = 0; i < MAX_DOCS; i++)
    if (docs[i] && docs[i]->handle == h) return docs[i];
  return NULL;
}

static void drop(hdoc *d) {
  for (int i = 0; i < MAX_DOCS; i++)
    if (docs[i] == d) docs[i] = NULL;
  vh_doc_free(&d->doc);
  vhw_ids_free(&d->ids);
  free(d);
}

/* The answer's head: code, message, what the counters gained since the last answer */
static int head(vd_buf *b, vd_code rc, const vd_err *err) {
  int bad = vd_wr_u32(b, (uint32_t)rc) || vd_wr_str(b, rc ? err->msg : "");
  for (int k = 0; k < VD_BE_COUNT && !bad; k++) {
    vd_stats *s = &ctx->stats[k], *o = &sent[k];
    bad = vd_wr_u64(b, (uint64_t)(s->requests - o->requests)) || vd_wr_u64(b, (uint64_t)(s->bytes - o->bytes)) ||
          vd_wr_u64(b, (uint64_t)(s->retries - o->retries)) || vd_wr_u64(b, (uint64_t)(s->cache_hits - o->cache_hits));
    *o = *s;
  }
  return bad ? -1 : 0;
}

static int fail(int sock, vd_code rc, const vd_err *err) {
  vd_buf b = {0};
  int k = head(&b, rc, err) || vd_chan_send(sock, VHW_DONE, b.data, b.len, -1) ? -1 : 0;
  vd_buf_free(&b);
  return k;
}

/* A request's head (vhp_put_env): the parent's settings and current directory taken on */
static vd_code take_env(vd_rd *r, vd_err *err) {
  size_t n;
  const void *cfg = vd_rd_bytes(r, &n);
  char *cwd = vd_rd_str(r);
  vd_code rc = VD_OK;
  if (r->bad || n != sizeof ctx->cfg) rc = vd_fail(err, VD_ERROR, "a malformed request to the HDF5 helper");
  else memcpy(&ctx->cfg, cfg, sizeof ctx->cfg);
  /* the parent's current directory, for relative paths (HDF5 joins sub-file names to it) */
  if (!rc && cwd && *cwd && chdir(cwd)) rc = vd_fail(err, VD_IO, "the HDF5 helper cannot use the current directory");
  free(cwd);
  return rc;
}

static int do_open(int sock, vd_rd *r) {
  vd_err err;
  vd_code rc = take_env(r, &err);
  char *url = vd_rd_str(r);
  unsigned what = vd_rd_u32(r);
  int slot = -1;
  for (int i = 0; i < MAX_DOCS && slot < 0; i++)
    if (!docs[i]) slot = i;
  hdoc *d = NULL;
  if (!rc && (r->bad || !url)) rc = vd_fail(&err, VD_ERROR, "a malformed request to the HDF5 helper");
  else if (!rc && slot < 0) rc = vd_fail(&err, VD_BUSY, "%s: too many VTKHDF files open at once", url);
  else if (!rc && !(d = calloc(1, sizeof *d))) rc = vd_nomem(&err);
  if (!rc) rc = vh_open(ctx, url, what, &d->doc, &err);
  free(url);
  if (rc) {
    if (d) vh_doc_free(&d->doc), free(d);
    return fail(sock, rc, &err);
  }
  d->rows.doc = &d->doc;
  vd_buf b = {0};
  int keep = (what & VH_PARTS) != 0;
  if (keep) d->handle = next_handle++, docs[slot] = d;
  int bad = head(&b, VD_OK, &err) || vhw_put_doc(&b, &d->ids, &d->doc) || vd_wr_u32(&b, d->handle);
  if (!keep) vh_doc_free(&d->doc), vhw_ids_free(&d->ids), free(d);
  if (bad) {
    vd_buf_free(&b);
    if (keep) drop(d);
    return fail(sock, vd_nomem(&err), &err);
  }
  int k = vd_chan_send(sock, VHW_DONE, b.data, b.len, -1);
  vd_buf_free(&b);
  return k;
}

static int do_rows(int sock, vd_rd *r) {
  vd_err err;
  uint32_t h = vd_rd_u32(r), max = vd_rd_u32(r), skip = vd_rd_u32(r), skip_seg = vd_rd_u32(r);
  hdoc *d = r->bad ? NULL : find(h);
  if (!d) return fail(sock, vd_fail(&err, VD_ERROR, "the HDF5 helper has no such file open"), &err);
  vh_rows *w = &d->rows;
  if (skip && vh_rows_streamed(w) && (uint32_t)w->seg == skip_seg) vh_rows_skip_leaf(w);
  static vd_buf rows, b; /* kept between batches: their pages stay mapped */
  rows.len = b.len = 0;
  uint32_t n = 0, seg = 0;
  int eof = 0, bad = 0;
  vd_code rc = VD_OK;
  if (max > VHP_BATCH) max = VHP_BATCH;
  vhw_put_rows_start(&d->ids);
  while (n < max && !bad) {
    if ((rc = vh_rows_next(w, &err))) {
      vh_err_redact(&err);
      seg = (uint32_t)w->seg;
      break;
    }
    if (w->eof) {
      eof = 1;
      break;
    }
    bad = vhw_put_row(&rows, &d->ids, w->cur, (uint32_t)w->seg, vh_rows_streamed(w));
    n++;
  }
  if (!bad) bad = head(&b, rc, &err) || vd_wr_u32(&b, seg) || vd_wr_u32(&b, n) || vd_wr_u32(&b, (uint32_t)eof) ||
                  (rows.len && vd_buf_append(&b, rows.data, rows.len));
  if (bad) return fail(sock, vd_nomem(&err), &err);
  return vd_chan_send(sock, VHW_DONE, b.data, b.len, -1);
}

/* vtkhdf_main's reads of files it did not write: a part's vm_inspect, a main file's members */
static int do_main(int sock, uint32_t type, vd_rd *r) {
  vd_err err;
  vd_code rc = take_env(r, &err);
  char *file = vd_rd_str(r), *shown = type == VHW_MAIN_LOAD ? vd_rd_str(r) : NULL;
  uint32_t lay = vd_rd_u32(r);
  if (!rc && (r->bad || !file || lay > VM_COMPOSITE || (type == VHW_MAIN_LOAD && !shown)))
    rc = vd_fail(&err, VD_ERROR, "a malformed request to the HDF5 helper");
  vm_info *in = NULL;
  vm_found *f = NULL;
  int nf = 0;
  if (!rc && type == VHW_MAIN_INSPECT) rc = vm_inspect_here(ctx, (vm_layout)lay, file, &in, &err);
  else if (!rc) rc = vm_load_scan(ctx, file, shown, (vm_layout)lay, &f, &nf, &err);
  free(file), free(shown);
  vd_buf b = {0};
  int bad = head(&b, rc, &err) || (!rc && (in ? vmw_put_info(&b, in) : vmw_put_found(&b, f, nf)));
  vm_info_free(in);
  vm_found_free(f, nf);
  int k = bad ? fail(sock, vd_nomem(&err), &err) : vd_chan_send(sock, VHW_DONE, b.data, b.len, -1);
  vd_buf_free(&b);
  return k;
}

int vhp_serve(int sock) {
  if (!(ctx = vd_ctx_new())) return 1;
  ctx->cfg.env_credentials = 0;
  vd_relay_install(sock);
  vd_msg m = {0};
  for (;;) {
    if (vd_chan_recv(sock, (size_t)1 << 20, &m, NULL, NULL)) return 0; /* the parent has gone */
    vd_rd r = {m.body.data, m.body.data + m.body.len, 0};
    int k = 0;
    if (m.type == VHW_OPEN) {
      k = do_open(sock, &r);
    } else if (m.type == VHW_ROWS) {
      k = do_rows(sock, &r);
    } else if (m.type == VHW_MAIN_INSPECT || m.type == VHW_MAIN_LOAD) {
      k = do_main(sock, m.type, &r);
    } else if (m.type == VHW_CLOSE) {
      hdoc *d = find(vd_rd_u32(&r));
      if (d) drop(d);
    } else {
      k = -1;
    }
    if (m.fd >= 0) close(m.fd), m.fd = -1;
    if (k) return 1;
  }
}
