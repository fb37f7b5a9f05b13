/* vtkhdf_array_starts(path): for every PointData and CellData array of an
 * UnstructuredGrid or PolyData leaf, where each (step, partition) slice starts: from
 * Steps/<Assoc>DataOffsets/<name> when the array has one (it changes at its own rate),
 * else at the geometry start (a static array). */
#include "vtkhdf_cursor.h"

static const vd_colspec cols[] = {{"block", VD_TEXT, 0},       {"step", VD_INT, 0},  {"partition", VD_INT, 0},
                                  {"association", VD_TEXT, 0}, {"name", VD_TEXT, 0}, {"start", VD_INT, 0},
                                  {"count", VD_INT, 0},        {"path", VD_TEXT, VD_COL_ARG}};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  return vh_cur_open(ctx, "vtkhdf_array_starts", a, VH_STARTS, 0, out, err);
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  const vh_astart *s = &((vh_cur *)cur)->doc.starts[((vh_cur *)cur)->row];
  switch (col) {
    case 0: *v = vd_text(s->block); break;
    case 1: *v = vh_int(s->step); break;
    case 2: *v = vh_int(s->partition); break;
    case 3: *v = vd_text(s->association); break;
    case 4: *v = vd_text(s->name); break;
    case 5: *v = vh_int(s->start); break;
    default: *v = vh_int(s->count); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_vtkhdf_array_starts = {"vtkhdf_array_starts", cols, sizeof cols / sizeof *cols, VD_REL_IO, -1,
                                                NULL, open_, vh_cur_next, vh_cur_eof, column, vh_cur_rowid, vh_cur_close};
