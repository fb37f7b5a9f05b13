/* The parent's side of the VTKHDF reader in the HDF5 helper (vtkhdf_helper.h): the
 * helper's life (spawned on first use, its death told apart from an error, killed on an
 * interrupt), one call at a time over its channel, the store requests it makes on the
 * way answered under the rule of the file being read, and the answers decoded. A helper
 * that dies or talks nonsense was brought there by the file it parsed: VD_INVALID, as for
 * any malformed file (in PostgreSQL 22023, not an internal error). */
#include "vtkhdf_helper.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/relay.h"
#include "store/store.h"
#include "util/subproc.h"
#include "vtkhdf_vfd.h"
#include "vtkhdf_wire.h"

#define HELPER "vdsql-h5helper"
#define MAX_ANSWER ((size_t)1 << 31) /* a doc's arrays: bounded by the helper's own memory limit */

typedef struct proc {
  pid_t pid; /* 0: none running */
  int sock;
  uint64_t gen; /* counts spawns: a doc of an earlier helper is gone */
  int64_t limit;
  vd_buf keep; /* the room of the last answer, used again for the next */
  struct vhp_rows *inflight; /* whose batch the helper is making ahead, unasked for yet */
} proc;

/* A cursor's batches: the one being handed out (cur: rows decoded from it one at a time)
 * and the next, asked for ahead: while the parent hands out the rows it has, the helper
 * makes the next ones (the two processes work at once instead of in turn). */
typedef struct ahead {
  int state; /* 0 none, 1 asked (the answer not read yet), 2 read (or failed: rc) */
  vd_code rc, hrc;
  vd_err err, herr;
  vd_msg a;
  vd_rd rd;
  vd_msg cur; /* its rows: vhp_rows.rd */
} ahead;

static void proc_stop(proc *p, char *how, size_t n) {
  if (!p->pid) return;
  if (p->inflight) { /* the batch asked for ahead will never come */
    ahead *x = p->inflight->ahead;
    x->state = 2, x->rc = vd_fail(&x->err, VD_INVALID, "%s: the HDF5 helper process reading this file has ended",
                                  p->inflight->doc->shown);
    p->inflight = NULL;
  }
  close(p->sock);
  /* a helper whose channel closed exits at once: a moment to say how, then SIGKILL */
  vd_subproc_end(p->pid, how ? 2000 : 0, how ? how : (char[32]){0}, how ? n : 32);
  p->pid = 0, p->sock = -1;
}

static void proc_free(void *arg) {
  proc *p = arg;
  if (!p) return;
  proc_stop(p, NULL, 0);
  vd_buf_free(&p->keep);
  free(p);
}

/* The helper's memory: HDF5 and the doc it builds, bounded by max_alloc */
static int64_t limit_of(const vd_ctx *ctx) {
  int64_t m = ctx->cfg.max_alloc;
  return ((int64_t)1 << 30) + (m > ((int64_t)1 << 36) ? ((int64_t)1 << 38) : 4 * m);
}

static proc *proc_get(vd_ctx *ctx, const char *shown, vd_err *err) {
  proc *p = ctx->h5helper;
  if (!p) {
    if (!(p = calloc(1, sizeof *p))) return vd_nomem(err), NULL;
    p->sock = -1;
    ctx->h5helper = p;
    ctx->h5helper_free = proc_free;
  }
  if (p->pid && p->limit != limit_of(ctx)) proc_stop(p, NULL, 0); /* max_alloc changed: a helper with the new bound */
  if (p->pid && !p->inflight && waitpid(p->pid, &(int){0}, WNOHANG) == p->pid) { /* ended while idle (killed): */
    close(p->sock);                                                            /* nothing of a call was lost */
    p->pid = 0, p->sock = -1;
  }
  if (p->pid) return p;
  char path[4096], lim[32], ppid[32];
  if (vd_subproc_path(HELPER, path, sizeof path))
    return vd_fail(err, VD_ERROR, "%s: cannot read VTKHDF files: the HDF5 helper " HELPER " is not installed next to the vdsql module", shown), NULL;
  p->limit = limit_of(ctx);
  snprintf(lim, sizeof lim, "%lld", (long long)p->limit);
  snprintf(ppid, sizeof ppid, "%ld", (long)getpid());
  char *argv[] = {HELPER, lim, ppid, NULL};
  int e = vd_subproc_start(path, argv, &p->pid, &p->sock);
  if (e) {
    p->pid = 0;
    return vd_fail(err, VD_ERROR, "%s: cannot start the HDF5 helper %s: %s", shown, path, strerror(e)), NULL;
  }
  p->gen++;
  return p;
}

