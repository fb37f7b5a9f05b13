/* The page layer's write side (see openvds_pages.h): a dirty set of pages, each a copy
 * of the page as read with its etag plus this writer's entries, and the write-back that
 * puts the pages, then LayerStatus, as conditional writes. The LayerStatus counts are
 * worked out at write time against the page actually overwritten: each chunk adds what
 * its new entry stands for and takes off what its old one stood for, so a re-applied
 * entry is never counted twice and the counts follow the pages (OpenVDS itself only
 * counts an 8-byte chunk's first write, spec section 3, which leaves serializedSize wrong
 * after an overwrite; the writer gives the old object's size, vds_pages_set_old_bytes). */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openvds_pages_impl.h"
#include "openvds_write.h"

#define MAX_TRIES 8

void vds_entry_encode(unsigned char *p, int entry_size, uint64_t hash, uint32_t object_size,
                      const unsigned char *levels) {
  memset(p, 0, (size_t)entry_size);
  unsigned char *h = p;
  if (entry_size == 28) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(object_size >> (8 * i));
    h = p + 4;
    if (levels) memcpy(p + 12, levels, 16);
  }
  for (int i = 0; i < 8; i++) h[i] = (unsigned char)(hash >> (8 * i));
}

/* Reads the object at url with its etag: *got 0 when there is none. */
static vd_code read_fresh(vds_pages *pl, const char *url, vd_buf *body, char etag[128], int *got, vd_err *err) {
  vd_objinfo info = {0};
  *got = 0;
  vd_code rc = vd_get(pl->ctx, url, 0, -1, body, &info, err);
  if (rc == VD_NOTFOUND) return VD_OK;
  if (rc) return rc;
  snprintf(etag, 128, "%s", info.etag);
  vd_objinfo_free(&info);
  *got = 1;
  return VD_OK;
}

/* (Re)reads the base of d: the stored page (checked, zero-filled to full size), or
 * zeros when it is not stored yet; this writer's entries are applied on top and what
 * they replace is kept for the counts. With read 0 (a page the directory lists as not
 * written) the base is zeros without a request: the page is then put create-only, and
 * if another writer stored it meanwhile that put fails and the page is read then. */
static vd_code load_base(vds_pages *pl, vds_dirty_page *d, int read, vd_err *err) {
  const vds_layer *l = pl->l;
  vd_buf b = {0};
  int got = 0;
  vd_code rc = VD_OK;
  if (read) {
    char *url = vds_pages_url(pl, d->name);
    if (!url) return vd_nomem(err);
    rc = read_fresh(pl, url, &b, d->etag, &got, err);
    if (!rc && got) rc = vds_pages_check(pl, d->page, url, b.len, err);
    free(url);
  }
  if (rc) {
    vd_buf_free(&b);
    return rc;
  }
  memset(d->bytes, 0, pl->page_bytes);
  if (got) memcpy(d->bytes, b.data, b.len);
  else d->etag[0] = 0;
  /* a whole page already holding every entry: what this writer's own put leaves */
  d->holds = got && b.len == pl->page_bytes;
  vd_buf_free(&b);
  for (int i = 0; i < d->nent; i++) {
    unsigned char *at = d->bytes + (size_t)(d->ent[i].chunk % l->page_size) * l->entry_size;
    memcpy(d->ent[i].old, at, l->entry_size);
    if (memcmp(at, d->ent[i].raw, l->entry_size) != 0) d->holds = 0;
    memcpy(at, d->ent[i].raw, l->entry_size);
  }
  return VD_OK;
}

/* LayerStatus read with its etag, kept for the write-back. */
static vd_code load_status(vds_pages *pl, vd_err *err) {
  char *url = vd_url_join(pl->ds->url, "LayerStatus");
  if (!url) return vd_nomem(err);
  vd_buf b = {0};
  int got = 0;
  vd_code rc = read_fresh(pl, url, &b, pl->status_etag, &got, err);
  if (!rc && !got) {
    char where[600];
    vd_url_redact(url, where, sizeof where);
    rc = vd_fail(err, VD_NOTFOUND, "%s: no such object (the dataset's LayerStatus is gone)", where);
  }
  free(url);
  if (!rc) {
    vd_blob_unref(pl->status);
    if (!(pl->status = vd_blob_from_buf(&b))) rc = vd_nomem(err);
  }
  vd_buf_free(&b);
  return rc;
}

vd_code vds_pages_set_status(vds_pages *pl, const void *body, size_t len, const char *etag, vd_err *err) {
  vd_blob *b = vd_blob_new(body, len);
  if (!b) return vd_nomem(err);
  vd_blob_unref(pl->status);
  pl->status = b;
  snprintf(pl->status_etag, sizeof pl->status_etag, "%s", etag);
  return VD_OK;
}

