/* VTKHDF Types beyond the unstructured ones (spec sections 2-3): OverlappingAMR (a row
 * per step, level and box; vtkhdf_amr_boxes), HyperTreeGrid (a row per step and
 * partition; vtkhdf_trees), RectilinearGrid, StructuredGrid and Table (a row per step).
 * Offsets follow what VTK's vtkHDFReader reads, including the Version 2.2 names of the
 * temporal AMR datasets (NumberOfAMRBox, AMRBoxOffset, PointDataOffset) that 2.3
 * pluralised. Rows are held in memory: every dataset read here is read whole, within
 * max_alloc (vh5_read_i64), and the rows made are checked against it too. */
#include <limits.h>

#include "vtkhdf_read.h"

/* a + b into *s; 1 on overflow (every count and offset here comes from the file) */
static int add_ovf(int64_t a, int64_t b, int64_t *s) { return __builtin_add_overflow(a, b, s); }

/* A double attribute of n values; 0 when absent, not numeric or of another size */
static int attr_f64(hid_t g, const char *name, double *v, int n) {
  if (H5Aexists(g, name) <= 0) return H5Eclear2(H5E_DEFAULT), 0;
  hid_t a = H5Aopen(g, name, H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
  int cls = t >= 0 ? H5Tget_class(t) : -1, got = 0;
  if (sp >= 0 && (cls == H5T_FLOAT || cls == H5T_INTEGER) && H5Sget_simple_extent_npoints(sp) == n)
    got = H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0;
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  if (a >= 0) H5Aclose(a);
  H5Eclear2(H5E_DEFAULT);
  return got;
}

/* have + more items (more from the file: past INT64_MAX is refused as such) */
static int64_t plus(int64_t have, int64_t more) {
  int64_t n;
  return add_ovf(have, more, &n) ? INT64_MAX : n;
}

static vd_code rows_ok(rd *r, const leaf *L, int64_t more, const char *what) {
  return vh5_alloc_ok(plus(r->doc->nparts, more), sizeof(vh_part), L->where, what, r->err);
}

/* A partition row of block (not L's) with the leaf's Type, file and the step's time */
static vd_code part_row(rd *r, const leaf *L, const char *block, const steps *s, int64_t t, vh_part **out) {
  leaf B = *L;
  B.block = block;
  vd_code rc = vhr_add_part(r, &B, out);
  if (rc) return rc;
  (*out)->step = t;
  if (s->values && t < s->nvalues) (*out)->time = s->values[t], (*out)->has_time = 1;
  if (!((*out)->source_file = vhr_intern(r->doc, L->shown, &(int){1}))) return vd_nomem(r->err);
  return VD_OK;
}

/* A Steps dataset of one value per step (the first column), read whole; NULL when absent
 * and !required. Shorter than NSteps is refused, as for the other Types. */
static vd_code steps_col(rd *r, hid_t g, const char *name, int required, const leaf *L, const char *where,
                         int64_t nsteps, int64_t **v) {
  int64_t n;
  int cols;
  vd_code rc = vh5_read_i64(g, name, required, 1, L->where, v, &n, &cols, r->err);
  if (rc || !*v) return rc;
  if (cols > 1)
    for (int64_t i = 0; i < n; i++) (*v)[i] = (*v)[i * cols];
  if (n < nsteps) {
    free(*v), *v = NULL;
    return vd_fail(r->err, VD_INVALID, "%s: %s%s has %lld rows but NSteps is %lld (inconsistent Steps lengths)", L->where,
                   where, name, (long long)n, (long long)nsteps);
  }
  return VD_OK;
}

/* The start, in step t, that every array of group gname (PointData, ...) of loc shares
 * through its Steps offsets dataset in og (the step's rows of the arrays written
 * together): base[t], or VH_NULL when the arrays disagree, one has no offsets, or there
 * is no array. base is NULL (no Steps: every start is 0) when og < 0 and !temporal. */
static vd_code common_base(rd *r, hid_t loc, const char *gname, hid_t sg, const char *const *ognames, const leaf *L,
                           const char *where, int64_t nsteps, int64_t **base) {
  *base = malloc((size_t)(nsteps ? nsteps : 1) * sizeof **base);
  if (!*base) return vd_nomem(r->err);
  for (int64_t t = 0; t < nsteps; t++) (*base)[t] = VH_NULL;
  hid_t g, og = -1;
  names ns;
  vd_code rc = vhr_data_group(r, loc, L, gname, &g, &ns);
  if (rc || g < 0) return rc;
  char ogname[64] = "";
  for (int i = 0; ognames[i] && og < 0; i++)
    if (H5Lexists(sg, ognames[i], H5P_DEFAULT) > 0) {
      og = H5Gopen2(sg, ognames[i], H5P_DEFAULT);
      snprintf(ogname, sizeof ogname, "%s", ognames[i]);
    }
  H5Eclear2(H5E_DEFAULT);
  for (int i = 0; i < ns.n && !rc; i++) {
    int64_t *o = NULL;
    char w[600];
    snprintf(w, sizeof w, "%s%s/", where, ogname);
    if (og >= 0 && H5Lexists(og, ns.v[i], H5P_DEFAULT) > 0) rc = steps_col(r, og, ns.v[i], 1, L, w, nsteps, &o);
    H5Eclear2(H5E_DEFAULT);
    for (int64_t t = 0; t < nsteps && !rc; t++) {
      int64_t x = o ? o[t] : VH_NULL;
      if (i == 0) (*base)[t] = x;
      else if ((*base)[t] != x) (*base)[t] = VH_NULL;
    }
    free(o);
  }
  if (og >= 0) H5Gclose(og);
  vhr_names_free(&ns);
  H5Gclose(g);
  return rc;
}

/* ---- OverlappingAMR ---- */

/* VTK's vtkAMRBox counts: cells per axis hi - lo + 1 (an empty axis, hi = lo - 1, is
 * skipped), nodes hi - lo + 2. A box with hi < lo - 1 is invalid (VTK asserts on it). */
static int box_counts(const int64_t *e, int64_t *np, int64_t *nc) {
  int64_t p = 1, c = 0;
  for (int k = 0; k < 3; k++) {
    int64_t lo = e[2 * k], hi = e[2 * k + 1], cells, nodes;
    if (__builtin_sub_overflow(hi, lo, &cells) || cells < -1 || add_ovf(cells, 1, &cells) || add_ovf(cells, 1, &nodes))
      return -1;
    if (__builtin_mul_overflow(p, nodes, &p)) return -1;
    if (cells && (c ? __builtin_mul_overflow(c, cells, &c) : (c = cells, 0))) return -1;
  }
  *np = p, *nc = c;
  return 0;
}

static const char *const pt_offs[] = {"PointDataOffsets", "PointDataOffset", NULL};
static const char *const pt_offs22[] = {"PointDataOffset", "PointDataOffsets", NULL};
static const char *const cell_offs[] = {"CellDataOffsets", "CellDataOffset", NULL};
static const char *const cell_offs22[] = {"CellDataOffset", "CellDataOffsets", NULL};

/* One level of an AMR leaf: its boxes per step */
static vd_code amr_level(rd *r, hid_t lg, const leaf *L, const steps *s, int v22, int k, const double *origin) {
  char lname[32], sname[48], block[1100], where[64];
  snprintf(lname, sizeof lname, "Level%d", k);
  snprintf(sname, sizeof sname, "Steps/%s", lname);
  snprintf(block, sizeof block, "%s/%s", L->block, lname);
  snprintf(where, sizeof where, "Steps/%s/", lname);
  char m[256];
  hid_t g = H5Gopen2(lg, lname, H5P_DEFAULT), sg = -1;
  if (g < 0) return vd_fail(r->err, VD_INVALID, "%s: cannot open %s (HDF5: %s)", L->where, lname, vh5_msg(m, sizeof m));
  int64_t *box = NULL, nbox = 0, *nb = NULL, *bo = NULL, *bpt = NULL, *bcell = NULL;
  int cols = 6;
  double sp[3] = {0, 0, 0};
  vd_code rc = VD_OK;
  int has_sp = attr_f64(g, "Spacing", sp, 3);
  if ((r->what & VH_AMR) && !has_sp)
    rc = vd_fail(r->err, VD_INVALID, "%s: %s has no Spacing attribute of 3 numbers", L->where, lname);
  char bn[48];
  snprintf(bn, sizeof bn, "%s/AMRBox", lname);
  if (!rc) rc = vh5_read_i64(lg, bn, 1, 0, L->where, &box, &nbox, &cols, r->err);
  if (!rc && cols != 6)
    rc = vd_fail(r->err, VD_INVALID, "%s: %s has %d columns, expected 6 (imin, imax, jmin, jmax, kmin, kmax)", L->where, bn,
                 cols);
  /* temporal: the step's boxes are AMRBox rows [AMRBoxOffsets[t], + NumberOfAMRBoxes[t]) */
  int temporal = !rc && s->g >= 0 && H5Lexists(lg, sname, H5P_DEFAULT) > 0;
  H5Eclear2(H5E_DEFAULT);
  if (!rc && s->g >= 0 && !temporal && s->nsteps > 1)
    rc = vd_fail(r->err, VD_INVALID, "%s: %s is missing (a temporal OverlappingAMR has one per level)", L->where, sname);
  if (!rc && temporal) {
    if ((sg = H5Gopen2(lg, sname, H5P_DEFAULT)) < 0)
      rc = vd_fail(r->err, VD_INVALID, "%s: cannot open %s (HDF5: %s)", L->where, sname, vh5_msg(m, sizeof m));
    /* 2.2 named them in the singular; 2.3 pluralised them (VTK picks by Version) */
    const char *nname = v22 ? "NumberOfAMRBox" : "NumberOfAMRBoxes", *oname = v22 ? "AMRBoxOffset" : "AMRBoxOffsets";
    if (!rc && H5Lexists(sg, nname, H5P_DEFAULT) <= 0) nname = v22 ? "NumberOfAMRBoxes" : "NumberOfAMRBox";
    if (!rc && H5Lexists(sg, oname, H5P_DEFAULT) <= 0) oname = v22 ? "AMRBoxOffsets" : "AMRBoxOffset";
    H5Eclear2(H5E_DEFAULT);
    if (!rc && H5Lexists(sg, nname, H5P_DEFAULT) <= 0)
      rc = vd_fail(r->err, VD_INVALID, "%s: %s has neither NumberOfAMRBoxes nor NumberOfAMRBox", L->where, sname);
    if (!rc && H5Lexists(sg, oname, H5P_DEFAULT) <= 0)
      rc = vd_fail(r->err, VD_INVALID, "%s: %s has neither AMRBoxOffsets nor AMRBoxOffset", L->where, sname);
    H5Eclear2(H5E_DEFAULT);
    if (!rc) rc = steps_col(r, sg, nname, 1, L, where, s->nsteps, &nb);
    if (!rc) rc = steps_col(r, sg, oname, 1, L, where, s->nsteps, &bo);
    if (!rc && (r->what & VH_PARTS)) rc = common_base(r, g, "PointData", sg, v22 ? pt_offs22 : pt_offs, L, where, s->nsteps, &bpt);
    if (!rc && (r->what & VH_PARTS))
      rc = common_base(r, g, "CellData", sg, v22 ? cell_offs22 : cell_offs, L, where, s->nsteps, &bcell);
  }
  for (int64_t t = 0; t < s->nsteps && !rc; t++) {
    int64_t n = temporal ? nb[t] : nbox, off = temporal ? bo[t] : 0, end;
    if (n < 0 || off < 0 || add_ovf(off, n, &end) || end > nbox) {
      rc = vd_fail(r->err, VD_INVALID, "%s: step %lld of %s takes %lld AMRBox rows from row %lld, but %s has %lld rows",
                   L->where, (long long)t, lname, (long long)n, (long long)off, bn, (long long)nbox);
      break;
    }
    if ((r->what & VH_PARTS) && (rc = rows_ok(r, L, n, "a row per AMR box"))) break;
    if ((r->what & VH_AMR) && (rc = vh5_alloc_ok(plus(r->doc->nboxes, n), sizeof(vh_amrbox), L->where, "a row per AMR box", r->err)))
      break;
    int64_t spt = temporal ? (bpt ? bpt[t] : VH_NULL) : 0, scell = temporal ? (bcell ? bcell[t] : VH_NULL) : 0;
    for (int64_t b = 0; b < n && !rc; b++) {
      const int64_t *e = box + (off + b) * 6;
      int64_t np, nc;
      if (box_counts(e, &np, &nc)) {
        rc = vd_fail(r->err, VD_INVALID, "%s: %s row %lld (%lld %lld %lld %lld %lld %lld) is not a valid box (hi < lo - 1)",
                     L->where, bn, (long long)(off + b), (long long)e[0], (long long)e[1], (long long)e[2], (long long)e[3],
                     (long long)e[4], (long long)e[5]);
        break;
      }
      if (r->what & VH_PARTS) {
        vh_part *p;
        if ((rc = part_row(r, L, block, s, t, &p))) break;
        p->partition = b;
        p->n_points = np, p->n_cells = nc;
        p->point_off = spt, p->cell_off = scell;
        if ((spt != VH_NULL && add_ovf(spt, np, &spt)) || (scell != VH_NULL && add_ovf(scell, nc, &scell)))
          rc = vd_fail(r->err, VD_INVALID, "%s: the data offsets of %s overflow in step %lld", L->where, lname, (long long)t);
      }
      if (!rc && (r->what & VH_AMR)) {
        vh_doc *d = r->doc;
        GROW(d->boxes, d->nboxes, d->capboxes);
        vh_amrbox *x = &d->boxes[d->nboxes++];
        int ok = 1;
        x->block = vhr_intern(d, L->block, &ok);
        x->step = t, x->level = k, x->box = b;
        for (int i = 0; i < 6; i++) x->ext[i] = e[i];
        for (int i = 0; i < 3; i++) x->spacing[i] = sp[i], x->origin[i] = origin[i] + (double)e[2 * i] * sp[i];
        if (!ok) rc = vd_nomem(r->err);
      }
    }
  }
  free(box), free(nb), free(bo), free(bpt), free(bcell);
  if (sg >= 0) H5Gclose(sg);
  H5Gclose(g);
  return rc;
}

/* Levels are Level0, Level1, ... up to the first missing one, as VTK counts them */
static int level_exists(hid_t lg, int k) {
  char n[32];
  snprintf(n, sizeof n, "Level%d", k);
  int e = H5Lexists(lg, n, H5P_DEFAULT) > 0;
  H5Eclear2(H5E_DEFAULT);
  return e;
}

vd_code vhr_amr(rd *r, hid_t lg, const leaf *L) {
  steps s;
  vd_code rc = vhr_open_steps(r, lg, L, &s);
  double origin[3] = {0, 0, 0};
  if (!rc && (r->what & VH_AMR) && !attr_f64(lg, "Origin", origin, 3))
    rc = vd_fail(r->err, VD_INVALID, "%s: OverlappingAMR without an Origin attribute of 3 numbers", L->where);
  if (!rc && s.values && s.nvalues < s.nsteps)
    rc = vd_fail(r->err, VD_INVALID, "%s: Steps/Values has %lld rows but NSteps is %lld (inconsistent Steps lengths)",
                 L->where, (long long)s.nvalues, (long long)s.nsteps);
  int64_t ver[2] = {0, 0};
  int v22 = vh5_attr_i64(lg, "Version", ver, 2) == 2 && ver[0] == 2 && ver[1] == 2;
  H5Eclear2(H5E_DEFAULT);
  for (int k = 0; !rc && k < INT_MAX && level_exists(lg, k); k++) rc = amr_level(r, lg, L, &s, v22, k, origin);
  vhr_close_steps(&s);
  return rc;
}

vd_code vhr_amr_arrays(rd *r, hid_t lg, const leaf *L) {
  vd_code rc = VD_OK;
  for (int k = 0; !rc && k < INT_MAX && level_exists(lg, k); k++) {
    char lname[32], m[256];
    snprintf(lname, sizeof lname, "Level%d", k);
    hid_t g = H5Gopen2(lg, lname, H5P_DEFAULT);
    if (g < 0) return vd_fail(r->err, VD_INVALID, "%s: cannot open %s (HDF5: %s)", L->where, lname, vh5_msg(m, sizeof m));
    char block[1100];
    snprintf(block, sizeof block, "%s/%s", L->block, lname);
    leaf B = *L;
    B.block = block;
    snprintf(B.where, sizeof B.where, "%s/%s", L->where, lname);
    rc = vhr_leaf_arrays(r, g, &B, 0, 0); /* a level's arrays are the boxes' values concatenated: (n[, c]) */
    H5Gclose(g);
  }
  return rc;
}

/* ---- HyperTreeGrid ---- */

/* What one HTG leaf holds, read whole */
typedef struct htg {
  int64_t *nt, *nc, *nd, *ds, n_nt, n_nc, n_nd, n_ds;              /* per partition (and step) */
  int64_t *po, *nop, *tio, *dpo, *ncpo, *dso, *mo;                 /* Steps, one per step */
  int64_t *ids, *dpt, *ncd, n_ids, n_dpt, n_ncd;                   /* per tree, per tree depth */
} htg;

static void htg_free(htg *h) {
  int64_t **all[] = {&h->nt, &h->nc, &h->nd, &h->ds, &h->po, &h->nop, &h->tio, &h->dpo, &h->ncpo, &h->dso, &h->mo, &h->ids,
                     &h->dpt, &h->ncd};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(*all[i]), *all[i] = NULL;
}

static vd_code get_at(rd *r, const leaf *L, const char *name, const int64_t *v, int64_t n, int64_t i, int64_t *out) {
  if (i < 0 || i >= n)
    return vd_fail(r->err, VD_INVALID, "%s: %s has %lld entries, entry %lld is needed", L->where, name, (long long)n,
                   (long long)i);
  if (v[i] < 0) return vd_fail(r->err, VD_INVALID, "%s: %s[%lld] is negative", L->where, name, (long long)i);
  *out = v[i];
  return VD_OK;
}

/* The trees of one partition, from its first tree / depth entries and its Descriptors and
 * Mask bytes, as VTK's reader walks them; their sums are checked against the partition's
 * counts. */
static vd_code htg_trees(rd *r, const leaf *L, const htg *h, int mask, int64_t t, int64_t j, int64_t ntr, int64_t ncell,
                         int64_t ndep, int64_t dsize, int64_t tid, int64_t dep, int64_t ncd, int64_t cell, int64_t dbyte,
                         int64_t mbyte) {
  int64_t incell = 0, dbits = 0, depths = 0;
  vd_code rc = VD_OK;
  if ((r->what & VH_TREES) && (rc = vh5_alloc_ok(plus(r->doc->ntrees, ntr), sizeof(vh_tree), L->where, "a row per tree", r->err)))
    return rc;
  for (int64_t k = 0; k < ntr && !rc; k++) {
    int64_t id, depth, cells = 0, last = 0, x;
    if ((rc = get_at(r, L, "TreeIds", h->ids, h->n_ids, tid + k, &id)) ||
        (rc = get_at(r, L, "DepthPerTree", h->dpt, h->n_dpt, dep + k, &depth)))
      break;
    for (int64_t e = 0; e < depth && !rc; e++) {
      if ((rc = get_at(r, L, "NumberOfCellsPerTreeDepth", h->ncd, h->n_ncd, ncd + depths + e, &x))) break;
      if (add_ovf(cells, x, &cells)) rc = vd_fail(r->err, VD_INVALID, "%s: the cells of tree %lld overflow", L->where, (long long)id);
      last = x;
    }
    if (rc) break;
    /* the descriptor has a bit per cell but those of the deepest level; offsets are bits */
    if (r->what & VH_TREES) {
      int64_t coff, doff, moff;
      if (add_ovf(cell, incell, &coff) || __builtin_mul_overflow(dbyte, 8, &doff) || add_ovf(doff, dbits, &doff) ||
          __builtin_mul_overflow(mbyte, 8, &moff) || add_ovf(moff, incell, &moff)) {
        rc = vd_fail(r->err, VD_INVALID, "%s: the trees of partition %lld of step %lld overflow", L->where, (long long)j,
                     (long long)t);
        break;
      }
      vh_doc *d = r->doc;
      GROW(d->trees, d->ntrees, d->captrees);
      vh_tree *y = &d->trees[d->ntrees++];
      int ok = 1;
      y->block = vhr_intern(d, L->block, &ok);
      y->step = t, y->partition = j, y->tree = k, y->tree_id = id, y->depth = depth, y->n_cells = cells;
      y->cell_off = coff;
      y->desc_off = doff, y->desc_bits = cells - last;
      y->mask_off = mask ? moff : VH_NULL;
      y->mask_bits = mask ? cells : VH_NULL;
      if (!ok) return vd_nomem(r->err);
    }
    if (add_ovf(incell, cells, &incell) || add_ovf(dbits, cells - last, &dbits) || add_ovf(depths, depth, &depths))
      rc = vd_fail(r->err, VD_INVALID, "%s: the trees of partition %lld of step %lld overflow", L->where, (long long)j, (long long)t);
  }
  if (rc) return rc;
  const char *what = incell != ncell ? "NumberOfCells" : depths != ndep ? "NumberOfDepths" : dbits != dsize ? "DescriptorsSize" : NULL;
  if (what)
    return vd_fail(r->err, VD_INVALID,
                   "%s: partition %lld of step %lld: its %lld trees hold %lld cells, %lld depths, %lld descriptor bits, "
                   "which disagrees with its %s (%lld cells, %lld depths, %lld bits)",
                   L->where, (long long)j, (long long)t, (long long)ntr, (long long)incell, (long long)depths, (long long)dbits,
                   what, (long long)ncell, (long long)ndep, (long long)dsize);
  return VD_OK;
}

vd_code vhr_htg(rd *r, hid_t lg, const leaf *L) {
  steps s;
  htg h = {0};
  vd_code rc = vhr_open_steps(r, lg, L, &s);
  int cols;
  if (!rc && s.values && s.nvalues < s.nsteps)
    rc = vd_fail(r->err, VD_INVALID, "%s: Steps/Values has %lld rows but NSteps is %lld (inconsistent Steps lengths)",
                 L->where, (long long)s.nvalues, (long long)s.nsteps);
  if (!rc) rc = vh5_read_i64(lg, "NumberOfTrees", 1, 0, L->where, &h.nt, &h.n_nt, &cols, r->err);
  if (!rc) rc = vh5_read_i64(lg, "NumberOfCells", 1, 0, L->where, &h.nc, &h.n_nc, &cols, r->err);
  if (!rc) rc = vh5_read_i64(lg, "NumberOfDepths", 1, 0, L->where, &h.nd, &h.n_nd, &cols, r->err);
  if (!rc) rc = vh5_read_i64(lg, "DescriptorsSize", 1, 0, L->where, &h.ds, &h.n_ds, &cols, r->err);
  int mask = !rc && H5Lexists(lg, "Mask", H5P_DEFAULT) > 0;
  H5Eclear2(H5E_DEFAULT);
  int temporal = s.g >= 0;
  if (!rc && temporal) {
    rc = steps_col(r, s.g, "PartOffsets", 1, L, "Steps/", s.nsteps, &h.po);
    if (!rc) rc = steps_col(r, s.g, "NumberOfParts", 0, L, "Steps/", s.nsteps, &h.nop);
    if (!rc) rc = steps_col(r, s.g, "TreeIdsOffsets", 1, L, "Steps/", s.nsteps, &h.tio);
    if (!rc) rc = steps_col(r, s.g, "DepthPerTreeOffsets", 1, L, "Steps/", s.nsteps, &h.dpo);
    if (!rc) rc = steps_col(r, s.g, "NumberOfCellsPerTreeDepthOffsets", 1, L, "Steps/", s.nsteps, &h.ncpo);
    if (!rc) rc = steps_col(r, s.g, "DescriptorsOffsets", 1, L, "Steps/", s.nsteps, &h.dso);
    if (!rc) rc = steps_col(r, s.g, "MaskOffsets", mask, L, "Steps/", s.nsteps, &h.mo);
  }
  if (!rc && (r->what & VH_TREES)) {
    rc = vh5_read_i64(lg, "TreeIds", 1, 0, L->where, &h.ids, &h.n_ids, &cols, r->err);
    if (!rc) rc = vh5_read_i64(lg, "DepthPerTree", 1, 0, L->where, &h.dpt, &h.n_dpt, &cols, r->err);
    if (!rc) rc = vh5_read_i64(lg, "NumberOfCellsPerTreeDepth", 1, 0, L->where, &h.ncd, &h.n_ncd, &cols, r->err);
  }
  for (int64_t t = 0; t < s.nsteps && !rc; t++) {
    /* partitions of the step: NumberOfParts, else (as VTK) the count entries over the steps */
    int64_t p0 = temporal ? h.po[t] : 0;
    int64_t n = temporal ? (h.nop ? h.nop[t] : h.n_nt / (s.nsteps ? s.nsteps : 1)) : h.n_nt;
    if (p0 < 0 || n < 0) {
      rc = vd_fail(r->err, VD_INVALID, "%s: step %lld has PartOffsets %lld and %lld partitions", L->where, (long long)t,
                   (long long)p0, (long long)n);
      break;
    }
    if ((r->what & VH_PARTS) && (rc = rows_ok(r, L, n, "a row per partition"))) break;
    int64_t cell = 0, tid = temporal ? h.tio[t] : 0, dep = temporal ? h.dpo[t] : 0, ncd = temporal ? h.ncpo[t] : 0;
    int64_t dbyte = temporal ? h.dso[t] : 0, mbyte = temporal && h.mo ? h.mo[t] : 0;
    for (int64_t j = 0; j < n && !rc; j++) {
      int64_t e, ntr, ncell, ndep, dsize;
      if (add_ovf(p0, j, &e) || (rc = get_at(r, L, "NumberOfTrees", h.nt, h.n_nt, e, &ntr)) ||
          (rc = get_at(r, L, "NumberOfCells", h.nc, h.n_nc, e, &ncell)) ||
          (rc = get_at(r, L, "NumberOfDepths", h.nd, h.n_nd, e, &ndep)) ||
          (rc = get_at(r, L, "DescriptorsSize", h.ds, h.n_ds, e, &dsize))) {
        if (!rc) rc = vd_fail(r->err, VD_INVALID, "%s: Steps/PartOffsets[%lld] overflows", L->where, (long long)t);
        break;
      }
      if (r->what & VH_PARTS) {
        vh_part *p;
        if ((rc = part_row(r, L, L->block, &s, t, &p))) break;
        p->partition = j;
        p->n_cells = ncell, p->n_trees = ntr, p->cell_off = cell;
      }
      if ((r->what & VH_TREES) &&
          (rc = htg_trees(r, L, &h, mask, t, j, ntr, ncell, ndep, dsize, tid, dep, ncd, cell, dbyte, mbyte)))
        break;
      /* the next partition: each starts its Descriptors and Mask on a fresh byte */
      if (add_ovf(cell, ncell, &cell) || add_ovf(tid, ntr, &tid) || add_ovf(dep, ntr, &dep) || add_ovf(ncd, ndep, &ncd) ||
          add_ovf(dbyte, dsize / 8 + (dsize % 8 != 0), &dbyte) || add_ovf(mbyte, ncell / 8 + (ncell % 8 != 0), &mbyte))
        rc = vd_fail(r->err, VD_INVALID, "%s: the offsets of step %lld overflow", L->where, (long long)t);
    }
  }
  htg_free(&h);
  vhr_close_steps(&s);
  return rc;
}

/* ---- RectilinearGrid, StructuredGrid, Table: not partitioned, a row per step ---- */

vd_code vhr_struct_parts(rd *r, hid_t lg, const leaf *L) {
  steps s;
  vd_code rc = vhr_open_steps(r, lg, L, &s);
  int table = !strcmp(L->type, "Table"), sgrid = !strcmp(L->type, "StructuredGrid");
  int64_t *rows = NULL, nrows = 0, *base = NULL, *pto = NULL;
  int64_t dims[3] = {0, 0, 0}, np = VH_NULL, nc = VH_NULL;
  int cols, sized = 0;
  static const char *const row_offs[] = {"RowDataOffsets", NULL};
  if (!rc && s.values && s.nvalues < s.nsteps)
    rc = vd_fail(r->err, VD_INVALID, "%s: Steps/Values has %lld rows but NSteps is %lld (inconsistent Steps lengths)",
                 L->where, (long long)s.nvalues, (long long)s.nsteps);
  if (!rc && table) {
    /* NumberOfRows has one entry per step; the columns' step slices start at their
     * Steps/RowDataOffsets (0 without Steps) */
    rc = vh5_read_i64(lg, "NumberOfRows", 1, 0, L->where, &rows, &nrows, &cols, r->err);
    if (!rc && nrows < s.nsteps)
      rc = vd_fail(r->err, VD_INVALID, "%s: NumberOfRows has %lld entries but NSteps is %lld (one per step)", L->where,
                   (long long)nrows, (long long)s.nsteps);
    if (!rc && s.g >= 0) rc = common_base(r, lg, "RowData", s.g, row_offs, L, "Steps/", s.nsteps, &base);
  } else if (!rc) {
    /* VTK reads Dimensions (points per axis); files that give a WholeExtent instead are
     * counted from it, as ImageData */
    int64_t ext[6];
    if (vh5_attr_i64(lg, "Dimensions", dims, 3) == 3) {
      np = 1, nc = 1, sized = 1;
    } else if (vh5_attr_i64(lg, "WholeExtent", ext, 6) == 6) {
      np = 1, nc = 1, sized = 1;
      for (int k = 0; k < 3; k++)
        if (__builtin_sub_overflow(ext[2 * k + 1], ext[2 * k], &dims[k]) || add_ovf(dims[k], 1, &dims[k])) np = VH_NULL;
    }
    H5Eclear2(H5E_DEFAULT);
    for (int k = 0; k < 3 && np != VH_NULL; k++) {
      if (dims[k] <= 0) np = nc = dims[k] = 0;
      if (__builtin_mul_overflow(np, dims[k], &np) || (dims[k] > 1 && __builtin_mul_overflow(nc, dims[k] - 1, &nc)))
        np = nc = VH_NULL;
    }
    if (np == 0) nc = 0;
    /* StructuredGrid: the step's grid is Points[PointOffsets[t]] along its leading axis */
    if (!rc && sgrid && s.g >= 0) rc = steps_col(r, s.g, "PointOffsets", 0, L, "Steps/", s.nsteps, &pto);
  }
  if (!rc) rc = rows_ok(r, L, s.nsteps, "a row per step (Steps/NSteps)");
  for (int64_t t = 0; t < s.nsteps && !rc; t++) {
    vh_part *p;
    if ((rc = part_row(r, L, L->block, &s, t, &p))) break;
    p->partition = 0;
    if (table) {
      if (rows[t] < 0) rc = vd_fail(r->err, VD_INVALID, "%s: NumberOfRows[%lld] is negative", L->where, (long long)t);
      p->n_points = rows[t];
      p->point_off = s.g < 0 ? 0 : base[t];
    } else {
      p->n_points = np, p->n_cells = nc;
      if (sgrid) p->point_off = s.g < 0 ? 0 : pto ? pto[t] : VH_NULL;
      if (!sized) p->status = "unsupported_type"; /* neither Dimensions nor WholeExtent: not counted */
    }
  }
  free(rows), free(base), free(pto);
  vhr_close_steps(&s);
  return rc;
}
