/* The LINDI writer's bottom (lindi_writer_impl.h): positioned reads and writes that name
 * the archive in every error, syncs, the append buffer, the test hooks that kill the
 * process at a chosen step or write of a commit, and the in-memory member list with its
 * trash (what a transaction renames lindi's way). */
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <openssl/rand.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lindi_writer_impl.h"
#include "formats/tar/tar.h"
#include "store/store.h"
#include "util/base64.h"
#include "util/pyjson.h"

/* Test hooks. VDSQL_CRASHPOINT=k kills the process with SIGKILL at step k of a commit
 * (after VDSQL_CRASHPOINT_SKIP commits), so the tests can stop a writer at every point
 * of the protocol, also in a commit that follows others. VDSQL_CRASH_AT_WRITE=n kills it
 * just before the n-th write, truncation or sync of a commit (any of them, journal
 * included), and VDSQL_COMMIT_WRITES=file records how many a finished commit made, so a
 * test can draw kills that always land inside a commit. */
static int commits_seen, in_commit, commit_writes;
void lw_commit_begin(void) {
  commits_seen++;
  in_commit = 1;
}
void lw_commit_abandon(void) { in_commit = commit_writes = 0; }

void lw_crashpoint(int k) {
  const char *s = getenv("VDSQL_CRASHPOINT"), *skip = getenv("VDSQL_CRASHPOINT_SKIP");
  if (s && atoi(s) == k && commits_seen > (skip ? atoi(skip) : 0)) raise(SIGKILL);
}

void lw_write_step(void) {
  if (!in_commit) return;
  const char *s = getenv("VDSQL_CRASH_AT_WRITE");
  if (++commit_writes == (s ? atoi(s) : -1)) raise(SIGKILL);
}

void lw_commit_done(void) {
  const char *f = getenv("VDSQL_COMMIT_WRITES");
  FILE *o = f ? fopen(f, "w") : NULL;
  if (o) {
    fprintf(o, "%d\n", commit_writes);
    fclose(o);
  }
  in_commit = commit_writes = 0;
}

vd_code lw_sys_fail(vd_err *err, const char *path, const char *what) {
  return vd_fail(err, VD_IO, "%s: %s (%s)", path, what, strerror(errno));
}

vd_code lw_pw(int fd, const void *p, size_t n, int64_t off, const char *path, vd_err *err) {
  const unsigned char *b = p;
  lw_write_step();
  while (n) {
    ssize_t k = pwrite(fd, b, n, off);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return lw_sys_fail(err, path, "write failed");
    b += k, n -= (size_t)k, off += k;
  }
  return VD_OK;
}

vd_code lw_pr(int fd, void *p, size_t n, int64_t off, const char *path, vd_err *err) {
  unsigned char *b = p;
  while (n) {
    ssize_t k = pread(fd, b, n, off);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return lw_sys_fail(err, path, "read failed");
    if (k == 0) return vd_fail(err, VD_INVALID, "%s: archive ends at byte %lld, inside data it must hold", path, (long long)off);
    b += k, n -= (size_t)k, off += k;
  }
  return VD_OK;
}

vd_code lw_sync_fd(int fd, const char *path, vd_err *err) {
  lw_write_step();
  return fdatasync(fd) ? lw_sys_fail(err, path, "fdatasync failed") : VD_OK;
}

void lw_sync_dir(const char *path) {
  char *copy = strdup(path);
  if (!copy) return;
  int d = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d >= 0) {
    fsync(d);
    close(d);
  }
  free(copy);
}

#define WB_SIZE (1 << 20)

/* Appends are gathered into one write per MiB rather than one per member. */
vd_code lw_flush_wb(lindi_writer *w, vd_err *err) {
  vd_code rc = w->wb_len ? lw_pw(w->fd, w->wb, w->wb_len, w->wb_off, w->path, err) : VD_OK;
  w->wb_len = 0;
  return rc;
}

static vd_code put_bytes(lindi_writer *w, int64_t off, const unsigned char *p, size_t n, vd_err *err) {
  if (!w->wb && !(w->wb = malloc(WB_SIZE))) return lw_pw(w->fd, p, n, off, w->path, err);
  if (w->wb_len && off != w->wb_off + (int64_t)w->wb_len && lw_flush_wb(w, err)) return err->code;
  while (n) {
    if (!w->wb_len) w->wb_off = off;
    size_t k = WB_SIZE - w->wb_len < n ? WB_SIZE - w->wb_len : n;
    memcpy(w->wb + w->wb_len, p, k);
    w->wb_len += k, p += k, off += (int64_t)k, n -= k;
    if (w->wb_len == WB_SIZE && lw_flush_wb(w, err)) return err->code;
  }
  return VD_OK;
}