/* The rule of the file being read, for each request the helper makes: a remote file's
 * reader reaches its own URL and what vh_url_check allows (never a local file); a local
 * file's reader reaches local files (as HDF5 follows links), never a URL. */
typedef struct rule {
  vd_ctx *ctx;
  const char *base;
  int remote;
} rule;

static vd_code check(void *arg, const char *url, int local, vd_err *err) {
  rule *r = arg;
  char shown[600];
  if (local != !r->remote || (!local && !vh_is_url(url))) {
    vh_show(url, shown, sizeof shown);
    return vd_fail(err, VD_UNSUPPORTED, "%s: not reachable from the file being read", shown);
  }
  return local ? VD_OK : vh_url_check(r->ctx, r->base, url, err);
}

static int interrupted(void *arg) {
  vd_err e;
  return vd_ctx_check_interrupt(arg, &e) != VD_OK;
}

/* Waits for the answer to what was sent (*a, VHW_DONE), serving the helper's store
 * requests meanwhile. VD_OK when it came: *rd reads on after its head, which gave the
 * helper's own outcome (*hrc, herr) and counters; the caller gives *a back. Otherwise
 * the helper died, was interrupted (then killed) or broke the protocol (then killed):
 * that error, *a empty. */
static vd_code wait_answer(vd_ctx *ctx, proc *p, const rule *ru, const char *shown, vd_msg *a, vd_rd *rd,
                           vd_code *hrc, vd_err *herr, vd_err *err) {
  char how[64];
  for (;;) {
    int k = vd_chan_recv(p->sock, MAX_ANSWER, a, interrupted, ctx);
    if (k == 1) {
      vd_msg_free(a);
      proc_stop(p, NULL, 0);
      return vd_fail(err, VD_INTERRUPTED, "%s: interrupted", shown);
    }
    if (k && (errno == EPIPE || errno == ECONNRESET)) goto died;
    if (k) goto broken;
    if (a->type == VHW_DONE) break;
    int bad = a->type < 1 || a->type > VD_RELAY_MAX || vd_relay_serve(ctx, p->sock, a, check, (void *)ru);
    if (a->fd >= 0) close(a->fd), a->fd = -1; /* the helper hands vdsql no descriptor */
    if (vd_ctx_check_interrupt(ctx, err)) return vd_msg_free(a), proc_stop(p, NULL, 0), vd_err_prefix(err, "%s", shown);
    if (bad) goto died;
  }
  *rd = (vd_rd){a->body.data, a->body.data + a->body.len, 0};
  *hrc = (vd_code)vd_rd_u32(rd);
  char *msg = vd_rd_str(rd);
  for (int k = 0; k < VD_BE_COUNT; k++) {
    vd_stats *s = &ctx->stats[k];
    s->requests += (int64_t)vd_rd_u64(rd), s->bytes += (int64_t)vd_rd_u64(rd);
    s->retries += (int64_t)vd_rd_u64(rd), s->cache_hits += (int64_t)vd_rd_u64(rd);
  }
  if (rd->bad || *hrc > VD_INTERRUPTED) {
    free(msg);
    goto broken;
  }
  vd_err_clear(herr);
  if (*hrc) {
    vd_fail(herr, *hrc, "%s", msg ? msg : "");
    vh_err_redact(herr);
  }
  free(msg);
  return VD_OK;
broken:
  vd_msg_free(a);
  proc_stop(p, NULL, 0);
  return vd_fail(err, VD_INVALID, "%s: the HDF5 helper process sent a malformed answer reading this file", shown);
died:
  vd_msg_free(a);
  proc_stop(p, how, sizeof how);
  return vd_fail(err, VD_INVALID, "%s: the HDF5 helper process died (%s) reading this file", shown, how);
}

