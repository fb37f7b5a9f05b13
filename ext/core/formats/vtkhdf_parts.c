/* Partition math: the start of every partition of every step in Points, Types, Offsets
 * and Connectivity, computed the way VTK's vtkHDFReader does (spec sections 2-3),
 * including static meshes (repeated Steps offsets) and PolyData's own Offsets rule.
 * Pure C on arrays already read, so it can be tested without HDF5. */
#include <stdlib.h>
#include <string.h>

#include "vtkhdf.h"

const char *const vh_topo_names[VH_NTOPO] = {"Vertices", "Lines", "Polygons", "Strips"};

/* Steps datasets must have a row for every step; longer is tolerated (VTK's writer
 * makes them extendible), shorter is a broken file. */
static vd_code need_rows(const char *what, const char *name, const void *p, int64_t n, int64_t nsteps, vd_err *err) {
  if (p && n < nsteps)
    return vd_fail(err, VD_INVALID, "%s: Steps/%s has %lld rows but NSteps is %lld (inconsistent Steps lengths)", what,
                   name, (long long)n, (long long)nsteps);
  return VD_OK;
}

/* Offsets must be >= 0 and never decrease from one step to the next: a static mesh
 * repeats them, a growing file advances them, nothing else is a valid file. */
static vd_code check_offsets(const char *what, const char *name, const int64_t *v, int64_t nsteps, int cols, vd_err *err) {
  if (!v) return VD_OK;
  for (int64_t t = 0; t < nsteps; t++)
    for (int k = 0; k < cols; k++) {
      int64_t x = v[t * cols + k];
      if (x < 0)
        return vd_fail(err, VD_INVALID, "%s: Steps/%s[%lld] is negative (%lld)", what, name, (long long)t, (long long)x);
      if (t > 0 && x < v[(t - 1) * cols + k])
        return vd_fail(err, VD_INVALID, "%s: Steps/%s is not monotonic: step %lld has %lld after %lld", what, name,
                       (long long)t, (long long)x, (long long)v[(t - 1) * cols + k]);
    }
  return VD_OK;
}

static int64_t col(const int64_t *v, int cols, int64_t t, int k) {
  if (!v) return 0;
  return v[t * cols + (k < cols ? k : 0)];
}

/* Partitions in step t. NumberOfParts is optional in the spec; without it VTK takes
 * len(NumberOfPoints) / NSteps, which is wrong for static meshes (their entries are
 * written once). With PartOffsets present, the entries up to the next step's different
 * PartOffsets (or to the end) are this step's, which holds for both kinds of file. */
static int64_t parts_of(const vh_counts *c, int64_t t) {
  if (!c->has_steps) return c->n_np;
  if (c->number_of_parts) return c->number_of_parts[t];
  if (!c->part_offsets) return c->nsteps ? c->n_np / c->nsteps : 0;
  for (int64_t u = t + 1; u < c->nsteps; u++)
    if (c->part_offsets[u] != c->part_offsets[t]) return c->part_offsets[u] - c->part_offsets[t];
  return c->n_np - c->part_offsets[t];
}

