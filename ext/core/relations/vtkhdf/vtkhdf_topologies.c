/* vtkhdf_topologies(path): PolyData's per-topology counts and starts (Vertices, Lines,
 * Polygons, Strips) for every (block, step, partition); vtkhdf_partitions has the totals. */
#include "vtkhdf_cursor.h"

static const vd_colspec cols[] = {
    {"block", VD_TEXT, 0},     {"step", VD_INT, 0},        {"partition", VD_INT, 0},
    {"topology", VD_TEXT, 0},  {"n_cells", VD_INT, 0},     {"n_connectivity_ids", VD_INT, 0},
    {"cell_offset", VD_INT, 0}, {"connectivity_offset", VD_INT, 0}, {"offsets_offset", VD_INT, 0},
    {"url", VD_TEXT, VD_COL_ARG}};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  return vh_cur_open(ctx, "vtkhdf_topologies", a, VH_PARTS, VH_FAN_TOPO, out, err);
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  const vh_cur *c = cur;
  int k = c->sub;
  const vh_part *p = c->rows.cur;
  switch (col) {
    case 0: *v = vd_text(p->block); break;
    case 1: vh_put(v, p->step); break;
    case 2: vh_put(v, p->partition); break;
    case 3: *v = vd_text(vh_topo_names[k]); break;
    case 4: vh_put(v, p->topo->nc[k]); break;
    case 5: vh_put(v, p->topo->nci[k]); break;
    case 6: vh_put(v, p->topo->cell_off[k]); break;
    case 7: vh_put(v, p->topo->conn_off[k]); break;
    default: vh_put(v, p->topo->offs_off[k]); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_vtkhdf_topologies = {
    .name = "vtkhdf_topologies",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 16, .requests = 4,
    .order_col = -1,
    .open = open_,
    .next = vh_cur_next,
    .eof = vh_cur_eof,
    .column = column,
    .rowid = vh_cur_rowid,
    .close = vh_cur_close,
    .doc = "per PolyData partition and step, each topology (Vertices, Lines, Polygons, Strips): cells, connectivity ids, offsets"};
