/* The LINDI writer reads an archive (lindi_writer_impl.h): its entry, index and end,
 * found and checked the way readers find them; the file opened without following a
 * symlink it did not expect; the flock every writer of the archive takes; the view kept
 * of the file (size, inode, mtime, entry) that tells a writer to reload. */
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lindi_writer_impl.h"
#include "formats/tar/tar.h"
#include "store/store.h"
#include "util/base64.h"
#include "util/pyjson.h"

static int all_zero(const unsigned char *p, size_t n) {
  return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* Where tar's end-of-archive marker is: the first zero block after the last member.
 * New members go there, not at size - 1024: an archive padded to GNU tar's 10 KiB
 * records has more zero blocks, and tar stops reading at the first one. The walk starts
 * past the furthest member the index lists and steps over members it does not list
 * (trash); to write, everything from the marker to the end of the file must be zeros
 * (a scan does not ask: another writer's uncommitted members lie there meanwhile). */
vd_code lw_find_end(lindi_writer *w, const lindi_file *files, int n, int64_t size, int for_write, int64_t *end,
                        vd_err *err) {
  int64_t off = 1536;
  for (int i = 0; i < n; i++) {
    if (files[i].d > size || files[i].s > size) continue; /* reported by the caller */
    int64_t e = files[i].d + tar_padded(files[i].s);
    if (e > off) off = e;
  }
  unsigned char h[64 * 1024];
  for (;;) {
    if (off > size - 1024)
      return vd_fail(err, VD_INVALID, "%s: the archive does not end with two zero blocks (an unfinished write by another tool?)",
                     w->path);
    if (lw_pr(w->fd, h, TAR_BLOCK, off, w->path, err)) return err->code;
    if (all_zero(h, TAR_BLOCK)) break;
    tar_header th;
    if (tar_parse(h, &th) != 0 || !th.checksum_ok || th.size < 0 || th.size > size - off)
      return vd_fail(err, VD_INVALID, "%s: corrupt tar header at byte %lld, after the last indexed member", w->path,
                     (long long)off);
    off += TAR_BLOCK + tar_padded(th.size);
  }
  *end = off;
  for (int64_t k = off; k < size && for_write;) {
    size_t n = size - k < (int64_t)sizeof h ? (size_t)(size - k) : sizeof h;
    if (lw_pr(w->fd, h, n, k, w->path, err)) return err->code;
    if (!all_zero(h, n))
      return vd_fail(err, VD_INVALID, "%s: data after the end-of-archive marker at byte %lld (an unfinished write by another tool?)",
                     w->path, (long long)off);
    k += (int64_t)n;
  }
  return VD_OK;
}

/* What BEGIN compares to see whether anyone committed since this state was read. */
void lw_remember_file(lindi_writer *w, const struct stat *st) {
  w->size_seen = st->st_size;
  w->dev_seen = st->st_dev;
  w->ino_seen = st->st_ino;
  w->mtime_seen = st->st_mtim;
}

int lw_file_changed(const lindi_writer *w, const struct stat *st, const unsigned char *entry) {
  return st->st_size != w->size_seen || st->st_dev != w->dev_seen || st->st_ino != w->ino_seen ||
         st->st_mtim.tv_sec != w->mtime_seen.tv_sec || st->st_mtim.tv_nsec != w->mtime_seen.tv_nsec ||
         memcmp(entry, w->entry_seen, LINDI_ENTRY_SIZE) != 0;
}

/* The index's bytes for lindi_read_index, a pread of up to FD_PIECE at a time. */
#define FD_PIECE (256 << 10)

typedef struct fd_src {
  lindi_writer *w;
  int64_t id, is, got;
  unsigned char *buf;
} fd_src;

static vd_code fd_more(void *arg, const unsigned char **p, size_t *n, vd_err *err) {
  fd_src *s = arg;
  size_t k = s->is - s->got < FD_PIECE ? (size_t)(s->is - s->got) : FD_PIECE;
  if (k && lw_pr(s->w->fd, s->buf, k, s->id + s->got, s->w->path, err)) return err->code;
  s->got += (int64_t)k;
  *p = s->buf, *n = k;
  return VD_OK;
}

/* The index the entry in head (the file's first 1536 bytes) names, parsed and checked as
 * lindi's opener checks it; *len gets its text's length. */
vd_code lw_read_index(lindi_writer *w, const unsigned char *head, int64_t size, lindi_index *ix, int64_t *len,
                      vd_err *err) {
  int64_t io, id, is;
  if (lindi_parse_entry((const char *)head + 512, LINDI_ENTRY_SIZE, w->path, &io, &id, &is, err)) return err->code;
  if (id > size || is > size - id)
    return vd_fail(err, VD_INVALID, "%s: .tar_index.json runs past the end of the file", w->path);
  /* the index is read in pieces, only until its JSON value is complete (the padding
   * after it is never read), and parsed as it comes: no copy of its text is held */
  fd_src src = {w, id, is, 0, malloc(is < FD_PIECE ? (size_t)is + 1 : FD_PIECE)};
  ix->io = io, ix->id = id, ix->is = is;
  vd_code rc = src.buf ? lindi_read_index(fd_more, &src, is, w->path, ix, len, err) : vd_nomem(err);
  free(src.buf);
  return rc;
}

/* Reads the committed state from disk; for_write: under the lock, about to write. */
vd_code lw_load(lindi_writer *w, int for_write, vd_err *err) {
  lw_clear_state(w);
  w->for_write = 0;
  struct stat st;
  if (fstat(w->fd, &st)) return lw_sys_fail(err, w->path, "cannot stat");
  unsigned char head[1536];
  size_t nhead = st.st_size < (off_t)sizeof head ? (size_t)st.st_size : sizeof head;
  if (nhead && lw_pr(w->fd, head, nhead, 0, w->path, err)) return err->code;
  if (lindi_is_json_form(head, nhead))
    return vd_fail(err, VD_UNSUPPORTED, "%s: a .lindi.json (LINDI's JSON form): vdsql writes only LINDI tar archives",
                   w->path);
  if (st.st_size < 1536 + 1024) return vd_fail(err, VD_INVALID, "%s: too short for a LINDI archive", w->path);
  if (memcmp(head + 257, "ustar", 5) != 0)
    return vd_fail(err, VD_INVALID, "%s: not a LINDI archive (no ustar header at byte 0)", w->path);
  lindi_index ix = {0};
  int64_t len = 0;
  vd_code rc = lw_read_index(w, head, st.st_size, &ix, &len, err);
  if (rc) return rc;
  w->idx_text_len = len;
  if ((rc = lw_find_end(w, ix.files, ix.n, st.st_size, for_write, &w->end, err))) {
    lindi_index_free(&ix);
    return rc;
  }
  for (int i = 0; i < ix.n && !rc; i++) {
    if (ix.files[i].d + ix.files[i].s > w->end)
      rc = vd_fail(err, VD_INVALID, "%s: index entry %s runs past the end of the archive", w->path, ix.files[i].name);
    else if (lw_add_file(w, ix.files[i].name, ix.files[i].o, ix.files[i].d, ix.files[i].s))
      rc = vd_nomem(err);
  }
  lindi_index_free(&ix);
  if (rc) return rc;
  w->base_n = w->n;
  w->tail = w->end;
  memset(w->hold, 0, sizeof w->hold);
  w->spare.s = 0;
  int64_t sp[4];
  unsigned char sh[TAR_BLOCK];
  tar_header th;
  vd_err ignore;
  if (lindi_parse_spare((const char *)head + 512, LINDI_ENTRY_SIZE, sp, &w->gen) == 0 && sp[1] == sp[0] + TAR_BLOCK &&
      sp[1] + sp[2] <= w->end && sp[3] <= sp[2] && lw_pr(w->fd, sh, TAR_BLOCK, sp[0], w->path, &ignore) == VD_OK &&
      tar_parse(sh, &th) == 0 && th.checksum_ok && th.size == sp[2] &&
      strncmp(th.name, ".trash/" LINDI_INDEX_NAME ".", 23) == 0) {
    int listed = 0;
    for (int i = 0; i < w->n && !listed; i++) listed = w->files[i].o == sp[0];
    if (!listed) {
      w->spare = (lindi_file){NULL, sp[0], sp[1], sp[2]};
      w->spare_dashed = sp[3];
    }
  }
  memcpy(w->entry_seen, head + 512, LINDI_ENTRY_SIZE);
  lw_remember_file(w, &st);
  w->for_write = for_write;
  return VD_OK;
}

/* An empty archive, as lindi creates one: entry, 8 KiB index, 8 KiB lindi.json with
 * {"refs": {}}, two zero blocks (19,968 bytes); written to a temporary file and linked
 * into place, so a crash never leaves a half-made archive under the name. */
vd_code lw_create_empty(const char *path, vd_err *err) {
  unsigned char buf[19968];
  memset(buf, 0, sizeof buf);
  lindi_file files[2] = {{LINDI_ENTRY_NAME, 0, 512, LINDI_ENTRY_SIZE}, {LINDI_INDEX_NAME, 1536, 2048, 8192}};
  lindi_file all[3] = {files[0], files[1], {LINDI_JSON_NAME, 10240, 10752, 8192}};
  vd_buf ix = {0};
  static const char refs[] = "{\n  \"refs\": {}\n}";
  if (tar_format(buf, LINDI_ENTRY_NAME, LINDI_ENTRY_SIZE, err) ||
      lindi_format_entry(1536, 2048, 8192, buf + 512, err) || tar_format(buf + 1536, LINDI_INDEX_NAME, 8192, err) ||
      tar_format(buf + 10240, LINDI_JSON_NAME, 8192, err) || lindi_format_index(all, 3, &ix, err))
    return err->code;
  memset(buf + 2048, ' ', 8192);
  memcpy(buf + 2048, ix.data, ix.len);
  vd_buf_free(&ix);
  memset(buf + 10752, ' ', 8192);
  memcpy(buf + 10752, refs, sizeof refs - 1);
  char *tmp = malloc(strlen(path) + 32);
  if (!tmp) return vd_nomem(err);
  sprintf(tmp, "%s.vdsql-new-XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    vd_fail(err, VD_IO, "%s: cannot create (%s)", path, strerror(errno));
    free(tmp);
    return VD_IO;
  }
  vd_code rc = lw_pw(fd, buf, sizeof buf, 0, path, err);
  if (!rc && (fchmod(fd, 0644) || fsync(fd))) rc = lw_sys_fail(err, path, "cannot sync the new archive");
  close(fd);
  if (!rc && link(tmp, path) != 0 && errno != EEXIST) rc = lw_sys_fail(err, path, "cannot create");
  unlink(tmp);
  free(tmp);
  if (!rc) lw_sync_dir(path);
  return rc;
}

/* The archive's path for comparing two spellings of it, also before it exists (then its
 * directory resolved plus its name), so the tables of a new archive share one writer. */
char *lw_canonical(const char *path) {
  char *r = realpath(path, NULL);
  if (r || errno != ENOENT) return r;
  char *d = strdup(path), *b = strdup(path), *rd = d && b ? realpath(dirname(d), NULL) : NULL, *out = NULL;
  if (rd && (out = malloc(strlen(rd) + strlen(b) + 2))) sprintf(out, "%s/%s", rd, basename(b));
  free(d);
  free(b);
  free(rd);
  return out;
}

int lw_exists_nofollow(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

/* Opens the archive file; a missing one is noted and created at the first BEGIN, so
 * connecting (which opening a database does) never creates or changes a file. */
vd_code lw_open_file(lindi_writer *w, vd_err *err) {
  struct stat st;
  vd_code rc = vd_file_open_regular(w->path, O_RDWR, &w->fd, &st, err);
  w->absent = rc == VD_NOTFOUND && access(w->path, F_OK) != 0 && errno == ENOENT;
  if (rc) w->fd = -1;
  return w->absent ? VD_OK : rc;
}

/* The file's size, mtime and entry: whether another writer committed between two looks. */
static int look(lindi_writer *w, struct stat *st, unsigned char entry[LINDI_ENTRY_SIZE]) {
  vd_err e = {0};
  if (fstat(w->fd, st)) return -1;
  memset(entry, 0, LINDI_ENTRY_SIZE);
  if (st->st_size >= 512 + LINDI_ENTRY_SIZE && lw_pr(w->fd, entry, LINDI_ENTRY_SIZE, 512, w->path, &e)) return -1;
  return 0;
}

/* lw_load() without the lock, at open: another writer may commit while it reads (the entry
 * read before the commit, the file's end after it), which looks like a broken end. Such a
 * read is retried when the file changed meanwhile; a fault that stays while the file
 * does not change is the archive's own. Taking the lock here instead would make opening
 * wait for another connection's whole transaction. */
vd_code lw_load_unlocked(lindi_writer *w, vd_err *err) {
  for (int tries = 0;; tries++) {
    struct stat a, b;
    unsigned char ea[LINDI_ENTRY_SIZE], eb[LINDI_ENTRY_SIZE];
    int looked = look(w, &a, ea) == 0;
    vd_code rc = lw_load(w, 0, err);
    if (!rc || tries == 20 || !looked || look(w, &b, eb)) return rc;
    if (a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
        !memcmp(ea, eb, LINDI_ENTRY_SIZE))
      return rc;
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
}

static double mono_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

/* Waits at most lock_timeout for the archive's lock. SQLite asks a table to begin again
 * with every statement of a transaction whose first one was refused, so a refusal is
 * remembered: until lock_timeout has passed since, the lock is tried once, without
 * waiting, and a transaction of many statements waits for another writer once, not once
 * per statement. */
vd_code lw_lock(lindi_writer *w, vd_err *err) {
  double t0 = mono_s();
  int wait = !(w->refused_at && t0 - w->refused_at < w->ctx->cfg.lock_timeout);
  for (;;) {
    if (flock(w->fd, LOCK_EX | LOCK_NB) == 0) {
      w->locked = 1;
      w->refused_at = 0;
      return VD_OK;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) return lw_sys_fail(err, w->path, "cannot lock");
    if (vd_ctx_check_interrupt(w->ctx, err)) return err->code;
    double t = mono_s();
    if (!wait || t - t0 >= w->ctx->cfg.lock_timeout) {
      if (wait) w->refused_at = t;
      return vd_fail(err, VD_BUSY, "%s: another writer holds the archive (waited %g s; see vdsql_config('lock_timeout'))",
                     w->path, w->ctx->cfg.lock_timeout);
    }
    struct timespec nap = {0, 10 * 1000 * 1000};
    nanosleep(&nap, NULL);
  }
}

void lw_unlock(lindi_writer *w) {
  if (w->locked) flock(w->fd, LOCK_UN);
  w->locked = 0;
}
