/* The parent's side of the store relay (relay.h): a request of the HDF5 helper is read
 * as untrusted input (bounded, checked), passed through the caller's rule for the file
 * being read, made with the parent's own store, and answered. */
#include "relay.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#define MAX_GETS 4096 /* requests in one GET message: the reader asks at most a few hundred */

static int answer(int sock, vd_buf *a, int fd) {
  int r = vd_chan_send(sock, VD_RELAY_ANSWER, a->data, a->len, fd);
  vd_buf_free(a);
  return r;
}

static int put_err(vd_buf *a, vd_code rc, const vd_err *e) {
  return vd_wr_u32(a, (uint32_t)rc) || (rc && vd_wr_str(a, e->msg)) ? -1 : 0;
}

static int serve_get(vd_ctx *ctx, int sock, vd_rd *r, vd_relay_check check, void *arg) {
  uint32_t n = vd_rd_u32(r);
  if (n > MAX_GETS) n = 0, r->bad = 1;
  vd_getreq *q = calloc(n ? n : 1, sizeof *q);
  char **urls = calloc(n ? n : 1, sizeof *urls);
  vd_getreq **run = calloc(n ? n : 1, sizeof *run);
  vd_buf a = {0};
  int m = 0, rc = -1;
  if (!q || !urls || !run) goto out;
  for (uint32_t i = 0; i < n; i++) {
    urls[i] = vd_rd_str(r);
    q[i].url = urls[i] ? urls[i] : "";
    q[i].off = (int64_t)vd_rd_u64(r);
    q[i].len = (int64_t)vd_rd_u64(r);
    q[i].want_info = vd_rd_u32(r) != 0;
    q[i].head = vd_rd_u32(r) != 0;
    q[i].info.size = -1;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (r->bad) q[i].rc = vd_fail(&q[i].err, VD_IO, "a malformed request of the HDF5 helper");
    else if (!urls[i] || q[i].off < 0) q[i].rc = vd_fail(&q[i].err, VD_INVALID, "a malformed request of the HDF5 helper");
    else q[i].rc = check(arg, q[i].url, 0, &q[i].err);
    if (!q[i].rc) run[m++] = &q[i];
  }
  /* the requests that passed, in parallel as the reader asked for them */
  vd_getreq *flat = calloc(m ? (size_t)m : 1, sizeof *flat);
  if (!flat) goto out;
  for (int k = 0; k < m; k++) flat[k] = *run[k];
  if (m) vd_get_many(ctx, flat, m);
  for (int k = 0; k < m; k++) *run[k] = flat[k];
  free(flat);
  int bad = 0;
  for (uint32_t i = 0; i < n && !bad; i++)
    bad = put_err(&a, q[i].rc, &q[i].err) || vd_wr_u64(&a, (uint64_t)q[i].status) ||
          vd_wr_bytes(&a, q[i].body.data, q[i].body.len) || vd_relay_put_info(&a, &q[i].info);
  rc = bad ? -1 : answer(sock, &a, -1);
out:
  for (uint32_t i = 0; q && i < n; i++) vd_buf_free(&q[i].body), vd_objinfo_free(&q[i].info);
  for (uint32_t i = 0; urls && i < n; i++) free(urls[i]);
  free(q), free(urls), free(run);
  vd_buf_free(&a);
  return rc;
}

static int serve_head(vd_ctx *ctx, int sock, vd_rd *r, vd_relay_check check, void *arg) {
  char *url = vd_rd_str(r);
  vd_objinfo info = {0};
  info.size = -1;
  vd_err e;
  vd_code rc = r->bad || !url ? vd_fail(&e, VD_INVALID, "a malformed request of the HDF5 helper") : check(arg, url, 0, &e);
  if (!rc) rc = vd_head(ctx, url, &info, &e);
  vd_buf a = {0};
  int bad = put_err(&a, rc, &e) || vd_relay_put_info(&a, &info);
  vd_objinfo_free(&info);
  free(url);
  if (bad) return vd_buf_free(&a), -1;
  return answer(sock, &a, -1);
}

