/* vtkhdf_topologies(path): PolyData's per-topology counts and starts (Vertices, Lines,
 * Polygons, Strips) for every (block, step, partition); vtkhdf_partitions has the totals. */
#include <stdlib.h>

#include "vtkhdf_cursor.h"

static const vd_colspec cols[] = {
    {"block", VD_TEXT, 0},     {"step", VD_INT, 0},        {"partition", VD_INT, 0},
    {"topology", VD_TEXT, 0},  {"n_cells", VD_INT, 0},     {"n_connectivity_ids", VD_INT, 0},
    {"cell_offset", VD_INT, 0}, {"connectivity_offset", VD_INT, 0}, {"offsets_offset", VD_INT, 0},
    {"path", VD_TEXT, VD_COL_ARG}};

/* rows: the PolyData partitions, each four times; row -> (index of poly part, topology) */
typedef struct {
  vh_cur base;
  int *poly; /* indexes of PolyData rows of doc.parts */
} topo_cur;

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  vh_cur *c = NULL;
  vd_code rc = vh_cur_open(ctx, "vtkhdf_topologies", a, VH_PARTS, (void **)&c, err);
  if (!c) return rc;
  /* grow the shared cursor into ours so vh_cur_* keep working on it */
  topo_cur *t = realloc(c, sizeof *t);
  if (!t) {
    vh_cur_close(c);
    *out = NULL;
    return vd_nomem(err);
  }
  t->poly = NULL;
  *out = t;
  if (rc) return rc;
  int n = 0;
  t->poly = malloc((size_t)(t->base.doc.nparts ? t->base.doc.nparts : 1) * sizeof *t->poly);
  if (!t->poly) return vd_nomem(err);
  for (int i = 0; i < t->base.doc.nparts; i++)
    if (t->base.doc.parts[i].topo) t->poly[n++] = i;
  t->base.nrows = n * VH_NTOPO;
  return VD_OK;
}

static void close_(void *cur) {
  if (!cur) return;
  free(((topo_cur *)cur)->poly);
  vh_cur_close(cur);
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  topo_cur *t = cur;
  int k = t->base.row % VH_NTOPO;
  const vh_part *p = &t->base.doc.parts[t->poly[t->base.row / VH_NTOPO]];
  switch (col) {
    case 0: *v = vd_text(p->block); break;
    case 1: *v = vh_int(p->step); break;
    case 2: *v = vh_int(p->partition); break;
    case 3: *v = vd_text(vh_topo_names[k]); break;
    case 4: *v = vh_int(p->topo->nc[k]); break;
    case 5: *v = vh_int(p->topo->nci[k]); break;
    case 6: *v = vh_int(p->topo->cell_off[k]); break;
    case 7: *v = vh_int(p->topo->conn_off[k]); break;
    default: *v = vh_int(p->topo->offs_off[k]); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_vtkhdf_topologies = {"vtkhdf_topologies", cols, sizeof cols / sizeof *cols, VD_REL_IO, -1, NULL,
                                              open_, vh_cur_next, vh_cur_eof, column, vh_cur_rowid, close_};