/* Reads the answer to a batch asked for ahead, so that the channel is free */
static void drain(proc *p) {
  vhp_rows *w = p->inflight;
  if (!w) return;
  p->inflight = NULL;
  ahead *x = w->ahead;
  rule ru = {w->doc->ctx, w->doc->path, w->doc->remote};
  x->rc = wait_answer(w->doc->ctx, p, &ru, w->doc->shown, &x->a, &x->rd, &x->hrc, &x->herr, &x->err);
  x->state = 2;
}

/* Sends a request (its answer is waited for by the caller): 0, or the helper has gone */
static vd_code send_req(proc *p, const char *shown, uint32_t type, const vd_buf *q, vd_msg *a, vd_err *err) {
  char how[64];
  drain(p);
  memset(a, 0, sizeof *a);
  a->fd = -1;
  a->body = p->keep;
  memset(&p->keep, 0, sizeof p->keep);
  if (!p->pid) return vd_fail(err, VD_INVALID, "%s: the HDF5 helper process has ended", shown);
  if (!vd_chan_send(p->sock, type, q->data, q->len, -1)) return VD_OK;
  vd_msg_free(a);
  proc_stop(p, how, sizeof how);
  return vd_fail(err, VD_INVALID, "%s: the HDF5 helper process died (%s) reading this file", shown, how);
}

static vd_code call(vd_ctx *ctx, proc *p, const rule *ru, const char *shown, uint32_t type, const vd_buf *q, vd_msg *a,
                    vd_rd *rd, vd_code *hrc, vd_err *herr, vd_err *err) {
  vd_code rc = send_req(p, shown, type, q, a, err);
  return rc ? rc : wait_answer(ctx, p, ru, shown, a, rd, hrc, herr, err);
}

/* The answer's room back to the helper's record, for the next answer */
static void give_back(proc *p, vd_msg *a) {
  if (a->fd >= 0) close(a->fd), a->fd = -1;
  if (!p->keep.data && a->body.cap <= ((size_t)16 << 20)) {
    p->keep = a->body;
    memset(&a->body, 0, sizeof a->body);
  }
  vd_msg_free(a);
}

static void rows_init(vhp_rows *r, vh_doc *doc) {
  memset(r, 0, sizeof *r);
  r->doc = doc;
  r->eof = r->heof = 1;
}

int vhp_put_env(vd_ctx *ctx, vd_buf *q) {
  /* the settings the reader needs, none of the credentials: the parent makes the requests */
  vd_config cfg = ctx->cfg;
  memset(cfg.s3_access_key_id, 0, sizeof cfg.s3_access_key_id);
  memset(cfg.s3_secret_access_key, 0, sizeof cfg.s3_secret_access_key);
  memset(cfg.s3_session_token, 0, sizeof cfg.s3_session_token);
  memset(cfg.azure_connection_string, 0, sizeof cfg.azure_connection_string);
  memset(cfg.azure_key, 0, sizeof cfg.azure_key);
  memset(cfg.azure_sas_token, 0, sizeof cfg.azure_sas_token);
  cfg.env_credentials = 0;
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
  int bad = vd_wr_bytes(q, &cfg, sizeof cfg) || vd_wr_str(q, cwd);
  memset(&cfg, 0, sizeof cfg);
  return bad ? -1 : 0;
}

vd_code vhp_call(vd_ctx *ctx, const char *path, const char *shown, uint32_t type, const vd_buf *q, vhp_ans *ans,
                 vd_err *err) {
  memset(ans, 0, sizeof *ans);
  ans->a.fd = -1;
  proc *p = proc_get(ctx, shown, err);
  if (!p) return err->code;
  rule ru = {ctx, path, 0};
  vd_code hrc, rc = call(ctx, p, &ru, shown, type, q, &ans->a, &ans->rd, &hrc, err, err);
  if (rc) return rc;
  if (hrc) return give_back(p, &ans->a), hrc;
  return VD_OK;
}

void vhp_call_done(vd_ctx *ctx, vhp_ans *ans) {
  proc *p = ctx->h5helper;
  if (p) give_back(p, &ans->a);
  else vd_msg_free(&ans->a);
}

vd_code vhp_malformed(vd_ctx *ctx, const char *shown, vd_err *err) {
  proc *p = ctx->h5helper;
  if (p) proc_stop(p, NULL, 0);
  return vd_fail(err, VD_INVALID, "%s: the HDF5 helper process sent a malformed answer reading this file", shown);
}