/* The helper may see only the cached whole VTKHDF files of URLs its file may reach */
#define CACHE_PREFIX "vtkhdf-file:"
static int cache_key_ok(const char *key, vd_relay_check check, void *arg) {
  vd_err e;
  return key && !strncmp(key, CACHE_PREFIX, strlen(CACHE_PREFIX)) && !check(arg, key + strlen(CACHE_PREFIX), 0, &e);
}

static int serve_cache_get(vd_ctx *ctx, int sock, vd_rd *r, vd_relay_check check, void *arg) {
  char *url = vd_rd_str(r), *key = vd_rd_str(r);
  int count = vd_rd_u32(r) != 0;
  vd_blob *b = NULL;
  if (!r->bad && url && cache_key_ok(key, check, arg))
    b = count ? vd_cache_lookup(ctx, url, key) : vd_cache_peek(ctx, key);
  vd_buf a = {0};
  int bad = vd_wr_u32(&a, b != NULL) || (b && vd_wr_bytes(&a, b->data, b->len));
  vd_blob_unref(b);
  free(url), free(key);
  if (bad) return vd_buf_free(&a), -1;
  return answer(sock, &a, -1);
}

static void serve_cache_put(vd_ctx *ctx, vd_rd *r, vd_relay_check check, void *arg) {
  char *key = vd_rd_str(r);
  size_t n;
  const void *p = vd_rd_bytes(r, &n);
  vd_blob *b = !r->bad && cache_key_ok(key, check, arg) ? vd_blob_new(p, n) : NULL;
  if (b) vd_cache_store(ctx, key, b);
  vd_blob_unref(b);
  free(key);
}

static int serve_open(int sock, vd_rd *r, vd_relay_check check, void *arg) {
  char *path = vd_rd_str(r);
  vd_err e;
  int fd = -1;
  struct stat st;
  vd_code rc = r->bad || !path ? vd_fail(&e, VD_INVALID, "a malformed request of the HDF5 helper") : check(arg, path, 1, &e);
  if (!rc) rc = vd_file_open_regular(path, O_RDONLY, &fd, &st, &e);
  vd_buf a = {0};
  int bad = put_err(&a, rc, &e);
  if (!rc && !bad)
    bad = vd_wr_u64(&a, (uint64_t)st.st_size) || vd_wr_u64(&a, (uint64_t)st.st_dev) || vd_wr_u64(&a, (uint64_t)st.st_ino) ||
          vd_wr_u32(&a, (uint32_t)st.st_mode);
  free(path);
  int k = bad ? (vd_buf_free(&a), -1) : answer(sock, &a, fd);
  if (fd >= 0) close(fd); /* the helper has its own copy now */
  return k;
}

static int serve_exists(int sock, vd_rd *r, vd_relay_check check, void *arg) {
  char *path = vd_rd_str(r);
  vd_err e;
  int x = !r->bad && path && !check(arg, path, 1, &e) && vd_file_exists(path);
  free(path);
  vd_buf a = {0};
  if (vd_wr_u32(&a, (uint32_t)x)) return vd_buf_free(&a), -1;
  return answer(sock, &a, -1);
}

int vd_relay_serve(vd_ctx *ctx, int sock, const vd_msg *m, vd_relay_check check, void *arg) {
  vd_rd r = {m->body.data, m->body.data + m->body.len, 0};
  switch (m->type) {
    case VD_RELAY_GET: return serve_get(ctx, sock, &r, check, arg);
    case VD_RELAY_HEAD: return serve_head(ctx, sock, &r, check, arg);
    case VD_RELAY_CACHE_GET: return serve_cache_get(ctx, sock, &r, check, arg);
    case VD_RELAY_CACHE_PUT: serve_cache_put(ctx, &r, check, arg); return 0;
    case VD_RELAY_OPEN: return serve_open(sock, &r, check, arg);
    case VD_RELAY_EXISTS: return serve_exists(sock, &r, check, arg);
    default: return -1;
  }
}
