/* lindi_repair: the index rebuilt from the tar headers, when lindi's own writer (which
 * never syncs) left one that no longer matches them. The headers are the truth a tar
 * reader sees; the repair makes lindi's view (.tar_entry.json, .tar_index.json) say the
 * same, through the writer's own commit (journal, held blocks, entry flip, trash), so a
 * kill at any moment leaves the old archive or the repaired one. A healthy archive is
 * only read: no journal, no write. */
#include <cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lindi_writer_impl.h"
#include "formats/tar/tar.h"
#include "store/store.h"

static int all_zero(const unsigned char *p, size_t n) {
  return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

static vd_code note(lindi_repair_log *log, const char *action, const char *name, int64_t o, int64_t s,
                    vd_err *err, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static vd_code note(lindi_repair_log *log, const char *action, const char *name, int64_t o, int64_t s,
                    vd_err *err, const char *fmt, ...) {
  if (log->n == log->cap) {
    int cap = log->cap ? 2 * log->cap : 16;
    lindi_repair_row *r = realloc(log->rows, (size_t)cap * sizeof *r);
    if (!r) return vd_nomem(err);
    log->rows = r, log->cap = cap;
  }
  char detail[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  lindi_repair_row *r = &log->rows[log->n];
  r->action = action, r->o = o, r->s = s;
  r->name = name ? strdup(name) : NULL;
  r->detail = strdup(detail);
  if ((name && !r->name) || !r->detail) {
    free(r->name);
    free(r->detail);
    return vd_nomem(err);
  }
  log->n++;
  return VD_OK;
}

void lindi_repair_log_free(lindi_repair_log *log) {
  for (int i = 0; i < log->n; i++) free(log->rows[i].name), free(log->rows[i].detail);
  free(log->rows);
  memset(log, 0, sizeof *log);
}

/* What the headers say: every member in header order (duplicates included: a copy a
 * crash left untrashed), where tar's end is, and whether anything follows it. */
typedef struct walk {
  lindi_file *m;
  int n, cap;
  int64_t end;     /* where the end-of-archive blocks are, or go */
  int64_t cut_at;  /* a torn member's header, or non-zero bytes after the end: -1 none */
  const char *cut_why;
  int trailer_ok;  /* two zero blocks at end and only zeros after them */
} walk;

static void walk_free(walk *k) {
  for (int i = 0; i < k->n; i++) free(k->m[i].name);
  free(k->m);
}

static vd_code walk_headers(lindi_writer *w, int64_t size, walk *k, vd_err *err) {
  unsigned char h[TAR_BLOCK];
  k->cut_at = -1, k->cut_why = NULL, k->trailer_ok = 0;
  int64_t off = 0;
  for (;;) {
    if (off + TAR_BLOCK > size) { /* the file ends here, or inside a header: no end blocks */
      if (off < size) k->cut_at = off, k->cut_why = "a header cut short by the end of the file";
      break;
    }
    if (lw_pr(w->fd, h, TAR_BLOCK, off, w->path, err)) return err->code;
    if (all_zero(h, TAR_BLOCK)) break;
    tar_header th;
    if (tar_parse(h, &th) != 0 || !th.checksum_ok) {
      if (off == 0) return vd_fail(err, VD_INVALID, "%s: not a tar archive (the block at byte 0 is no tar header)", w->path);
      k->cut_at = off, k->cut_why = "a block that is no tar header (a write that did not land)";
      break;
    }
    if (off == 0 && (strcmp(th.name, LINDI_ENTRY_NAME) != 0 || th.size != LINDI_ENTRY_SIZE))
      return vd_fail(err, VD_INVALID, "%s: not a LINDI archive (its first member is %s, not a 1024-byte %s): a plain tar is not repaired",
                     w->path, th.name, LINDI_ENTRY_NAME);
    if (th.type != '0')
      return vd_fail(err, VD_INVALID,
                     "%s: a %s header at byte %lld: lindi writes only plain members, so this archive is not repaired",
                     w->path, tar_type_name(th.type), (long long)off);
    if (th.size < 0 || th.size > size - off - TAR_BLOCK) {
      k->cut_at = off, k->cut_why = "a member whose data runs past the end of the file";
      break;
    }
    if (k->n == k->cap) {
      int cap = k->cap ? 2 * k->cap : 64;
      lindi_file *m = realloc(k->m, (size_t)cap * sizeof *m);
      if (!m) return vd_nomem(err);
      k->m = m, k->cap = cap;
    }
    char *nm = strdup(th.name);
    if (!nm) return vd_nomem(err);
    k->m[k->n++] = (lindi_file){nm, off, off + TAR_BLOCK, th.size};
    if (tar_next(w->path, off, &th, &off, err)) return err->code;
  }
  k->end = k->cut_at >= 0 ? k->cut_at : off;
  if (k->cut_at >= 0 || off + 2 * TAR_BLOCK > size) return VD_OK;
  /* after the end blocks only zeros (GNU tar pads to 10 KiB records): anything else is a
   * write that did not finish, which the repair cuts */
  unsigned char buf[64 * 1024];
  for (int64_t at = off; at < size;) {
    size_t n = size - at < (int64_t)sizeof buf ? (size_t)(size - at) : sizeof buf;
    if (lw_pr(w->fd, buf, n, at, w->path, err)) return err->code;
    if (!all_zero(buf, n)) {
      k->cut_at = off, k->cut_why = "bytes after the end-of-archive blocks";
      return VD_OK;
    }
    at += (int64_t)n;
  }
  k->trailer_ok = 1;
  return VD_OK;
}

/* The rows for members the index and the headers disagree on; *same 1 when none. */
static vd_code compare(const lindi_index *ix, const walk *k, const int *live, vd_strmap *last, lindi_repair_log *log,
                       int *same, vd_err *err) {
  int nlive = 0;
  for (int i = 0; i < k->n; i++) {
    const lindi_file *m = &k->m[i];
    if (!live[i]) continue;
    nlive++;
    const lindi_file *f = lindi_find(ix, m->name);
    vd_code rc = VD_OK;
    if (!f)
      rc = note(log, "listed", m->name, m->o, m->s, err, "a header the index did not list");
    else if (f->o != m->o || f->d != m->d || f->s != m->s)
      rc = note(log, "relisted", m->name, m->o, m->s, err, "the index said header %lld, data %lld, size %lld",
                (long long)f->o, (long long)f->d, (long long)f->s);
    if (rc) return rc;
  }
  for (int i = 0; i < ix->n; i++) {
    const lindi_file *f = &ix->files[i];
    if (vd_strmap_get(last, f->name) < 0 && note(log, "unlisted", f->name, f->o, f->s, err, "the index listed it; no header of that name %s",
                       f->d + f->s > k->end ? "(it ran past the archive's end)" : "is live"))
      return err->code;
  }
  *same = log->n == 0 && nlive == ix->n;
  return VD_OK;
}

static vd_code repair_locked(lindi_writer *w, lindi_repair_log *log, vd_err *err) {
  struct stat st;
  unsigned char head[1536];
  if (fstat(w->fd, &st)) return lw_sys_fail(err, w->path, "cannot stat");
  size_t nhead = st.st_size < (off_t)sizeof head ? (size_t)st.st_size : sizeof head;
  memset(head, 0, sizeof head);
  if (nhead && lw_pr(w->fd, head, nhead, 0, w->path, err)) return err->code;
  if (lindi_is_json_form(head, nhead))
    return vd_fail(err, VD_UNSUPPORTED, "%s: a .lindi.json (LINDI's JSON form) has no index to repair", w->path);
  if (st.st_size < 1536) return vd_fail(err, VD_INVALID, "%s: too short for a LINDI archive", w->path);
  walk k = {0};
  vd_strmap last = {0}; /* name -> the walk's last header of that name */
  lindi_index ix = {0};
  int *live = NULL;
  vd_err ixerr = {0};
  int64_t len = 0;
  vd_code rc = walk_headers(w, st.st_size, &k, err);
  if (rc) goto out;
  int have_ix = lw_read_index(w, head, st.st_size, &ix, &len, &ixerr) == VD_OK;
  /* the last copy of a name is the live one (lindi appends a replacement); trash is not listed */
  if (!(live = calloc((size_t)k.n + 1, sizeof *live))) {
    rc = vd_nomem(err);
    goto out;
  }
  for (int i = 0; i < k.n && !rc; i++)
    if (strncmp(k.m[i].name, ".trash/", 7) != 0 && vd_strmap_put(&last, k.m[i].name, i)) rc = vd_nomem(err);
  for (int i = 0; i < k.n && !rc; i++) live[i] = strncmp(k.m[i].name, ".trash/", 7) != 0 && vd_strmap_get(&last, k.m[i].name) == i;
  if (rc) goto out;
  int same = 0;
  if (have_ix && (rc = compare(&ix, &k, live, &last, log, &same, err))) goto out;
  int dups = 0;
  for (int i = 0; i < k.n; i++) dups += !live[i] && strncmp(k.m[i].name, ".trash/", 7) != 0;
  if (have_ix && same && !dups && k.cut_at < 0 && k.trailer_ok) goto out; /* healthy: nothing written */
  if (!have_ix) {
    int64_t io = 0, id = 0, is = 0; /* where the entry said the index is, when it says so */
    vd_err ignore;
    lindi_parse_entry((const char *)head + 512, LINDI_ENTRY_SIZE, w->path, &io, &id, &is, &ignore);
    if ((rc = note(log, "unreadable", LINDI_INDEX_NAME, io, is, err, "%s", ixerr.msg))) goto out;
    for (int i = 0; i < k.n && !rc; i++)
      if (live[i]) rc = note(log, "listed", k.m[i].name, k.m[i].o, k.m[i].s, err, "a header (the old index could not be read)");
    if (rc) goto out;
  }
  /* the writer's state as the headers give it, then its commit */
  lw_clear_state(w);
  for (int i = 0; i < k.n && !rc; i++)
    if (strncmp(k.m[i].name, ".trash/", 7) != 0 && lw_add_file(w, k.m[i].name, k.m[i].o, k.m[i].d, k.m[i].s)) rc = vd_nomem(err);
  if (rc) goto out;
  w->base_n = w->n;
  w->end = w->tail = k.end;
  memset(w->hold, 0, sizeof w->hold);
  const lindi_file *wi = lindi_writer_find(w, LINDI_INDEX_NAME);
  w->idx_text_len = wi ? wi->s : 0; /* its text length unknown: the whole member counts */
  w->spare.s = 0;
  w->gen = 0;
  int64_t sp[4];
  lindi_parse_spare((const char *)head + 512, LINDI_ENTRY_SIZE, sp, &w->gen);
  memcpy(w->entry_seen, head + 512, LINDI_ENTRY_SIZE);
  lw_remember_file(w, &st);
  w->for_write = 1;
  w->repairing = 1;
  lindi_journal j = {.end = w->end, .revive = -1};
  if ((rc = lw_write_journal(w, &j, err))) goto out;
  w->in_tx = 1;
  w->dirty = 1;
  /* earlier copies of a name: trashed by the commit (renamed; their bytes stay) */
  for (int i = 0, pos = 0; i < k.n; i++) /* the writer's rows are the walk's without trash */
    live[i] = live[i] ? pos++ + 1 : strncmp(k.m[i].name, ".trash/", 7) != 0 ? -(pos++ + 1) : 0;
  for (int i = 0; i < k.n && !rc; i++) {
    if (live[i] < 0) {
      rc = lw_add_trash(w, -live[i] - 1, err); /* drops the name from the map: the winner's row goes back */
      int win = live[vd_strmap_get(&last, k.m[i].name)] - 1;
      if (!rc && vd_strmap_put(&w->map, w->files[win].name, win)) rc = vd_nomem(err);
      if (!rc) rc = note(log, "trashed", k.m[i].name, k.m[i].o, k.m[i].s, err, "an older copy; a later header holds the name");
    }
  }
  if (!rc && k.cut_at >= 0)
    rc = note(log, "cut", NULL, k.cut_at, st.st_size - k.cut_at, err, "%s: the bytes from here on are dropped", k.cut_why);
  if (!rc && k.cut_at < 0 && !k.trailer_ok)
    rc = note(log, "cut", NULL, k.end, st.st_size - k.end, err, "the archive had no end-of-archive blocks: written");
  if (rc) {
    lindi_writer_rollback(w);
    goto out;
  }
  if ((rc = lindi_writer_commit(w, err))) goto out; /* a failed commit rolls back */
  const lindi_file *ni = lindi_writer_find(w, LINDI_INDEX_NAME);
  if (ni && !(rc = note(log, "index", LINDI_INDEX_NAME, ni->o, ni->s, err, "written from the headers: %d members", w->n)))
    rc = note(log, "entry", LINDI_ENTRY_NAME, 0, LINDI_ENTRY_SIZE, err, "names the new index (data at %lld)", (long long)ni->d);
out:
  free(live);
  vd_strmap_free(&last);
  lindi_index_free(&ix);
  walk_free(&k);
  return rc;
}

vd_code lindi_repair(vd_ctx *ctx, const char *url, lindi_repair_log *log, vd_err *err) {
  memset(log, 0, sizeof *log);
  if (vd_url_check(url, err)) return err->code;
  /* crash safety here rests on a journal and flock beside a local file */
  if (!vd_store_is_local(url))
    return vd_fail(err, VD_UNSUPPORTED, "%s: lindi_repair repairs local archives only (copy a remote one, repair, put it back)", url);
  lindi_writer *w;
  vd_code rc = lw_open_unloaded(ctx, url, &w, err);
  if (rc) return rc;
  if (w->absent) rc = vd_fail(err, VD_NOTFOUND, "%s: no such file", w->path);
  else if (!(rc = lw_lock(w, err))) {
    rc = lw_recover(w, err);
    if (!rc) rc = repair_locked(w, log, err);
    lw_unlock(w);
  }
  if (!rc) lindi_invalidate(ctx, w->path);
  lindi_writer_close(w); /* never in the connection's list: only freed */
  if (rc) lindi_repair_log_free(log);
  return rc;
}
