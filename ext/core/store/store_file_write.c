/* Local-file backend, writes: put and delete with S3's semantics on a directory.
 *
 * A put writes a temporary file in the object's own directory (same file system, so the
 * last step is atomic), sets its user metadata as extended attributes user.<key>, fsyncs
 * it, then renames it over the object (or, create-only, links it to the object's name,
 * which fails by itself when the name exists) and fsyncs the directory: a reader sees the
 * old object or the new one, never a part, and a crash leaves at most a temporary file.
 *
 * Conditional writes: vdsql writers of one directory take an exclusive flock on the
 * directory around the check and the rename, so If-Match is decided with no other vdsql
 * put or delete in between (tools that write the files themselves are not held back:
 * the etag, with its inode and nanosecond time, still shows their change to the next
 * conditional put). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"

#define TMP_PREFIX ".vdsql-put-"

typedef struct target {
  char *path; /* the object's file */
  char *dir;  /* its directory */
  const char *name;
  int dfd;    /* the directory, locked */
} target;

static void target_free(target *t) {
  if (t->dfd >= 0) close(t->dfd); /* also drops the lock */
  free(t->path);
  free(t->dir);
}

static vd_code dir_error(vd_err *e, const char *path, int errnum, const char *what) {
  vd_code c = (errnum == ENOENT || errnum == ENOTDIR) ? VD_NOTFOUND : VD_IO;
  return vd_fail(e, c, "%s: %s (%s)", path, c == VD_NOTFOUND ? "no such directory" : what, strerror(errnum));
}

/* Splits url into directory and name, opens the directory and locks it (waiting at most
 * lock_timeout for another vdsql writer of the same directory). */
static vd_code target_open(vd_ctx *ctx, const char *url, target *t, vd_err *err) {
  memset(t, 0, sizeof *t);
  t->dfd = -1;
  if (!(t->path = vd_url_path(url))) return vd_nomem(err);
  const char *slash = strrchr(t->path, '/');
  t->name = slash ? slash + 1 : t->path;
  if (!*t->name || !strcmp(t->name, ".") || !strcmp(t->name, ".."))
    return vd_fail(err, VD_INVALID, "%s: not an object name (a directory)", t->path);
  t->dir = !slash ? strdup(".") : slash == t->path ? strdup("/") : strndup(t->path, (size_t)(slash - t->path));
  if (!t->dir) return vd_nomem(err);
  return vd_file_lock_dir(ctx, t->dir, &t->dfd, err);
}

