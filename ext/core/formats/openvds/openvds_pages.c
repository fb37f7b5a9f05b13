/* The page layer's read side (see openvds_pages.h): page objects fetched (one through
 * the document cache, or many through a fetch-ahead window), checked and decoded into
 * entries. Entries set and not yet written back (openvds_pages_write.c) win over the
 * store's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openvds_pages_impl.h"

vds_dirty_page *vds_pages_find_dirty(const vds_pages *pl, int64_t page) {
  int a = 0, b = pl->ndirty;
  while (a < b) {
    int m = a + (b - a) / 2;
    if (pl->dirty[m].page < page) a = m + 1; else b = m;
  }
  return a < pl->ndirty && pl->dirty[a].page == page ? &pl->dirty[a] : NULL;
}

int vds_pages_dirty(const vds_pages *pl) { return pl->ndirty; }

void vds_dirty_page_free(vds_dirty_page *d) {
  free(d->bytes);
  free(d->ent);
}

void vds_pages_discard(vds_pages *pl) {
  for (int i = 0; i < pl->ndirty; i++) vds_dirty_page_free(&pl->dirty[i]);
  pl->ndirty = 0;
}

vd_code vds_pages_open(vd_ctx *ctx, const vds_dataset *ds, const vds_layer *l, vds_pages **out, vd_err *err) {
  vds_pages *pl = calloc(1, sizeof *pl);
  *out = pl;
  if (!pl) return vd_nomem(err);
  pl->ctx = ctx;
  pl->ds = ds;
  pl->l = l;
  pl->page_bytes = (size_t)l->page_size * (size_t)l->entry_size;
  pl->page_of = -1;
  pl->stop_page = INT64_MAX;
  return VD_OK;
}

void vds_pages_close(vds_pages *pl) {
  if (!pl) return;
  vds_pages_discard(pl);
  free(pl->dirty);
  vd_blob_unref(pl->status);
  vd_blob_unref(pl->page);
  vd_ahead_close(pl->ahead);
  free(pl->dir);
  free(pl->wpages);
  free(pl->wnames);
  free(pl);
}

int64_t vds_pages_stored(const vds_pages *pl, int64_t page) {
  return pl->dir ? pl->dir[page] : vds_page_stored(pl->l, page);
}

char *vds_pages_url(const vds_pages *pl, int64_t name) {
  char key[400];
  snprintf(key, sizeof key, "%s/ChunkMetadata/%lld", pl->l->name, (long long)name);
  return vd_url_join(pl->ds->url, key);
}

/* Decodes the entry at byte off of page bytes (NULL or short: unwritten) into pl->cur. */
static void decode_at(vds_pages *pl, size_t off, const unsigned char *page, size_t len, vds_entry *e,
                      unsigned char raw[28]) {
  const vds_layer *l = pl->l;
  if (page && off + l->entry_size <= len) {
    memcpy(pl->cur, page + off, l->entry_size);
    memset(pl->cur + l->entry_size, 0, sizeof pl->cur - l->entry_size);
  } else {
    memset(pl->cur, 0, sizeof pl->cur);
  }
  if (raw) memcpy(raw, pl->cur, 28);
  vds_entry_decode(pl->cur, l->entry_size, e);
}

/* Decodes chunk's entry from its page's bytes. */
static void decode(vds_pages *pl, int64_t chunk, const unsigned char *page, size_t len, vds_entry *e,
                   unsigned char raw[28]) {
  decode_at(pl, (size_t)(chunk % pl->l->page_size) * pl->l->entry_size, page, len, e, raw);
}

vd_code vds_pages_check(const vds_pages *pl, int64_t p, const char *url, size_t len, vd_err *err) {
  char where[600];
  vd_url_redact(url, where, sizeof where);
  return vds_page_check(pl->l, p, len, where, err);
}

/* Opens the fetch-ahead window at page p. Its width is max_parallel (the requests in
 * flight at once), and no wider than max_alloc holds whole pages. A plain range over
 * more pages than the cache can keep would only push everything else out of it: its
 * pages bypass the cache; a short range (a point lookup), a list or a box keep theirs,
 * so a repeat costs no request. */
