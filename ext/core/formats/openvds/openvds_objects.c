/* The chunk objects of a layer (see openvds_objects.h): a listing of "<layer>/", then
 * HEADs where the listing carries no user metadata. Everything listed is held (the
 * audit joins it with the pages in chunk order, while a listing comes in key order:
 * "10" before "2"), within max_alloc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/store.h"
#include "openvds_objects.h"
#include "openvds_pages.h"

#define LIST_PAGE 5000 /* Azure's largest page; S3 services cap it at 1000 */
#define HEAD_BATCH 256 /* HEADs handed to the transport at once (progress between batches) */

void vds_objlist_free(vds_objlist *ol) {
  for (int64_t i = 0; i < ol->n; i++) {
    free(ol->o[i].key);
    free(ol->o[i].etag);
    free(ol->o[i].meta);
    free(ol->o[i].tx);
  }
  free(ol->o);
  memset(ol, 0, sizeof *ol);
}

/* The chunk a name under "<layer>/" stands for: a plain decimal index (no sign, no
 * leading zero: OpenVDS writes no padding) below the chunk count, else -1. */
static int64_t chunk_of(const char *name, int64_t count) {
  if (!*name || (name[0] == '0' && name[1])) return -1;
  int64_t c = 0;
  for (const char *p = name; *p; p++) {
    if (*p < '0' || *p > '9' || c > (INT64_MAX - 9) / 10) return -1;
    c = c * 10 + (*p - '0');
  }
  return c < count ? c : -1;
}

static const char *meta_of(const vd_objinfo *i) {
  const char *m = vd_objinfo_meta(i, "vdschunkmetadata");
  return m ? m : vd_objinfo_meta(i, "vds-chunk-metadata");
}

/* Two keys OpenVDS would both accept (any key ending in vdschunkmetadata or the legacy
 * suffix, spec section 5) that disagree: OpenVDS takes whichever it meets first. */
static int conflicting(const vd_objinfo *i, const char *m) {
  static const char *const suffix[] = {"vdschunkmetadata", "vds-chunk-metadata"};
  for (int k = 0; k < i->nmeta; k++) {
    size_t kl = strlen(i->meta[k].key);
    for (int s = 0; s < 2; s++) {
      size_t sl = strlen(suffix[s]);
      if (kl >= sl && strcasecmp(i->meta[k].key + kl - sl, suffix[s]) == 0 && strcmp(i->meta[k].value, m) != 0)
        return 1;
    }
  }
  return 0;
}

static vd_code set_meta(vds_obj *o, const vd_objinfo *i, vd_err *err) {
  const char *m = meta_of(i);
  o->known = 1;
  o->meta_conflict = m && conflicting(i, m);
  const char *t = vd_objinfo_meta(i, "vdsqltx");
  if ((m && !(o->meta = strdup(m))) || (t && !(o->tx = strdup(t)))) return vd_nomem(err);
  return VD_OK;
}

vd_code vds_objects_list(vd_ctx *ctx, const vds_dataset *ds, const vds_layer *l, vds_objlist *out, vd_err *err) {
  memset(out, 0, sizeof *out);
  size_t nl = strlen(l->name);
  char *dir = malloc(nl + 2);
  if (!dir) return vd_nomem(err);
  sprintf(dir, "%s/", l->name);
  char *url = vd_url_join(ds->url, dir);
  free(dir);
  if (!url) return vd_nomem(err);
  vd_code rc = VD_OK;
  char *token = NULL;
  do {
    vd_listing pg;
    if ((rc = vd_list(ctx, url, token, LIST_PAGE, &pg, err))) break;
    free(token);
    token = pg.next;
    pg.next = NULL;
    for (int i = 0; i < pg.n && !rc; i++) {
      const vd_listent *e = &pg.ent[i];
      if (strncmp(e->key, "ChunkMetadata/", 14) == 0) continue; /* the layer's pages */
      if (out->n == out->cap) {
        int64_t cap = out->cap ? 2 * out->cap : 256;
        vds_obj *n = realloc(out->o, (size_t)cap * sizeof *n);
        if (!n) {
          rc = vd_nomem(err);
          break;
        }
        out->o = n, out->cap = cap;
      }
      vds_obj *o = &out->o[out->n];
      memset(o, 0, sizeof *o);
      out->n++;
      o->chunk = chunk_of(e->key, l->chunk_count);
      o->size = e->info.size;
      o->mtime = e->info.mtime;
      o->key = malloc(nl + strlen(e->key) + 2);
      o->etag = strdup(e->info.etag);
      if (!o->key || !o->etag) {
        rc = vd_nomem(err);
        break;
      }
      sprintf(o->key, "%s/%s", l->name, e->key);
      if (e->has_meta) rc = set_meta(o, &e->info, err);
      else if (o->chunk >= 0) out->heads++;
      out->bytes += (int64_t)(sizeof *o + strlen(o->key) + strlen(o->etag) + (o->meta ? strlen(o->meta) : 0) + 3);
      if (!rc && out->bytes > ctx->cfg.max_alloc) {
        char where[600];
        vd_url_redact(url, where, sizeof where);
        rc = vd_fail_max_alloc(err, where, -1, ctx->cfg.max_alloc);
      }
    }
    vd_listing_free(&pg);
  } while (!rc && token);
  free(token);
  free(url);
  if (rc) vds_objlist_free(out);
  return rc;
}

