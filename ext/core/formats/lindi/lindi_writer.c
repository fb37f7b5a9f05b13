/* LINDI archive writer (see lindi_writer.h and docs/lindi.md, "How writes stay safe").
 *
 * What each reader looks at: GNU tar walks headers from byte 0 and stops at the first
 * zero block; lindi (and lindi_files) read .tar_entry.json at 512 and the index it
 * names. A transaction therefore:
 *   - writes new members from the old end E onwards, but keeps the bytes of the old
 *     two zero blocks [E, E+1024) in memory (hold), so tar still stops at E;
 *   - at commit writes the new index as a new member (into the region the previous
 *     commit trashed when it fits, else appended; never in place, where readers of the
 *     published entry may be reading), lindi.json likewise when refs changed, the new
 *     trailer, fdatasync, then a journal naming every remaining step: the commit is made;
 *   - writes the held blocks at E (tar's commit point), then flips .tar_entry.json (one
 *     1024-byte pwrite in page 0: lindi's commit point), so every byte the new entry
 *     names is in the file before any reader can follow it;
 *   - trashes replaced/deleted copies by renaming their headers (their bytes stay, for
 *     readers of the old entry), fdatasync, removes the journal.
 * A journal left by a crash is rolled forward (it carries the commit) or back by
 * the next writer, under the lock, before anything else. A journal proves that it is one:
 * it ends with the SHA-256 of its own text, names the archive's device and inode and the
 * entry the archive had when the transaction began; recovery acts only when all of that
 * matches and the archive is in the state the journal started from or committed.
 *
 * Every commit raises the generation kept in the entry ("vdsql_gen"): a writer compares the entry (and
 * the file's size, inode and mtime, which also catch other tools) under the lock at BEGIN
 * and reloads on any difference, so it never writes from a view older than the last
 * commit. */
#include "lindi_writer.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
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

/* A writer with its file open and nothing read, in no connection's list. */
vd_code lw_open_unloaded(vd_ctx *ctx, const char *url, lindi_writer **out, vd_err *err) {
  *out = NULL;
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
  *out = w;
  vd_code rc = lw_open_file(w, err);
  if (rc) {
    lindi_writer_close(w);
    *out = NULL;
  }
  return rc;
}