static vd_code ahead_open(vds_pages *pl, int64_t p, vd_err *err) {
  vd_ctx *ctx = pl->ctx;
  double page_bytes = (double)pl->page_bytes;
  int window = ctx->cfg.max_parallel;
  if (window > VDS_PAGES_WINDOW_MAX) window = VDS_PAGES_WINDOW_MAX;
  if (window > ctx->cfg.max_alloc / page_bytes) window = (int)(ctx->cfg.max_alloc / page_bytes);
  if (window < 1) window = 1;
  int64_t span = (pl->stop_page < pl->last_page ? pl->stop_page : pl->last_page) - p + 1;
  int cache = pl->selective || span * page_bytes < ctx->cfg.cache_size / 4.0;
  vd_ahead_close(pl->ahead);
  pl->ahead = NULL;
  pl->ahead_head = pl->ahead_n = 0;
  pl->next_push = p;
  return vd_ahead_open(ctx, window, cache, &pl->ahead, err);
}

/* Pushes the next stored pages the scan visits while the window has room. */
static vd_code ahead_fill(vds_pages *pl, vd_err *err) {
  const vds_layer *l = pl->l;
  while (vd_ahead_room(pl->ahead) && pl->next_push < l->page_count) {
    int64_t q = pl->next(pl->arg, pl->next_push);
    if (q < 0) {
      pl->next_push = l->page_count; /* none left */
      break;
    }
    if (q > pl->stop_page) break; /* asked for after all, it is pushed then (ahead_take) */
    pl->next_push = q + 1;
    int64_t name = vds_pages_stored(pl, q);
    if (name < 0) continue;
    char *url = vds_pages_url(pl, name);
    if (!url) return vd_nomem(err);
    vd_code rc = vd_ahead_push(pl->ahead, url, err);
    free(url);
    if (rc) return rc;
    pl->apage[(pl->ahead_head + pl->ahead_n++) % VDS_PAGES_WINDOW_MAX] = q;
  }
  return VD_OK;
}

/* Page p, through the window: the pages before it that were fetched ahead are dropped
 * (rows may skip them), a jump back or past the window starts again at p. */
static vd_code ahead_take(vds_pages *pl, int64_t p, vd_blob **out, vd_err *err) {
  vd_code rc;
  *out = NULL;
  if (p > pl->stop_page) pl->stop_page = INT64_MAX; /* the LIMIT was not the end: a plain scan from here */
  while (pl->ahead && pl->ahead_n && pl->apage[pl->ahead_head] < p) {
    vd_blob *b;
    vd_err skipped;
    /* a page no row needs: what its data says is nobody's concern (the slot is consumed
     * either way), but a cancel or a lack of memory stops the scan here */
    vd_code src = vd_ahead_take(pl->ahead, &b, &skipped);
    vd_blob_unref(b);
    pl->ahead_head = (pl->ahead_head + 1) % VDS_PAGES_WINDOW_MAX;
    pl->ahead_n--;
    if (src == VD_INTERRUPTED || src == VD_NOMEM) {
      *err = skipped;
      return src;
    }
  }
  if (!pl->ahead || (pl->ahead_n ? pl->apage[pl->ahead_head] != p : pl->next_push > p)) {
    if ((rc = ahead_open(pl, p, err))) return rc;
  } else if (!pl->ahead_n) {
    pl->next_push = p; /* the pages between were not needed */
  }
  if ((rc = ahead_fill(pl, err))) return rc;
  if (!pl->ahead_n || pl->apage[pl->ahead_head] != p) /* cannot happen: p is stored and next */
    return vd_fail(err, VD_INVALID, "internal error: page %lld not fetched ahead", (long long)p);
  rc = vd_ahead_take(pl->ahead, out, err);
  /* the slot is consumed even when its page failed: a caller that goes on past a
   * missing page (vdsql_check) finds the next page where it belongs */
  pl->ahead_head = (pl->ahead_head + 1) % VDS_PAGES_WINDOW_MAX;
  pl->ahead_n--;
  if (rc) return rc;
  return ahead_fill(pl, err); /* the freed slot's request goes out before this page's rows */
}

void vds_pages_scan(vds_pages *pl, vds_pages_next_fn next, void *arg, int64_t last_page, int selective) {
  pl->next = next;
  pl->arg = arg;
  pl->last_page = last_page;
  pl->stop_page = INT64_MAX;
  pl->selective = selective;
}

void vds_pages_scan_stop(vds_pages *pl, int64_t stop_page) { pl->stop_page = stop_page; }