vd_code vd_file_lock_dir(vd_ctx *ctx, const char *dir, int *dfd, vd_err *err) {
  if ((*dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) return dir_error(err, dir, errno, "cannot open");
  struct timespec t0, now, nap = {0, 5 * 1000 * 1000};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (flock(*dfd, LOCK_EX | LOCK_NB) != 0) {
    vd_code rc = VD_OK;
    if (errno != EWOULDBLOCK && errno != EINTR) rc = dir_error(err, dir, errno, "cannot lock");
    if (!rc) rc = vd_ctx_check_interrupt(ctx, err);
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!rc && (now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 >= ctx->cfg.lock_timeout)
      rc = vd_fail(err, VD_BUSY, "%s: another writer holds the directory's lock (waited %g s; see "
                   "vdsql_config('lock_timeout'))", dir, ctx->cfg.lock_timeout);
    if (rc) {
      close(*dfd);
      *dfd = -1;
      return rc;
    }
    nanosleep(&nap, NULL);
  }
  return VD_OK;
}

static vd_code write_all(int fd, const void *p, size_t n, const char *path, vd_err *err) {
  const unsigned char *b = p;
  while (n > 0) {
    ssize_t k = write(fd, b, n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return vd_fail(err, VD_IO, "%s: write failed (%s)", path, strerror(errno));
    b += k;
    n -= (size_t)k;
  }
  return VD_OK;
}

/* user.<key> (lower-cased, as every backend reports keys) on the temporary file. */
static vd_code set_meta(int fd, const vd_kv *m, const char *path, vd_err *err) {
  size_t kl = strlen(m->key);
  if (!kl || kl > 200 || strchr(m->key, '/'))
    return vd_fail(err, VD_INVALID, "%s: metadata key \"%.200s\" is empty, too long or holds a '/'", path, m->key);
  char name[256];
  snprintf(name, sizeof name, "user.%s", m->key);
  for (char *c = name + 5; *c; c++)
    if (*c >= 'A' && *c <= 'Z') *c += 32;
  if (fsetxattr(fd, name, m->value, strlen(m->value), 0) == 0) return VD_OK;
  if (errno == ENOTSUP)
    return vd_fail(err, VD_UNSUPPORTED,
                   "%s: the file system does not keep user extended attributes (%s), which hold object metadata "
                   "(ramfs, tmpfs before Linux 6.6, some overlay and network mounts): write the objects elsewhere",
                   path, name);
  if (errno == E2BIG || errno == ERANGE || errno == ENOSPC)
    return vd_fail(err, VD_INVALID, "%s: metadata %s (%zu bytes) is more than the file system keeps (%s)", path, name,
                   strlen(m->value), strerror(errno));
  return vd_fail(err, VD_IO, "%s: cannot set %s (%s)", path, name, strerror(errno));
}

/* The object's current etag; VD_NOTFOUND when there is none. */
static vd_code current_etag(target *t, char *etag, size_t n, vd_err *err) {
  struct stat st;
  if (fstatat(t->dfd, t->name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return VD_NOTFOUND;
    return vd_fail(err, VD_IO, "%s: cannot stat (%s)", t->path, strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return vd_fail(err, VD_IO, "%s: not a regular file", t->path);
  vd_file_etag(&st, etag, n);
  return VD_OK;
}

/* Replaces the fresh temporary file tmp (open as *fd) by a hard link to the source of a
 * copy: files are never changed in place (a put renames a new file over the name), so
 * two names of one file are two objects with the same bytes and metadata. */
static vd_code link_copy(const char *src_url, const char *tmp, int *fd, vd_err *err) {
  char *src = vd_url_path(src_url);
  if (!src) return vd_nomem(err);
  vd_code rc = VD_OK;
  struct stat st;
  close(*fd);
  *fd = -1;
  unlink(tmp);
  if (lstat(src, &st) != 0 || !S_ISREG(st.st_mode))
    rc = errno == ENOENT || errno == ENOTDIR ? vd_fail(err, VD_NOTFOUND, "%s: no such file (the copy's source)", src)
                                             : vd_fail(err, VD_IO, "%s: not a regular file (the copy's source)", src);
  else if (link(src, tmp) != 0)
    rc = errno == ENOENT ? vd_fail(err, VD_NOTFOUND, "%s: no such file (the copy's source)", src)
                         : vd_fail(err, VD_IO, "%s: cannot link (%s)", src, strerror(errno));
  else if ((*fd = open(tmp, O_RDONLY | O_CLOEXEC)) < 0)
    rc = vd_fail(err, VD_IO, "%s: cannot open (%s)", tmp, strerror(errno));
  free(src);
  return rc;
}

vd_code vd_file_put(vd_ctx *ctx, vd_putreq *p, vd_err *err) {
  target t;
  char *tmp = NULL;
  int fd = -1, placed = 0;
  vd_code rc = target_open(ctx, p->url, &t, err);
  ctx->stats[VD_BE_FILE].requests++;
  if (rc) goto done;
  if (!(tmp = malloc(strlen(t.dir) + sizeof TMP_PREFIX + 8))) {
    rc = vd_nomem(err);
    goto done;
  }
  sprintf(tmp, "%s/" TMP_PREFIX "XXXXXX", t.dir);
  if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
    rc = dir_error(err, t.dir, errno, "cannot create a file");
    free(tmp);
    tmp = NULL;
    goto done;
  }
  if (p->copy_from) { /* a copy is a second name of the source's file: its bytes and user.* */
    if ((rc = link_copy(p->copy_from, tmp, &fd, err))) goto done;
  } else {
    fchmod(fd, 0644); /* mkstemp's 0600 would hide the object from other readers */
    if ((rc = write_all(fd, p->body, p->len, t.path, err))) goto done;
    for (int i = 0; i < p->nmeta && !rc; i++) rc = set_meta(fd, &p->meta[i], t.path, err);
  }
  if (rc) goto done;
  if (fsync(fd) != 0) {
    rc = vd_fail(err, VD_IO, "%s: fsync failed (%s)", t.path, strerror(errno));
    goto done;
  }
  if (p->if_match) {
    char now[128];
    vd_code c = current_etag(&t, now, sizeof now, err);
    if (c == VD_NOTFOUND) {
      rc = vd_fail(err, VD_PRECONDITION, "%s: precondition failed: the object does not exist (If-Match %s)", t.path,
                   p->if_match);
      goto done;
    }
    if ((rc = c)) goto done;
    if (strcmp(now, p->if_match) != 0) {
      rc = vd_fail(err, VD_PRECONDITION, "%s: precondition failed: the object changed (its etag is %s, If-Match %s)",
                   t.path, now, p->if_match);
      goto done;
    }
  }
  const char *tname = strrchr(tmp, '/') + 1;
  if (p->if_none_match) {
    if (linkat(t.dfd, tname, t.dfd, t.name, 0) != 0) {
      rc = errno == EEXIST ? vd_fail(err, VD_PRECONDITION, "%s: precondition failed: the object exists (If-None-Match)",
                                     t.path)
                           : vd_fail(err, VD_IO, "%s: cannot create (%s)", t.path, strerror(errno));
      goto done;
    }
  } else if (renameat(t.dfd, tname, t.dfd, t.name) != 0) {
    rc = vd_fail(err, VD_IO, "%s: cannot replace (%s)", t.path, strerror(errno));
    goto done;
  } else {
    placed = 1; /* the temporary name is gone */
  }
  fsync(t.dfd);
  struct stat st;
  if (fstat(fd, &st) == 0) vd_file_etag(&st, p->etag, sizeof p->etag);
  ctx->stats[VD_BE_FILE].bytes += (int64_t)p->len;
done:
  if (fd >= 0) close(fd);
  if (tmp && !placed) unlink(tmp);
  free(tmp);
  target_free(&t);
  return rc;
}

vd_code vd_file_delete(vd_ctx *ctx, const char *url, vd_err *err) {
  target t;
  vd_code rc = target_open(ctx, url, &t, err);
  ctx->stats[VD_BE_FILE].requests++;
  if (rc == VD_NOTFOUND) rc = VD_OK; /* no directory, no object: deleted already */
  else if (!rc) {
    char etag[128];
    vd_code c = current_etag(&t, etag, sizeof etag, err); /* refuses a directory, a FIFO... */
    if (c == VD_OK && unlinkat(t.dfd, t.name, 0) != 0 && errno != ENOENT)
      rc = vd_fail(err, VD_IO, "%s: cannot delete (%s)", t.path, strerror(errno));
    else if (c != VD_OK && c != VD_NOTFOUND)
      rc = c;
    else
      fsync(t.dfd);
  }
  target_free(&t);
  return rc;
}

/* Temporary files of puts that never finished, under dir (recursively). */
static void sweep_dir(const char *dir, time_t cut, int depth, int how, int64_t *n) {
  DIR *d = depth < 16 ? opendir(dir) : NULL;
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    char *p = malloc(len);
    if (!p) break;
    snprintf(p, len, "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(p, &st) == 0) {
      if (S_ISDIR(st.st_mode) && (how & VD_SWEEP_DEEP)) {
        sweep_dir(p, cut, depth + 1, how, n);
        if ((how & VD_SWEEP_PRUNE) && st.st_mtime <= cut) rmdir(p); /* only when empty, and old: not one just made */
      }
      else if (S_ISREG(st.st_mode) && !strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) && st.st_mtime <= cut &&
               unlink(p) == 0)
        (*n)++;
    }
    free(p);
  }
  closedir(d);
}

vd_code vd_store_sweep(vd_ctx *ctx, const char *url, double age, int how, int64_t *n, vd_err *err) {
  (void)ctx;
  *n = 0;
  if (vd_url_check(url, err)) return err->code;
  if (!vd_store_is_local(url)) return VD_OK;
  char *path = vd_url_path(url);
  if (!path) return vd_nomem(err);
  sweep_dir(path, time(NULL) - (time_t)age, 0, how, n);
  free(path);
  return VD_OK;
}

void vd_store_remove_dir(const char *url) {
  vd_err e;
  if (vd_url_check(url, &e) || !vd_store_is_local(url)) return;
  char *path = vd_url_path(url);
  if (path) rmdir(path); /* fails, as it should, while anything is in it */
  free(path);
}