vd_code vhp_open(vd_ctx *ctx, const char *url, unsigned what, vh_doc *doc, vhp_rows *rows, vd_err *err) {
  memset(doc, 0, sizeof *doc);
  doc->file = -1;
  doc->ctx = ctx;
  rows_init(rows, doc);
  if (!*url) return vd_fail(err, VD_INVALID, "vtkhdf: the file path is empty");
  int remote = doc->remote = vh_is_url(url);
  vd_code rc;
  if (!remote && (rc = vd_url_check(url, err))) return rc;
  doc->path = remote ? strdup(url) : vd_url_path(url);
  if (!doc->path || !(doc->shown = vh_shown(doc->path))) return vd_nomem(err);
  if (!*doc->path) return vd_fail(err, VD_INVALID, "vtkhdf: the file path is empty");
  if (!remote && (rc = vd_file_check_regular(doc->path, err))) return rc;
  proc *p = proc_get(ctx, doc->shown, err);
  if (!p) return err->code;
  vd_buf q = {0};
  if (vhp_put_env(ctx, &q) || vd_wr_str(&q, url) || vd_wr_u32(&q, what)) return vd_buf_free(&q), vd_nomem(err);
  rule ru = {ctx, doc->path, remote};
  vd_msg a;
  vd_rd r;
  vd_code hrc;
  rc = call(ctx, p, &ru, doc->shown, VHW_OPEN, &q, &a, &r, &hrc, err, err);
  vd_buf_free(&q);
  if (rc) return rc;
  if (hrc) return give_back(p, &a), hrc;
  vhw_get_doc(&r, doc);
  uint32_t h = vd_rd_u32(&r);
  give_back(p, &a);
  if (r.bad) {
    proc_stop(p, NULL, 0);
    return vd_fail(err, VD_INVALID, "%s: the HDF5 helper process sent a malformed answer reading this file", doc->shown);
  }
  if (h) {
    rows->handle = h, rows->gen = p->gen, rows->eof = rows->heof = 0;
    ahead *x = rows->ahead = calloc(1, sizeof(ahead));
    if (!x) return vd_nomem(err);
    x->a.fd = x->cur.fd = -1;
    rows->want = VHP_FIRST;
  }
  return VD_OK;
}

static vd_code ask_rows(proc *p, vhp_rows *w, vd_msg *a, vd_err *err) {
  vd_buf q = {0};
  if (vd_wr_u32(&q, w->handle) || vd_wr_u32(&q, w->want) || vd_wr_u32(&q, (uint32_t)w->skip) || vd_wr_u32(&q, w->skip_seg))
    return vd_buf_free(&q), vd_nomem(err);
  w->skip = 0;
  vd_code rc = send_req(p, w->doc->shown, VHW_ROWS, &q, a, err);
  vd_buf_free(&q);
  return rc;
}

/* The next row of the batch into w->row: 0, or -1 when it does not decode */
static int next_row(vhp_rows *w) {
  vhw_get_row(&w->rd, w->doc, &w->row, &w->topo, &w->seg, &w->streamed);
  w->left--;
  if (w->rd.bad) w->left = 0, w->broken = 1;
  return w->rd.bad ? -1 : 0;
}

/* Decodes past the batch's rows of leaf seg; the first row of another leaf is held */
static void pass_leaf(vhp_rows *w, uint32_t seg) {
  while (w->left && !next_row(w))
    if (w->seg != seg) {
      w->held = 1;
      return;
    }
}

/* The helper's next batch, its rows decoded as they are handed out (and the error that
 * ended it into pend); the one after it asked for at once once batches are full-sized (a
 * scan, not a LIMIT) */
