/* vtkhdf_arrays(path): every data array of every leaf (PointData, CellData, FieldData,
 * RowData), in name order as VTK lists them, with type, shape and the file holding it. */
#include "vtkhdf_cursor.h"

static const vd_colspec cols[] = {{"block", VD_TEXT, 0},      {"association", VD_TEXT, 0}, {"name", VD_TEXT, 0},
                                  {"type", VD_TEXT, 0},       {"components", VD_INT, 0},   {"tuples", VD_INT, 0},
                                  {"attribute", VD_TEXT, 0},  {"source_file", VD_TEXT, 0}, {"url", VD_TEXT, VD_COL_ARG}};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  return vh_cur_open(ctx, "vtkhdf_arrays", a, VH_ARRAYS, VH_FAN_NONE, out, err);
}

static vd_value opt(const char *s) { return s ? vd_text(s) : vd_null(); }

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  const vh_array *x = &((vh_cur *)cur)->doc.arrays[((vh_cur *)cur)->row];
  switch (col) {
    case 0: *v = vd_text(x->block); break;
    case 1: *v = vd_text(x->association); break;
    case 2: *v = vd_text(x->name); break;
    case 3: *v = vd_text(x->type); break;
    case 4: *v = vd_int(x->components); break;
    case 5: vh_put(v, x->tuples); break; /* NULL: dims past 64 bits */
    case 6: *v = opt(x->attribute); break;
    default: *v = opt(x->source_file); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_vtkhdf_arrays = {
    .name = "vtkhdf_arrays",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 10, .requests = 4,
    .order_col = -1,
    .open = open_,
    .next = vh_cur_next,
    .eof = vh_cur_eof,
    .column = column,
    .rowid = vh_cur_rowid,
    .close = vh_cur_close,
    .doc = "the data arrays of each block (PointData, CellData, FieldData): type, components, tuples, attribute"};
