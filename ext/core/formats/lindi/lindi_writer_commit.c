/* The LINDI writer's commit and rollback (lindi_writer_impl.h; the protocol and why each
 * step is safe: lindi_writer.c). Commit: lindi.json and the index placed (in place when
 * one pwrite inside one 4 KiB page does it, else as new members), the trailer, the
 * journal, the entry flip (lindi's commit point), the held zero blocks (tar's), then the
 * trash. Rollback: what lies past the old end is cut off. */
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

/* Spaces over [at + from, at + to): the padding of a JSON member, which lindi_grow makes
 * four times its text, so hundreds of MiB for a large index. Before the commit point
 * only, so a cancel may stop it (the rollback cuts it off). */
static vd_code pad(lindi_writer *w, int64_t at, int64_t from, int64_t to, vd_err *err) {
  static unsigned char spaces[65536];
  if (!spaces[0]) memset(spaces, ' ', sizeof spaces);
  for (int64_t off = from; off < to; off += (int64_t)sizeof spaces) {
    size_t n = to - off < (int64_t)sizeof spaces ? (size_t)(to - off) : sizeof spaces;
    if (vd_ctx_check_interrupt(w->ctx, err) || lw_wr(w, at + off, spaces, n, err)) return err->code;
  }
  return VD_OK;
}

/* The new lindi.json, always a new copy appended with lindi's growth rule (the old copy
 * trashed): rewriting it in its padding would change bytes that readers of the published
 * entry may be reading. */
