/* The helper's side of the store relay (relay.h): each store read becomes one request to
 * the parent and waits for its answer. A broken channel fails the read (the parent has
 * gone, or answered with something malformed): the helper never falls back to reading
 * anything itself. */
#include "relay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int relay_sock = -1;

void vd_relay_install(int sock) { relay_sock = sock; }
int vd_relay_on(void) { return relay_sock >= 0; }

int vd_relay_put_info(vd_buf *b, const vd_objinfo *i) {
  int bad = vd_wr_u64(b, (uint64_t)i->size) || vd_wr_str(b, i->etag) || vd_wr_u64(b, (uint64_t)i->mtime) ||
            vd_wr_u32(b, (uint32_t)i->nmeta);
  for (int k = 0; k < i->nmeta && !bad; k++) bad = vd_wr_str(b, i->meta[k].key) || vd_wr_str(b, i->meta[k].value);
  return bad ? -1 : 0;
}

void vd_relay_get_info(vd_rd *r, vd_objinfo *i) {
  memset(i, 0, sizeof *i);
  i->size = (int64_t)vd_rd_u64(r);
  char *etag = vd_rd_str(r);
  if (etag) snprintf(i->etag, sizeof i->etag, "%s", etag);
  free(etag);
  i->mtime = (int64_t)vd_rd_u64(r);
  uint32_t n = vd_rd_u32(r);
  for (uint32_t k = 0; k < n && !r->bad; k++) {
    char *key = vd_rd_str(r), *val = vd_rd_str(r);
    if (key && val && vd_objinfo_add_meta(i, key, strlen(key), val, strlen(val))) r->bad = 1;
    free(key), free(val);
  }
}

/* Sends a request and waits for its answer (into *a): 0, or -1 with *err saying so */
static int ask(uint32_t type, const vd_buf *q, vd_msg *a, vd_err *err) {
  memset(a, 0, sizeof *a);
  if (relay_sock < 0) return vd_fail(err, VD_ERROR, "the store relay is not set up"), -1;
  if (vd_chan_send(relay_sock, type, q->data, q->len, -1) || vd_chan_recv(relay_sock, VD_RELAY_MAX_MSG, a, NULL, NULL)) {
    vd_fail(err, VD_IO, "the HDF5 helper lost its channel to vdsql (%s)", strerror(errno));
    return -1;
  }
  if (a->type != VD_RELAY_ANSWER) {
    vd_msg_free(a);
    vd_fail(err, VD_IO, "the HDF5 helper got an answer of the wrong kind from vdsql");
    return -1;
  }
  return 0;
}

/* ask with one string as the question (a URL or a path): 0, or -1 with err set */
static int ask_about(uint32_t type, const char *s, vd_msg *a, vd_err *err) {
  vd_buf q = {0};
  int k = vd_wr_str(&q, s) ? (vd_nomem(err), memset(a, 0, sizeof *a), -1) : ask(type, &q, a, err);
  vd_buf_free(&q);
  return k;
}

/* the one wording of an answer that does not parse */
static vd_code malformed(vd_err *err) {
  return vd_fail(err, VD_IO, "the HDF5 helper got a malformed answer from vdsql");
}

static void read_err(vd_rd *r, vd_code rc, vd_err *err) {
  char *msg = vd_rd_str(r);
  vd_fail(err, rc, "%s", msg ? msg : "");
  free(msg);
}

