/* LINDI archive writer (see lindi_writer.h and docs/lindi.md, "How writes stay safe").
 *
 * What each reader looks at: GNU tar walks headers from byte 0 and stops at the first
 * zero block; lindi (and lindi_files) read .tar_entry.json at 512 and the index it
 * names. A transaction therefore:
 *   - writes new members from the old end E onwards, but keeps the bytes of the old
 *     two zero blocks [E, E+1024) in memory (hold), so tar still stops at E;
 *   - at commit writes the new index as a new member (or in place when that write is
 *     one pwrite inside one 4 KiB page, which a SIGKILL cannot tear), the new trailer,
 *     fdatasync, a journal naming every remaining step, then
 *   - flips .tar_entry.json (one 1024-byte pwrite in page 0): lindi's commit point;
 *   - writes the held blocks at E: tar's commit point;
 *   - trashes replaced/deleted copies lindi's way, fdatasync, removes the journal.
 * A journal left by a crash is rolled forward (entry flipped) or back (not flipped) by
 * the next writer, under the lock, before anything else. A journal proves that it is one:
 * it ends with the SHA-256 of its own text, names the archive's device and inode and the
 * entry the archive had when the transaction began; recovery acts only when all of that
 * matches and the archive is in the state the journal started from or committed.
 *
 * Every commit raises the generation kept in the entry ("vdsql_gen"), also a commit whose
 * commit point is an in-place rewrite of the index or of lindi.json (the entry is then
 * rewritten right after, a step the journal carries): a writer compares the entry (and
 * the file's size, inode and mtime, which also catch other tools) under the lock at BEGIN
 * and reloads on any difference, so it never writes from a view older than the last
 * commit. */
#include "lindi_writer.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <openssl/rand.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"
#include "util/base64.h"
#include "util/pyjson.h"
#include "util/strmap.h"
#include "lindi_journal.h"
#include "formats/tar/tar.h"

typedef struct trash_item {
  int pos;
  char *name;          /* the member's name before trashing */
  char newname[300];
  int64_t o, s;
  int64_t dash;        /* bytes overwritten with '-': all of a member; an index's JSON text only */
} trash_item;

typedef struct savepoint {
  int n, ntrash;
  int64_t tail;
  int refs_saved, refs_dirty;  /* refs copied on the first change after the savepoint */
  cJSON *refs;
} savepoint;

struct lindi_writer {
  vd_ctx *ctx;
  char *path, *journal;
  int fd, locked, in_tx, dirty;
  lindi_file *files;
  int n, cap, base_n;
  vd_strmap map;
  int64_t end, tail;           /* committed end E (start of the zero blocks); next append */
  unsigned char hold[1024];    /* bytes destined for [E, E+1024), written last */
  int64_t idx_text_len;        /* length of the committed index's JSON text */
  trash_item *trash;
  int ntrash, trashcap;
  savepoint sp[64];
  int nsp;
  unsigned char entry_seen[LINDI_ENTRY_SIZE];
  int64_t size_seen;
  dev_t dev_seen;              /* identity of the archive file, checked and named in journals */
  ino_t ino_seen;
  struct timespec mtime_seen;
  int64_t gen;                 /* the entry's vdsql_gen for the state held */
  int absent;                  /* no archive yet: it is created at the first BEGIN */
  int for_write;               /* the state held was read under the lock, fit to write from */
  cJSON *refs_doc;             /* lindi.json, parsed on first use */
  int64_t refs_text_len;       /* length of its JSON text on disk (padding excluded) */
  int64_t new_idx_len, new_refs_len; /* text lengths written by the commit under way, -1 none */
  lindi_file spare;            /* the index trashed by our last commit: dead space for the next */
  int64_t spare_dashed;        /* bytes of it overwritten with '-' */
  int64_t revive_o;            /* commit under way: header at this offset becomes the index, -1 none */
  int64_t trashed_idx_o, trashed_idx_d, trashed_idx_s, trashed_idx_len;
  unsigned char *wb;           /* appends not yet written: contiguous bytes from wb_off */
  size_t wb_len;
  int64_t wb_off;
  int refs_dirty;
  int refs;                    /* tables sharing this writer */
  int scans;                   /* cursors open on it */
  lindi_writer *next;          /* in ctx->lindi_writers */
};

/* Test hooks. VDSQL_CRASHPOINT=k kills the process with SIGKILL at step k of a commit
 * (after VDSQL_CRASHPOINT_SKIP commits), so the tests can stop a writer at every point
 * of the protocol, also in a commit that follows others. VDSQL_CRASH_AT_WRITE=n kills it
 * just before the n-th write, truncation or sync of a commit (any of them, journal
 * included), and VDSQL_COMMIT_WRITES=file records how many a finished commit made, so a
 * test can draw kills that always land inside a commit. */
static int commits_seen, in_commit, commit_writes;
static void crashpoint(int k) {
  const char *s = getenv("VDSQL_CRASHPOINT"), *skip = getenv("VDSQL_CRASHPOINT_SKIP");
  if (s && atoi(s) == k && commits_seen > (skip ? atoi(skip) : 0)) raise(SIGKILL);
}
static void write_step(void) {
  if (!in_commit) return;
  const char *s = getenv("VDSQL_CRASH_AT_WRITE");
  if (++commit_writes == (s ? atoi(s) : -1)) raise(SIGKILL);
}
static void commit_done(void) {
  const char *f = getenv("VDSQL_COMMIT_WRITES");
  FILE *o = f ? fopen(f, "w") : NULL;
  if (o) {
    fprintf(o, "%d\n", commit_writes);
    fclose(o);
  }
  in_commit = commit_writes = 0;
}

static vd_code sys_fail(vd_err *err, const char *path, const char *what) {
  return vd_fail(err, VD_IO, "%s: %s (%s)", path, what, strerror(errno));
}

static vd_code pw(int fd, const void *p, size_t n, int64_t off, const char *path, vd_err *err) {
  const unsigned char *b = p;
  write_step();
  while (n) {
    ssize_t k = pwrite(fd, b, n, off);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return sys_fail(err, path, "write failed");
    b += k, n -= (size_t)k, off += k;
  }
  return VD_OK;
}

static vd_code pr(int fd, void *p, size_t n, int64_t off, const char *path, vd_err *err) {
  unsigned char *b = p;
  while (n) {
    ssize_t k = pread(fd, b, n, off);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return sys_fail(err, path, "read failed");
    if (k == 0) return vd_fail(err, VD_INVALID, "%s: archive ends at byte %lld, inside data it must hold", path, (long long)off);
    b += k, n -= (size_t)k, off += k;
  }
  return VD_OK;
}

static vd_code sync_fd(int fd, const char *path, vd_err *err) {
  write_step();
  return fdatasync(fd) ? sys_fail(err, path, "fdatasync failed") : VD_OK;
}

