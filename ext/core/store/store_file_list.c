/* Local-file backend, listings: the regular files under a directory whose names (relative
 * to it) start with a prefix, recursively, in byte order, a page at a time, each with its
 * size, etag, time and user metadata (extended attributes are read with the listing, as
 * Azure's include=metadata gives them; left out with VD_LIST_NO_META, and the stat too
 * with VD_LIST_KEYS_ONLY: then the directory entry's type alone says "regular file"). With
 * VD_LIST_FOLDER (the delimiter '/'), only the directory's own level:
 * its files, and its sub-directories as prefixes ("name/"), as S3 gives CommonPrefixes.
 *
 * The continuation token is the last key (or prefix) of a page: the next page is what
 * comes after it, so files added or removed between pages neither repeat nor shift what
 * follows. A page walks only what it gives: a stack of directories, each read once and
 * sorted, is descended along the token's path (directories wholly before it are skipped
 * unread), then walked depth first until the page is full. Sorting a directory's names
 * with '/' after a sub-directory's name gives byte order of whole keys ("a/x" comes after
 * "a-b", as '/' > '-'). Memory is the directories on the current path, never the tree;
 * nothing stays open between pages (a walk held open would hold descriptors).
 * Symbolic links are not followed (a link to a directory could loop) and vdsql's own
 * temporary files are left out. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend.h"

typedef struct level {
  char **names; /* sorted; a directory's name ends in '/' */
  size_t n, i;
  size_t rel; /* length of the key prefix this directory's names follow (the walk's rel) */
} level;

typedef struct walk {
  const char *dir, *prefix, *after;
  int delim, flags;
  char *rel; /* the current directory's key prefix: "" or "a/b/" */
  size_t rellen, relcap;
  level *st;
  int depth, cap;
} walk;

static int by_bytes(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void level_free(level *l) {
  for (size_t i = 0; i < l->n; i++) free(l->names[i]);
  free(l->names);
}

/* Can a name of the current directory (key = rel + name) give anything in the page? A
 * file or a prefix must come after the token; a directory walked into must hold a key
 * after it: it does unless it lies wholly before the token (sorts before it and is not a
 * leading part of it). At the top, the name must start with the prefix. */
static int wanted(const walk *w, const char *name, int isdir) {
  if (w->depth == 0 && strncmp(name, w->prefix, strlen(w->prefix)) != 0) return 0;
  if (!w->after) return 1;
  size_t rl = w->rellen, nl = strlen(name);
  int c = strncmp(w->rel, w->after, rl);
  if (c) return c > 0;
  const char *a = w->after + rl;
  c = strcmp(name, a);
  if (!isdir || w->delim) return c > 0;
  return c > 0 || strncmp(a, name, nl) == 0;
}

/* Reads the directory at path (rel names it within the listing) onto the stack, sorted,
 * keeping only the names that can matter. A directory gone meanwhile is empty. */
static vd_code push(walk *w, const char *path, vd_err *err) {
  DIR *d = opendir(path);
  if (!d) {
    if (errno == ENOENT || errno == ENOTDIR) return VD_OK;
    return vd_fail(err, VD_IO, "%s: cannot list (%s)", path, strerror(errno));
  }
  if (w->depth == w->cap) {
    int cap = w->cap ? 2 * w->cap : 8;
    level *s = realloc(w->st, (size_t)cap * sizeof *s);
    if (!s) {
      closedir(d);
      return vd_nomem(err);
    }
    w->st = s;
    w->cap = cap;
  }
  level l = {NULL, 0, 0, w->rellen};
  size_t cap = 0;
  size_t pl = strlen(path);
  vd_code rc = VD_OK;
  struct dirent *e;
  for (errno = 0; !rc && (e = readdir(d)); errno = 0) {
    const char *nm = e->d_name;
    if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0) continue;
    int isdir = e->d_type == DT_DIR, isreg = e->d_type == DT_REG;
    if (e->d_type == DT_UNKNOWN) { /* some file systems do not say: ask */
      char *full = malloc(pl + strlen(nm) + 2);
      struct stat st;
      if (!full) {
        rc = vd_nomem(err);
        break;
      }
      sprintf(full, "%s/%s", path, nm);
      if (lstat(full, &st) == 0) isdir = S_ISDIR(st.st_mode), isreg = S_ISREG(st.st_mode);
      free(full);
    }
    if ((!isdir && !isreg) || (isreg && strncmp(nm, ".vdsql-put-", 11) == 0)) continue;
    size_t nl = strlen(nm);
    char *name = malloc(nl + 2);
    if (!name) {
      rc = vd_nomem(err);
      break;
    }
    memcpy(name, nm, nl);
    name[nl] = isdir ? '/' : 0;
    name[nl + isdir] = 0;
    if (!wanted(w, name, isdir)) {
      free(name);
      continue;
    }
    if (l.n == cap) {
      cap = cap ? 2 * cap : 32;
      char **nn = realloc(l.names, cap * sizeof *nn);
      if (!nn) {
        free(name);
        rc = vd_nomem(err);
        break;
      }
      l.names = nn;
    }
    l.names[l.n++] = name;
  }
  if (!rc && errno) rc = vd_fail(err, VD_IO, "%s: cannot list (%s)", path, strerror(errno));
  closedir(d);
  if (rc) {
    level_free(&l);
    return rc;
  }
  if (l.n) qsort(l.names, l.n, sizeof *l.names, by_bytes); /* names is NULL when none was kept */
  w->st[w->depth++] = l;
  return VD_OK;
}

