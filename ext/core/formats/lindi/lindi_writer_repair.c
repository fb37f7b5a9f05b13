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

/* Where the archive's bytes come from: the writer's descriptor (a local file, under its
 * lock) or the whole object read from a remote store. */
typedef struct src {
  lindi_writer *w;
  const unsigned char *buf;
  int64_t size;
  const char *where;
} src;

static vd_code rd(const src *s, void *p, size_t n, int64_t off, vd_err *err) {
  if (s->w) return lw_pr(s->w->fd, p, n, off, s->where, err);
  if (off < 0 || off > s->size || (int64_t)n > s->size - off)
    return vd_fail(err, VD_INVALID, "%s: a read past the end of the archive at byte %lld", s->where, (long long)off);
  memcpy(p, s->buf + off, n);
  return VD_OK;
}

static vd_code walk_headers(const src *w, int64_t size, walk *k, vd_err *err) {
  unsigned char h[TAR_BLOCK];
  k->cut_at = -1, k->cut_why = NULL, k->trailer_ok = 0;
  int64_t off = 0;
  for (;;) {
    if (off + TAR_BLOCK > size) { /* the file ends here, or inside a header: no end blocks */
      if (off < size) k->cut_at = off, k->cut_why = "a header cut short by the end of the file";
      break;
    }
    if (rd(w, h, TAR_BLOCK, off, err)) return err->code;
    if (all_zero(h, TAR_BLOCK)) break;
    tar_header th;
    if (tar_parse(h, &th) != 0 || !th.checksum_ok) {
      if (off == 0) return vd_fail(err, VD_INVALID, "%s: not a tar archive (the block at byte 0 is no tar header)", w->where);
      k->cut_at = off, k->cut_why = "a block that is no tar header (a write that did not land)";
      break;
    }
    if (off == 0 && (strcmp(th.name, LINDI_ENTRY_NAME) != 0 || th.size != LINDI_ENTRY_SIZE))
      return vd_fail(err, VD_INVALID, "%s: not a LINDI archive (its first member is %s, not a 1024-byte %s): a plain tar is not repaired",
                     w->where, th.name, LINDI_ENTRY_NAME);
    if (th.type != '0')
      return vd_fail(err, VD_INVALID,
                     "%s: a %s header at byte %lld: lindi writes only plain members, so this archive is not repaired",
                     w->where, tar_type_name(th.type), (long long)off);
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
    if (tar_next(w->where, off, &th, &off, err)) return err->code;
  }
  k->end = k->cut_at >= 0 ? k->cut_at : off;
  if (k->cut_at >= 0 || off + 2 * TAR_BLOCK > size) return VD_OK;
  /* after the end blocks only zeros (GNU tar pads to 10 KiB records): anything else is a
   * write that did not finish, which the repair cuts */
  unsigned char buf[64 * 1024];
  for (int64_t at = off; at < size;) {
    size_t n = size - at < (int64_t)sizeof buf ? (size_t)(size - at) : sizeof buf;
    if (rd(w, buf, n, at, err)) return err->code;
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

/* What the headers say against what the index says, for both paths. */
typedef struct plan {
  walk k;
  vd_strmap last;   /* name -> the walk's last header of that name */
  int *live;        /* per header: 1 the live copy of its name */
  unsigned char head[1536];
  int healthy;
} plan;

static void plan_free(plan *p) {
  free(p->live);
  vd_strmap_free(&p->last);
  walk_free(&p->k);
}

/* The index the entry names, read from s. */
static vd_code read_index(const src *s, const unsigned char *head, lindi_index *ix, vd_err *err) {
  if (s->w) {
    int64_t len;
    return lw_read_index(s->w, head, s->size, ix, &len, err);
  }
  int64_t io, id, is;
  if (lindi_parse_entry((const char *)head + 512, LINDI_ENTRY_SIZE, s->where, &io, &id, &is, err)) return err->code;
  if (id > s->size || is > s->size - id)
    return vd_fail(err, VD_INVALID, "%s: .tar_index.json runs past the end of the file", s->where);
  ix->io = io, ix->id = id, ix->is = is;
  return lindi_parse_index((const char *)s->buf + id, (size_t)is, s->where, ix, err);
}

static vd_code analyse(const src *s, plan *p, lindi_repair_log *log, vd_err *err) {
  size_t nhead = s->size < (int64_t)sizeof p->head ? (size_t)s->size : sizeof p->head;
  memset(p->head, 0, sizeof p->head);
  if (nhead && rd(s, p->head, nhead, 0, err)) return err->code;
  if (lindi_is_json_form(p->head, nhead))
    return vd_fail(err, VD_UNSUPPORTED, "%s: a .lindi.json (LINDI's JSON form) has no index to repair", s->where);
  if (s->size < 1536) return vd_fail(err, VD_INVALID, "%s: too short for a LINDI archive", s->where);
  walk *k = &p->k;
  lindi_index ix = {0};
  vd_err ixerr = {0};
  vd_code rc = walk_headers(s, s->size, k, err);
  if (rc) return rc;
  int have_ix = read_index(s, p->head, &ix, &ixerr) == VD_OK;
  /* the last copy of a name is the live one (lindi appends a replacement); trash is not listed */
  if (!(p->live = calloc((size_t)k->n + 1, sizeof *p->live))) rc = vd_nomem(err);
  for (int i = 0; i < k->n && !rc; i++)
    if (strncmp(k->m[i].name, ".trash/", 7) != 0 && vd_strmap_put(&p->last, k->m[i].name, i)) rc = vd_nomem(err);
  for (int i = 0; i < k->n && !rc; i++)
    p->live[i] = strncmp(k->m[i].name, ".trash/", 7) != 0 && vd_strmap_get(&p->last, k->m[i].name) == i;
  int same = 0;
  if (!rc && have_ix) rc = compare(&ix, k, p->live, &p->last, log, &same, err);
  lindi_index_free(&ix);
  if (rc) return rc;
  int dups = 0;
  for (int i = 0; i < k->n; i++) dups += !p->live[i] && strncmp(k->m[i].name, ".trash/", 7) != 0;
  if (have_ix && same && !dups && k->cut_at < 0 && k->trailer_ok) {
    p->healthy = 1; /* nothing to write */
    return VD_OK;
  }
  if (!have_ix) {
    int64_t io = 0, id = 0, is = 0; /* where the entry said the index is, when it says so */
    vd_err ignore;
    lindi_parse_entry((const char *)p->head + 512, LINDI_ENTRY_SIZE, s->where, &io, &id, &is, &ignore);
    if ((rc = note(log, "unreadable", LINDI_INDEX_NAME, io, is, err, "%s", ixerr.msg))) return rc;
    for (int i = 0; i < k->n && !rc; i++)
      if (p->live[i]) rc = note(log, "listed", k->m[i].name, k->m[i].o, k->m[i].s, err, "a header (the old index could not be read)");
  }
  return rc;
}

/* The rows of what the rebuild does besides the index: older copies trashed, the torn tail. */
static vd_code note_rebuild(const plan *p, int64_t size, lindi_repair_log *log, vd_err *err) {
  const walk *k = &p->k;
  vd_code rc = VD_OK;
  for (int i = 0; i < k->n && !rc; i++)
    if (!p->live[i] && strncmp(k->m[i].name, ".trash/", 7) != 0)
      rc = note(log, "trashed", k->m[i].name, k->m[i].o, k->m[i].s, err, "an older copy; a later header holds the name");
  if (!rc && k->cut_at >= 0)
    rc = note(log, "cut", NULL, k->cut_at, size - k->cut_at, err, "%s: the bytes from here on are dropped", k->cut_why);
  if (!rc && k->cut_at < 0 && !k->trailer_ok)
    rc = note(log, "cut", NULL, k->end, size - k->end, err, "the archive had no end-of-archive blocks: written");
  return rc;
}

static vd_code note_index(const lindi_file *ni, int n, lindi_repair_log *log, vd_err *err) {
  if (note(log, "index", LINDI_INDEX_NAME, ni->o, ni->s, err, "written from the headers: %d members", n)) return err->code;
  return note(log, "entry", LINDI_ENTRY_NAME, 0, LINDI_ENTRY_SIZE, err, "names the new index (data at %lld)", (long long)ni->d);
}

static vd_code repair_locked(lindi_writer *w, lindi_repair_log *log, vd_err *err) {
  struct stat st;
  if (fstat(w->fd, &st)) return lw_sys_fail(err, w->path, "cannot stat");
  src s = {w, NULL, st.st_size, w->path};
  plan p = {0};
  vd_code rc = analyse(&s, &p, log, err);
  walk *k = &p.k;
  if (rc || p.healthy) goto out;
  /* the writer's state as the headers give it, then its commit */
  lw_clear_state(w);
  for (int i = 0; i < k->n && !rc; i++)
    if (strncmp(k->m[i].name, ".trash/", 7) != 0 && lw_add_file(w, k->m[i].name, k->m[i].o, k->m[i].d, k->m[i].s))
      rc = vd_nomem(err);
  if (rc) goto out;
  w->base_n = w->n;
  w->end = w->tail = k->end;
  memset(w->hold, 0, sizeof w->hold);
  const lindi_file *wi = lindi_writer_find(w, LINDI_INDEX_NAME);
  w->idx_text_len = wi ? wi->s : 0; /* its text length unknown: the whole member counts */
  w->spare.s = 0;
  w->gen = 0;
  int64_t sp[4];
  lindi_parse_spare((const char *)p.head + 512, LINDI_ENTRY_SIZE, sp, &w->gen);
  memcpy(w->entry_seen, p.head + 512, LINDI_ENTRY_SIZE);
  lw_remember_file(w, &st);
  w->for_write = 1;
  w->repairing = 1;
  lindi_journal j = {.end = w->end, .revive = -1};
  if ((rc = lw_write_journal(w, &j, err))) goto out;
  w->in_tx = 1;
  w->dirty = 1;
  /* earlier copies of a name: trashed by the commit (renamed; their bytes stay) */
  int *pos = p.live; /* reused: the writer's row of each header (trash has none) */
  for (int i = 0, r = 0; i < k->n; i++)
    pos[i] = pos[i] ? r++ + 1 : strncmp(k->m[i].name, ".trash/", 7) != 0 ? -(r++ + 1) : 0;
  for (int i = 0; i < k->n && !rc; i++)
    if (pos[i] < 0) {
      rc = lw_add_trash(w, -pos[i] - 1, err); /* drops the name from the map: the winner's row goes back */
      int win = pos[vd_strmap_get(&p.last, k->m[i].name)] - 1;
      if (!rc && vd_strmap_put(&w->map, w->files[win].name, win)) rc = vd_nomem(err);
    }
  for (int i = 0; i < k->n; i++) pos[i] = pos[i] > 0; /* live again, for the rows */
  if (!rc) rc = note_rebuild(&p, st.st_size, log, err);
  if (rc) {
    lindi_writer_rollback(w);
    goto out;
  }
  if ((rc = lindi_writer_commit(w, err))) goto out; /* a failed commit rolls back */
  const lindi_file *ni = lindi_writer_find(w, LINDI_INDEX_NAME);
  if (ni) rc = note_index(ni, w->n, log, err);
out:
  plan_free(&p);
  return rc;
}

/* Puts the repaired archive over the object read, whose etag was etag. A refused If-Match
 * is another writer's change, or our own put whose answer was lost on the wire and whose
 * retry the condition then refused: the object read again tells which. */
static vd_code put_repaired(vd_ctx *ctx, const char *url, const vd_buf *out, const char *etag, vd_err *err) {
  if (!etag[0]) /* without it the put could overwrite another writer's archive unseen */
    return vd_fail(err, VD_UNSUPPORTED, "%s: the store gave the archive no ETag, so the repair cannot be made "
                   "conditional; nothing was written", url);
  vd_putreq put = {.url = url, .body = out->data, .len = out->len, .if_match = etag};
  vd_code rc = vd_put(ctx, &put, err);
  if (rc != VD_PRECONDITION) return rc;
  vd_buf now = {0};
  vd_objinfo info = {0};
  vd_err gerr = {0};
  int ours = vd_get(ctx, url, 0, -1, &now, &info, &gerr) == VD_OK && now.len == out->len &&
             memcmp(now.data, out->data, out->len) == 0;
  vd_buf_free(&now);
  vd_objinfo_free(&info);
  if (ours) {
    vd_err_clear(err);
    return VD_OK;
  }
  return vd_fail(err, VD_PRECONDITION, "%s: the archive changed while it was being repaired; the repair is not in it",
                 url);
}

/* A remote archive (S3, Azure): objects there are replaced whole, atomically, so the
 * repaired archive is built in memory and put in one request, on the condition that the
 * object is still the one read (If-Match): a kill leaves the old object or the new, and
 * a writer that changed it meanwhile makes the repair write nothing. */
static vd_code repair_remote(vd_ctx *ctx, const char *url, lindi_repair_log *log, vd_err *err) {
  vd_buf b = {0}, out = {0}, text = {0};
  vd_objinfo info = {0};
  plan p = {0};
  lindi_file *files = NULL;
  vd_code rc = vd_get(ctx, url, 0, -1, &b, &info, err);
  src s = {NULL, b.data, (int64_t)b.len, url};
  if (!rc) rc = analyse(&s, &p, log, err);
  if (rc || p.healthy) goto out;
  walk *k = &p.k;
  if ((rc = note_rebuild(&p, s.size, log, err))) goto out;
  /* the live members but the index, in header order, then the new index at the end */
  if (!(files = malloc(((size_t)k->n + 1) * sizeof *files))) {
    rc = vd_nomem(err);
    goto out;
  }
  int n = 0;
  for (int i = 0; i < k->n; i++)
    if (p.live[i] && strcmp(k->m[i].name, LINDI_INDEX_NAME) != 0) files[n++] = k->m[i];
  int64_t size = LINDI_INITIAL_SIZE, len = 0;
  for (;;) { /* the index lists itself: its size depends on its own text */
    files[n] = (lindi_file){LINDI_INDEX_NAME, k->end, k->end + TAR_BLOCK, size};
    text.len = 0;
    if ((rc = lindi_format_index(files, n + 1, &text, err))) goto out;
    len = (int64_t)text.len;
    if (4 * len <= size) break;
    size = lindi_grow(len);
  }
  size_t total = (size_t)(k->end + TAR_BLOCK + size + 2 * TAR_BLOCK);
  if (vd_buf_reserve(&out, total)) {
    rc = vd_nomem(err);
    goto out;
  }
  memcpy(out.data, b.data, (size_t)k->end);
  unsigned char *tail = out.data + k->end;
  memset(tail, 0, total - (size_t)k->end);
  memset(tail + TAR_BLOCK, ' ', (size_t)size);
  memcpy(tail + TAR_BLOCK, text.data, text.len);
  if ((rc = tar_format(tail, LINDI_INDEX_NAME, size, err)) ||
      (rc = lindi_format_entry(k->end, k->end + TAR_BLOCK, size, out.data + 512, err)))
    goto out;
  /* older copies and the old index: their headers renamed into .trash/, as a commit trashes */
  for (int i = 0; i < k->n && !rc; i++)
    if (strncmp(k->m[i].name, ".trash/", 7) != 0 && (!p.live[i] || strcmp(k->m[i].name, LINDI_INDEX_NAME) == 0)) {
      trash_item t = {.name = k->m[i].name};
      lw_trash_name(&t);
      rc = tar_rename(out.data + k->m[i].o, t.newname, err);
    }
  if (rc) goto out;
  out.len = total;
  if ((rc = put_repaired(ctx, url, &out, info.etag, err))) goto out;
  rc = note_index(&files[n], n + 1, log, err);
out:
  free(files);
  plan_free(&p);
  vd_buf_free(&b);
  vd_buf_free(&out);
  vd_buf_free(&text);
  vd_objinfo_free(&info);
  return rc;
}

vd_code lindi_repair(vd_ctx *ctx, const char *url, lindi_repair_log *log, vd_err *err) {
  memset(log, 0, sizeof *log);
  if (vd_url_check(url, err)) return err->code;
  /* a local file is repaired in place by the writer's commit (a journal and a lock beside
   * it); an object store's object is replaced whole; http(s) cannot be written */
  if (!vd_store_is_local(url)) {
    vd_code rc = vd_store_can_write(url) ? repair_remote(ctx, url, log, err)
                                         : vd_fail(err, VD_UNSUPPORTED, "%s: lindi_repair writes only local files, s3:// and az:// (this store is read-only)", url);
    if (!rc) lindi_invalidate(ctx, url);
    if (rc) lindi_repair_log_free(log);
    return rc;
  }
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
