/* vds_layers(url): one row per LayerStatus entry with its chunk and page facts;
 * chunk_count is always computed from the layout (and checked against LayerStatus). */
#include "vds_cursor.h"

static const vd_colspec cols[] = {
    {"layer", VD_TEXT, 0},          {"channel", VD_TEXT, 0},        {"dimension_group", VD_TEXT, 0},
    {"lod", VD_INT, 0},             {"produce_status", VD_TEXT, 0}, {"compression", VD_TEXT, 0},
    {"compression_tolerance", VD_REAL, 0}, {"has_pages", VD_INT, 0}, {"chunk_count", VD_INT, 0},
    {"page_size", VD_INT, 0},       {"entry_size", VD_INT, 0},      {"page_count", VD_INT, 0},
    {"pages_present", VD_INT, 0},   {"valid_chunk_count", VD_INT, 0}, {"serialized_size", VD_INT, 0},
    {"uncompressed_size", VD_INT, 0}, VDS_URL_ARG};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  vds_cur *c;
  vd_code rc = vds_cur_open(ctx, a, na, 0, &c, err);
  if (!rc) c->nrows = c->ds ? c->ds->nlayers : 0;
  *out = c;
  return rc;
}

static vd_value opt(int64_t x) { return x < 0 ? vd_null() : vd_int(x); }

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  (void)err;
  vds_cur *c = cur;
  const vds_layer *l = &c->ds->layers[c->row];
  int64_t present = 0;
  switch (col) {
    case 0: *v = vd_text(l->name); break;
    case 1: *v = vd_text(l->channel_name); break;
    case 2: *v = vd_text(l->dim_group); break;
    case 3: *v = vd_int(l->lod); break;
    case 4: *v = vd_text(l->produce); break;
    case 5: *v = vd_text(l->compression); break;
    case 6: *v = vd_real(l->tolerance); break;
    case 7: *v = vd_int(l->has_pages); break;
    case 8: *v = vd_int(l->chunk_count); break;
    case 9: *v = l->has_pages ? vd_int(l->page_size) : vd_null(); break;
    case 10: *v = l->has_pages ? vd_int(l->entry_size) : vd_null(); break;
    case 11: *v = l->has_pages ? vd_int(l->page_count) : vd_null(); break;
    case 12:
      if (!l->has_pages) {
        *v = vd_null();
        break;
      }
      if (!l->page_dir) present = l->page_count; /* no directory: every page counts as present */
      else
        for (int64_t p = 0; p < l->page_count; p++) present += l->page_dir[p] >= 0;
      *v = vd_int(present);
      break;
    case 13: *v = opt(l->valid_chunk_count); break;
    case 14: *v = opt(l->serialized_size); break;
    default: *v = opt(l->uncompressed_size); break;
  }
  return VD_OK;
}

/* planners: from the cached documents only (vds_cursor.h) */
static double known(vd_ctx *ctx, const vd_value *args, int nargs) { return vds_cur_known(ctx, args, nargs, VDS_KNOWN_LAYERS); }

const vd_relation vd_rel_vds_layers = {
    .name = "vds_layers",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 4, .requests = 2, .known = known,
    .order_col = -1,
    .open = open_,
    .next = vds_cur_next,
    .eof = vds_cur_eof,
    .column = column,
    .rowid = vds_cur_rowid,
    .close = vds_cur_close,
    .doc = "one row per LayerStatus entry, with its chunk counts (from the layout) and page facts"};
