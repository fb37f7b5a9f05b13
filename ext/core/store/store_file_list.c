/* Local-file backend, listings: the regular files under a directory whose names (relative
 * to it) start with a prefix, recursively, in byte order, a page at a time, each with its
 * size, etag, time and user metadata (extended attributes are read with the listing, as
 * Azure's include=metadata gives them). The continuation token is the last key of a page:
 * the next page is the keys after it, so files added or removed between pages neither
 * repeat nor shift what follows. Every page walks the directory again (nftw): a file
 * listing costs no request, and holding a walk open between calls would hold descriptors.
 * Symbolic links are not followed (a link to a directory could loop) and vdsql's own
 * temporary files are left out. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"

typedef struct walk {
  const char *root; /* the directory, as nftw reports it */
  size_t rootlen;
  const char *prefix, *after;
  char **keys;
  size_t n, cap;
  int oom;
} walk;

static _Thread_local walk *W; /* nftw's callback takes no user pointer */

static int visit(const char *path, const struct stat *st, int type, struct FTW *f) {
  (void)f;
  if (type != FTW_F || !S_ISREG(st->st_mode)) return 0;
  const char *key = path + W->rootlen;
  while (*key == '/') key++;
  const char *base = strrchr(key, '/');
  base = base ? base + 1 : key;
  if (strncmp(base, ".vdsql-put-", 11) == 0) return 0;
  if (strncmp(key, W->prefix, strlen(W->prefix)) != 0 || (W->after && strcmp(key, W->after) <= 0)) return 0;
  if (W->n == W->cap) {
    size_t cap = W->cap ? 2 * W->cap : 64;
    char **k = realloc(W->keys, cap * sizeof *k);
    if (!k) return W->oom = 1;
    W->keys = k;
    W->cap = cap;
  }
  if (!(W->keys[W->n] = strdup(key))) return W->oom = 1;
  W->n++;
  return 0;
}

static int by_bytes(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

vd_code vd_file_list(vd_ctx *ctx, const char *url, const char *token, int max, vd_listing *out, vd_err *err) {
  char *path = vd_url_path(url);
  if (!path) return vd_nomem(err);
  ctx->stats[VD_BE_FILE].requests++;
  char *slash = strrchr(path, '/');
  const char *prefix = slash ? slash + 1 : path;
  char *dir = !slash ? strdup(".") : slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
  walk w = {dir, dir ? strlen(dir) : 0, prefix, token && *token ? token : NULL, NULL, 0, 0, 0};
  vd_code rc = VD_OK;
  struct stat st;
  if (!dir) {
    rc = vd_nomem(err);
  } else if (stat(dir, &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) rc = vd_fail(err, VD_IO, "%s: cannot list (%s)", dir, strerror(errno));
    /* else: no directory, no objects (as a prefix nothing is stored under) */
  } else if (!S_ISDIR(st.st_mode)) {
    rc = vd_fail(err, VD_IO, "%s: not a directory", dir);
  } else {
    W = &w;
    int r = nftw(dir, visit, 16, FTW_PHYS);
    W = NULL;
    if (w.oom)
      rc = vd_nomem(err);
    else if (r != 0)
      rc = vd_fail(err, VD_IO, "%s: cannot list (%s)", dir, strerror(errno));
  }
  if (!rc && w.n) {
    qsort(w.keys, w.n, sizeof *w.keys, by_bytes);
    size_t take = w.n < (size_t)max ? w.n : (size_t)max;
    if (!(out->ent = calloc(take, sizeof *out->ent))) rc = vd_nomem(err);
    for (size_t i = 0; i < take && !rc; i++) {
      char *full = malloc(strlen(dir) + strlen(w.keys[i]) + 2);
      if (!full) {
        rc = vd_nomem(err);
        break;
      }
      sprintf(full, "%s/%s", strcmp(dir, "/") ? dir : "", w.keys[i]);
      int fd;
      vd_err e2;
      if (vd_file_open_regular(full, O_RDONLY, &fd, &st, &e2) == VD_OK) { /* else gone meanwhile: not listed */
        vd_listent *le = &out->ent[out->n++];
        le->info.size = -1;
        vd_file_fill_info(fd, &st, &le->info);
        le->has_meta = 1;
        le->key = w.keys[i];
        w.keys[i] = NULL;
        close(fd);
      }
      free(full);
    }
    if (!rc && take < w.n && !(out->next = strdup(w.keys[take - 1] ? w.keys[take - 1] : out->ent[out->n - 1].key)))
      rc = vd_nomem(err);
  }
  for (size_t i = 0; i < w.n; i++) free(w.keys[i]);
  free(w.keys);
  free(dir);
  free(path);
  return rc;
}
