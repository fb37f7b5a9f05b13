/* vtkhdf_amr_boxes(url): every box of an OverlappingAMR, per step and level: its index
 * extent as stored in Level<k>/AMRBox (the step's rows through Steps/Level<k>), its own
 * origin (the file's Origin + lo * Spacing, as VTK places it) and its level's Spacing.
 * Counts and data offsets of each box are in vtkhdf_partitions (block .../Level<k>). */
#include "vtkhdf_cursor.h"

static const vd_colspec cols[] = {
    {"block", VD_TEXT, 0},      {"step", VD_INT, 0},        {"level", VD_INT, 0},       {"box", VD_INT, 0},
    {"i_min", VD_INT, 0},       {"i_max", VD_INT, 0},       {"j_min", VD_INT, 0},       {"j_max", VD_INT, 0},
    {"k_min", VD_INT, 0},       {"k_max", VD_INT, 0},       {"origin_x", VD_REAL, 0},   {"origin_y", VD_REAL, 0},
    {"origin_z", VD_REAL, 0},   {"spacing_x", VD_REAL, 0},  {"spacing_y", VD_REAL, 0},  {"spacing_z", VD_REAL, 0},
    {"url", VD_TEXT, VD_COL_ARG}};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  return vh_cur_open(ctx, "vtkhdf_amr_boxes", a, VH_AMR, VH_FAN_NONE, out, err);
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  const vh_amrbox *b = &((vh_cur *)cur)->doc.boxes[((vh_cur *)cur)->row];
  if (col == 0) *v = vd_text(b->block);
  else if (col == 1) vd_put_int(v, b->step);
  else if (col == 2) vd_put_int(v, b->level);
  else if (col == 3) vd_put_int(v, b->box);
  else if (col < 10) vd_put_int(v, b->ext[col - 4]);
  else if (col < 13) vd_put_real(v, b->origin[col - 10]);
  else vd_put_real(v, b->spacing[col - 13]);
  return VD_OK;
}

const vd_relation vd_rel_vtkhdf_amr_boxes = {
    .name = "vtkhdf_amr_boxes",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 100, .requests = 4,
    .order_col = -1,
    .open = open_,
    .next = vh_cur_next,
    .eof = vh_cur_eof,
    .column = column,
    .rowid = vh_cur_rowid,
    .close = vh_cur_close,
    .doc = "every box of an OverlappingAMR per step and level: index extent, origin, spacing"};
