/* vds_layout(url): the layoutDescriptor of a dataset, one row. */
#include "vds_cursor.h"

static const vd_colspec cols[] = {
    {"dimensionality", VD_INT, 0}, {"brick_size", VD_INT, 0},     {"negative_margin", VD_INT, 0},
    {"positive_margin", VD_INT, 0}, {"brick_size_2d_multiplier", VD_INT, 0}, {"lod_levels", VD_INT, 0},
    {"create_2d_lods", VD_INT, 0},  {"full_resolution_dimension", VD_INT, 0}, {"channels", VD_INT, 0},
    {"layers", VD_INT, 0},          VDS_URL_ARG};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  vds_cur *c;
  vd_code rc = vds_cur_open(ctx, a, na, 0, &c, err);
  if (!rc) c->nrows = c->ds ? 1 : 0;
  *out = c;
  return rc;
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  (void)err;
  const vds_dataset *ds = ((vds_cur *)cur)->ds;
  const vds_layout *l = &ds->layout;
  int64_t x[] = {l->dims, 1 << l->brick_log2, l->neg, l->pos, l->mult2d, l->lod_levels, l->create_2d_lods,
                 l->full_res_dim, l->nchannels, ds->nlayers};
  *v = vd_int(x[col]);
  return VD_OK;
}

const vd_relation vd_rel_vds_layout = {
    .name = "vds_layout",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 1, .requests = 2,
    .order_col = -1,
    .open = open_,
    .next = vds_cur_next,
    .eof = vds_cur_eof,
    .column = column,
    .rowid = vds_cur_rowid,
    .close = vds_cur_close,
    .doc = "the VolumeDataLayout document of an OpenVDS dataset, one row: brick size, margins, LOD levels, options"};