static void sync_dir(const char *path) {
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
static vd_code flush_wb(lindi_writer *w, vd_err *err) {
  vd_code rc = w->wb_len ? pw(w->fd, w->wb, w->wb_len, w->wb_off, w->path, err) : VD_OK;
  w->wb_len = 0;
  return rc;
}

static vd_code put_bytes(lindi_writer *w, int64_t off, const unsigned char *p, size_t n, vd_err *err) {
  if (!w->wb && !(w->wb = malloc(WB_SIZE))) return pw(w->fd, p, n, off, w->path, err);
  if (w->wb_len && off != w->wb_off + (int64_t)w->wb_len && flush_wb(w, err)) return err->code;
  while (n) {
    if (!w->wb_len) w->wb_off = off;
    size_t k = WB_SIZE - w->wb_len < n ? WB_SIZE - w->wb_len : n;
    memcpy(w->wb + w->wb_len, p, k);
    w->wb_len += k, p += k, off += (int64_t)k, n -= k;
    if (w->wb_len == WB_SIZE && flush_wb(w, err)) return err->code;
  }
  return VD_OK;
}

/* Writes through the hold: bytes for [end, end+1024) are kept for the commit. */
static vd_code wr(lindi_writer *w, int64_t off, const void *p, size_t n, vd_err *err) {
  const unsigned char *b = p;
  int64_t hs = w->end, he = w->end + 1024, e = off + (int64_t)n;
  if (off < he && e > hs) {
    int64_t a = off > hs ? off : hs, z = e < he ? e : he;
    memcpy(w->hold + (a - hs), b + (a - off), (size_t)(z - a));
    if (off < hs && (flush_wb(w, err) || pw(w->fd, b, (size_t)(hs - off), off, w->path, err))) return err->code;
    if (e > he) return put_bytes(w, he, b + (he - off), (size_t)(e - he), err);
    return VD_OK;
  }
  if (off < hs) return flush_wb(w, err) ? err->code : pw(w->fd, b, n, off, w->path, err);
  return put_bytes(w, off, b, n, err);
}

static int add_file(lindi_writer *w, const char *name, int64_t o, int64_t d, int64_t s) {
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

static void drop_savepoints(lindi_writer *w, int from);

static void clear_state(lindi_writer *w) {
  drop_savepoints(w, 0);
  cJSON_Delete(w->refs_doc);
  w->refs_doc = NULL;
  w->refs_dirty = 0;
  for (int i = 0; i < w->n; i++) free(w->files[i].name);
  for (int i = 0; i < w->ntrash; i++) free(w->trash[i].name);
  w->n = w->ntrash = w->nsp = 0;
  vd_strmap_free(&w->map);
}

static int all_zero(const unsigned char *p, size_t n) {
  return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* Where tar's end-of-archive marker is: the first zero block after the last member.
 * New members go there, not at size - 1024: an archive padded to GNU tar's 10 KiB
 * records has more zero blocks, and tar stops reading at the first one. The walk starts
 * past the furthest member the index lists and steps over members it does not list
 * (trash); to write, everything from the marker to the end of the file must be zeros
 * (a scan does not ask: another writer's uncommitted members lie there meanwhile). */
static vd_code find_end(lindi_writer *w, const lindi_file *files, int n, int64_t size, int for_write, int64_t *end,
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
    if (pr(w->fd, h, TAR_BLOCK, off, w->path, err)) return err->code;
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
    if (pr(w->fd, h, n, k, w->path, err)) return err->code;
    if (!all_zero(h, n))
      return vd_fail(err, VD_INVALID, "%s: data after the end-of-archive marker at byte %lld (an unfinished write by another tool?)",
                     w->path, (long long)off);
    k += (int64_t)n;
  }
  return VD_OK;
}

/* What BEGIN compares to see whether anyone committed since this state was read. */
static void remember_file(lindi_writer *w, const struct stat *st) {
  w->size_seen = st->st_size;
  w->dev_seen = st->st_dev;
  w->ino_seen = st->st_ino;
  w->mtime_seen = st->st_mtim;
}

static int file_changed(const lindi_writer *w, const struct stat *st, const unsigned char *entry) {
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
  if (k && pr(s->w->fd, s->buf, k, s->id + s->got, s->w->path, err)) return err->code;
  s->got += (int64_t)k;
  *p = s->buf, *n = k;
  return VD_OK;
}

/* Reads the committed state from disk; for_write: under the lock, about to write. */
static vd_code load(lindi_writer *w, int for_write, vd_err *err) {
  clear_state(w);
  w->for_write = 0;
  struct stat st;
  if (fstat(w->fd, &st)) return sys_fail(err, w->path, "cannot stat");
  unsigned char head[1536];
  size_t nhead = st.st_size < (off_t)sizeof head ? (size_t)st.st_size : sizeof head;
  if (nhead && pr(w->fd, head, nhead, 0, w->path, err)) return err->code;
  if (lindi_is_json_form(head, nhead))
    return vd_fail(err, VD_UNSUPPORTED, "%s: a .lindi.json (LINDI's JSON form): vdsql writes only LINDI tar archives",
                   w->path);
  if (st.st_size < 1536 + 1024) return vd_fail(err, VD_INVALID, "%s: too short for a LINDI archive", w->path);
  if (memcmp(head + 257, "ustar", 5) != 0)
    return vd_fail(err, VD_INVALID, "%s: not a LINDI archive (no ustar header at byte 0)", w->path);
  int64_t io, id, is;
  if (lindi_parse_entry((const char *)head + 512, LINDI_ENTRY_SIZE, w->path, &io, &id, &is, err)) return err->code;
  if (id > st.st_size || is > st.st_size - id)
    return vd_fail(err, VD_INVALID, "%s: .tar_index.json runs past the end of the file", w->path);
  /* the index is read in pieces, only until its JSON value is complete (the padding
   * after it is never read), and parsed as it comes: no copy of its text is held */
  fd_src src = {w, id, is, 0, malloc(is < FD_PIECE ? (size_t)is + 1 : FD_PIECE)};
  lindi_index ix = {0};
  ix.io = io, ix.id = id, ix.is = is;
  int64_t len = 0;
  vd_code rc = src.buf ? lindi_read_index(fd_more, &src, is, w->path, &ix, &len, err) : vd_nomem(err);
  free(src.buf);
  if (rc) return rc;
  w->idx_text_len = len;
  if ((rc = find_end(w, ix.files, ix.n, st.st_size, for_write, &w->end, err))) {
    lindi_index_free(&ix);
    return rc;
  }
  for (int i = 0; i < ix.n && !rc; i++) {
    if (ix.files[i].d + ix.files[i].s > w->end)
      rc = vd_fail(err, VD_INVALID, "%s: index entry %s runs past the end of the archive", w->path, ix.files[i].name);
    else if (add_file(w, ix.files[i].name, ix.files[i].o, ix.files[i].d, ix.files[i].s))
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
      sp[1] + sp[2] <= w->end && sp[3] <= sp[2] && pr(w->fd, sh, TAR_BLOCK, sp[0], w->path, &ignore) == VD_OK &&
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
  remember_file(w, &st);
  w->for_write = for_write;
  return VD_OK;
}

/* An empty archive, as lindi creates one: entry, 8 KiB index, 8 KiB lindi.json with
 * {"refs": {}}, two zero blocks (19,968 bytes); written to a temporary file and linked
 * into place, so a crash never leaves a half-made archive under the name. */
static vd_code create_empty(const char *path, vd_err *err) {
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
  vd_code rc = pw(fd, buf, sizeof buf, 0, path, err);
  if (!rc && (fchmod(fd, 0644) || fsync(fd))) rc = sys_fail(err, path, "cannot sync the new archive");
  close(fd);
  if (!rc && link(tmp, path) != 0 && errno != EEXIST) rc = sys_fail(err, path, "cannot create");
  unlink(tmp);
  free(tmp);
  if (!rc) sync_dir(path);
  return rc;
}

/* The archive's path for comparing two spellings of it, also before it exists (then its
 * directory resolved plus its name), so the tables of a new archive share one writer. */
static char *canonical(const char *path) {
  char *r = realpath(path, NULL);
  if (r || errno != ENOENT) return r;
  char *d = strdup(path), *b = strdup(path), *rd = d && b ? realpath(dirname(d), NULL) : NULL, *out = NULL;
  if (rd && (out = malloc(strlen(rd) + strlen(b) + 2))) sprintf(out, "%s/%s", rd, basename(b));
  free(d);
  free(b);
  free(rd);
  return out;
}

static int exists_nofollow(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

/* Opens the archive file; a missing one is noted and created at the first BEGIN, so
 * connecting (which opening a database does) never creates or changes a file. */
static vd_code open_file(lindi_writer *w, vd_err *err) {
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
  if (st->st_size >= 512 + LINDI_ENTRY_SIZE && pr(w->fd, entry, LINDI_ENTRY_SIZE, 512, w->path, &e)) return -1;
  return 0;
}

/* load() without the lock, at open: another writer may commit while it reads (the entry
 * read before the commit, the file's end after it), which looks like a broken end. Such a
 * read is retried when the file changed meanwhile; a fault that stays while the file
 * does not change is the archive's own. Taking the lock here instead would make opening
 * wait for another connection's whole transaction. */
static vd_code load_unlocked(lindi_writer *w, vd_err *err) {
  for (int tries = 0;; tries++) {
    struct stat a, b;
    unsigned char ea[LINDI_ENTRY_SIZE], eb[LINDI_ENTRY_SIZE];
    int looked = look(w, &a, ea) == 0;
    vd_code rc = load(w, 0, err);
    if (!rc || tries == 20 || !looked || look(w, &b, eb)) return rc;
    if (a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
        !memcmp(ea, eb, LINDI_ENTRY_SIZE))
      return rc;
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
}

vd_code lindi_writer_open(vd_ctx *ctx, const char *url, lindi_writer **out, vd_err *err) {
  *out = NULL;
  /* unknown schemes, file://host/...: the store's refusal; never a local file name */
  if (vd_url_check(url, err)) return err->code;
  /* the writer works on a local file (descriptors, a journal, flock): any other store is refused */
  if (!vd_store_is_local(url))
    return vd_fail(err, VD_READONLY, "lindi_tar: remote archives are read-only; write a local copy instead");
  char *want = vd_url_path(url), *real = want ? canonical(want) : NULL;
  for (lindi_writer *o = ctx->lindi_writers; o && real; o = o->next) {
    char *r2 = canonical(o->path);
    int same = r2 && strcmp(r2, real) == 0;
    free(r2);
    if (same) {
      o->refs++;
      *out = o;
      free(want);
      free(real);
      return VD_OK;
    }
  }
  free(want);
  free(real);
  lindi_writer *w = calloc(1, sizeof *w);
  if (!w) return vd_nomem(err);
  w->ctx = ctx;
  w->fd = -1;
  w->refs = 1;
  w->path = vd_url_path(url);
  w->journal = w->path ? malloc(strlen(w->path) + 16) : NULL;
  if (!w->path || !w->journal) {
    lindi_writer_close(w);
    return vd_nomem(err);
  }
  sprintf(w->journal, "%s.vdsql-journal", w->path);
  vd_code rc = open_file(w, err);
  /* with a journal the state is loaded at BEGIN, after recovery */
  if (!rc && !w->absent && !exists_nofollow(w->journal)) rc = load_unlocked(w, err);
  if (rc) {
    lindi_writer_close(w);
    return rc;
  }
  w->next = ctx->lindi_writers;
  ctx->lindi_writers = w;
  *out = w;
  return VD_OK;
}

void lindi_writer_close(lindi_writer *w) {
  if (!w || --w->refs > 0) return;
  for (lindi_writer **p = (lindi_writer **)&w->ctx->lindi_writers; *p; p = &(*p)->next)
    if (*p == w) {
      *p = w->next;
      break;
    }
  if (w->in_tx) lindi_writer_rollback(w);
  clear_state(w);
  free(w->files);
  free(w->trash);
  free(w->wb);
  if (w->fd >= 0) close(w->fd);
  free(w->path);
  free(w->journal);
  free(w);
}

static vd_code lock(lindi_writer *w, vd_err *err) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    if (flock(w->fd, LOCK_EX | LOCK_NB) == 0) {
      w->locked = 1;
      return VD_OK;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) return sys_fail(err, w->path, "cannot lock");
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= w->ctx->cfg.lock_timeout)
      return vd_fail(err, VD_BUSY, "%s: another writer holds the archive (waited %g s; see vdsql_config('lock_timeout'))",
                     w->path, w->ctx->cfg.lock_timeout);
    struct timespec nap = {0, 10 * 1000 * 1000};
    nanosleep(&nap, NULL);
  }
}

static void unlock(lindi_writer *w) {
  if (w->locked) flock(w->fd, LOCK_UN);
  w->locked = 0;
}

/* Journal (lindi_journal.c): replaced atomically — a fresh temporary file made with
 * mkstemp, which never follows a planted symlink, fsync, rename over the journal's name.
 * It names this archive (device, inode) and the entry the transaction started from. */
static vd_code write_journal(lindi_writer *w, lindi_journal *j, vd_err *err) {
  j->gen = w->gen;
  memcpy(j->entry_before, w->entry_seen, LINDI_ENTRY_SIZE);
  vd_buf out = {0};
  char *tmp = malloc(strlen(w->journal) + 8);
  if (!tmp || lindi_journal_format(j, (uint64_t)w->dev_seen, (uint64_t)w->ino_seen, &out, err)) {
    vd_buf_free(&out);
    free(tmp);
    return err->code ? err->code : vd_nomem(err);
  }
  sprintf(tmp, "%s.XXXXXX", w->journal);
  vd_code rc = VD_OK;
  int fd = mkstemp(tmp);
  if (fd < 0)
    rc = sys_fail(err, w->journal, "cannot write the journal");
  else {
    rc = pw(fd, out.data, out.len, 0, tmp, err);
    if (!rc && (fchmod(fd, 0644) || (write_step(), fsync(fd)))) rc = sys_fail(err, tmp, "cannot sync the journal");
    close(fd);
    if (!rc && (write_step(), rename(tmp, w->journal))) rc = sys_fail(err, w->journal, "cannot install the journal");
    if (rc) unlink(tmp);
    else sync_dir(w->journal);
  }
  vd_buf_free(&out);
  free(tmp);
  return rc;
}

static void drop_journal(lindi_writer *w) {
  unlink(w->journal);
  sync_dir(w->journal);
}

static vd_code cut_back(lindi_writer *w, int64_t end, vd_err *err) {
  /* everything past end+1024 belongs to the unfinished transaction; [end, end+1024) was
   * never written, but zero it by truncating through it to be sure */
  if (ftruncate(w->fd, end) || ftruncate(w->fd, end + 1024)) return sys_fail(err, w->path, "cannot truncate");
  return sync_fd(w->fd, w->path, err);
}

/* Steps after the commit point: the entry with the new generation (when the commit
 * point was an in-place rewrite), the held blocks at E, then the trash. Idempotent. */
static vd_code finish(lindi_writer *w, const lindi_journal *j, vd_err *err) {
  int64_t end = j->end, revive = j->revive;
  const unsigned char *hold = j->hold;
  if (j->has_entry && pw(w->fd, j->entry, LINDI_ENTRY_SIZE, 512, w->path, err)) return err->code;
  if (j->new_end > end) {
    if (pw(w->fd, hold + 512, 512, end + 512, w->path, err)) return err->code;
    crashpoint(5);
    if (pw(w->fd, hold, 512, end, w->path, err)) return err->code;
  }
  if (revive >= 0) { /* the reused region's header names the index again (before the old one is trashed) */
    unsigned char h[TAR_BLOCK];
    if (pr(w->fd, h, TAR_BLOCK, revive, w->path, err) || tar_rename(h, LINDI_INDEX_NAME, err) ||
        pw(w->fd, h, TAR_BLOCK, revive, w->path, err))
      return err->code;
  }
  crashpoint(6);
  for (int i = 0; i < j->ntrash; i++) {
    int64_t o = j->trash[i].o, s = j->trash[i].dash;
    const char *nn = j->trash[i].name;
    unsigned char h[TAR_BLOCK];
    if (pr(w->fd, h, TAR_BLOCK, o, w->path, err)) return err->code;
    if (strncmp((const char *)h, ".trash/", 7) != 0) {
      if (tar_rename(h, nn, err) || pw(w->fd, h, TAR_BLOCK, o, w->path, err)) return err->code;
    }
    static unsigned char dashes[65536];
    if (!dashes[0]) memset(dashes, '-', sizeof dashes);
    for (int64_t k = 0; k < s; k += (int64_t)sizeof dashes) {
      size_t n = s - k < (int64_t)sizeof dashes ? (size_t)(s - k) : sizeof dashes;
      if (pw(w->fd, dashes, n, o + TAR_BLOCK + k, w->path, err)) return err->code;
    }
    crashpoint(7);
  }
  if (sync_fd(w->fd, w->path, err)) return err->code;
  drop_journal(w);
  return VD_OK;
}

/* The one wording for a journal that recovery will not act on. */
static vd_code journal_refused(lindi_writer *w, const char *why, vd_err *err) {
  return vd_fail(err, VD_INVALID,
                 "%s: not a journal of this archive's last transaction (%s); nothing was changed. If no vdsql writer "
                 "was interrupted on %s, remove the journal",
                 w->journal, why, w->path);
}

/* Reads the journal whole (a commit that trashes many members writes a large one) and
 * checks that it is one of ours, for this file: *found 0 when there is none. */
static vd_code read_journal(lindi_writer *w, lindi_journal *j, int *found, vd_err *err) {
  *found = 0;
  int fd = open(w->journal, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return VD_OK;
  if (fd < 0 && errno == ELOOP) return journal_refused(w, "it is a symbolic link", err);
  if (fd < 0) return sys_fail(err, w->journal, "cannot open the journal");
  struct stat st, ast;
  vd_buf b = {0};
  vd_code rc = VD_OK;
  if (fstat(fd, &st) || fstat(w->fd, &ast)) rc = sys_fail(err, w->journal, "cannot stat");
  else if (!S_ISREG(st.st_mode)) rc = journal_refused(w, "not a regular file", err);
  else if (st.st_size > w->ctx->cfg.max_alloc) rc = journal_refused(w, "larger than max_alloc", err);
  else if (vd_buf_reserve(&b, (size_t)st.st_size + 1)) rc = vd_nomem(err);
  else if (!(rc = pr(fd, b.data, (size_t)st.st_size, 0, w->journal, err)))
    b.len = (size_t)st.st_size;
  close(fd);
  if (!rc) {
    const char *why = lindi_journal_parse((const char *)b.data, b.len, (uint64_t)ast.st_dev, (uint64_t)ast.st_ino,
                                          ast.st_size, j);
    if (why) rc = journal_refused(w, why, err);
    else *found = 1;
  }
  vd_buf_free(&b);
  return rc;
}

/* A journal left by a crash: roll forward when its commit write reached the file,
 * otherwise back. Called with the lock held. Acts only when the journal proves it is
 * this archive's and the archive is in the state it started from or committed. */
static vd_code recover(lindi_writer *w, vd_err *err) {
  lindi_journal j;
  int found;
  if (read_journal(w, &j, &found, err)) return err->code;
  if (!found) return VD_OK;
  unsigned char entry[LINDI_ENTRY_SIZE];
  vd_code rc = pr(w->fd, entry, sizeof entry, 512, w->path, err);
  int forward = 0;
  if (!rc && j.has_commit) {
    unsigned char *cur = malloc(j.commit_len);
    vd_err e2;
    forward = cur && pr(w->fd, cur, j.commit_len, j.commit_at, w->path, &e2) == VD_OK &&
              memcmp(cur, j.commit, j.commit_len) == 0;
    free(cur);
  }
  /* the archive must be where the journal says: as the transaction found it, or (rolling
   * forward) with the commit written and maybe the new entry too */
  if (!rc) {
    int known = memcmp(entry, j.entry_before, LINDI_ENTRY_SIZE) == 0 ||
                (forward && j.commit_at == 512 && j.commit_len == LINDI_ENTRY_SIZE &&
                 memcmp(entry, j.commit, LINDI_ENTRY_SIZE) == 0) ||
                (forward && j.has_entry && memcmp(entry, j.entry, LINDI_ENTRY_SIZE) == 0);
    if (!known)
      rc = journal_refused(w, "the archive's .tar_entry.json is in neither the state it began from nor the one it committed",
                           err);
  }
  if (!rc && forward)
    rc = finish(w, &j, err);
  else if (!rc && !(rc = cut_back(w, j.end, err)))
    drop_journal(w);
  lindi_journal_free(&j);
  return rc;
}

/* The archive as lindi creates an empty one, at the first write (see open_file). */
static vd_code create_now(lindi_writer *w, vd_err *err) {
  if (!w->absent) return VD_OK;
  vd_code rc = create_empty(w->path, err);
  if (!rc) rc = open_file(w, err);
  if (!rc && w->absent) rc = vd_fail(err, VD_IO, "%s: the new archive vanished", w->path);
  return rc;
}

vd_code lindi_writer_begin(lindi_writer *w, vd_err *err) {
  if (w->in_tx) return VD_OK;
  if (create_now(w, err) || lock(w, err)) return err->code;
  vd_code rc = recover(w, err);
  /* reload when another writer (or a recovery, or another tool) changed the archive
   * since we read it: the generation in the entry changes with every vdsql commit */
  struct stat st;
  unsigned char entry[LINDI_ENTRY_SIZE];
  if (!rc && fstat(w->fd, &st)) rc = sys_fail(err, w->path, "cannot stat");
  if (!rc && !(rc = pr(w->fd, entry, sizeof entry, 512, w->path, err)) && (file_changed(w, &st, entry) || w->n == 0))
    rc = load(w, 1, err);
  else if (!rc && !w->for_write && !(rc = find_end(w, w->files, w->n, st.st_size, 1, &w->end, err))) /* read by a scan */
    w->for_write = 1, w->tail = w->end;
  if (!rc) {
    lindi_journal j = {.end = w->end, .revive = -1};
    rc = write_journal(w, &j, err);
  }
  if (rc) {
    unlock(w);
    return rc;
  }
  w->in_tx = 1;
  w->dirty = 0;
  return VD_OK;
}

static int reserved(const char *name) {
  return strcmp(name, LINDI_ENTRY_NAME) == 0 || strcmp(name, LINDI_INDEX_NAME) == 0 ||
         strcmp(name, LINDI_JSON_NAME) == 0 || strncmp(name, ".trash/", 7) == 0;
}

static vd_code add_trash(lindi_writer *w, int pos, vd_err *err) {
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
  t->pos = pos, t->name = f->name, t->o = f->o, t->s = f->s, t->dash = f->s;
  vd_strmap_del(&w->map, f->name);
  f->name = NULL;
  w->dirty = 1;
  return VD_OK;
}

vd_code lindi_writer_delete(lindi_writer *w, int pos, vd_err *err) {
  if (pos < 0 || pos >= w->n || !w->files[pos].name) return vd_fail(err, VD_NOTFOUND, "%s: no such row", w->path);
  if (reserved(w->files[pos].name))
    return vd_fail(err, VD_CONSTRAINT, "%s: %s is part of the LINDI structure and cannot be deleted", w->path,
                   w->files[pos].name);
  return add_trash(w, pos, err);
}

vd_code lindi_writer_put(lindi_writer *w, const char *name, const void *data, size_t len, int replace, int *pos,
                         vd_err *err) {
  if (!w->in_tx) return vd_fail(err, VD_ERROR, "%s: write outside a transaction", w->path);
  if (tar_check_name(name, strlen(name), err)) return vd_err_prefix(err, "%s", w->path);
  if (reserved(name))
    return vd_fail(err, VD_CONSTRAINT, "%s: %s is part of the LINDI structure and cannot be written as a member",
                   w->path, name);
  int old = vd_strmap_get(&w->map, name);
  if (old >= 0 && !replace)
    return vd_fail(err, VD_CONSTRAINT, "%s: a member named %s exists (use INSERT OR REPLACE)", w->path, name);
  if (old >= 0 && add_trash(w, old, err)) return err->code;
  int64_t padded = tar_padded((int64_t)len);
  unsigned char *buf = malloc(TAR_BLOCK + (size_t)padded);
  if (!buf) return vd_nomem(err);
  if (tar_format(buf, name, (int64_t)len, err)) {
    free(buf);
    return err->code;
  }
  if (len) memcpy(buf + TAR_BLOCK, data, len);
  memset(buf + TAR_BLOCK + len, 0, (size_t)(padded - (int64_t)len));
  vd_code rc = wr(w, w->tail, buf, TAR_BLOCK + (size_t)padded, err);
  free(buf);
  if (rc) return rc;
  if (add_file(w, name, w->tail, w->tail + TAR_BLOCK, (int64_t)len)) return vd_nomem(err);
  *pos = w->n - 1;
  w->tail += TAR_BLOCK + padded;
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

static void trash_name(trash_item *t) {
  char rnd[11];
  random_letters(rnd, 10);
  snprintf(t->newname, sizeof t->newname, ".trash/%s.%s", t->name, rnd);
  if (strlen(t->newname) > 255 || tar_check_name(t->newname, strlen(t->newname), &(vd_err){0}))
    snprintf(t->newname, sizeof t->newname, ".trash/%.80s.%s", strrchr(t->name, '/') ? strrchr(t->name, '/') + 1 : t->name, rnd);
}

const lindi_file *lindi_writer_find(const lindi_writer *w, const char *name) {
  int pos = vd_strmap_get(&w->map, name);
  return pos >= 0 ? &w->files[pos] : NULL;
}

const char *lindi_writer_path(const lindi_writer *w) { return w->path; }

vd_code lindi_writer_refs(lindi_writer *w, cJSON **doc, vd_err *err) {
  if (!w->refs_doc && w->absent) { /* not created yet: what the new archive will hold */
    if (!(w->refs_doc = cJSON_Parse("{\"refs\": {}}"))) return vd_nomem(err);
  } else if (!w->refs_doc) {
    const lindi_file *f = lindi_writer_find(w, LINDI_JSON_NAME);
    if (!f) return vd_fail(err, VD_INVALID, "%s: no lindi.json in the index", w->path);
    vd_buf b = {0};
    int pos = vd_strmap_get(&w->map, LINDI_JSON_NAME);
    vd_code rc = lindi_writer_read(w, pos, &b, err);
    if (!rc) {
      char where[700];
      snprintf(where, sizeof where, "%s: lindi.json", w->path);
      w->refs_text_len = (int64_t)b.len;
      while (w->refs_text_len > 0 && strchr(" \t\r\n", b.data[w->refs_text_len - 1])) w->refs_text_len--;
      /* literals kept: refs this transaction does not touch are written back as read */
      if (lindi_parse_refs((const char *)b.data, b.len, where, &w->refs_doc, err))
        rc = err->code;
      else if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(w->refs_doc, "refs")))
        rc = vd_fail(err, VD_INVALID, "%s has no \"refs\" object", where);
      if (rc) {
        cJSON_Delete(w->refs_doc);
        w->refs_doc = NULL;
      }
    }
    vd_buf_free(&b);
    if (rc) return rc;
  }
  *doc = w->refs_doc;
  return VD_OK;
}

vd_code lindi_writer_refs_will_change(lindi_writer *w, vd_err *err) {
  if (w->nsp > 0 && !w->sp[w->nsp - 1].refs_saved) {
    savepoint *sp = &w->sp[w->nsp - 1];
    sp->refs = w->refs_doc ? cJSON_Duplicate(w->refs_doc, 1) : NULL;
    if (w->refs_doc && !sp->refs) return vd_nomem(err);
    sp->refs_saved = 1;
    sp->refs_dirty = w->refs_dirty;
  }
  return VD_OK;
}

void lindi_writer_refs_changed(lindi_writer *w) { w->refs_dirty = w->dirty = 1; }

/* The new lindi.json: appended with lindi's growth rule (the old copy trashed), or in
 * place when it is the transaction's only write and fits one page. */
static vd_code place_refs(lindi_writer *w, int *in_place, int64_t *commit_at, vd_buf *commit, vd_err *err) {
  vd_buf text = {0};
  *in_place = 0;
  if (vd_pyjson(w->refs_doc, &text)) return vd_nomem(err);
  int pos = vd_strmap_get(&w->map, LINDI_JSON_NAME);
  lindi_file *f = &w->files[pos];
  int only_refs = w->n == w->base_n && w->ntrash == 0;
  w->new_refs_len = (int64_t)text.len;
  int64_t reach = (int64_t)text.len > w->refs_text_len ? (int64_t)text.len : w->refs_text_len;
  if (only_refs && (int64_t)text.len <= f->s && f->d / 4096 == (f->d + reach - 1) / 4096) {
    *in_place = 1;
    *commit_at = f->d;
    commit->len = 0;
    vd_buf_append(commit, text.data, text.len);
    while ((int64_t)commit->len < reach) vd_buf_append(commit, " ", 1);
    vd_buf_free(&text);
    return VD_OK;
  }
  vd_code rc = add_trash(w, pos, err);
  int64_t size = lindi_grow((int64_t)text.len);
  unsigned char h[TAR_BLOCK];
  if (!rc && !(rc = tar_format(h, LINDI_JSON_NAME, size, err)) && !(rc = wr(w, w->tail, h, TAR_BLOCK, err)) &&
      !(rc = wr(w, w->tail + TAR_BLOCK, text.data, text.len, err))) {
    static unsigned char spaces[65536];
    if (!spaces[0]) memset(spaces, ' ', sizeof spaces);
    for (int64_t off = (int64_t)text.len; off < size && !rc; off += (int64_t)sizeof spaces) {
      size_t n = size - off < (int64_t)sizeof spaces ? (size_t)(size - off) : sizeof spaces;
      rc = wr(w, w->tail + TAR_BLOCK + off, spaces, n, err);
    }
    if (!rc && add_file(w, LINDI_JSON_NAME, w->tail, w->tail + TAR_BLOCK, size)) rc = vd_nomem(err);
    if (!rc) w->tail += TAR_BLOCK + size;
  }
  vd_buf_free(&text);
  return rc;
}

typedef struct index_sink {
  lindi_writer *w;
  int64_t off;
} index_sink;

static vd_code to_archive(void *ctx, const void *p, size_t n, vd_err *err) {
  index_sink *s = ctx;
  vd_code rc = wr(s->w, s->off, p, n, err);
  s->off += (int64_t)n;
  return rc;
}

/* The new index: in place when one page-contained write suffices, else appended. */
static vd_code place_index(lindi_writer *w, vd_buf *text, int64_t *commit_at, vd_buf *commit, vd_err *err) {
  int ipos = vd_strmap_get(&w->map, LINDI_INDEX_NAME);
  if (ipos < 0) return vd_fail(err, VD_INVALID, "%s: the index lists no .tar_index.json", w->path);
  lindi_file *live = malloc((w->n + 1) * sizeof *live);
  if (!live) return vd_nomem(err);
  int m = 0;
  for (int i = 0; i < w->n; i++)
    if (w->files[i].name) live[m++] = w->files[i];
  int64_t len;
  vd_code rc = lindi_stream_index(live, m, NULL, NULL, &len, err); /* count only */
  lindi_file *ix = &w->files[ipos];
  int64_t reach = len > w->idx_text_len ? len : w->idx_text_len;
  if (!rc && len <= ix->s && ix->d / 4096 == (ix->d + reach - 1) / 4096) { /* small: in place, one pwrite */
    rc = lindi_format_index(live, m, text, err);
    free(live);
    if (rc) return rc;
    w->new_idx_len = (int64_t)text->len;
    *commit_at = ix->d;
    commit->len = 0;
    vd_buf_append(commit, text->data, text->len);
    while ((int64_t)commit->len < reach) vd_buf_append(commit, " ", 1);
    return VD_OK;
  }
  int64_t old_o = ix->o, old_d = ix->d, old_s = ix->s;
  if (rc || (rc = add_trash(w, ipos, err))) {
    free(live);
    return rc;
  }
  /* the old index's padding is already spaces: only its text needs dashes */
  w->trash[w->ntrash - 1].dash = w->idx_text_len < old_s ? w->idx_text_len : old_s;
  w->trashed_idx_o = old_o, w->trashed_idx_d = old_d, w->trashed_idx_s = old_s;
  w->trashed_idx_len = w->trash[w->ntrash - 1].dash;
  /* live still holds the old index entry: replace it */
  int k = 0;
  for (int i = 0; i < m; i++)
    if (strcmp(live[i].name, LINDI_INDEX_NAME) != 0) live[k++] = live[i];
  if (w->spare.s > 0) { /* ping-pong: write into the index region our last commit trashed */
    live[k] = (lindi_file){LINDI_INDEX_NAME, w->spare.o, w->spare.d, w->spare.s};
    if ((rc = lindi_stream_index(live, k + 1, NULL, NULL, &len, err))) {
      free(live);
      return rc;
    }
    if (len <= w->spare.s) {
      index_sink sink = {w, w->spare.d};
      rc = lindi_stream_index(live, k + 1, to_archive, &sink, &len, err);
      free(live);
      if (rc) return rc;
      static unsigned char sp[65536];
      if (!sp[0]) memset(sp, ' ', sizeof sp);
      int64_t reach = w->spare_dashed > len ? w->spare_dashed : len;
      for (int64_t off = len; off < reach; off += (int64_t)sizeof sp) {
        size_t n = reach - off < (int64_t)sizeof sp ? (size_t)(reach - off) : sizeof sp;
        if (wr(w, w->spare.d + off, sp, n, err)) return err->code;
      }
      w->new_idx_len = len;
      if (add_file(w, LINDI_INDEX_NAME, w->spare.o, w->spare.d, w->spare.s)) return vd_nomem(err);
      unsigned char entry[LINDI_ENTRY_SIZE];
      int64_t next_spare[4] = {w->trashed_idx_o, w->trashed_idx_d, w->trashed_idx_s, w->trashed_idx_len};
      if (lindi_format_entry_spare(w->spare.o, w->spare.d, w->spare.s, next_spare, w->gen + 1, entry, err))
        return err->code;
      w->revive_o = w->spare.o;
      *commit_at = 512;
      commit->len = 0;
      vd_buf_append(commit, entry, sizeof entry);
      return VD_OK;
    }
  }
  int64_t size = lindi_grow(len);
  for (;;) { /* the index lists itself: its size depends on its own text */
    live[k] = (lindi_file){LINDI_INDEX_NAME, w->tail, w->tail + TAR_BLOCK, size};
    if ((rc = lindi_stream_index(live, k + 1, NULL, NULL, &len, err))) break;
    if (4 * len <= size) break;
    size = lindi_grow(len);
  }
  unsigned char h[TAR_BLOCK];
  index_sink sink = {w, w->tail + TAR_BLOCK};
  if (!rc && !(rc = tar_format(h, LINDI_INDEX_NAME, size, err)) && !(rc = wr(w, w->tail, h, TAR_BLOCK, err)))
    rc = lindi_stream_index(live, k + 1, to_archive, &sink, &len, err);
  free(live);
  if (rc) return rc;
  w->new_idx_len = len;
  static unsigned char spaces[65536];
  if (!spaces[0]) memset(spaces, ' ', sizeof spaces);
  for (int64_t off = len; off < size; off += (int64_t)sizeof spaces) {
    size_t n = size - off < (int64_t)sizeof spaces ? (size_t)(size - off) : sizeof spaces;
    if (wr(w, w->tail + TAR_BLOCK + off, spaces, n, err)) return err->code;
  }
  if (add_file(w, LINDI_INDEX_NAME, w->tail, w->tail + TAR_BLOCK, size)) return vd_nomem(err);
  unsigned char entry[LINDI_ENTRY_SIZE];
  int64_t next_spare[4] = {w->trashed_idx_o, w->trashed_idx_d, w->trashed_idx_s, w->trashed_idx_len};
  if (lindi_format_entry_spare(w->tail, w->tail + TAR_BLOCK, size, next_spare, w->gen + 1, entry, err)) return err->code;
  w->tail += TAR_BLOCK + size;
  *commit_at = 512;
  commit->len = 0;
  vd_buf_append(commit, entry, sizeof entry);
  return VD_OK;
}

/* The committed state from what the transaction had in memory (no re-read of the
 * index: on a large archive that would cost as much as the commit itself). */
static vd_code settle_committed(lindi_writer *w, vd_err *err) {
  int j = 0;
  for (int i = 0; i < w->n; i++)
    if (w->files[i].name) w->files[j++] = w->files[i];
  w->n = j;
  for (int i = 0; i < w->ntrash; i++) free(w->trash[i].name);
  w->ntrash = 0;
  drop_savepoints(w, 0);
  vd_strmap_free(&w->map);
  for (int i = 0; i < w->n; i++)
    if (vd_strmap_put(&w->map, w->files[i].name, i)) return vd_nomem(err);
  w->base_n = w->n;
  w->end = w->tail;
  memset(w->hold, 0, sizeof w->hold);
  if (w->new_idx_len >= 0) w->idx_text_len = w->new_idx_len;
  if (w->new_refs_len >= 0) w->refs_text_len = w->new_refs_len;
  w->refs_dirty = 0;
  w->gen++;
  struct stat st;
  if (fstat(w->fd, &st)) return sys_fail(err, w->path, "cannot stat");
  remember_file(w, &st);
  if (w->trashed_idx_o >= 0) { /* the index trashed now is the next commit's spare */
    w->spare = (lindi_file){NULL, w->trashed_idx_o, w->trashed_idx_d, w->trashed_idx_s};
    w->spare_dashed = w->trashed_idx_len;
  } else if (w->revive_o >= 0) {
    w->spare.s = 0;
  }
  return pr(w->fd, w->entry_seen, LINDI_ENTRY_SIZE, 512, w->path, err);
}

vd_code lindi_writer_commit(lindi_writer *w, vd_err *err) {
  if (!w->in_tx) return VD_OK;
  vd_code rc = VD_OK;
  vd_buf text = {0}, commit = {0};
  lindi_journal j = {.revive = -1};
  if (!w->dirty) goto done;
  commits_seen++;
  in_commit = 1;
  int64_t commit_at = 0, end = w->end;
  int refs_in_place = 0;
  w->new_idx_len = w->new_refs_len = -1;
  w->revive_o = w->trashed_idx_o = -1;
  if (w->refs_dirty && (rc = place_refs(w, &refs_in_place, &commit_at, &commit, err))) goto done;
  if (!refs_in_place && (rc = place_index(w, &text, &commit_at, &commit, err))) goto done;
  /* an in-place commit leaves the entry's offsets as they are: it is rewritten after the
   * commit point only to carry the new generation */
  unsigned char new_entry[LINDI_ENTRY_SIZE];
  int entry_after = commit_at != 512;
  if (entry_after) {
    const lindi_file *ix = lindi_writer_find(w, LINDI_INDEX_NAME);
    int64_t sp[4] = {w->spare.o, w->spare.d, w->spare.s, w->spare_dashed};
    if (!ix) {
      rc = vd_fail(err, VD_INVALID, "%s: the index lists no .tar_index.json", w->path);
      goto done;
    }
    if ((rc = lindi_format_entry_spare(ix->o, ix->d, ix->s, w->spare.s > 0 ? sp : NULL, w->gen + 1, new_entry, err)))
      goto done;
  }
  crashpoint(1);
  /* members staged and removed in this same transaction sit in the unseen region:
   * trash them now, through the hold */
  for (int i = 0; i < w->ntrash; i++) {
    trash_item *t = &w->trash[i];
    trash_name(t);
    if (t->pos < w->base_n) continue;
    unsigned char h[TAR_BLOCK];
    if (tar_format(h, t->name, t->s, err) || tar_rename(h, t->newname, err) || wr(w, t->o, h, TAR_BLOCK, err)) {
      rc = err->code;
      goto done;
    }
  }
  if ((rc = flush_wb(w, err))) goto done;
  write_step();
  if (ftruncate(w->fd, w->tail < end + 1024 ? end + 1024 : w->tail) || ftruncate(w->fd, w->tail + 1024)) {
    rc = sys_fail(err, w->path, "cannot write the end-of-archive blocks");
    goto done;
  }
  if ((rc = sync_fd(w->fd, w->path, err))) goto done;
  crashpoint(2);
  j.end = end, j.has_commit = 1, j.commit_at = commit_at, j.new_end = w->tail, j.revive = w->revive_o;
  j.commit = commit.data, j.commit_len = commit.len;
  memcpy(j.hold, w->hold, sizeof j.hold);
  if ((j.has_entry = entry_after)) memcpy(j.entry, new_entry, sizeof new_entry);
  if (w->ntrash && !(j.trash = malloc((size_t)w->ntrash * sizeof *j.trash))) {
    rc = vd_nomem(err);
    goto done;
  }
  for (int i = 0; i < w->ntrash; i++)
    if (w->trash[i].pos < w->base_n) {
      lindi_trash_step *t = &j.trash[j.ntrash++];
      t->o = w->trash[i].o, t->dash = w->trash[i].dash;
      snprintf(t->name, sizeof t->name, "%s", w->trash[i].newname);
    }
  if ((rc = write_journal(w, &j, err))) goto done;
  crashpoint(3);
  if ((rc = pw(w->fd, commit.data, commit.len, commit_at, w->path, err)) || (rc = sync_fd(w->fd, w->path, err)))
    goto done;
  crashpoint(4);
  if ((rc = finish(w, &j, err))) goto done;
  commit_done();
  lindi_invalidate(w->ctx, w->path);
  vd_err e2;
  if (settle_committed(w, &e2)) load(w, 0, &e2); /* committed either way: only our view is rebuilt */
  w->in_tx = 0;
  unlock(w);
  goto out;
done:
  in_commit = commit_writes = 0;
  if (rc) {
    lindi_writer_rollback(w);
  } else {
    if (w->in_tx) drop_journal(w);
    w->in_tx = 0;
    unlock(w);
  }
out:
  free(j.trash); /* j.commit is commit's buffer */
  vd_buf_free(&text);
  vd_buf_free(&commit);
  return rc;
}

void lindi_writer_rollback(lindi_writer *w) {
  w->wb_len = 0; /* never written: nothing to undo */
  cJSON_Delete(w->refs_doc); /* reloaded from the archive on next use */
  w->refs_doc = NULL;
  w->refs_dirty = 0;
  if (!w->in_tx) return;
  vd_err err;
  /* nothing before the old end was touched: dropping what lies past it is enough */
  if (cut_back(w, w->end, &err) == VD_OK) drop_journal(w);
  w->in_tx = 0;
  load(w, 0, &err);
  unlock(w);
}

static void drop_savepoints(lindi_writer *w, int from) {
  for (int i = from; i < w->nsp; i++) cJSON_Delete(w->sp[i].refs);
  if (from < w->nsp) w->nsp = from;
}

/* Tables of one archive share this writer, and SQLite tells each table of the savepoints
 * it joins: a table that joins late announces the current savepoint level with the
 * state as it is now. The first notice of a level is the right one; later ones are
 * ignored until the level is released or rolled back. */
void lindi_writer_savepoint(lindi_writer *w, int n) {
  if (n < 0 || n >= 64 || n < w->nsp) return;
  for (int i = w->nsp; i <= n; i++) w->sp[i] = (savepoint){w->n, w->ntrash, w->tail, 0, 0, NULL};
  w->nsp = n + 1;
}

void lindi_writer_release(lindi_writer *w, int n) {
  if (n >= 0) drop_savepoints(w, n);
}

void lindi_writer_rollback_to(lindi_writer *w, int n) {
  if (n < 0 || n >= w->nsp) return;
  savepoint sp = w->sp[n];
  flush_wb(w, &(vd_err){0}); /* what lies past the restored tail is cut at commit */
  while (w->ntrash > sp.ntrash) { /* undelete */
    trash_item *t = &w->trash[--w->ntrash];
    w->files[t->pos].name = t->name;
    vd_strmap_put(&w->map, t->name, t->pos);
  }
  while (w->n > sp.n) { /* unstage */
    lindi_file *f = &w->files[--w->n];
    if (f->name) {
      vd_strmap_del(&w->map, f->name);
      free(f->name);
    }
  }
  if (sp.tail < w->end + 1024) memset(w->hold + (sp.tail - w->end), 0, (size_t)(w->end + 1024 - sp.tail));
  w->tail = sp.tail;
  /* refs are copied at the first change after the innermost savepoint then open: the
   * lowest copy at or above n holds them as they were at n */
  for (int k = n; k < w->nsp; k++)
    if (w->sp[k].refs_saved) {
      cJSON_Delete(w->refs_doc);
      w->refs_doc = w->sp[k].refs ? cJSON_Duplicate(w->sp[k].refs, 1) : NULL;
      w->refs_dirty = w->sp[k].refs_dirty;
      break;
    }
  drop_savepoints(w, n + 1); /* the savepoint itself stays; those opened after it are gone */
}

/* Readers need no lock: what the entry names is committed, whatever another writer is
 * doing meanwhile. */
static vd_code refresh(lindi_writer *w, vd_err *err) {
  if (w->in_tx || w->absent) return VD_OK;
  struct stat st;
  unsigned char entry[LINDI_ENTRY_SIZE];
  if (fstat(w->fd, &st)) return sys_fail(err, w->path, "cannot stat");
  if (pr(w->fd, entry, sizeof entry, 512, w->path, err)) return err->code;
  return file_changed(w, &st, entry) || w->n == 0 ? load(w, 0, err) : VD_OK;
}

vd_code lindi_writer_scan_start(lindi_writer *w, vd_err *err) {
  if (!w->scans && refresh(w, err)) return err->code; /* never under an open scan's feet */
  w->scans++;
  return VD_OK;
}

void lindi_writer_scan_end(lindi_writer *w) {
  if (w->scans > 0) w->scans--;
}

int lindi_writer_count(const lindi_writer *w) { return w->n; }

const lindi_file *lindi_writer_file(const lindi_writer *w, int pos) {
  return pos >= 0 && pos < w->n && w->files[pos].name ? &w->files[pos] : NULL;
}

vd_code lindi_writer_read(lindi_writer *w, int pos, vd_buf *out, vd_err *err) {
  const lindi_file *f = lindi_writer_file(w, pos);
  out->len = 0;
  if (!f) return vd_fail(err, VD_NOTFOUND, "%s: no such row", w->path);
  if (flush_wb(w, err)) return err->code; /* staged bytes may still be in the write buffer */
  if (vd_buf_reserve(out, (size_t)f->s + 1)) return vd_nomem(err);
  /* staged bytes may sit in the hold */
  for (int64_t k = 0; k < f->s;) {
    int64_t off = f->d + k;
    if (w->in_tx && off >= w->end && off < w->end + 1024) {
      int64_t n = w->end + 1024 - off < f->s - k ? w->end + 1024 - off : f->s - k;
      memcpy(out->data + k, w->hold + (off - w->end), (size_t)n);
      k += n;
    } else {
      int64_t lim = w->in_tx && off < w->end ? w->end - off : f->s - k;
      int64_t n = lim < f->s - k ? lim : f->s - k;
      if (pr(w->fd, out->data + k, (size_t)n, off, w->path, err)) return err->code;
      k += n;
    }
  }
  out->len = (size_t)f->s;
  return VD_OK;
}

void lindi_tx_disconnect(void *w) { lindi_writer_close(w); }
vd_code lindi_tx_begin(void *w, vd_err *err) { return lindi_writer_begin(w, err); }
vd_code lindi_tx_sync(void *w, vd_err *err) { return lindi_writer_commit(w, err); } /* errors can still abort */
void lindi_tx_commit(void *w) { (void)w; }                                       /* sync did the work */
void lindi_tx_rollback(void *w) { lindi_writer_rollback(w); }
void lindi_tx_savepoint(void *w, int n) { lindi_writer_savepoint(w, n); }
void lindi_tx_rollback_to(void *w, int n) { lindi_writer_rollback_to(w, n); }
void lindi_tx_release(void *w, int n) { lindi_writer_release(w, n); }
