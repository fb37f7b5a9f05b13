/* vtkhdf_array_starts(path): for every PointData and CellData array of an
 * UnstructuredGrid or PolyData leaf, where each (step, partition) slice starts: from
 * Steps/<Assoc>DataOffsets/<name> when the array has one (it changes at its own rate),
 * else at the geometry start (a static array). Made from the partition rows as they
 * stream, one row per array of each partition. */
#include "vtkhdf_cursor.h"

static const vd_colspec cols[] = {{"block", VD_TEXT, 0},       {"step", VD_INT, 0},  {"partition", VD_INT, 0},
                                  {"association", VD_TEXT, 0}, {"name", VD_TEXT, 0}, {"start", VD_INT, 0},
                                  {"count", VD_INT, 0},        {"url", VD_TEXT, VD_COL_ARG}};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  return vh_cur_open(ctx, "vtkhdf_array_starts", a, VH_PARTS | VH_STARTS, VH_FAN_STARTS, out, err);
}

/* Steps offset of the array plus the partition's place in its step (its geometry start
 * minus the step's geometry start); a static array starts with the geometry. */
static vd_code start_of(const vh_cur *c, const vh_larray *a, int point, vd_value *v, vd_err *err) {
  const vh_part *p = c->rows.cur;
  int64_t geo = point ? p->point_off : p->cell_off, s;
  if (geo == VH_NULL) return VD_OK; /* not knowable (offsets_unknown) */
  if (!a->o) return vd_put_int(v, geo), VD_OK;
  const int64_t *base = point ? c->la->base_pt : c->la->base_cell;
  if (__builtin_sub_overflow(geo, base ? base[p->step] : 0, &s) || __builtin_add_overflow(s, a->o[p->step], &s))
    return vd_fail(err, VD_INVALID, "%s: the start of %s in step %lld overflows", c->doc.shown, a->name, (long long)p->step);
  vd_put_int(v, s);
  return VD_OK;
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  const vh_cur *c = cur;
  const vh_part *p = c->rows.cur;
  const vh_larray *a = &c->la->a[c->sub];
  int point = a->association[0] == 'p';
  switch (col) {
    case 0: *v = vd_text(p->block); break;
    case 1: vh_put(v, p->step); break;
    case 2: vh_put(v, p->partition); break;
    case 3: *v = vd_text(a->association); break;
    case 4: *v = vd_text(a->name); break;
    case 5: return start_of(c, a, point, v, err);
    default: vh_put(v, point ? p->n_points : p->n_cells); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_vtkhdf_array_starts = {
    .name = "vtkhdf_array_starts",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 20, .requests = 4,
    .order_col = -1,
    .open = open_,
    .next = vh_cur_next,
    .eof = vh_cur_eof,
    .column = column,
    .rowid = vh_cur_rowid,
    .close = vh_cur_close,
    .doc = "per array and partition, where the partition's slice of the array starts"};