void vds_pages_set_fence(vds_pages *pl, vds_fence_fn fence, void *arg) {
  pl->fence = fence;
  pl->fence_arg = arg;
}

vd_code vds_pages_set(vds_pages *pl, int64_t chunk, const unsigned char *raw, int64_t object_bytes, vd_err *err) {
  const vds_layer *l = pl->l;
  vd_code rc;
  if (!vd_store_can_write(pl->ds->url)) { /* refused before anything is read or dirtied, */
    vd_putreq r = {.url = pl->ds->url};  /* in the store's one wording (it sends nothing) */
    return vd_put(pl->ctx, &r, err);
  }
  if (!l->has_pages) return vd_fail(err, VD_INVALID, "layer %s has no chunk-metadata pages", l->name);
  if (chunk < 0 || chunk >= l->chunk_count)
    return vd_fail(err, VD_INVALID, "layer %s has chunks 0 to %lld", l->name, (long long)l->chunk_count - 1);
  if ((int64_t)pl->page_bytes > pl->ctx->cfg.max_alloc) {
    char *url = vds_pages_url(pl, chunk / l->page_size), where[600];
    vd_url_redact(url ? url : l->name, where, sizeof where);
    free(url);
    return vd_fail_max_alloc(err, where, (int64_t)pl->page_bytes, pl->ctx->cfg.max_alloc);
  }
  if (!pl->status && (rc = load_status(pl, err))) return rc;
  int64_t p = chunk / l->page_size;
  vds_dirty_page *d = vds_pages_find_dirty(pl, p);
  if (!d) {
    if (pl->ndirty == pl->dcap) {
      int cap = pl->dcap ? 2 * pl->dcap : 8;
      vds_dirty_page *n = realloc(pl->dirty, cap * sizeof *n);
      if (!n) return vd_nomem(err);
      pl->dirty = n, pl->dcap = cap;
    }
    vds_dirty_page nd = {.page = p};
    int64_t stored = vds_pages_stored(pl, p);
    nd.name = stored >= 0 ? stored : p; /* OpenVDS stores a new page i under name i */
    if (!(nd.bytes = malloc(pl->page_bytes))) return vd_nomem(err);
    if ((rc = load_base(pl, &nd, stored >= 0, err))) {
      vds_dirty_page_free(&nd);
      return rc;
    }
    int at = 0;
    while (at < pl->ndirty && pl->dirty[at].page < p) at++;
    memmove(pl->dirty + at + 1, pl->dirty + at, (pl->ndirty - at) * sizeof *pl->dirty);
    pl->dirty[at] = nd;
    pl->ndirty++;
    d = &pl->dirty[at];
  }
  vds_dirty_entry *e = NULL;
  for (int i = 0; i < d->nent; i++)
    if (d->ent[i].chunk == chunk) e = &d->ent[i];
  unsigned char *at = d->bytes + (size_t)(chunk % l->page_size) * l->entry_size;
  if (!e) {
    if (d->nent == d->cap) {
      int cap = d->cap ? 2 * d->cap : 16;
      vds_dirty_entry *n = realloc(d->ent, cap * sizeof *n);
      if (!n) return vd_nomem(err);
      d->ent = n, d->cap = cap;
    }
    e = &d->ent[d->nent++];
    memset(e, 0, sizeof *e);
    e->chunk = chunk;
    memcpy(e->old, at, l->entry_size);
  }
  memcpy(e->raw, raw, l->entry_size);
  e->object_bytes = object_bytes;
  memcpy(at, raw, l->entry_size);
  return VD_OK;
}

/* Uncompressed bytes of chunk (margins included), as uncompressedSize counts them. */
static int64_t chunk_bytes(const vds_pages *pl, int64_t chunk) {
  const vds_channel *ch = &pl->ds->layout.channels[pl->l->channel];
  int64_t idx[VDS_MAXDIM];
  vds_shape s = {.format = ch->format, .components = ch->components};
  vds_chunk_index(&pl->l->geom, chunk, idx);
  vds_chunk_size(&pl->l->geom, idx, s.size);
  return (int64_t)vds_shape_bytes(&s);
}

/* What writing d over its base changes in the LayerStatus counts. */
static void count_page(const vds_pages *pl, const vds_dirty_page *d, vds_counts *c) {
  int es = pl->l->entry_size;
  for (int i = 0; i < d->nent; i++) {
    const vds_dirty_entry *x = &d->ent[i];
    vds_entry o, n;
    vds_entry_decode(x->old, es, &o);
    vds_entry_decode(x->raw, es, &n);
    int ow = o.status != VDS_S_UNWRITTEN, nw = n.status != VDS_S_UNWRITTEN;
    int od = o.status == VDS_S_DATA, nd = n.status == VDS_S_DATA;
    c->valid += nw - ow;
    if (es == 28) c->serialized += (int64_t)n.object_size - (int64_t)o.object_size;
    else c->serialized += (nd ? x->object_bytes : 0) - (od ? x->old_bytes : 0);
    c->uncompressed += (nd - od) * chunk_bytes(pl, x->chunk);
  }
}