static vd_code fetch(vhp_rows *w, vd_err *err) {
  vh_doc *d = w->doc;
  proc *p = d->ctx->h5helper;
  ahead *x = w->ahead;
  if (!p || !p->pid || p->gen != w->gen)
    return vd_fail(err, VD_INVALID, "%s: the HDF5 helper process reading this file has ended", d->shown);
  if (x->state == 1) drain(p); /* the batch asked for ahead */
  if (!x->state) {
    rule ru = {d->ctx, d->path, d->remote};
    vd_code rc = ask_rows(p, w, &x->a, &x->err);
    x->rc = rc ? rc : wait_answer(d->ctx, p, &ru, d->shown, &x->a, &x->rd, &x->hrc, &x->herr, &x->err);
  }
  x->state = 0;
  if (x->rc) return *err = x->err, x->rc;
  give_back(p, &x->cur); /* the batch handed out: its room takes the next answer */
  x->cur = x->a, w->rd = x->rd;
  memset(&x->a, 0, sizeof x->a);
  x->a.fd = -1;
  vd_rd *r = &w->rd;
  uint32_t seg = vd_rd_u32(r), n = vd_rd_u32(r), eof = vd_rd_u32(r);
  if (n > VHP_BATCH || n > (size_t)(r->end - r->p)) r->bad = 1; /* a row takes a byte at least */
  if (r->bad) return vhp_malformed(d->ctx, d->shown, err);
  w->left = n, w->held = 0;
  vhw_get_rows_start(&w->row, &w->seg, &w->streamed);
  w->heof = eof != 0;
  if (w->drop) { /* a skipped leaf's rows made before the helper heard of the skip */
    pass_leaf(w, w->skip_seg);
    if (w->broken) return vhp_malformed(d->ctx, d->shown, err);
    if (w->held || w->heof || x->hrc) w->drop = 0;
  }
  if (x->hrc) {
    w->pend = x->hrc, w->pend_seg = seg;
    snprintf(w->pend_msg, sizeof w->pend_msg, "%s", x->herr.msg);
    if (w->drop && seg == w->skip_seg) w->pend = VD_OK;
  }
  if (w->want == VHP_BATCH && !w->heof && !w->pend && n == VHP_BATCH && !p->inflight) {
    if (!ask_rows(p, w, &x->a, &x->err)) x->state = 1, p->inflight = w; /* a failed send: the next fetch reports it */
  }
  if (w->want < VHP_BATCH) w->want *= 2;
  return VD_OK;
}

vd_code vhp_rows_next(vhp_rows *w, vd_err *err) {
  if (w->left && !w->held && !next_row(w)) { /* the common case */
    w->cur = &w->row;
    return VD_OK;
  }
  for (;;) {
    vd_code rc = VD_OK;
    if (w->held || (w->left && !next_row(w))) {
      w->held = 0;
      w->cur = &w->row;
      return VD_OK;
    }
    if (w->broken) {
      rc = vhp_malformed(w->doc->ctx, w->doc->shown, err);
    } else if (w->pend) { /* the rows made before the error are out: now the error */
      rc = vd_fail(err, w->pend, "%s", w->pend_msg);
      w->pend = VD_OK;
      return rc;
    } else if ((w->heof && !w->drop) || !w->handle) {
      w->eof = 1;
      w->cur = NULL;
      return VD_OK;
    } else {
      rc = fetch(w, err);
    }
    if (rc) {
      w->eof = w->heof = 1;
      w->left = 0, w->held = 0, w->broken = 0;
      w->cur = NULL;
      return rc;
    }
  }
}

int vhp_rows_streamed(const vhp_rows *w) { return !w->eof && w->cur && !w->held && w->streamed; }

void vhp_rows_skip_leaf(vhp_rows *w) {
  if (!vhp_rows_streamed(w)) return;
  uint32_t seg = w->seg;
  pass_leaf(w, seg);
  if (!w->held && !w->broken) { /* the batch ended in that leaf */
    if (w->pend && w->pend_seg == seg) w->pend = VD_OK; /* that leaf's error goes with it */
    if (!w->heof && !w->pend) {
      w->skip = 1, w->skip_seg = seg;
      w->drop = ((ahead *)w->ahead)->state == 1; /* the batch asked for ahead may hold more of it */
    }
  }
}

void vhp_close(vh_doc *doc, vhp_rows *rows) {
  proc *p = doc->ctx ? doc->ctx->h5helper : NULL;
  ahead *x = rows->ahead;
  if (p && p->inflight == rows) drain(p);
  if (x) vd_msg_free(&x->a), vd_msg_free(&x->cur), free(x);
  if (rows->handle && p && p->pid && p->gen == rows->gen) {
    vd_buf q = {0};
    if (!vd_wr_u32(&q, rows->handle)) vd_chan_send(p->sock, VHW_CLOSE, q.data, q.len, -1);
    vd_buf_free(&q);
  }
  rows_init(rows, doc);
  vh_doc_free(doc);
}
