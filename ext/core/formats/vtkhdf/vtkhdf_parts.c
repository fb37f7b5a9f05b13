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

/* ---- count columns ---- */

void vh_col_mem(vh_col *c, const char *name, const int64_t *v, int64_t n) {
  memset(c, 0, sizeof *c);
  c->name = name;
  c->n = n;
  c->hi = v ? n : 0;
  c->v = v;
}

void vh_col_lazy(vh_col *c, const char *name, const char *what, int64_t n, vh_load_fn load, void *arg) {
  memset(c, 0, sizeof *c);
  c->name = name, c->what = what, c->n = n, c->load = load, c->arg = arg;
  c->window = VH_WINDOW;
}

void vh_col_free(vh_col *c) {
  free(c->buf);
  c->buf = NULL;
  c->lo = c->hi = 0;
}

vd_code vh_col_fill(vh_col *c, int64_t e, vd_err *err) {
  if (e < 0 || e >= c->n || !c->load)
    return vd_fail(err, VD_ERROR, "%s: entry %lld of %s is out of range", c->what ? c->what : "vtkhdf", (long long)e,
                   c->name);
  int64_t w = c->window > 0 ? c->window : VH_WINDOW;
  if (!c->buf && !(c->buf = malloc((size_t)w * sizeof *c->buf))) return vd_nomem(err);
  int64_t lo = e - e % w, n = c->n - lo < w ? c->n - lo : w;
  c->lo = c->hi = 0;
  vd_code rc = c->load(c->arg, lo, n, c->buf, err);
  if (rc) return rc;
  int64_t any = 0; /* an OR over the window first (it vectorises), the culprit only if needed */
  for (int64_t i = 0; i < n; i++) any |= c->buf[i];
  for (int64_t i = 0; any < 0 && i < n; i++)
    if (c->buf[i] < 0)
      return vd_fail(err, VD_INVALID, "%s: %s[%lld] is negative", c->what, c->name, (long long)(lo + i));
  c->v = c->buf, c->lo = lo, c->hi = lo + n;
  return VD_OK;
}

/* ---- the iterator ---- */

/* Partitions in step t. NumberOfParts is optional in the spec; without it VTK takes
 * len(NumberOfPoints) / NSteps, which is wrong for static meshes (their entries are
 * written once). With PartOffsets present, the entries up to the next step's different
 * PartOffsets (or to the end) are this step's, which holds for both kinds of file. */
static int64_t parts_of(const vh_counts *c, int64_t n_np, int64_t t) {
  if (!c->has_steps) return n_np;
  if (c->number_of_parts) return c->number_of_parts[t];
  if (!c->part_offsets) return c->nsteps ? n_np / c->nsteps : 0;
  for (int64_t u = t + 1; u < c->nsteps; u++)
    if (c->part_offsets[u] != c->part_offsets[t]) return c->part_offsets[u] - c->part_offsets[t];
  return n_np - c->part_offsets[t];
}

static int64_t first_entry(const vh_counts *c, int64_t t, int64_t n) {
  int64_t p;
  if (!c->has_steps) return 0;
  if (c->part_offsets) return c->part_offsets[t];
  return __builtin_mul_overflow(t, n, &p) ? INT64_MAX : p; /* past every dataset: refused */
}