void vds_pages_counts(const vds_pages *pl, vds_counts *c) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < pl->ndirty; i++) count_page(pl, &pl->dirty[i], c);
}

static vds_dirty_entry *dirty_entry(const vds_pages *pl, int64_t chunk) {
  vds_dirty_page *d = vds_pages_find_dirty(pl, chunk / pl->l->page_size);
  for (int i = 0; d && i < d->nent; i++)
    if (d->ent[i].chunk == chunk) return &d->ent[i];
  return NULL;
}

vd_code vds_pages_base_entry(const vds_pages *pl, int64_t chunk, unsigned char *raw) {
  const vds_dirty_entry *e = dirty_entry(pl, chunk);
  if (!e) return VD_NOTFOUND;
  memcpy(raw, e->old, pl->l->entry_size);
  return VD_OK;
}

void vds_pages_set_old_bytes(vds_pages *pl, int64_t chunk, int64_t bytes) {
  vds_dirty_entry *e = dirty_entry(pl, chunk);
  if (e) e->old_bytes = bytes;
}

const char *vds_pages_status_etag(const vds_pages *pl) { return pl->status ? pl->status_etag : ""; }

static vd_code lost_race(const char *url, const char *what, vd_err *err) {
  char where[600];
  vd_url_redact(url, where, sizeof where);
  return vd_fail(err, VD_PRECONDITION, "%s: %s changed by another writer %d times in a row; nothing more written",
                 where, what, MAX_TRIES);
}

/* Puts d (If-Match its base's etag, or create-only), re-reading the base on a lost race;
 * under a fence, a base that holds every entry already is a put that landed, and
 * nothing is re-applied unless the fence says this writer still holds its lock. */
static vd_code put_page(vds_pages *pl, vds_dirty_page *d, vds_counts *c, vd_err *err) {
  char *url = vds_pages_url(pl, d->name);
  if (!url) return vd_nomem(err);
  vd_code rc = VD_OK;
  for (int tries = 0;; tries++) {
    vd_putreq r = {.url = url, .body = d->bytes, .len = pl->page_bytes};
    if (d->etag[0]) r.if_match = d->etag;
    else r.if_none_match = 1;
    rc = vd_put(pl->ctx, &r, err);
    if (rc != VD_PRECONDITION) break;
    if (tries + 1 == MAX_TRIES) {
      rc = lost_race(url, "the page", err);
      break;
    }
    if ((rc = load_base(pl, d, 1, err))) break;
    if (pl->fence && d->holds) break;
    if (pl->fence && (rc = pl->fence(pl->fence_arg, err))) break;
  }
  if (!rc) {
    count_page(pl, d, c);
    vd_store_invalidate(pl->ctx, url);
  }
  free(url);
  return rc;
}

/* Adds n to the integer member key of o, when o has it (2.0.x-era LayerStatus has no
 * validChunkCount nor serializedSize: they are not made up). */
static void add(cJSON *o, const char *key, int64_t n, int absolute) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (cJSON_IsNumber(v)) cJSON_SetNumberValue(v, (absolute ? 0 : v->valuedouble) + (double)n);
}

/* LayerStatus with this writer's counts and page names applied to its layer. */
static vd_code apply_status(vds_pages *pl, const vds_counts *c, int absolute, const int64_t *pages,
                            const int64_t *names, int n, const char *where, char **out, vd_err *err) {
  *out = NULL;
  cJSON *doc = cJSON_ParseWithLength((const char *)pl->status->data, pl->status->len), *o = NULL, *it;
  if (!doc) return vd_fail(err, VD_INVALID, "%s: not valid JSON", where);
  cJSON_ArrayForEach(it, doc) {
    cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "layerName");
    if (cJSON_IsString(name) && strcmp(name->valuestring, pl->l->name) == 0) o = it;
  }
  if (!o) {
    cJSON_Delete(doc);
    return vd_fail(err, VD_INVALID, "%s: layer %s is no longer listed", where, pl->l->name);
  }
  add(o, "validChunkCount", c->valid, absolute);
  add(o, "serializedSize", c->serialized, absolute);
  add(o, "uncompressedSize", c->uncompressed, absolute);
  cJSON *dir = cJSON_GetObjectItemCaseSensitive(o, "pageDirectory");
  for (int i = 0; i < n && cJSON_IsArray(dir); i++) {
    cJSON *v = cJSON_GetArrayItem(dir, (int)pages[i]);
    if (cJSON_IsNumber(v)) cJSON_SetNumberValue(v, (double)names[i]);
  }
  *out = vds_json_print(doc);
  cJSON_Delete(doc);
  return *out ? VD_OK : vd_nomem(err);
}