vd_code vh_compute(const vh_counts *c, const char *what, vh_slot **out, vh_topo **topo, int64_t *nout, vd_err *err) {
  *out = NULL;
  if (topo) *topo = NULL;
  *nout = 0;
  int64_t ns = c->nsteps;
  if (ns < 0 || ns > (1 << 30)) return vd_fail(err, VD_INVALID, "%s: NSteps %lld is out of range", what, (long long)ns);
  int ntopo = c->poly ? VH_NTOPO : 1;
  if (!c->np) return vd_fail(err, VD_INVALID, "%s: NumberOfPoints is missing", what);
  for (int k = 0; k < ntopo; k++)
    if (!c->nc[k] || !c->nci[k])
      return vd_fail(err, VD_INVALID, "%s: %s%sNumberOfCells or NumberOfConnectivityIds is missing", what,
                     c->poly ? vh_topo_names[k] : "", c->poly ? "/" : "");
  if (c->has_steps) {
    vd_code rc;
    if ((rc = need_rows(what, "Values", c->values, c->n_values, ns, err)) ||
        (rc = need_rows(what, "PartOffsets", c->part_offsets, c->n_part_offsets, ns, err)) ||
        (rc = need_rows(what, "NumberOfParts", c->number_of_parts, c->n_number_of_parts, ns, err)) ||
        (rc = need_rows(what, "PointOffsets", c->point_offsets, c->n_point_offsets, ns, err)) ||
        (rc = need_rows(what, "CellOffsets", c->cell_offsets, c->n_cell_offsets, ns, err)) ||
        (rc = need_rows(what, "ConnectivityIdOffsets", c->conn_offsets, c->n_conn_offsets, ns, err)) ||
        (rc = check_offsets(what, "PartOffsets", c->part_offsets, ns, 1, err)) ||
        (rc = check_offsets(what, "PointOffsets", c->point_offsets, ns, 1, err)) ||
        (rc = check_offsets(what, "CellOffsets", c->cell_offsets, ns, c->cell_offsets_cols, err)) ||
        (rc = check_offsets(what, "ConnectivityIdOffsets", c->conn_offsets, ns, c->conn_offsets_cols, err)))
      return rc;
    if (c->number_of_parts)
      for (int64_t t = 0; t < ns; t++)
        if (c->number_of_parts[t] < 0)
          return vd_fail(err, VD_INVALID, "%s: Steps/NumberOfParts[%lld] is negative", what, (long long)t);
  }
  /* Count entries: every one must be >= 0. */
  for (int64_t i = 0; i < c->n_np; i++)
    if (c->np[i] < 0) return vd_fail(err, VD_INVALID, "%s: NumberOfPoints[%lld] is negative", what, (long long)i);
  for (int k = 0; k < ntopo; k++) {
    for (int64_t i = 0; i < c->n_nc[k]; i++)
      if (c->nc[k][i] < 0) return vd_fail(err, VD_INVALID, "%s: NumberOfCells[%lld] is negative", what, (long long)i);
    for (int64_t i = 0; i < c->n_nci[k]; i++)
      if (c->nci[k][i] < 0)
        return vd_fail(err, VD_INVALID, "%s: NumberOfConnectivityIds[%lld] is negative", what, (long long)i);
  }

  /* Total slots first, so one allocation serves. */
  int64_t total = 0;
  for (int64_t t = 0; t < ns; t++) {
    int64_t n = parts_of(c, t);
    int64_t p = !c->has_steps ? 0 : c->part_offsets ? c->part_offsets[t] : t * n;
    if (p > c->n_np || n > c->n_np - p)
      return vd_fail(err, VD_INVALID,
                     "%s: step %lld uses count entries %lld..%lld but NumberOfPoints has %lld entries", what,
                     (long long)t, (long long)p, (long long)(p + n - 1), (long long)c->n_np);
    for (int k = 0; k < ntopo; k++)
      if (p + n > c->n_nc[k] || p + n > c->n_nci[k])
        return vd_fail(err, VD_INVALID, "%s: step %lld uses count entries %lld..%lld but %s%sNumberOfCells has %lld", what,
                       (long long)t, (long long)p, (long long)(p + n - 1), c->poly ? vh_topo_names[k] : "",
                       c->poly ? "/" : "", (long long)c->n_nc[k]);
    total += n;
  }
  vh_slot *s = calloc(total ? total : 1, sizeof *s);
  vh_topo *tp = c->poly ? calloc(total ? total : 1, sizeof *tp) : NULL;
  if (!s || (c->poly && !tp)) {
    free(s), free(tp);
    return vd_nomem(err);
  }
  int64_t o = 0;
  for (int64_t t = 0; t < ns; t++) {
    int64_t n = parts_of(c, t);
    int64_t p = !c->has_steps ? 0 : c->part_offsets ? c->part_offsets[t] : t * n;
    int64_t pt = c->has_steps ? col(c->point_offsets, 1, t, 0) : 0;
    int64_t cell[VH_NTOPO], conn[VH_NTOPO], offs[VH_NTOPO];
    for (int k = 0; k < ntopo; k++) {
      cell[k] = c->has_steps ? col(c->cell_offsets, c->cell_offsets_cols, t, k) : 0;
      conn[k] = c->has_steps ? col(c->conn_offsets, c->conn_offsets_cols, t, k) : 0;
      if (!c->poly) {
        /* UG: each earlier partition (of this and earlier steps) stored NC+1 Offsets values */
        offs[k] = cell[k] + p;
      } else {
        /* PolyData: VTK does not use PartOffsets here; it counts how many earlier count
         * entries it takes for their cells to reach CellOffsets[t][k]. */
        int64_t sum = 0, m = 0;
        while (m < p && sum < cell[k]) sum += c->nc[k][m++];
        offs[k] = cell[k] + m;
      }
    }
    for (int64_t j = 0; j < n; j++, o++) {
      vh_slot *x = &s[o];
      vh_topo *y = tp ? &tp[o] : NULL;
      int64_t e = p + j;
      x->step = t;
      x->partition = j;
      x->entry = e;
      x->np = c->np[e];
      x->point_off = pt;
      pt += x->np;
      x->nc = x->nci = 0;
      x->cell_off = 0;
      for (int k = 0; k < ntopo; k++) {
        int64_t nc = c->nc[k][e], nci = c->nci[k][e];
        if (y) {
          y->nc[k] = nc;
          y->nci[k] = nci;
          y->cell_off[k] = cell[k];
          y->conn_off[k] = conn[k];
          y->offs_off[k] = offs[k] + j;
        } else {
          x->conn_off = conn[k];
          x->offsets_off = offs[k] + j;
        }
        x->nc += nc;
        x->nci += nci;
        x->cell_off += cell[k];
        cell[k] += nc;
        conn[k] += nci;
        offs[k] += nc;
      }
      if (c->poly) x->conn_off = x->offsets_off = VH_NULL;
    }
  }
  *out = s;
  if (topo) *topo = tp;
  else free(tp);
  *nout = total;
  return VD_OK;
}