/* rel + name as the current key (rel grows into a sub-directory's key prefix). */
static int set_rel(walk *w, size_t at, const char *name) {
  size_t nl = strlen(name);
  if (at + nl + 1 > w->relcap) {
    size_t cap = 2 * (at + nl + 1);
    char *r = realloc(w->rel, cap);
    if (!r) return -1;
    w->rel = r;
    w->relcap = cap;
  }
  memcpy(w->rel + at, name, nl + 1);
  w->rellen = at + nl;
  return 0;
}

/* Adds the file or prefix key (w->rel) to the page; a file that is gone or is no
 * longer a regular file is not listed. */
static vd_code emit(walk *w, int isdir, vd_listing *out, int max, vd_err *err) {
  if (isdir) {
    char **p = realloc(out->prefixes, (size_t)(out->nprefixes + 1) * sizeof *p);
    if (!p) return vd_nomem(err);
    out->prefixes = p;
    if (!(p[out->nprefixes] = strdup(w->rel))) return vd_nomem(err);
    out->nprefixes++;
    return VD_OK;
  }
  int keys = w->flags & VD_LIST_KEYS_ONLY; /* the directory's entry type said "regular file" */
  char *full = keys ? NULL : malloc(strlen(w->dir) + w->rellen + 2);
  struct stat st;
  if (!keys && !full) return vd_nomem(err);
  if (!keys) sprintf(full, "%s/%s", strcmp(w->dir, "/") ? w->dir : "", w->rel);
  if (!keys && (lstat(full, &st) != 0 || !S_ISREG(st.st_mode))) {
    free(full);
    return VD_OK;
  }
  if (!out->ent && !(out->ent = calloc((size_t)max, sizeof *out->ent))) {
    free(full);
    return vd_nomem(err);
  }
  vd_listent *le = &out->ent[out->n];
  le->info.size = -1;
  if (!keys && (w->flags & VD_LIST_NO_META)) { /* no attribute read */
    le->info.size = st.st_size;
    le->info.mtime = st.st_mtime;
    vd_file_etag(&st, le->info.etag, sizeof le->info.etag);
  } else if (!keys) {
    vd_file_fill_info_path(full, &st, &le->info);
    le->has_meta = 1;
  }
  free(full);
  if (!(le->key = strdup(w->rel))) {
    vd_objinfo_free(&le->info);
    return vd_nomem(err);
  }
  out->n++;
  return VD_OK;
}

/* Walks from the top of the stack until the page holds max keys and prefixes; a further
 * one found means there is more (then the last one given is the token). */
static vd_code run(walk *w, int max, vd_listing *out, vd_err *err) {
  vd_code rc = VD_OK;
  while (!rc && w->depth) {
    level *l = &w->st[w->depth - 1];
    if (l->i == l->n) {
      level_free(l);
      w->depth--;
      continue;
    }
    const char *name = l->names[l->i++];
    size_t nl = strlen(name);
    int isdir = nl && name[nl - 1] == '/';
    if (set_rel(w, l->rel, name)) return vd_nomem(err);
    if (isdir && !w->delim) {
      char *path = malloc(strlen(w->dir) + w->rellen + 2);
      if (!path) return vd_nomem(err);
      sprintf(path, "%s/%.*s", strcmp(w->dir, "/") ? w->dir : "", (int)(w->rellen - 1), w->rel);
      rc = push(w, path, err);
      free(path);
      continue;
    }
    if (out->n + out->nprefixes == max) {
      const char *last = out->n && (!out->nprefixes || strcmp(out->ent[out->n - 1].key, out->prefixes[out->nprefixes - 1]) > 0)
                             ? out->ent[out->n - 1].key
                             : out->prefixes[out->nprefixes - 1];
      if (!(out->next = strdup(last))) rc = vd_nomem(err);
      break;
    }
    rc = emit(w, isdir, out, max, err);
  }
  return rc;
}

vd_code vd_file_list(vd_ctx *ctx, const char *url, const char *token, int max, int flags, vd_listing *out,
                     vd_err *err) {
  char *path = vd_url_path(url);
  if (!path) return vd_nomem(err);
  ctx->stats[VD_BE_FILE].requests++;
  char *slash = strrchr(path, '/');
  const char *prefix = slash ? slash + 1 : path;
  char *dir = !slash ? strdup(".") : slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
  walk w = {dir, prefix, token && *token ? token : NULL, flags & VD_LIST_FOLDER, flags, NULL, 0, 0, NULL, 0, 0};
  vd_code rc = VD_OK;
  struct stat st;
  if (!dir || set_rel(&w, 0, "")) {
    rc = vd_nomem(err);
  } else if (stat(dir, &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) rc = vd_fail(err, VD_IO, "%s: cannot list (%s)", dir, strerror(errno));
    /* else: no directory, no objects (as a prefix nothing is stored under) */
  } else if (!S_ISDIR(st.st_mode)) {
    rc = vd_fail(err, VD_IO, "%s: not a directory", dir);
  } else if (!(rc = push(&w, dir, err))) {
    rc = run(&w, max, out, err);
  }
  for (int i = 0; i < w.depth; i++) level_free(&w.st[i]);
  free(w.st);
  free(w.rel);
  free(dir);
  free(path);
  return rc;
}