vd_code vh_iter_init(vh_iter *it, const vh_counts *c, vh_col *np, vh_col *const *nc, vh_col *const *nci,
                     vh_col *const *scan, const char *what, vd_err *err) {
  memset(it, 0, sizeof *it);
  it->c = c, it->what = what, it->np = np;
  int64_t ns = c->nsteps;
  if (ns < 0 || ns > (1 << 30)) return vd_fail(err, VD_INVALID, "%s: NSteps %lld is out of range", what, (long long)ns);
  int ntopo = c->poly ? VH_NTOPO : 1;
  for (int k = 0; k < ntopo; k++) it->nc[k] = nc[k], it->nci[k] = nci[k], it->scan[k] = scan ? scan[k] : nc[k];
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
  /* Without PartOffsets and NumberOfParts every step has len(NumberOfPoints) / NSteps
   * partitions: none at all when NSteps (an attribute, up to 2^30) exceeds the entries,
   * and then there is nothing to walk, step by step or at all */
  int empty = c->has_steps && !c->number_of_parts && !c->part_offsets && ns > 0 && np->n / ns == 0;
  for (int64_t t = 0; !empty && t < ns; t++) {
    int64_t n = parts_of(c, np->n, t), p = first_entry(c, t, n);
    /* p and n come from the file: compare without forming p + n before it is known small */
    if (p > np->n || n > np->n - p)
      return vd_fail(err, VD_INVALID,
                     "%s: step %lld uses %lld count entries from entry %lld but NumberOfPoints has %lld entries", what,
                     (long long)t, (long long)n, (long long)p, (long long)np->n);
    for (int k = 0; k < ntopo; k++)
      if (p + n > nc[k]->n || p + n > nci[k]->n)
        return vd_fail(err, VD_INVALID, "%s: step %lld uses %lld count entries from entry %lld but %s%sNumberOfCells has %lld",
                       what, (long long)t, (long long)n, (long long)p, c->poly ? vh_topo_names[k] : "",
                       c->poly ? "/" : "", (long long)nc[k]->n);
  }
  it->t = empty ? ns - 1 : -1; /* empty: at the end already */
  it->last_p = -1;
  return VD_OK;
}

static vd_code overflow(const vh_iter *it, vd_err *err) {
  return vd_fail(err, VD_INVALID, "%s: the counts of step %lld overflow 64-bit starts (partition %lld)", it->what,
                 (long long)it->t, (long long)it->j);
}

/* Enters step t: its partitions, first entry and the starts of its first partition. */
static vd_code begin_step(vh_iter *it, int64_t t, vd_err *err) {
  const vh_counts *c = it->c;
  int ntopo = c->poly ? VH_NTOPO : 1;
  it->t = t, it->j = 0;
  it->n = parts_of(c, it->np->n, t);
  it->p = first_entry(c, t, it->n);
  it->pt = c->has_steps ? col(c->point_offsets, 1, t, 0) : 0;
  for (int k = 0; k < ntopo; k++) {
    int64_t cell = c->has_steps ? col(c->cell_offsets, c->cell_offsets_cols, t, k) : 0;
    it->cell[k] = cell;
    it->conn[k] = c->has_steps ? col(c->conn_offsets, c->conn_offsets_cols, t, k) : 0;
    if (!c->poly) {
      /* UG: each earlier partition (of this and earlier steps) stored NC+1 Offsets values */
      if (__builtin_add_overflow(cell, it->p, &it->offs[k])) return overflow(it, err);
      continue;
    }
    /* PolyData: VTK does not use PartOffsets here; it counts how many earlier count
     * entries it takes for their cells to reach CellOffsets[t][k]. With p and CellOffsets
     * not decreasing, the count for this step continues the last one's; otherwise start
     * again from entry 0. */
    if (it->p < it->last_p || cell < it->last_cell[k]) it->m[k] = it->msum[k] = 0;
    while (it->m[k] < it->p && it->msum[k] < cell) {
      int64_t v;
      vd_code rc = vh_col_get(it->scan[k], it->m[k], &v, err);
      if (rc) return rc;
      if (it->fixscan) v = it->fixscan(it->fix_arg, k, it->m[k], v);
      if (__builtin_add_overflow(it->msum[k], v, &it->msum[k])) return overflow(it, err);
      it->m[k]++;
    }
    if (__builtin_add_overflow(cell, it->m[k], &it->offs[k])) return overflow(it, err);
    it->last_cell[k] = cell;
  }
  it->last_p = it->p;
  return VD_OK;
}