/* Writes through the hold: bytes for [end, end+1024) are kept for the commit. */
vd_code lw_wr(lindi_writer *w, int64_t off, const void *p, size_t n, vd_err *err) {
  const unsigned char *b = p;
  int64_t hs = w->end, he = w->end + 1024, e = off + (int64_t)n;
  if (off < he && e > hs) {
    int64_t a = off > hs ? off : hs, z = e < he ? e : he;
    memcpy(w->hold + (a - hs), b + (a - off), (size_t)(z - a));
    if (off < hs && (lw_flush_wb(w, err) || lw_pw(w->fd, b, (size_t)(hs - off), off, w->path, err))) return err->code;
    if (e > he) return put_bytes(w, he, b + (he - off), (size_t)(e - he), err);
    return VD_OK;
  }
  if (off < hs) return lw_flush_wb(w, err) ? err->code : lw_pw(w->fd, b, n, off, w->path, err);
  return put_bytes(w, off, b, n, err);
}

int lw_add_file(lindi_writer *w, const char *name, int64_t o, int64_t d, int64_t s) {
  if (w->n == w->cap) {
    int cap = w->cap ? w->cap * 2 : 256;
    lindi_file *f = realloc(w->files, cap * sizeof *f);
    if (!f) return -1;
    w->files = f;
    w->cap = cap;
  }
  char *nm = strdup(name);
  if (!nm || vd_strmap_put(&w->map, nm, w->n)) {
    free(nm);
    return -1;
  }
  w->files[w->n++] = (lindi_file){nm, o, d, s};
  return 0;
}

void lw_clear_state(lindi_writer *w) {
  lw_drop_savepoints(w, 0);
  cJSON_Delete(w->refs_doc);
  w->refs_doc = NULL;
  w->refs_dirty = 0;
  for (int i = 0; i < w->n; i++) free(w->files[i].name);
  for (int i = 0; i < w->ntrash; i++) free(w->trash[i].name);
  w->n = w->ntrash = w->nsp = 0;
  vd_strmap_free(&w->map);
}

int lw_reserved(const char *name) {
  return strcmp(name, LINDI_ENTRY_NAME) == 0 || strcmp(name, LINDI_INDEX_NAME) == 0 ||
         strcmp(name, LINDI_JSON_NAME) == 0 || strncmp(name, ".trash/", 7) == 0;
}

vd_code lw_add_trash(lindi_writer *w, int pos, vd_err *err) {
  if (w->ntrash == w->trashcap) {
    int cap = w->trashcap ? w->trashcap * 2 : 16;
    trash_item *t = realloc(w->trash, cap * sizeof *t);
    if (!t) return vd_nomem(err);
    w->trash = t;
    w->trashcap = cap;
  }
  lindi_file *f = &w->files[pos];
  trash_item *t = &w->trash[w->ntrash++];
  memset(t, 0, sizeof *t);
  t->pos = pos, t->name = f->name, t->o = f->o, t->s = f->s, t->dash = 0; /* no dashes: a reader of the old entry may still read it */
  vd_strmap_del(&w->map, f->name);
  f->name = NULL;
  w->dirty = 1;
  return VD_OK;
}

static void random_letters(char *out, int n) {
  unsigned char r[16];
  if (RAND_bytes(r, n) != 1)
    for (int i = 0; i < n; i++) r[i] = (unsigned char)rand();
  for (int i = 0; i < n; i++) out[i] = (char)('a' + r[i] % 26);
  out[n] = 0;
}

void lw_trash_name(trash_item *t) {
  char rnd[11];
  random_letters(rnd, 10);
  snprintf(t->newname, sizeof t->newname, ".trash/%s.%s", t->name, rnd);
  if (strlen(t->newname) > 255 || tar_check_name(t->newname, strlen(t->newname), &(vd_err){0}))
    snprintf(t->newname, sizeof t->newname, ".trash/%.80s.%s", strrchr(t->name, '/') ? strrchr(t->name, '/') + 1 : t->name, rnd);
}

void lw_drop_savepoints(lindi_writer *w, int from) {
  for (int i = from; i < w->nsp; i++) cJSON_Delete(w->sp[i].refs);
  if (from < w->nsp) w->nsp = from;
}

const lindi_file *lindi_writer_find(const lindi_writer *w, const char *name) {
  int pos = vd_strmap_get(&w->map, name);
  return pos >= 0 ? &w->files[pos] : NULL;
}