/* Scan lookup: page p through the window, kept while rows stay on it. */
static vd_code scan_entry(vds_pages *pl, int64_t chunk, vds_entry *e, unsigned char raw[28], vd_err *err) {
  int64_t p = chunk / pl->l->page_size;
  if (vds_pages_stored(pl, p) < 0) {
    decode(pl, chunk, NULL, 0, e, raw);
    return VD_OK;
  }
  if (!pl->page || pl->page_of != p) {
    vd_blob_unref(pl->page);
    pl->page = NULL;
    pl->page_of = -1;
    char *url = vds_pages_url(pl, vds_pages_stored(pl, p));
    if (!url) return vd_nomem(err);
    vd_blob *b = NULL;
    vd_code rc = ahead_take(pl, p, &b, err);
    if (!rc && b) rc = vds_pages_check(pl, p, url, b->len, err);
    free(url);
    if (rc) {
      vd_blob_unref(b);
      return rc;
    }
    pl->page = b;
    pl->page_of = p;
    pl->page_first = p * pl->l->page_size;
  }
  decode(pl, chunk, pl->page->data, pl->page->len, e, raw);
  return VD_OK;
}

vd_code vds_pages_entry_object(vds_pages *pl, int64_t chunk, const char *obj_url, vds_entry *e, unsigned char raw[28],
                               vd_buf *obj, vd_objinfo *info, int *have_obj, vd_err *err) {
  const vds_layer *l = pl->l;
  *have_obj = 0;
  /* A scan's next chunk on the page it holds, most of its rows: what scan_entry would
   * do, without its divisions and lookups (a page being written wins: none here). */
  if (pl->page && !pl->ndirty && chunk >= pl->page_first && chunk - pl->page_first < l->page_size &&
      chunk < l->chunk_count) {
    decode_at(pl, (size_t)(chunk - pl->page_first) * l->entry_size, pl->page->data, pl->page->len, e, raw);
    return VD_OK;
  }
  vd_ctx *ctx = pl->ctx;
  int64_t p = chunk / l->page_size;
  if (chunk < 0 || chunk >= l->chunk_count)
    return vd_fail(err, VD_INVALID, "layer %s has chunks 0 to %lld", l->name, (long long)l->chunk_count - 1);
  vds_dirty_page *dp = vds_pages_find_dirty(pl, p);
  if (dp) {
    decode(pl, chunk, dp->bytes, pl->page_bytes, e, raw);
    return VD_OK;
  }
  if (pl->next) return scan_entry(pl, chunk, e, raw, err);
  int64_t name = vds_pages_stored(pl, p);
  if (name < 0) { /* directory says -1: nothing written on this page */
    decode(pl, chunk, NULL, 0, e, raw);
    return VD_OK;
  }
  char *url = vds_pages_url(pl, name);
  if (!url) return vd_nomem(err);
  vd_code rc = VD_OK;
  vd_blob *page = vd_cache_lookup(ctx, url, url);
  if (page || !obj_url) {
    if (page || !(rc = vd_fetch_doc(ctx, url, &page, err))) {
      rc = vds_pages_check(pl, p, url, page->len, err);
      decode(pl, chunk, rc ? NULL : page->data, page->len, e, raw);
    }
  } else {
    vd_getreq r[2] = {{.url = url, .len = -1}, {.url = obj_url, .len = -1, .want_info = 1}};
    vd_get_many(ctx, r, 2); /* each request carries its own outcome */
    if (r[0].rc) {
      rc = r[0].rc;
      *err = r[0].err;
    } else if (!(page = vd_blob_from_buf(&r[0].body))) {
      rc = vd_nomem(err);
    } else {
      vd_cache_store(ctx, url, page);
      rc = vds_pages_check(pl, p, url, page->len, err);
      decode(pl, chunk, rc ? NULL : page->data, page->len, e, raw);
    }
    if (!rc && e->status == VDS_S_DATA) { /* the object counts only for a data chunk */
      if (r[1].rc) {
        rc = r[1].rc;
        *err = r[1].err;
      } else {
        *obj = r[1].body, *info = r[1].info;
        r[1].body = (vd_buf){0}, r[1].info = (vd_objinfo){0};
        *have_obj = 1;
      }
    }
    for (int i = 0; i < 2; i++) {
      vd_buf_free(&r[i].body);
      vd_objinfo_free(&r[i].info);
    }
  }
  vd_blob_unref(page);
  free(url);
  return rc;
}

vd_code vds_pages_entry(vds_pages *pl, int64_t chunk, vds_entry *e, unsigned char raw[28], vd_err *err) {
  vd_buf obj = {0};
  vd_objinfo info = {0};
  int have;
  return vds_pages_entry_object(pl, chunk, NULL, e, raw, &obj, &info, &have, err);
}
