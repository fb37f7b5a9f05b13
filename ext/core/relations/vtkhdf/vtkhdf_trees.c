/* vtkhdf_trees(url): every tree of a HyperTreeGrid, per step and partition, located the
 * way VTK's reader finds it: its id and depth, its cells (the sum of its
 * NumberOfCellsPerTreeDepth entries), its first CellData row, and the bit ranges of its
 * descriptor (a bit per cell above the deepest level) and of its Mask bits. */
#include "vtkhdf_cursor.h"

static const vd_colspec cols[] = {
    {"block", VD_TEXT, 0},          {"step", VD_INT, 0},          {"partition", VD_INT, 0},
    {"tree", VD_INT, 0},            {"tree_id", VD_INT, 0},       {"depth", VD_INT, 0},
    {"n_cells", VD_INT, 0},         {"cell_offset", VD_INT, 0},   {"descriptor_offset", VD_INT, 0},
    {"descriptor_bits", VD_INT, 0}, {"mask_offset", VD_INT, 0},   {"mask_bits", VD_INT, 0},
    {"url", VD_TEXT, VD_COL_ARG}};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  return vh_cur_open(ctx, "vtkhdf_trees", a, VH_TREES, VH_FAN_NONE, out, err);
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  const vh_tree *t = &((vh_cur *)cur)->doc.trees[((vh_cur *)cur)->row];
  const int64_t x[] = {0, t->step, t->partition, t->tree, t->tree_id, t->depth, t->n_cells, t->cell_off, t->desc_off,
                       t->desc_bits, t->mask_off, t->mask_bits};
  if (col == 0) *v = vd_text(t->block);
  else vh_put(v, x[col]);
  return VD_OK;
}

const vd_relation vd_rel_vtkhdf_trees = {
    .name = "vtkhdf_trees",
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
    .doc = "every tree of a HyperTreeGrid per step and partition: id, depth, cells, descriptor and mask bit ranges"};