/* One partition; inlined into vh_iter_next and the loop of vh_iter_fill. */
static inline __attribute__((always_inline)) vd_code iter_step(vh_iter *it, vh_slot *x, vh_topo *y, int *eof, vd_err *err) {
  const vh_counts *c = it->c;
  vd_code rc;
  *eof = 0;
  while (it->t < 0 || it->j >= it->n) {
    if (it->t + 1 >= c->nsteps) return *eof = 1, VD_OK;
    if ((rc = begin_step(it, it->t + 1, err))) return rc;
  }
  int ntopo = c->poly ? VH_NTOPO : 1;
  int64_t j = it->j, e = it->p + j;
  x->step = it->t;
  x->partition = j;
  x->entry = e;
  int64_t cnc[VH_NTOPO], cnci[VH_NTOPO];
  if ((rc = vh_col_get(it->np, e, &x->np, err))) return rc;
  for (int k = 0; k < ntopo; k++)
    if ((rc = vh_col_get(it->nc[k], e, &cnc[k], err)) || (rc = vh_col_get(it->nci[k], e, &cnci[k], err))) return rc;
  if (it->fix && (rc = it->fix(it->fix_arg, it, e, &x->np, cnc, cnci, err))) return rc;
  x->point_off = it->pt;
  int ovf = __builtin_add_overflow(it->pt, x->np, &it->pt); /* hostile counts: no wrap-around */
  x->nc = x->nci = x->cell_off = 0;
  for (int k = 0; k < ntopo; k++) {
    int64_t nc = cnc[k], nci = cnci[k];
    if (c->poly) {
      y->nc[k] = nc;
      y->nci[k] = nci;
      y->cell_off[k] = it->cell[k];
      y->conn_off[k] = it->conn[k];
      ovf |= __builtin_add_overflow(it->offs[k], j, &y->offs_off[k]);
    } else {
      x->conn_off = it->conn[k];
      ovf |= __builtin_add_overflow(it->offs[k], j, &x->offsets_off);
    }
    ovf |= __builtin_add_overflow(x->nc, nc, &x->nc);
    ovf |= __builtin_add_overflow(x->nci, nci, &x->nci);
    ovf |= __builtin_add_overflow(x->cell_off, it->cell[k], &x->cell_off);
    ovf |= __builtin_add_overflow(it->cell[k], nc, &it->cell[k]);
    ovf |= __builtin_add_overflow(it->conn[k], nci, &it->conn[k]);
    ovf |= __builtin_add_overflow(it->offs[k], nc, &it->offs[k]);
  }
  if (ovf) return overflow(it, err);
  if (c->poly) x->conn_off = x->offsets_off = VH_NULL;
  it->j++;
  return VD_OK;
}

vd_code vh_iter_next(vh_iter *it, vh_slot *x, vh_topo *y, int *eof, vd_err *err) { return iter_step(it, x, y, eof, err); }

/* UnstructuredGrid rows of the current step whose count entries are all in the loaded
 * windows: the same sums as iter_step, with the running starts in registers. Returns how
 * many rows it made (0: let iter_step take the next one). */
static int ug_run(vh_iter *it, vh_slot *x, int max) {
  if (it->t < 0 || it->j >= it->n || it->fix) return 0;
  vh_col *cp = it->np, *cc = it->nc[0], *ci = it->nci[0];
  int64_t e = it->p + it->j;
  if (e < cp->lo || e < cc->lo || e < ci->lo) return 0;
  int64_t lim = it->n - it->j;
  if (lim > max) lim = max;
  if (lim > cp->hi - e) lim = cp->hi - e;
  if (lim > cc->hi - e) lim = cc->hi - e;
  if (lim > ci->hi - e) lim = ci->hi - e;
  if (lim <= 0) return 0;
  const int64_t *a = cp->v + (e - cp->lo), *b = cc->v + (e - cc->lo), *d = ci->v + (e - ci->lo);
  int64_t t = it->t, j = it->j, pt = it->pt, cell = it->cell[0], conn = it->conn[0], offs = it->offs[0];
  int ovf = 0;
  for (int64_t r = 0; r < lim; r++, j++, e++) {
    vh_slot *s = &x[r];
    s->step = t, s->partition = j, s->entry = e;
    s->np = a[r], s->nc = b[r], s->nci = d[r];
    s->point_off = pt, s->cell_off = cell, s->conn_off = conn;
    ovf |= __builtin_add_overflow(offs, j, &s->offsets_off);
    ovf |= __builtin_add_overflow(pt, a[r], &pt);
    ovf |= __builtin_add_overflow(cell, b[r], &cell);
    ovf |= __builtin_add_overflow(conn, d[r], &conn);
    ovf |= __builtin_add_overflow(offs, b[r], &offs);
  }
  if (ovf) return 0; /* iter_step redoes them one by one and reports where */
  it->j = j, it->pt = pt, it->cell[0] = cell, it->conn[0] = conn, it->offs[0] = offs;
  return (int)lim;
}