/* Puts LayerStatus (If-Match), re-reading it on a lost race. */
static vd_code put_status(vds_pages *pl, const vds_counts *c, int absolute, const int64_t *pages,
                          const int64_t *names, int n, vd_err *err) {
  char *url = vd_url_join(pl->ds->url, "LayerStatus"), where[600];
  if (!url) return vd_nomem(err);
  vd_url_redact(url, where, sizeof where);
  vd_code rc = VD_OK;
  char *text = NULL;
  for (int tries = 0;; tries++) {
    free(text);
    if ((rc = apply_status(pl, c, absolute, pages, names, n, where, &text, err))) break;
    vd_putreq r = {.url = url, .body = text, .len = strlen(text), .if_match = pl->status_etag};
    rc = vd_put(pl->ctx, &r, err);
    if (!rc) { /* what was written is the base of the next write-back */
      vd_blob_unref(pl->status);
      pl->status = vd_blob_new(text, strlen(text));
      snprintf(pl->status_etag, sizeof pl->status_etag, "%s", r.etag);
      if (!pl->status) rc = vd_nomem(err);
    }
    if (rc != VD_PRECONDITION) break;
    if (tries + 1 == MAX_TRIES) {
      rc = lost_race(url, "LayerStatus", err);
      break;
    }
    if ((rc = load_status(pl, err))) break;
    /* under a fence: exactly the text this writer put is its own put, landed (its
     * answer lost); adding the counts again would count them twice */
    if (pl->fence && pl->status->len == strlen(text) && memcmp(pl->status->data, text, pl->status->len) == 0) break;
    if (pl->fence && (rc = pl->fence(pl->fence_arg, err))) break;
  }
  free(text);
  vd_store_invalidate(pl->ctx, url);
  free(url);
  return rc;
}

vd_code vds_pages_write_pages(vds_pages *pl, vd_err *err) {
  const vds_layer *l = pl->l;
  if (!pl->ndirty) return VD_OK;
  if (pl->nw + pl->ndirty > pl->wcap) {
    int cap = pl->nw + pl->ndirty;
    int64_t *a = realloc(pl->wpages, cap * sizeof *a);
    if (a) pl->wpages = a;
    int64_t *b = a ? realloc(pl->wnames, cap * sizeof *b) : NULL;
    if (b) pl->wnames = b;
    if (!a || !b) return vd_nomem(err);
    pl->wcap = cap;
  }
  if (!pl->dir && !(pl->dir = malloc(l->page_count * sizeof *pl->dir))) return vd_nomem(err);
  if (!pl->dir_own) { /* from now on this layer's reads follow the names written */
    for (int64_t i = 0; i < l->page_count; i++) pl->dir[i] = vds_page_stored(l, i);
    pl->dir_own = 1;
  }
  vd_code rc = VD_OK;
  int done = 0;
  for (; done < pl->ndirty; done++) {
    vds_dirty_page *d = &pl->dirty[done];
    if ((rc = put_page(pl, d, &pl->done, err))) break;
    pl->wpages[pl->nw] = d->page;
    pl->wnames[pl->nw++] = d->name;
  }
  vd_blob_unref(pl->page); /* a scan's page may be one just written */
  pl->page = NULL;
  pl->page_of = -1;
  for (int i = 0; i < done; i++) {
    pl->dir[pl->dirty[i].page] = pl->dirty[i].name;
    vds_dirty_page_free(&pl->dirty[i]);
  }
  memmove(pl->dirty, pl->dirty + done, (pl->ndirty - done) * sizeof *pl->dirty);
  pl->ndirty -= done;
  return rc;
}

vd_code vds_pages_write_status(vds_pages *pl, const vds_counts *c, int absolute, const int64_t *pages,
                               const int64_t *names, int n, vd_err *err) {
  if (!pages) pages = pl->wpages, names = pl->wnames, n = pl->nw;
  if (!c) c = &pl->done;
  vd_code rc = pl->status ? VD_OK : load_status(pl, err);
  if (!rc) rc = put_status(pl, c, absolute, pages, names, n, err);
  if (!rc) {
    memset(&pl->done, 0, sizeof pl->done);
    pl->nw = 0;
  }
  return rc;
}

vd_code vds_pages_write_back(vds_pages *pl, vd_err *err) {
  if (!pl->ndirty) return VD_OK;
  vd_code rc = vds_pages_write_pages(pl, err);
  /* the pages written are counted even when a later one failed: they are on the store
   * (the first error is the one reported) */
  if (pl->nw) {
    vd_err e2 = {0};
    vd_code rs = vds_pages_write_status(pl, NULL, 0, NULL, NULL, 0, rc ? &e2 : err);
    if (!rc) rc = rs;
  }
  return rc;
}
