/* vds_levels(url, layer): for a wavelet layer, the bytes of each data chunk's object a
 * reader needs per adaptive level (spec section 4), from the page entries alone: level
 * -1 (the whole object, from the entry's size), then 0, 1, ... up to the first zero
 * level byte. A layer without levels has no rows: `vds_layers x vds_levels` over a
 * catalog must not stop at its first non-wavelet layer (issue 30). */
#include <stdlib.h>
#include <string.h>

#include "formats/openvds/openvds_objects.h"
#include "formats/openvds/openvds_pages.h"
#include "vds_cursor.h"

static const vd_colspec cols[] = {{"chunk", VD_INT, 0}, {"level", VD_INT, 0}, {"bytes", VD_INT, 0}, VDS_URL_ARG,
                                  VDS_LAYER_ARG};

typedef struct {
  vds_cur *c;
  vds_pages *pages;
  int64_t chunk; /* current; chunk_count at the end */
  int level;
  uint32_t size;
  unsigned char levels[16];
  int64_t row;
} levels_cur;

static int64_t every_page(void *arg, int64_t q) {
  const levels_cur *k = arg;
  return q < k->c->layer->page_count ? q : -1;
}

/* Moves to the next data chunk from chunk `from` on, at level -1. */
static vd_code seek(levels_cur *k, int64_t from, vd_err *err) {
  const vds_layer *l = k->c->layer;
  for (k->chunk = from; k->chunk < l->chunk_count; k->chunk++) {
    vds_entry e;
    vd_code rc = vds_pages_entry(k->pages, k->chunk, &e, NULL, err);
    if (rc) return rc;
    if (e.status != VDS_S_DATA) continue;
    k->size = e.object_size;
    memcpy(k->levels, e.levels, 16);
    k->level = -1;
    return VD_OK;
  }
  return VD_OK;
}

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  levels_cur *k = calloc(1, sizeof *k);
  if (!k) return vd_nomem(err);
  *out = k;
  vd_code rc = vds_cur_open(ctx, a, na, 1, &k->c, err);
  if (rc || !k->c->layer) return rc;
  const vds_layer *l = k->c->layer;
  k->chunk = l->chunk_count;
  if (!(l->has_pages && l->entry_size == 28)) return VD_OK; /* no adaptive levels: no rows, not an error */
  if ((rc = vds_pages_open(ctx, k->c->ds, l, &k->pages, err))) return rc;
  vds_pages_scan(k->pages, every_page, k, l->page_count - 1, 0);
  return seek(k, 0, err);
}

static int eof(void *cur) {
  levels_cur *k = cur;
  return !k->c || !k->c->layer || k->chunk >= k->c->layer->chunk_count;
}

static vd_code next(void *cur, vd_err *err) {
  levels_cur *k = cur;
  if (eof(k)) return VD_OK;
  k->row++;
  if (k->level < 15 && k->levels[k->level + 1]) {
    k->level++;
    return VD_OK;
  }
  return seek(k, k->chunk + 1, err);
}

static int64_t rowid(void *cur) { return ((levels_cur *)cur)->row; }

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  (void)err;
  levels_cur *k = cur;
  switch (col) {
    case 0: *v = vd_int(k->chunk); break;
    case 1: *v = vd_int(k->level); break;
    default: *v = vd_int(vds_level_bytes(k->size, k->levels, k->level)); break;
  }
  return VD_OK;
}

static void close_(void *cur) {
  levels_cur *k = cur;
  if (!k) return;
  vds_pages_close(k->pages);
  vds_cur_close(k->c);
  free(k);
}

const vd_relation vd_rel_vds_levels = {
    .name = "vds_levels",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 1000, .requests = 2, .rows_per_request = 1024,
    .order_col = 0,
    .open = open_,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .doc = "for a wavelet layer (none for any other layer), one row per data chunk and adaptive level (-1 = whole object): the bytes of the chunk object a reader fetches for it"};
