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
 * the next writer, under the lock, before anything else. */
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

#include "../store/store.h"
#include "../util/base64.h"
#include "../util/pyjson.h"
#include "../util/strmap.h"
#include "tar.h"

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
  lindi_writer *next;          /* in ctx->lindi_writers */
};

/* Test hook: VDSQL_CRASHPOINT=k kills the process with SIGKILL at step k of a commit
 * (after VDSQL_CRASHPOINT_SKIP commits), so the tests can stop a writer at every point
 * of the protocol, also in a commit that follows others. */
static int commits_seen;
static void crashpoint(int k) {
  const char *s = getenv("VDSQL_CRASHPOINT"), *skip = getenv("VDSQL_CRASHPOINT_SKIP");
  if (s && atoi(s) == k && commits_seen > (skip ? atoi(skip) : 0)) raise(SIGKILL);
}

static vd_code sys_fail(vd_err *err, const char *path, const char *what) {
  return vd_fail(err, VD_IO, "%s: %s (%s)", path, what, strerror(errno));
}

static vd_code pw(int fd, const void *p, size_t n, int64_t off, const char *path, vd_err *err) {
  const unsigned char *b = p;
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

/* Reads the committed state from disk. */
static vd_code load(lindi_writer *w, vd_err *err) {
  clear_state(w);
  struct stat st;
  if (fstat(w->fd, &st)) return sys_fail(err, w->path, "cannot stat");
  unsigned char head[1536], tail[1024], zero[1024] = {0};
  if (st.st_size < 1536 + 1024) return vd_fail(err, VD_INVALID, "%s: too short for a LINDI archive", w->path);
  if (pr(w->fd, head, sizeof head, 0, w->path, err)) return err->code;
  if (memcmp(head + 257, "ustar", 5) != 0)
    return vd_fail(err, VD_INVALID, "%s: not a LINDI archive (no ustar header at byte 0)", w->path);
  int64_t io, id, is;
  if (lindi_parse_entry((const char *)head + 512, LINDI_ENTRY_SIZE, w->path, &io, &id, &is, err)) return err->code;
  if (id + is > st.st_size) return vd_fail(err, VD_INVALID, "%s: .tar_index.json runs past the end of the file", w->path);
  if (pr(w->fd, tail, sizeof tail, st.st_size - 1024, w->path, err)) return err->code;
  if (memcmp(tail, zero, 1024) != 0)
    return vd_fail(err, VD_INVALID, "%s: the archive does not end with two zero blocks (an unfinished write by another tool?)",
                   w->path);
  /* read the JSON text, not its padding: stop after a block of spaces (lindi's JSON never
   * holds 4 KiB of consecutive spaces); if that text does not parse, read the rest */
  vd_buf tb = {0};
  vd_code rc = VD_OK;
  int64_t got = 0;
  for (int all = 0; !rc;) {
    while (got < is && !rc) {
      int64_t n = is - got < (1 << 20) ? is - got : (1 << 20);
      if (vd_buf_reserve(&tb, (size_t)n + 1)) rc = vd_nomem(err);
      else if (!(rc = pr(w->fd, tb.data + got, (size_t)n, id + got, w->path, err))) got += n, tb.len = (size_t)got;
      if (!all && !rc && got >= 4096) {
        int spaces = 1;
        for (int64_t k = got - 4096; k < got && spaces; k++) spaces = tb.data[k] == ' ';
        if (spaces) break;
      }
    }
    if (rc || all || got >= is) break;
    cJSON *probe = NULL; /* complete already? */
    int64_t l = got;
    while (l > 0 && tb.data[l - 1] == ' ') l--;
    probe = cJSON_ParseWithLength((const char *)tb.data, (size_t)l);
    cJSON_Delete(probe);
    if (probe) break;
    all = 1;
  }
  if (rc) {
    vd_buf_free(&tb);
    return rc;
  }
  char *text = (char *)tb.data;
  int64_t len = got;
  while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == '\t')) len--;
  lindi_index ix = {0};
  ix.io = io, ix.id = id, ix.is = is;
  if (!rc) rc = lindi_parse_index(text ? text : "", (size_t)len, w->path, &ix, err);
  vd_buf_free(&tb);
  if (rc) return rc;
  w->idx_text_len = len;
  w->end = st.st_size - 1024;
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
  if (lindi_parse_spare((const char *)head + 512, LINDI_ENTRY_SIZE, sp) == 0 && sp[1] == sp[0] + TAR_BLOCK &&
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
  w->size_seen = st.st_size;
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

vd_code lindi_writer_open(vd_ctx *ctx, const char *url, lindi_writer **out, vd_err *err) {
  *out = NULL;
  if (vd_url_backend(url) == VD_BE_HTTP)
    return vd_fail(err, VD_READONLY, "lindi_tar: remote archives are read-only; write a local copy instead");
  if (vd_url_check(url, err)) return err->code; /* s3://..., file://host/...: never a local file name */
  char *want = vd_url_path(url), *real = want ? realpath(want, NULL) : NULL;
  for (lindi_writer *o = ctx->lindi_writers; o && real; o = o->next) {
    char *r2 = realpath(o->path, NULL);
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
  w->path = vd_url_path(url);
  w->journal = w->path ? malloc(strlen(w->path) + 16) : NULL;
  if (!w->path || !w->journal) {
    lindi_writer_close(w);
    return vd_nomem(err);
  }
  sprintf(w->journal, "%s.vdsql-journal", w->path);
  vd_code rc = VD_OK;
  if (access(w->path, F_OK) != 0 && (rc = create_empty(w->path, err))) {
    lindi_writer_close(w);
    return rc;
  }
  w->fd = open(w->path, O_RDWR | O_CLOEXEC);
  if (w->fd < 0) {
    rc = sys_fail(err, w->path, "cannot open for writing");
    lindi_writer_close(w);
    return rc;
  }
  if (access(w->journal, F_OK) != 0 && (rc = load(w, err))) { /* with a journal: loaded at begin, after recovery */
    lindi_writer_close(w);
    return rc;
  }
  w->refs = 1;
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

/* Journal: a small JSON file replaced atomically (temporary file, fsync, rename). */
static vd_code write_journal(lindi_writer *w, cJSON *j, vd_err *err) {
  char *text = cJSON_PrintUnformatted(j);
  char *tmp = malloc(strlen(w->journal) + 8);
  if (!text || !tmp) {
    free(text);
    free(tmp);
    return vd_nomem(err);
  }
  sprintf(tmp, "%s.tmp", w->journal);
  vd_code rc = VD_OK;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    rc = sys_fail(err, tmp, "cannot write the journal");
  else {
    rc = pw(fd, text, strlen(text), 0, tmp, err);
    if (!rc && fsync(fd)) rc = sys_fail(err, tmp, "cannot sync the journal");
    close(fd);
    if (!rc && rename(tmp, w->journal)) rc = sys_fail(err, w->journal, "cannot install the journal");
    if (!rc) sync_dir(w->journal);
  }
  free(text);
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

/* Steps after the entry flip: the held blocks at E, then the trash. Idempotent. */
static vd_code finish(lindi_writer *w, int64_t end, int64_t new_end, const unsigned char *hold, int64_t revive,
                      const cJSON *trash, vd_err *err) {
  if (new_end > end) {
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
  const cJSON *t;
  cJSON_ArrayForEach(t, trash) {
    int64_t o = (int64_t)cJSON_GetArrayItem(t, 0)->valuedouble, s = (int64_t)cJSON_GetArrayItem(t, 1)->valuedouble;
    const char *nn = cJSON_GetArrayItem(t, 2)->valuestring;
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

/* A journal left by a crash: roll forward when its commit write reached the file,
 * otherwise back. Called with the lock held. */
static vd_code recover(lindi_writer *w, vd_err *err) {
  size_t len;
  FILE *f = fopen(w->journal, "rb");
  if (!f) return VD_OK;
  char buf[1 << 20];
  len = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  cJSON *j = cJSON_ParseWithLength(buf, len);
  const cJSON *end = cJSON_GetObjectItem(j, "end"), *at = cJSON_GetObjectItem(j, "commit_at"),
              *bytes = cJSON_GetObjectItem(j, "commit"), *nend = cJSON_GetObjectItem(j, "new_end"),
              *hold = cJSON_GetObjectItem(j, "hold"), *trash = cJSON_GetObjectItem(j, "trash"),
              *revive = cJSON_GetObjectItem(j, "revive");
  vd_code rc = VD_OK;
  if (!cJSON_IsNumber(end)) {
    cJSON_Delete(j);
    return vd_fail(err, VD_INVALID, "%s: unreadable journal; inspect it and the archive by hand", w->journal);
  }
  int forward = 0;
  unsigned char *cb = NULL, *hb = NULL;
  size_t cl = 0, hl = 0;
  if (cJSON_IsNumber(at) && cJSON_IsString(bytes) && cJSON_IsNumber(nend) && cJSON_IsString(hold) &&
      cJSON_IsArray(trash) && !vd_base64_decode(bytes->valuestring, strlen(bytes->valuestring), &cb, &cl) &&
      !vd_base64_decode(hold->valuestring, strlen(hold->valuestring), &hb, &hl) && hl == 1024) {
    unsigned char *cur = malloc(cl ? cl : 1);
    vd_err e2;
    forward = cur && pr(w->fd, cur, cl, (int64_t)at->valuedouble, w->path, &e2) == VD_OK && memcmp(cur, cb, cl) == 0;
    free(cur);
  }
  if (forward)
    rc = finish(w, (int64_t)end->valuedouble, (int64_t)nend->valuedouble, hb,
                cJSON_IsNumber(revive) ? (int64_t)revive->valuedouble : -1, trash, err);
  else if (!(rc = cut_back(w, (int64_t)end->valuedouble, err)))
    drop_journal(w);
  free(cb);
  free(hb);
  cJSON_Delete(j);
  return rc;
}

vd_code lindi_writer_begin(lindi_writer *w, vd_err *err) {
  if (w->in_tx) return VD_OK;
  if (lock(w, err)) return err->code;
  vd_code rc = recover(w, err);
  /* reload when another writer (or a recovery) changed the archive since we read it */
  struct stat st;
  unsigned char entry[LINDI_ENTRY_SIZE];
  if (!rc && (fstat(w->fd, &st) || pr(w->fd, entry, sizeof entry, 512, w->path, err) ||
              st.st_size != w->size_seen || memcmp(entry, w->entry_seen, sizeof entry) != 0 || w->n == 0))
    rc = load(w, err);
  if (!rc) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "end", (double)w->end);
    rc = j ? write_journal(w, j, err) : vd_nomem(err);
    cJSON_Delete(j);
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
  if (!w->refs_doc) {
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
      if (!(w->refs_doc = cJSON_ParseWithLength((const char *)b.data, b.len)))
        rc = vd_fail(err, VD_INVALID, "%s: malformed JSON", where);
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
      if (lindi_format_entry_spare(w->spare.o, w->spare.d, w->spare.s, next_spare, entry, err)) return err->code;
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
  if (lindi_format_entry_spare(w->tail, w->tail + TAR_BLOCK, size, next_spare, entry, err)) return err->code;
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
  w->size_seen = w->end + 1024;
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
  cJSON *j = NULL;
  char *b64c = NULL, *b64h = NULL;
  if (!w->dirty) goto done;
  commits_seen++;
  int64_t commit_at = 0, end = w->end;
  int refs_in_place = 0;
  w->new_idx_len = w->new_refs_len = -1;
  w->revive_o = w->trashed_idx_o = -1;
  if (w->refs_dirty && (rc = place_refs(w, &refs_in_place, &commit_at, &commit, err))) goto done;
  if (!refs_in_place && (rc = place_index(w, &text, &commit_at, &commit, err))) goto done;
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
  if (ftruncate(w->fd, w->tail < end + 1024 ? end + 1024 : w->tail) || ftruncate(w->fd, w->tail + 1024)) {
    rc = sys_fail(err, w->path, "cannot write the end-of-archive blocks");
    goto done;
  }
  if ((rc = sync_fd(w->fd, w->path, err))) goto done;
  crashpoint(2);
  j = cJSON_CreateObject();
  cJSON *tr = cJSON_CreateArray();
  b64c = vd_base64_encode(commit.data, commit.len);
  b64h = vd_base64_encode(w->hold, sizeof w->hold);
  if (!j || !tr || !b64c || !b64h) {
    cJSON_Delete(tr);
    rc = vd_nomem(err);
    goto done;
  }
  cJSON_AddNumberToObject(j, "end", (double)end);
  cJSON_AddNumberToObject(j, "new_end", (double)w->tail);
  cJSON_AddNumberToObject(j, "commit_at", (double)commit_at);
  cJSON_AddStringToObject(j, "commit", b64c);
  cJSON_AddStringToObject(j, "hold", b64h);
  for (int i = 0; i < w->ntrash; i++)
    if (w->trash[i].pos < w->base_n) {
      cJSON *t = cJSON_CreateArray();
      cJSON_AddItemToArray(t, cJSON_CreateNumber((double)w->trash[i].o));
      cJSON_AddItemToArray(t, cJSON_CreateNumber((double)w->trash[i].dash));
      cJSON_AddItemToArray(t, cJSON_CreateString(w->trash[i].newname));
      cJSON_AddItemToArray(tr, t);
    }
  cJSON_AddItemToObject(j, "trash", tr);
  cJSON_AddNumberToObject(j, "revive", (double)w->revive_o);
  if ((rc = write_journal(w, j, err))) goto done;
  crashpoint(3);
  if ((rc = pw(w->fd, commit.data, commit.len, commit_at, w->path, err)) || (rc = sync_fd(w->fd, w->path, err)))
    goto done;
  crashpoint(4);
  if ((rc = finish(w, end, w->tail, w->hold, w->revive_o, tr, err))) goto done;
  lindi_invalidate(w->ctx, w->path);
  vd_err e2;
  if (settle_committed(w, &e2)) load(w, &e2); /* committed either way: only our view is rebuilt */
  w->in_tx = 0;
  unlock(w);
  goto out;
done:
  if (rc) {
    lindi_writer_rollback(w);
  } else {
    if (w->in_tx) drop_journal(w);
    w->in_tx = 0;
    unlock(w);
  }
out:
  cJSON_Delete(j);
  free(b64c);
  free(b64h);
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
  load(w, &err);
  unlock(w);
}

static void drop_savepoints(lindi_writer *w, int from) {
  for (int i = from; i < w->nsp; i++) cJSON_Delete(w->sp[i].refs);
  if (from < w->nsp) w->nsp = from;
}

void lindi_writer_savepoint(lindi_writer *w, int n) {
  if (n < 0 || n >= 64) return;
  drop_savepoints(w, n);
  w->sp[n] = (savepoint){w->n, w->ntrash, w->tail, 0, 0, NULL};
  w->nsp = n + 1;
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
  if (sp.refs_saved) {
    cJSON_Delete(w->refs_doc);
    w->refs_doc = sp.refs ? cJSON_Duplicate(sp.refs, 1) : NULL;
    w->refs_dirty = sp.refs_dirty;
  }
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
