/* Local-file backend, reads: objects are files under a directory, user metadata lives
 * in extended attributes user.<key> (what `setfattr -n user.vdschunkmetadata` writes).
 * Writes and listings: store_file_write.c, store_file_list.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "backend.h"

static vd_code get_one(vd_ctx *ctx, vd_getreq *r) {
  char *path = vd_url_path(r->url);
  if (!path) return vd_nomem(&r->err);
  int fd;
  struct stat st;
  vd_stats *s = &ctx->stats[VD_BE_FILE];
  s->requests++;
  vd_code rc = vd_file_open_regular(path, O_RDONLY, &fd, &st, &r->err);
  if (rc) {
    free(path);
    return rc;
  }
  if (r->want_info || r->head) vd_file_fill_info(fd, &st, &r->info);
  int64_t size = st.st_size;
  if (r->head) goto done;
  if (r->off < 0 || r->off > size) {
    rc = vd_fail(&r->err, VD_INVALID, "%s: byte range starting at %lld is past the end (%lld bytes)",
                 path, (long long)r->off, (long long)size);
    goto done;
  }
  if (r->len < 0 && r->off == 0 && size > ctx->cfg.max_alloc) { /* a whole document: bounded like over http */
    rc = vd_fail_max_alloc(&r->err, path, size, ctx->cfg.max_alloc);
    goto done;
  }
  int64_t want = r->len < 0 ? size - r->off : r->len;
  if (r->off + want > size) want = size - r->off;
  if (vd_buf_reserve(&r->body, (size_t)want + 1)) {
    rc = vd_nomem(&r->err);
    goto done;
  }
  int64_t got = 0;
  while (got < want) {
    ssize_t k = pread(fd, r->body.data + got, (size_t)(want - got), r->off + got);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      rc = vd_file_error(&r->err, path, errno, "read failed");
      goto done;
    }
    if (k == 0) break; /* truncated meanwhile: hand back what exists */
    got += k;
  }
  r->body.len = (size_t)got;
  s->bytes += got;
done:
  close(fd);
  free(path);
  return rc;
}

static vd_code file_get_many(vd_ctx *ctx, vd_getreq **reqs, int n) {
  vd_code first = VD_OK;
  for (int i = 0; i < n; i++) {
    reqs[i]->rc = get_one(ctx, reqs[i]);
    if (reqs[i]->rc && !first) first = reqs[i]->rc;
  }
  return first;
}

static vd_code file_head(vd_ctx *ctx, const char *url, vd_objinfo *info, vd_err *err) {
  char *path = vd_url_path(url);
  if (!path) return vd_nomem(err);
  ctx->stats[VD_BE_FILE].requests++;
  int fd;
  struct stat st;
  vd_code rc = vd_file_open_regular(path, O_RDONLY, &fd, &st, err);
  if (!rc) {
    vd_file_fill_info(fd, &st, info);
    close(fd);
  }
  free(path);
  return rc;
}

const vd_backend_ops vd_file_ops = {.id = VD_BE_FILE,
                                    .get_many = file_get_many,
                                    .head = file_head,
                                    .put = vd_file_put,
                                    .list = vd_file_list,
                                    .del = vd_file_delete};