vd_code lindi_writer_open(vd_ctx *ctx, const char *url, lindi_writer **out, vd_err *err) {
  *out = NULL;
  /* unknown schemes, file://host/...: the store's refusal; never a local file name */
  if (vd_url_check(url, err)) return err->code;
  /* the writer works on a local file (descriptors, a journal, flock): any other store is refused */
  if (!vd_store_is_local(url))
    return vd_fail(err, VD_READONLY, "lindi_tar: remote archives are read-only; write a local copy instead");
  char *want = vd_url_path(url), *real = want ? lw_canonical(want) : NULL;
  for (lindi_writer *o = ctx->lindi_writers; o && real; o = o->next) {
    char *r2 = lw_canonical(o->path);
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
  lindi_writer *w;
  vd_code rc = lw_open_unloaded(ctx, url, &w, err);
  /* with a journal the state is loaded at BEGIN, after recovery */
  if (!rc && !w->absent && !lw_exists_nofollow(w->journal)) rc = lw_load_unlocked(w, err);
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
  lw_clear_state(w);
  free(w->files);
  free(w->trash);
  free(w->wb);
  if (w->fd >= 0) close(w->fd);
  free(w->path);
  free(w->journal);
  free(w);
}

/* The archive as lindi creates an empty one, at the first write (see open_file). */
static vd_code create_now(lindi_writer *w, vd_err *err) {
  if (!w->absent) return VD_OK;
  vd_code rc = lw_create_empty(w->path, err);
  if (!rc) rc = lw_open_file(w, err);
  if (!rc && w->absent) rc = vd_fail(err, VD_IO, "%s: the new archive vanished", w->path);
  return rc;
}

vd_code lindi_writer_begin(lindi_writer *w, vd_err *err) {
  if (w->in_tx) return VD_OK;
  if (create_now(w, err) || lw_lock(w, err)) return err->code;
  vd_code rc = lw_recover(w, err);
  /* reload when another writer (or a recovery, or another tool) changed the archive
   * since we read it: the generation in the entry changes with every vdsql commit */
  struct stat st;
  unsigned char entry[LINDI_ENTRY_SIZE];
  if (!rc && fstat(w->fd, &st)) rc = lw_sys_fail(err, w->path, "cannot stat");
  if (!rc && !(rc = lw_pr(w->fd, entry, sizeof entry, 512, w->path, err)) && (lw_file_changed(w, &st, entry) || w->n == 0))
    rc = lw_load(w, 1, err);
  else if (!rc && !w->for_write && !(rc = lw_find_end(w, w->files, w->n, st.st_size, 1, &w->end, err))) /* read by a scan */
    w->for_write = 1, w->tail = w->end;
  if (!rc) {
    lindi_journal j = {.end = w->end, .revive = -1};
    rc = lw_write_journal(w, &j, err);
  }
  if (rc) {
    lw_unlock(w);
    return rc;
  }
  w->in_tx = 1;
  w->dirty = 0;
  return VD_OK;
}

vd_code lindi_writer_delete(lindi_writer *w, int pos, vd_err *err) {
  if (pos < 0 || pos >= w->n || !w->files[pos].name) return vd_fail(err, VD_NOTFOUND, "%s: no such row", w->path);
  if (lw_reserved(w->files[pos].name))
    return vd_fail(err, VD_CONSTRAINT, "%s: %s is part of the LINDI structure and cannot be deleted", w->path,
                   w->files[pos].name);
  return lw_add_trash(w, pos, err);
}

vd_code lindi_writer_put(lindi_writer *w, const char *name, const void *data, size_t len, int replace, int *pos,
                         vd_err *err) {
  if (!w->in_tx) return vd_fail(err, VD_ERROR, "%s: write outside a transaction", w->path);
  if (tar_check_name(name, strlen(name), err)) return vd_err_prefix(err, "%s", w->path);
  if (lw_reserved(name))
    return vd_fail(err, VD_CONSTRAINT, "%s: %s is part of the LINDI structure and cannot be written as a member",
                   w->path, name);
  int old = vd_strmap_get(&w->map, name);
  if (old >= 0 && !replace)
    return vd_fail(err, VD_CONSTRAINT, "%s: a member named %s exists (use INSERT OR REPLACE)", w->path, name);
  if (old >= 0 && lw_add_trash(w, old, err)) return err->code;
  int64_t padded = tar_padded((int64_t)len);
  unsigned char *buf = malloc(TAR_BLOCK + (size_t)padded);
  if (!buf) return vd_nomem(err);
  if (tar_format(buf, name, (int64_t)len, err)) {
    free(buf);
    return err->code;
  }
  if (len) memcpy(buf + TAR_BLOCK, data, len);
  memset(buf + TAR_BLOCK + len, 0, (size_t)(padded - (int64_t)len));
  vd_code rc = lw_wr(w, w->tail, buf, TAR_BLOCK + (size_t)padded, err);
  free(buf);
  if (rc) return rc;
  if (lw_add_file(w, name, w->tail, w->tail + TAR_BLOCK, (int64_t)len)) return vd_nomem(err);
  *pos = w->n - 1;
  w->tail += TAR_BLOCK + padded;
  w->dirty = 1;
  return VD_OK;
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
  if (n >= 0) lw_drop_savepoints(w, n);
}

void lindi_writer_rollback_to(lindi_writer *w, int n) {
  if (n < 0 || n >= w->nsp) return;
  savepoint sp = w->sp[n];
  lw_flush_wb(w, &(vd_err){0}); /* what lies past the restored tail is cut at commit */
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
  lw_drop_savepoints(w, n + 1); /* the savepoint itself stays; those opened after it are gone */
}

/* Readers need no lock: what the entry names is committed, whatever another writer is
 * doing meanwhile. */
static vd_code refresh(lindi_writer *w, vd_err *err) {
  if (w->in_tx || w->absent) return VD_OK;
  struct stat st;
  unsigned char entry[LINDI_ENTRY_SIZE];
  if (fstat(w->fd, &st)) return lw_sys_fail(err, w->path, "cannot stat");
  if (lw_pr(w->fd, entry, sizeof entry, 512, w->path, err)) return err->code;
  return lw_file_changed(w, &st, entry) || w->n == 0 ? lw_load(w, 0, err) : VD_OK;
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
  if (lw_flush_wb(w, err)) return err->code; /* staged bytes may still be in the write buffer */
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
      if (lw_pr(w->fd, out->data + k, (size_t)n, off, w->path, err)) return err->code;
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
