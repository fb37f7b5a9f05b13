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

static vd_code file_error(vd_err *e, const char *path, int errnum, const char *what) {
  vd_code c = (errnum == ENOENT || errnum == ENOTDIR) ? VD_NOTFOUND : VD_IO;
  return vd_fail(e, c, "%s: %s (%s)", path, c == VD_NOTFOUND ? "no such file" : what, strerror(errnum));
}

static void read_xattrs(int fd, vd_objinfo *info) {
  char names[4096];
  ssize_t n = flistxattr(fd, names, sizeof names);
  for (ssize_t off = 0; n > 0 && off < n; off += strlen(names + off) + 1) {
    const char *name = names + off;
    if (strncmp(name, "user.", 5) != 0) continue;
    char val[8192];
    ssize_t vl = fgetxattr(fd, name, val, sizeof val);
    if (vl >= 0) vd_objinfo_add_meta(info, name + 5, strlen(name + 5), val, (size_t)vl);
  }
}

/* A file's etag changes whenever its content may have: every put writes a new file (a
 * new inode) and renames it into place, and the modification time in nanoseconds and
 * the size catch writes in place by other tools. Seconds alone would not do: two puts
 * of the same size in one second would look alike to If-Match. */
void vd_file_etag(const struct stat *st, char *out, size_t n) {
  snprintf(out, n, "\"%llx-%llx.%lx-%llx\"", (unsigned long long)st->st_ino, (unsigned long long)st->st_mtim.tv_sec,
           (unsigned long)st->st_mtim.tv_nsec, (unsigned long long)st->st_size);
}

void vd_file_fill_info(int fd, const struct stat *st, vd_objinfo *info) {
  info->size = st->st_size;
  info->mtime = st->st_mtime;
  vd_file_etag(st, info->etag, sizeof info->etag);
  read_xattrs(fd, info);
}

/* Opens path for reading, refusing anything but a regular file. O_NONBLOCK keeps open()
 * itself from waiting (a FIFO blocks until a writer appears, a device may too); it is
 * cleared once fstat has shown a regular file, where it has no effect anyway. */
vd_code vd_file_open_regular(const char *path, int flags, int *fd, struct stat *st, vd_err *err) {
  *fd = open(path, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (*fd < 0) return file_error(err, path, errno, "cannot open");
  if (fstat(*fd, st) != 0) {
    int e = errno;
    close(*fd);
    return file_error(err, path, e, "cannot stat");
  }
  if (!S_ISREG(st->st_mode)) { /* VD_IO: unreadable, unlike a range past the end (VD_INVALID) */
    close(*fd);
    return vd_fail(err, VD_IO, "%s: not a regular file", path);
  }
  int fl = fcntl(*fd, F_GETFL);
  if (fl >= 0) fcntl(*fd, F_SETFL, fl & ~O_NONBLOCK);
  return VD_OK;
}

vd_code vd_file_check_regular(const char *path, vd_err *err) {
  int fd;
  struct stat st;
  vd_code rc = vd_file_open_regular(path, O_RDONLY, &fd, &st, err);
  if (!rc) close(fd);
  return rc;
}

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
      rc = file_error(&r->err, path, errno, "read failed");
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

vd_code vd_file_get_many(vd_ctx *ctx, vd_getreq **reqs, int n) {
  vd_code first = VD_OK;
  for (int i = 0; i < n; i++) {
    reqs[i]->rc = get_one(ctx, reqs[i]);
    if (reqs[i]->rc && !first) first = reqs[i]->rc;
  }
  return first;
}

vd_code vd_file_head(vd_ctx *ctx, const char *url, vd_objinfo *info, vd_err *err) {
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

const vd_backend_ops vd_file_ops = {VD_BE_FILE,         "local file", VD_CAP_LOCAL | VD_CAP_WRITE | VD_CAP_LIST,
                                    vd_file_get_many,   vd_file_head, vd_file_put, vd_file_list, vd_file_delete};