vd_code vds_objects_head(vd_ctx *ctx, const vds_dataset *ds, vds_objlist *ol, int64_t from, int64_t to,
                         vd_progress *progress, vd_err *err) {
  if (to > ol->n) to = ol->n;
  vd_getreq *reqs = NULL;
  int64_t *which = NULL;
  vd_code rc = VD_OK;
  int64_t at = from;
  while (at < to && !rc) {
    int batch = ctx->cfg.max_parallel * 16;
    if (batch < HEAD_BATCH) batch = HEAD_BATCH;
    if (!reqs && (!(reqs = calloc((size_t)batch, sizeof *reqs)) || !(which = calloc((size_t)batch, sizeof *which)))) {
      rc = vd_nomem(err);
      break;
    }
    int n = 0;
    int64_t start = at;
    for (; at < to && n < batch; at++) {
      vds_obj *o = &ol->o[at];
      if (o->known || o->chunk < 0) continue;
      memset(&reqs[n], 0, sizeof reqs[n]);
      if (!(reqs[n].url = vd_url_join(ds->url, o->key))) {
        rc = vd_nomem(err);
        break;
      }
      reqs[n].head = 1;
      which[n++] = at;
    }
    if (!rc && n) vd_get_many(ctx, reqs, n);
    for (int i = 0; i < n; i++) {
      vds_obj *o = &ol->o[which[i]];
      if (!rc) {
        if (reqs[i].rc == VD_NOTFOUND) { /* deleted since the listing: no object */
          o->known = o->gone = 1;
          ol->heads--;
        } else if (reqs[i].rc) {
          *err = reqs[i].err;
          rc = reqs[i].rc;
        } else {
          if (reqs[i].info.size >= 0) o->size = reqs[i].info.size;
          rc = set_meta(o, &reqs[i].info, err);
          ol->heads--;
        }
      }
      free((char *)reqs[i].url);
      vd_buf_free(&reqs[i].body);
      vd_objinfo_free(&reqs[i].info);
    }
    if (!rc && progress) vd_progress_add(progress, at - start);
  }
  free(reqs);
  free(which);
  return rc;
}

static int by_chunk(const void *a, const void *b) {
  const vds_obj *x = a, *y = b;
  uint64_t cx = (uint64_t)x->chunk, cy = (uint64_t)y->chunk; /* -1 sorts last */
  return cx < cy ? -1 : cx > cy;
}

void vds_objects_sort(vds_objlist *ol) {
  if (ol->n) qsort(ol->o, (size_t)ol->n, sizeof *ol->o, by_chunk);
}

vd_code vds_read_levels(vd_ctx *ctx, const vds_dataset *ds, const vds_layer *l, int64_t chunk, int64_t level,
                        vd_buf *out, vd_err *err) {
  vds_pages *pl = NULL;
  vds_entry e;
  char key[400], *url = NULL, where[600] = "";
  vd_code rc = VD_OK;
  snprintf(key, sizeof key, "%s/%lld", l->name, (long long)chunk);
  if (!(url = vd_url_join(ds->url, key))) rc = vd_nomem(err);
  else vd_url_redact(url, where, sizeof where);
  if (!rc && !(rc = vds_need_wavelet(ds, l, err)) && !(rc = vds_pages_open(ctx, ds, l, &pl, err)))
    rc = vds_pages_entry(pl, chunk, &e, NULL, err);
  int64_t n = -1;
  if (!rc && e.status != VDS_S_DATA)
    rc = vd_fail(err, VD_INVALID, "%s: no object to read (its page entry says %s)", where,
                 e.status == VDS_S_UNWRITTEN ? "unwritten" : "constant");
  if (!rc && (n = vds_level_bytes(e.object_size, e.levels, (int)(level < -1 || level > 15 ? 99 : level))) < 0)
    rc = vd_fail(err, VD_INVALID, "%s: no adaptive level %lld (levels: -1 for the whole object, then 0 up to the "
                 "first zero level byte)", where, (long long)level);
  vd_buf b = {0};
  if (!rc && n > ctx->cfg.max_alloc) rc = vd_fail_max_alloc(err, where, n, ctx->cfg.max_alloc);
  if (!rc && n > 0 && !(rc = vd_get(ctx, url, 0, n, &b, NULL, err)) && (int64_t)b.len != n) {
    rc = vd_fail(err, VD_INVALID, "%s: %zu bytes, but its page entry says the object holds %u (level %lld needs %lld)",
                 where, b.len, e.object_size, (long long)level, (long long)n);
  }
  if (!rc) {
    *out = b;
    b = (vd_buf){0};
  }
  vd_buf_free(&b);
  free(url);
  vds_pages_close(pl);
  return rc;
}