static vd_code place_refs(lindi_writer *w, vd_err *err) {
  vd_buf text = {0};
  if (vd_pyjson(w->refs_doc, &text)) return vd_nomem(err);
  int pos = vd_strmap_get(&w->map, LINDI_JSON_NAME);
  w->new_refs_len = (int64_t)text.len;
  vd_code rc = lw_add_trash(w, pos, err);
  int64_t size = lindi_grow((int64_t)text.len);
  unsigned char h[TAR_BLOCK];
  if (!rc && !(rc = tar_format(h, LINDI_JSON_NAME, size, err)) && !(rc = lw_wr(w, w->tail, h, TAR_BLOCK, err)) &&
      !(rc = lw_wr(w, w->tail + TAR_BLOCK, text.data, text.len, err))) {
    rc = pad(w, w->tail + TAR_BLOCK, (int64_t)text.len, size, err);
    if (!rc && lw_add_file(w, LINDI_JSON_NAME, w->tail, w->tail + TAR_BLOCK, size)) rc = vd_nomem(err);
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
  vd_code rc = lw_wr(s->w, s->off, p, n, err);
  s->off += (int64_t)n;
  return rc;
}

/* The new index, never in place (readers of the published entry may be reading the old
 * one): into the region the previous commit trashed when it fits, else appended. */
static vd_code place_index(lindi_writer *w, int64_t *commit_at, vd_buf *commit, vd_err *err) {
  int ipos = vd_strmap_get(&w->map, LINDI_INDEX_NAME);
  /* a repair may find no live index header (lindi trashed the old one and died before
   * appending the new): then there is none to trash */
  if (ipos < 0 && !w->repairing) return vd_fail(err, VD_INVALID, "%s: the index lists no .tar_index.json", w->path);
  lindi_file *live = malloc((w->n + 1) * sizeof *live);
  if (!live) return vd_nomem(err);
  int m = 0;
  for (int i = 0; i < w->n; i++)
    if (w->files[i].name) live[m++] = w->files[i];
  int64_t len;
  vd_code rc = lindi_stream_index(w->ctx, live, m, NULL, NULL, &len, err); /* count only */
  if (!rc && ipos >= 0) {
    lindi_file *ix = &w->files[ipos];
    int64_t old_o = ix->o, old_d = ix->d, old_s = ix->s;
    if (!(rc = lw_add_trash(w, ipos, err))) {
      /* its bytes stay as they are (a reader that read the old entry may still read them);
       * the commit after next writes over its text (the spare) */
      w->trash[w->ntrash - 1].dash = 0;
      w->trashed_idx_o = old_o, w->trashed_idx_d = old_d, w->trashed_idx_s = old_s;
      w->trashed_idx_len = w->idx_text_len < old_s ? w->idx_text_len : old_s;
    }
  }
  if (rc) {
    free(live);
    return rc;
  }
  /* live still holds the old index entry: replace it */
  int k = 0;
  for (int i = 0; i < m; i++)
    if (strcmp(live[i].name, LINDI_INDEX_NAME) != 0) live[k++] = live[i];
  if (w->spare.s > 0) { /* ping-pong: write into the index region our last commit trashed */
    live[k] = (lindi_file){LINDI_INDEX_NAME, w->spare.o, w->spare.d, w->spare.s};
    if ((rc = lindi_stream_index(w->ctx, live, k + 1, NULL, NULL, &len, err))) {
      free(live);
      return rc;
    }
    if (len <= w->spare.s) {
      index_sink sink = {w, w->spare.d};
      rc = lindi_stream_index(w->ctx, live, k + 1, to_archive, &sink, &len, err);
      free(live);
      if (rc) return rc;
      if (pad(w, w->spare.d, len, w->spare_dashed > len ? w->spare_dashed : len, err)) return err->code;
      w->new_idx_len = len;
      if (lw_add_file(w, LINDI_INDEX_NAME, w->spare.o, w->spare.d, w->spare.s)) return vd_nomem(err);
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
    if ((rc = lindi_stream_index(w->ctx, live, k + 1, NULL, NULL, &len, err))) break;
    if (4 * len <= size) break;
    size = lindi_grow(len);
  }
  unsigned char h[TAR_BLOCK];
  index_sink sink = {w, w->tail + TAR_BLOCK};
  if (!rc && !(rc = tar_format(h, LINDI_INDEX_NAME, size, err)) && !(rc = lw_wr(w, w->tail, h, TAR_BLOCK, err)))
    rc = lindi_stream_index(w->ctx, live, k + 1, to_archive, &sink, &len, err);
  free(live);
  if (rc) return rc;
  w->new_idx_len = len;
  if (pad(w, w->tail + TAR_BLOCK, len, size, err)) return err->code;
  if (lw_add_file(w, LINDI_INDEX_NAME, w->tail, w->tail + TAR_BLOCK, size)) return vd_nomem(err);
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
  lw_drop_savepoints(w, 0);
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
  if (fstat(w->fd, &st)) return lw_sys_fail(err, w->path, "cannot stat");
  lw_remember_file(w, &st);
  if (w->trashed_idx_o >= 0) { /* the index trashed now is the next commit's spare */
    w->spare = (lindi_file){NULL, w->trashed_idx_o, w->trashed_idx_d, w->trashed_idx_s};
    w->spare_dashed = w->trashed_idx_len;
  } else if (w->revive_o >= 0) {
    w->spare.s = 0;
  }
  return lw_pr(w->fd, w->entry_seen, LINDI_ENTRY_SIZE, 512, w->path, err);
}

vd_code lindi_writer_commit(lindi_writer *w, vd_err *err) {
  if (!w->in_tx) return VD_OK;
  vd_code rc = VD_OK;
  vd_buf commit = {0};
  lindi_journal j = {.revive = -1};
  if (!w->dirty) goto done;
  lw_commit_begin();
  int64_t commit_at = 0, end = w->end;
  w->new_idx_len = w->new_refs_len = -1;
  w->revive_o = w->trashed_idx_o = -1;
  if (w->refs_dirty && (rc = place_refs(w, err))) goto done;
  if ((rc = place_index(w, &commit_at, &commit, err))) goto done;
  lw_crashpoint(1);
  /* members staged and removed in this same transaction sit in the unseen region:
   * trash them now, through the hold */
  for (int i = 0; i < w->ntrash; i++) {
    trash_item *t = &w->trash[i];
    lw_trash_name(t);
    if (t->pos < w->base_n) continue;
    unsigned char h[TAR_BLOCK];
    if (tar_format(h, t->name, t->s, err) || tar_rename(h, t->newname, err) || lw_wr(w, t->o, h, TAR_BLOCK, err)) {
      rc = err->code;
      goto done;
    }
  }
  if ((rc = lw_flush_wb(w, err))) goto done;
  lw_write_step();
  if (ftruncate(w->fd, w->tail < end + 1024 ? end + 1024 : w->tail) || ftruncate(w->fd, w->tail + 1024)) {
    rc = lw_sys_fail(err, w->path, "cannot write the end-of-archive blocks");
    goto done;
  }
  if ((rc = lw_sync_fd(w->fd, w->path, err))) goto done;
  lw_crashpoint(2);
  j.end = end, j.has_commit = 1, j.commit_at = commit_at, j.new_end = w->tail, j.revive = w->revive_o;
  j.commit = commit.data, j.commit_len = commit.len;
  memcpy(j.hold, w->hold, sizeof j.hold);
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
  /* from here on the transaction is committed: recovery rolls it forward */
  if ((rc = lw_write_journal(w, &j, err))) goto done;
  lw_crashpoint(3);
  if ((rc = lw_finish(w, &j, err))) goto done;
  lw_commit_done();
  lindi_invalidate(w->ctx, w->path);
  vd_err e2;
  if (settle_committed(w, &e2)) lw_load(w, 0, &e2); /* committed either way: only our view is rebuilt */
  w->in_tx = 0;
  lw_unlock(w);
  goto out;
done:
  lw_commit_abandon();
  if (rc) {
    lindi_writer_rollback(w);
  } else {
    if (w->in_tx) lw_drop_journal(w);
    w->in_tx = 0;
    lw_unlock(w);
  }
out:
  free(j.trash); /* j.commit is commit's buffer */
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
  if (lw_cut_back(w, w->end, &err) == VD_OK) lw_drop_journal(w);
  w->in_tx = 0;
  /* the member list is read again at its next use (an empty list makes begin and the
   * scans load it), so a rollback after a cancel ends at once instead of re-reading an
   * index of a million members; an open scan walks the list, so then it is read now */
  if (w->scans) lw_load(w, 0, &err);
  else lw_clear_state(w);
  lw_unlock(w);
}
