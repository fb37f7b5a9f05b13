/* vds_objects(url, layer): the chunk objects of a layer as the store lists them, with
 * their vdschunkmetadata (from the listing, or HEADs made a batch at a time as rows are
 * read, so a LIMIT stops them). Objects under "<layer>/" that are no chunk of the
 * layer (not a plain decimal index below the chunk count) are listed with chunk NULL
 * and get no HEAD; the layer's ChunkMetadata pages are not listed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/openvds/openvds_objects.h"
#include "vds_cursor.h"

static const vd_colspec cols[] = {
    {"chunk", VD_INT, 0},  {"key", VD_TEXT, 0},      {"size", VD_INT, 0}, {"etag", VD_TEXT, 0},
    {"last_modified", VD_TEXT, 0}, {"metadata", VD_TEXT, 0}, {"hash", VD_INT, 0}, VDS_URL_ARG, VDS_LAYER_ARG};

typedef struct {
  vds_cur *c;
  vds_objlist ol;
  int64_t i, headed; /* current row; objects [0, headed) have had their HEADs */
  vd_progress pr;
  char when[32];
} objs_cur;

static vd_code ensure(objs_cur *k, vd_err *err) {
  if (k->i < k->headed || k->i >= k->ol.n) return VD_OK;
  int64_t batch = k->c->ctx->cfg.max_parallel * 16 < 256 ? 256 : k->c->ctx->cfg.max_parallel * 16;
  int64_t to = k->i + batch;
  if (to > k->ol.n) to = k->ol.n;
  vd_code rc = vds_objects_head(k->c->ctx, k->c->ds, &k->ol, k->i, to, &k->pr, err);
  k->headed = to;
  if (!rc && to == k->ol.n) vd_progress_end(&k->pr);
  return rc;
}

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  objs_cur *k = calloc(1, sizeof *k);
  if (!k) return vd_nomem(err);
  *out = k;
  vd_code rc = vds_cur_open(ctx, a, na, 1, &k->c, err);
  if (!rc && k->c->layer) rc = vds_objects_list(ctx, k->c->ds, k->c->layer, &k->ol, err);
  if (!rc && k->c->layer) {
    char label[200];
    snprintf(label, sizeof label, "vds_objects %s", k->c->layer->name);
    vd_progress_start(&k->pr, ctx, label, k->ol.n);
    rc = ensure(k, err);
  }
  return rc;
}

static vd_code next(void *cur, vd_err *err) {
  objs_cur *k = cur;
  k->i++;
  return ensure(k, err);
}

static int eof(void *cur) {
  objs_cur *k = cur;
  return k->i >= k->ol.n;
}

static int64_t rowid(void *cur) { return ((objs_cur *)cur)->i; }

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  (void)err;
  objs_cur *k = cur;
  const vds_obj *o = &k->ol.o[k->i];
  const vds_layer *l = k->c->layer;
  uint64_t h;
  switch (col) {
    case 0: *v = o->chunk >= 0 ? vd_int(o->chunk) : vd_null(); break;
    case 1: *v = vd_text(o->key); break;
    case 2: *v = o->size >= 0 ? vd_int(o->size) : vd_null(); break;
    case 3: *v = o->etag[0] ? vd_text(o->etag) : vd_null(); break;
    case 4: {
      time_t t = (time_t)o->mtime;
      struct tm tm;
      if (!o->mtime || !gmtime_r(&t, &tm)) {
        *v = vd_null();
        break;
      }
      strftime(k->when, sizeof k->when, "%Y-%m-%dT%H:%M:%SZ", &tm);
      *v = vd_text(k->when);
      break;
    }
    case 5: *v = o->meta && !o->gone ? vd_text(o->meta) : vd_null(); break;
    default:
      *v = o->meta && !o->gone &&
                   vds_meta_decode(o->meta, strlen(o->meta), l->has_pages ? l->entry_size : 8, &h, NULL) == 0
               ? vd_int((int64_t)h)
               : vd_null();
      break;
  }
  return VD_OK;
}

static void close_(void *cur) {
  objs_cur *k = cur;
  if (!k) return;
  vds_objlist_free(&k->ol);
  vds_cur_close(k->c);
  free(k);
}

/* planners: from the cached documents only (vds_cursor.h) */
static double known(vd_ctx *ctx, const vd_value *args, int nargs) { return vds_cur_known(ctx, args, nargs, VDS_KNOWN_WRITTEN); }

const vd_relation vd_rel_vds_objects = {
    .name = "vds_objects",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 1000, .requests = 2, .rows_per_request = 1000, .known = known,
    .order_col = -1,
    .open = open_,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .doc = "the chunk objects of a layer as the store lists them: key, size, etag, time and vdschunkmetadata (HEADs, max_parallel at once, where the listing has no metadata) with its decoded hash"};