vd_code vh_iter_fill(vh_iter *it, vh_slot *x, vh_topo *y, int max, int *n, vd_err *err) {
  int i = 0, eof = 0;
  vd_code rc = VD_OK;
  while (i < max) {
    int k = it->c->poly ? 0 : ug_run(it, &x[i], max - i);
    if (k) {
      i += k;
      continue;
    }
    if ((rc = iter_step(it, &x[i], y ? &y[i] : NULL, &eof, err)) || eof) break;
    i++;
  }
  *n = i;
  return rc;
}

vd_code vh_compute(const vh_counts *c, const char *what, vh_slot **out, vh_topo **topo, int64_t *nout, vd_err *err) {
  *out = NULL;
  if (topo) *topo = NULL;
  *nout = 0;
  int ntopo = c->poly ? VH_NTOPO : 1;
  if (!c->np) return vd_fail(err, VD_INVALID, "%s: NumberOfPoints is missing", what);
  for (int k = 0; k < ntopo; k++)
    if (!c->nc[k] || !c->nci[k])
      return vd_fail(err, VD_INVALID, "%s: %s%sNumberOfCells or NumberOfConnectivityIds is missing", what,
                     c->poly ? vh_topo_names[k] : "", c->poly ? "/" : "");
  vh_col np, nc[VH_NTOPO], nci[VH_NTOPO];
  vh_col *pnc[VH_NTOPO], *pnci[VH_NTOPO];
  vh_col_mem(&np, "NumberOfPoints", c->np, c->n_np);
  for (int k = 0; k < ntopo; k++) {
    vh_col_mem(&nc[k], "NumberOfCells", c->nc[k], c->n_nc[k]);
    vh_col_mem(&nci[k], "NumberOfConnectivityIds", c->nci[k], c->n_nci[k]);
    pnc[k] = &nc[k], pnci[k] = &nci[k];
  }
  vh_iter it;
  vd_code rc = vh_iter_init(&it, c, &np, pnc, pnci, NULL, what, err);
  if (rc) return rc;
  /* In memory every entry is visible, so check them all before any output. */
  for (int64_t i = 0; i < c->n_np; i++)
    if (c->np[i] < 0) return vd_fail(err, VD_INVALID, "%s: NumberOfPoints[%lld] is negative", what, (long long)i);
  for (int k = 0; k < ntopo; k++) {
    for (int64_t i = 0; i < c->n_nc[k]; i++)
      if (c->nc[k][i] < 0) return vd_fail(err, VD_INVALID, "%s: NumberOfCells[%lld] is negative", what, (long long)i);
    for (int64_t i = 0; i < c->n_nci[k]; i++)
      if (c->nci[k][i] < 0)
        return vd_fail(err, VD_INVALID, "%s: NumberOfConnectivityIds[%lld] is negative", what, (long long)i);
  }
  int64_t total = 0;
  for (int64_t t = 0; t < c->nsteps; t++) total += parts_of(c, c->n_np, t);
  vh_slot *s = calloc(total ? total : 1, sizeof *s);
  vh_topo *tp = c->poly ? calloc(total ? total : 1, sizeof *tp) : NULL;
  if (!s || (c->poly && !tp)) {
    free(s), free(tp);
    return vd_nomem(err);
  }
  int64_t o = 0;
  for (int eof = 0;; o++) { /* to the end, so steps without partitions are checked too */
    vh_slot x;
    vh_topo y;
    if ((rc = vh_iter_next(&it, o < total ? &s[o] : &x, tp && o < total ? &tp[o] : &y, &eof, err)) || eof) break;
    if (o >= total) {
      rc = vd_fail(err, VD_ERROR, "%s: more partitions than counted (%lld)", what, (long long)total);
      break;
    }
  }
  if (rc) {
    free(s), free(tp);
    return rc;
  }
  *out = s;
  if (topo) *topo = tp;
  else free(tp);
  *nout = o;
  return VD_OK;
}
