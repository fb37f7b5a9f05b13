/* vds_pages(url, layer): the chunk-metadata pages of a layer as LayerStatus describes
 * them (no page is read). */
#include <stdlib.h>

#include "vds_cursor.h"

static const vd_colspec cols[] = {{"page", VD_INT, 0},      {"stored_name", VD_INT, 0}, {"first_chunk", VD_INT, 0},
                                  {"last_chunk", VD_INT, 0}, {"present", VD_INT, 0},     {"key", VD_TEXT, 0},
                                  VDS_URL_ARG,               VDS_LAYER_ARG};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  vds_cur *c;
  vd_code rc = vds_cur_open(ctx, a, na, 1, &c, err);
  if (!rc) c->nrows = c->layer && c->layer->has_pages ? c->layer->page_count : 0;
  *out = c;
  return rc;
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  vds_cur *c = cur;
  const vds_layer *l = c->layer;
  int64_t p = c->row, stored = vds_page_stored(l, p), last = (p + 1) * l->page_size - 1;
  switch (col) {
    case 0: *v = vd_int(p); break;
    case 1: *v = stored < 0 ? vd_null() : vd_int(stored); break;
    case 2: *v = vd_int(p * l->page_size); break;
    case 3: *v = vd_int(last < l->chunk_count - 1 ? last : l->chunk_count - 1); break;
    case 4: *v = vd_int(stored >= 0); break;
    default:
      free(c->scratch);
      c->scratch = vds_page_key(l, p);
      if (stored >= 0 && !c->scratch) return vd_nomem(err);
      *v = vd_text(c->scratch);
      break;
  }
  return VD_OK;
}

/* planners: from the cached documents only (vds_cursor.h) */
static double known(vd_ctx *ctx, const vd_value *args, int nargs) { return vds_cur_known(ctx, args, nargs, VDS_KNOWN_PAGES); }

const vd_relation vd_rel_vds_pages = {
    .name = "vds_pages",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 4, .requests = 2, .known = known,
    .order_col = 0,
    .open = open_,
    .next = vds_cur_next,
    .eof = vds_cur_eof,
    .column = column,
    .rowid = vds_cur_rowid,
    .close = vds_cur_close,
    .doc = "the chunk-metadata pages of a layer: page, stored page name, chunk range"};