vd_code vd_relay_get_many(vd_getreq *reqs, int n) {
  vd_buf q = {0};
  vd_err e;
  int bad = vd_wr_u32(&q, (uint32_t)n);
  for (int i = 0; i < n && !bad; i++)
    bad = vd_wr_str(&q, reqs[i].url) || vd_wr_u64(&q, (uint64_t)reqs[i].off) || vd_wr_u64(&q, (uint64_t)reqs[i].len) ||
          vd_wr_u32(&q, (uint32_t)reqs[i].want_info) || vd_wr_u32(&q, (uint32_t)reqs[i].head);
  vd_msg a;
  if (bad) vd_nomem(&e);
  if (bad || ask(VD_RELAY_GET, &q, &a, &e)) {
    vd_buf_free(&q);
    for (int i = 0; i < n; i++) reqs[i].rc = e.code, reqs[i].err = e;
    return e.code;
  }
  vd_buf_free(&q);
  vd_rd r = {a.body.data, a.body.data + a.body.len, 0};
  vd_code first = VD_OK;
  for (int i = 0; i < n; i++) {
    vd_getreq *g = &reqs[i];
    vd_code rc = (vd_code)vd_rd_u32(&r);
    vd_err_clear(&g->err);
    if (rc) read_err(&r, rc, &g->err);
    g->rc = rc;
    g->status = (long)vd_rd_u64(&r);
    size_t len;
    const void *body = vd_rd_bytes(&r, &len);
    g->body.len = 0;
    if (body && len && vd_buf_append(&g->body, body, len)) g->rc = vd_nomem(&g->err);
    vd_objinfo_free(&g->info);
    vd_relay_get_info(&r, &g->info);
    if (r.bad && !g->rc) g->rc = malformed(&g->err);
    if (g->rc && !first) first = g->rc;
  }
  vd_msg_free(&a);
  return first;
}

vd_code vd_relay_head(const char *url, vd_objinfo *info, vd_err *err) {
  vd_msg a;
  if (ask_about(VD_RELAY_HEAD, url, &a, err)) return err->code;
  vd_rd r = {a.body.data, a.body.data + a.body.len, 0};
  vd_code rc = (vd_code)vd_rd_u32(&r);
  if (rc) read_err(&r, rc, err);
  vd_objinfo_free(info);
  vd_relay_get_info(&r, info);
  vd_msg_free(&a);
  if (r.bad) return malformed(err);
  return rc;
}

vd_blob *vd_relay_cache_get(const char *url, const char *key, int count) {
  vd_buf q = {0};
  vd_msg a;
  vd_err e;
  if (vd_wr_str(&q, url) || vd_wr_str(&q, key) || vd_wr_u32(&q, (uint32_t)count) || ask(VD_RELAY_CACHE_GET, &q, &a, &e))
    return vd_buf_free(&q), NULL; /* a cache that cannot answer has nothing: the read asks the store */
  vd_buf_free(&q);
  vd_rd r = {a.body.data, a.body.data + a.body.len, 0};
  vd_blob *b = NULL;
  if (vd_rd_u32(&r)) {
    size_t n;
    const void *p = vd_rd_bytes(&r, &n);
    if (!r.bad) b = vd_blob_new(p, n);
  }
  vd_msg_free(&a);
  return b;
}

void vd_relay_cache_put(const char *key, const vd_blob *b) {
  vd_buf q = {0};
  if (relay_sock >= 0 && !vd_wr_str(&q, key) && !vd_wr_bytes(&q, b->data, b->len))
    vd_chan_send(relay_sock, VD_RELAY_CACHE_PUT, q.data, q.len, -1);
  vd_buf_free(&q);
}

vd_code vd_relay_open(const char *path, int *fd, struct stat *st, vd_err *err) {
  vd_msg a;
  *fd = -1;
  if (ask_about(VD_RELAY_OPEN, path, &a, err)) return err->code;
  vd_rd r = {a.body.data, a.body.data + a.body.len, 0};
  vd_code rc = (vd_code)vd_rd_u32(&r);
  if (rc) {
    read_err(&r, rc, err);
  } else {
    memset(st, 0, sizeof *st);
    st->st_size = (off_t)vd_rd_u64(&r);
    st->st_dev = (dev_t)vd_rd_u64(&r);
    st->st_ino = (ino_t)vd_rd_u64(&r);
    st->st_mode = (mode_t)vd_rd_u32(&r);
    if (r.bad || a.fd < 0) rc = vd_fail(err, VD_IO, "%s: the HDF5 helper got no descriptor from vdsql", path);
    else *fd = a.fd, a.fd = -1;
  }
  vd_msg_free(&a);
  return rc;
}

int vd_relay_exists(const char *path) {
  vd_msg a;
  vd_err e;
  if (ask_about(VD_RELAY_EXISTS, path, &a, &e)) return 0;
  vd_rd r = {a.body.data, a.body.data + a.body.len, 0};
  int x = (int)vd_rd_u32(&r);
  vd_msg_free(&a);
  return x == 1;
}
