/* vtkhdf_blocks(path): the Assembly tree of a composite VTKHDF file (MultiBlockDataSet,
 * PartitionedDataSetCollection) in creation order, name order when the file does not
 * track creation order. Nodes are groups; leaves are soft links to /VTKHDF/<leaf>. */
#include "vtkhdf_cursor.h"

static const vd_colspec cols[] = {{"block_path", VD_TEXT, 0}, {"name", VD_TEXT, 0},  {"kind", VD_TEXT, 0},
                                  {"leaf", VD_TEXT, 0}, {"index", VD_INT, 0},  {"type", VD_TEXT, 0},
                                  {"external_file", VD_TEXT, 0}, {"url", VD_TEXT, VD_COL_ARG}};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  return vh_cur_open(ctx, "vtkhdf_blocks", a, VH_BLOCKS, VH_FAN_NONE, out, err);
}

static vd_value opt(const char *s) { return s ? vd_text(s) : vd_null(); }

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  const vh_block *b = &((vh_cur *)cur)->doc.blocks[((vh_cur *)cur)->row];
  switch (col) {
    case 0: *v = vd_text(b->path); break;
    case 1: *v = vd_text(b->name); break;
    case 2: *v = vd_text(b->kind); break;
    case 3: *v = opt(b->leaf); break;
    case 4: vh_put(v, b->index); break;
    case 5: *v = opt(b->type); break;
    default: *v = opt(b->external_file); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_vtkhdf_blocks = {
    .name = "vtkhdf_blocks",
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
    .doc = "the Assembly tree of a composite VTKHDF file: nodes, leaves, the dataset each leaf points to"};
