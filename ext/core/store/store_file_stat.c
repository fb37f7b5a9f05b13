/* What a local object is, shared by the file backend's reads, writes and listings (so
 * it sits at their bottom): a regular file opened without ever blocking (a FIFO would
 * wait for a writer), its info from fstat and the user.* extended attributes, its ETag,
 * and the one wording of a failed file call. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "backend.h"
#include "relay.h"

vd_code vd_file_error(vd_err *e, const char *path, int errnum, const char *what) {
  vd_code c = (errnum == ENOENT || errnum == ENOTDIR) ? VD_NOTFOUND : VD_IO;
  return vd_fail(e, c, "%s: %s (%s)", path, c == VD_NOTFOUND ? "no such file" : what, strerror(errnum));
}

/* The user.* attributes of an open file (fd >= 0) or, without opening it, of path: a
 * listing reads them by path, since opening every listed file would cost an open and a
 * close per object on top of the stat. */
static void read_xattrs(int fd, const char *path, vd_objinfo *info) {
  char names[4096];
  ssize_t n = fd >= 0 ? flistxattr(fd, names, sizeof names) : llistxattr(path, names, sizeof names);
  for (ssize_t off = 0; n > 0 && off < n; off += strlen(names + off) + 1) {
    const char *name = names + off;
    if (strncmp(name, "user.", 5) != 0) continue;
    char val[8192];
    ssize_t vl = fd >= 0 ? fgetxattr(fd, name, val, sizeof val) : lgetxattr(path, name, val, sizeof val);
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
  read_xattrs(fd, NULL, info);
}

void vd_file_fill_info_path(const char *path, const struct stat *st, vd_objinfo *info) {
  info->size = st->st_size;
  info->mtime = st->st_mtime;
  vd_file_etag(st, info->etag, sizeof info->etag);
  read_xattrs(-1, path, info);
}

/* Opens path for reading, refusing anything but a regular file. O_NONBLOCK keeps open()
 * itself from waiting (a FIFO blocks until a writer appears, a device may too); it is
 * cleared once fstat has shown a regular file, where it has no effect anyway. */
vd_code vd_file_open_regular(const char *path, int flags, int *fd, struct stat *st, vd_err *err) {
  if (vd_relay_on()) { /* the HDF5 helper opens nothing: its parent does, and hands the descriptor over */
    if ((flags & O_ACCMODE) != O_RDONLY) return vd_fail(err, VD_READONLY, "%s: the HDF5 helper only reads", path);
    return vd_relay_open(path, fd, st, err);
  }
  *fd = open(path, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (*fd < 0) return vd_file_error(err, path, errno, "cannot open");
  if (fstat(*fd, st) != 0) {
    int e = errno;
    close(*fd);
    *fd = -1; /* no closed number left for a caller to use (the relay once sent it on) */
    return vd_file_error(err, path, e, "cannot stat");
  }
  if (!S_ISREG(st->st_mode)) { /* VD_IO: unreadable, unlike a range past the end (VD_INVALID) */
    close(*fd);
    *fd = -1;
    return vd_fail(err, VD_IO, "%s: not a regular file", path);
  }
  int fl = fcntl(*fd, F_GETFL);
  if (fl >= 0) fcntl(*fd, F_SETFL, fl & ~O_NONBLOCK);
  return VD_OK;
}

int vd_file_exists(const char *path) {
  if (vd_relay_on()) return vd_relay_exists(path);
  return access(path, F_OK) == 0;
}

vd_code vd_file_check_regular(const char *path, vd_err *err) {
  int fd;
  struct stat st;
  vd_code rc = vd_file_open_regular(path, O_RDONLY, &fd, &st, err);
  if (!rc) close(fd);
  return rc;
}
