/* vds_axes(url): one row per dimension of the dataset. */
#include "vds_cursor.h"

static const vd_colspec cols[] = {{"dim", VD_INT, 0},           {"name", VD_TEXT, 0},
                                  {"unit", VD_TEXT, 0},         {"samples", VD_INT, 0},
                                  {"coordinate_min", VD_REAL, 0}, {"coordinate_max", VD_REAL, 0},
                                  VDS_URL_ARG};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  vds_cur *c;
  vd_code rc = vds_cur_open(ctx, a, na, 0, &c, err);
  if (!rc) c->nrows = c->ds ? c->ds->layout.dims : 0;
  *out = c;
  return rc;
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  (void)err;
  vds_cur *c = cur;
  const vds_axis *a = &c->ds->layout.axes[c->row];
  switch (col) {
    case 0: *v = vd_int(c->row); break;
    case 1: *v = vd_text(a->name); break;
    case 2: *v = vd_text(a->unit); break;
    case 3: *v = vd_int(a->samples); break;
    case 4: *v = vd_real(a->cmin); break;
    default: *v = vd_real(a->cmax); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_vds_axes = {
    .name = "vds_axes",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 3, .requests = 2,
    .order_col = 0,
    .open = open_,
    .next = vds_cur_next,
    .eof = vds_cur_eof,
    .column = column,
    .rowid = vds_cur_rowid,
    .close = vds_cur_close,
    .doc = "one row per axis of the layout: name, unit, number of samples, coordinate range"};
