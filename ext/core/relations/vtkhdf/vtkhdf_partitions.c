/* vtkhdf_partitions(path): one row per (block, step, partition) of a VTKHDF file, with
 * counts and the starts into Points, Types/CellData, Connectivity and Offsets computed
 * as VTK's reader computes them, and the file that really holds the partition. */
#include <stddef.h>

#include "vtkhdf_cursor.h"

static const vd_colspec cols[] = {
    {"block", VD_TEXT, 0},        {"step", VD_INT, 0},          {"time", VD_REAL, 0},
    {"partition", VD_INT, 0},     {"type", VD_TEXT, 0},         {"n_points", VD_INT, 0},
    {"n_cells", VD_INT, 0},       {"n_connectivity_ids", VD_INT, 0}, {"point_offset", VD_INT, 0},
    {"cell_offset", VD_INT, 0},   {"connectivity_offset", VD_INT, 0}, {"offsets_offset", VD_INT, 0},
    {"n_trees", VD_INT, 0},       {"source_file", VD_TEXT, 0},  {"status", VD_TEXT, 0},       {"url", VD_TEXT, VD_COL_ARG}};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  return vh_cur_open(ctx, "vtkhdf_partitions", a, VH_PARTS, VH_FAN_NONE, out, err);
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  const vh_part *p = ((vh_cur *)cur)->rows.cur;
  switch (col) { /* the per-row path: set in place (v starts NULL) */
    case 0: *v = vd_text(p->block); break;
    case 1: vh_put(v, p->step); break;
    case 2: if (p->has_time) vd_put_real(v, p->time); break;
    case 3: vh_put(v, p->partition); break;
    case 4: if (p->type) *v = vd_text(p->type); break;
    case 5: vh_put(v, p->n_points); break;
    case 6: vh_put(v, p->n_cells); break;
    case 7: vh_put(v, p->n_conn); break;
    case 8: vh_put(v, p->point_off); break;
    case 9: vh_put(v, p->cell_off); break;
    case 10: vh_put(v, p->conn_off); break;
    case 11: vh_put(v, p->offsets_off); break;
    case 12: vh_put(v, p->n_trees); break;
    case 13: if (p->source_file) *v = vd_text(p->source_file); break;
    default: *v = vd_text(p->status); break;
  }
  return VD_OK;
}

/* The integer columns straight from the row (vh_part keeps them side by side) */
#define IX(f) (signed char)((offsetof(vh_part, f) - offsetof(vh_part, step)) / sizeof(int64_t))
_Static_assert(offsetof(vh_part, n_trees) - offsetof(vh_part, step) == 9 * sizeof(int64_t),
               "vh_part's integers must be contiguous");
static const signed char int_cols[] = {-1, IX(step), -1, IX(partition), -1, IX(n_points), IX(n_cells), IX(n_conn),
                                       IX(point_off), IX(cell_off), IX(conn_off), IX(offsets_off), IX(n_trees), -1, -1, -1};
_Static_assert(sizeof int_cols == sizeof cols / sizeof *cols, "one entry per column");

static const int64_t *ints(void *cur) { return &((vh_cur *)cur)->rows.cur->step; }

const vd_relation vd_rel_vtkhdf_partitions = {
    .name = "vtkhdf_partitions",
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
    .ints = ints,
    .int_col = int_cols,
    .doc = "one row per block, time step and partition of a VTKHDF file: counts, offsets, the file really holding it, status"};
