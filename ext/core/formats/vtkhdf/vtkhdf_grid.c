/* VTKHDF partition rows of one leaf: UnstructuredGrid and PolyData from their counts and
 * Steps (streamed, vtkhdf_stream.c, also when sub-files are missing or broken), other
 * types one row per step. */
#include "vtkhdf_read.h"
#include "vtkhdf_shape.h"
#include "vtkhdf_stream.h"

/* Non-partitioned types: one row per step, counts from the extent. */
vd_code vhr_image_parts(rd *r, hid_t lg, const leaf *L) {
  steps s;
  vd_code rc = vhr_open_steps(r, lg, L, &s);
  int64_t ext[6];
  int has_ext = 0;
  int grid = !strcmp(L->type, "ImageData") || !strcmp(L->type, "RectilinearGrid") || !strcmp(L->type, "StructuredGrid");
  if (!rc && grid) rc = vhr_whole_extent(r, lg, L->where, ext, &has_ext);
  int counted = has_ext && grid;
  if (!rc && s.values && s.nvalues < s.nsteps)
    rc = vd_fail(r->err, VD_INVALID, "%s: Steps/Values has %lld rows but NSteps is %lld (inconsistent Steps lengths)",
                 L->where, (long long)s.nvalues, (long long)s.nsteps);
  /* one row per step, held in memory: NSteps (an attribute) must fit in max_alloc */
  if (!rc) rc = vh5_alloc_ok(r->doc->nparts + s.nsteps, sizeof(vh_part), L->where, "a row per step (Steps/NSteps)", r->err);
  for (int64_t t = 0; !rc && t < s.nsteps; t++) {
    vh_part *p;
    if ((rc = vhr_add_part(r, L, &p))) break;
    p->step = t;
    p->partition = 0;
    if (s.values) p->time = s.values[t], p->has_time = 1;
    if (!(p->source_file = vhr_intern(r->doc, L->shown, &(int){1}))) rc = vd_nomem(r->err);
    if (counted) {
      /* the extent comes from the file: a count past 64 bits is no count (NULL) */
      int64_t pn[3], cn[3], np, nc;
      int ovf = vh_extent_counts(ext, 0, pn) | vh_extent_counts(ext, 1, cn);
      ovf |= __builtin_mul_overflow(pn[0], pn[1], &np) || __builtin_mul_overflow(np, pn[2], &np);
      ovf |= __builtin_mul_overflow(cn[0], cn[1], &nc) || __builtin_mul_overflow(nc, cn[2], &nc);
      p->n_points = ovf ? VH_NULL : np;
      p->n_cells = ovf ? VH_NULL : nc;
    } else {
      /* HyperTreeGrid, OverlappingAMR, Table, or a grid without WholeExtent: not counted here */
      p->status = "unsupported_type";
    }
  }
  vhr_close_steps(&s);
  return rc;
}

/* What vtkhdf_array_starts needs of a leaf (vh_leafarrs): its PointData and CellData
 * arrays, each with Steps/<Assoc>DataOffsets/<name> when the file has it, and the
 * geometry's Steps starts. The rows are made from the partition rows as they stream. */
static vd_code leaf_arrays_starts(rd *r, hid_t lg, const leaf *L, const steps *s, const vh_counts *c, int poly) {
  static const char *const groups[] = {"PointData", "CellData"}, *const offs[] = {"PointDataOffsets", "CellDataOffsets"};
  static const char *const assoc[] = {"point", "cell"};
  vh_doc *d = r->doc;
  GROW(d->larrs, d->nlarrs, d->caplarrs);
  vh_leafarrs *la = &d->larrs[d->nlarrs++];
  memset(la, 0, sizeof *la);
  int ok = 1;
  la->block = vhr_intern(d, L->block, &ok);
  la->nsteps = c->nsteps;
  if (!ok) return vd_nomem(r->err);
  /* short Steps datasets are refused by the partition walk; do not read past them here.
   * Only Steps datasets read from the file (within max_alloc) size these arrays, never
   * NSteps alone (an attribute): without them every base is 0 anyway. */
  int short_steps = (c->point_offsets && c->n_point_offsets < c->nsteps) || (c->cell_offsets && c->n_cell_offsets < c->nsteps);
  if (c->has_steps && !short_steps && (c->point_offsets || c->cell_offsets)) {
    la->base_pt = calloc(c->nsteps ? c->nsteps : 1, sizeof *la->base_pt);
    la->base_cell = calloc(c->nsteps ? c->nsteps : 1, sizeof *la->base_cell);
    if (!la->base_pt || !la->base_cell) return vd_nomem(r->err);
    for (int64_t t = 0; t < c->nsteps; t++) {
      la->base_pt[t] = c->point_offsets ? c->point_offsets[t] : 0;
      for (int k = 0; k < (poly ? VH_NTOPO : 1) && c->cell_offsets; k++) /* the CellData start is the topologies' sum */
        if (__builtin_add_overflow(la->base_cell[t],
                                   c->cell_offsets[t * c->cell_offsets_cols + (k < c->cell_offsets_cols ? k : 0)],
                                   &la->base_cell[t]))
          return vd_fail(r->err, VD_INVALID, "%s: Steps/CellOffsets[%lld] overflow when summed", L->where, (long long)t);
    }
  }
  vd_code rc = VD_OK;
  int cap = 0;
  for (int gi = 0; gi < 2 && !rc; gi++) {
    hid_t g;
    names ns;
    if ((rc = vhr_data_group(r, lg, L, groups[gi], &g, &ns)) || g < 0) continue;
    hid_t og = -1;
    if (s->g >= 0 && H5Lexists(s->g, offs[gi], H5P_DEFAULT) > 0) og = H5Gopen2(s->g, offs[gi], H5P_DEFAULT);
    H5Eclear2(H5E_DEFAULT);
    for (int i = 0; i < ns.n && !rc; i++) {
      int64_t *o = NULL, no = 0;
      if (og >= 0) {
        char what[600];
        snprintf(what, sizeof what, "%s: Steps/%s", L->where, offs[gi]);
        if ((rc = vh5_read_i64(og, ns.v[i], 0, 0, what, &o, &no, NULL, r->err))) break;
        if (o && no < c->nsteps) {
          rc = vd_fail(r->err, VD_INVALID, "%s: Steps/%s/%s has %lld rows but NSteps is %lld (inconsistent Steps lengths)",
                       L->where, offs[gi], ns.v[i], (long long)no, (long long)c->nsteps);
          free(o);
          break;
        }
      }
      if (la->na == cap) {
        int nc = cap ? cap * 2 : 8;
        vh_larray *p = realloc(la->a, (size_t)nc * sizeof *p);
        if (!p) {
          free(o);
          rc = vd_nomem(r->err);
          break;
        }
        la->a = p, cap = nc;
      }
      vh_larray *a = &la->a[la->na++];
      a->association = assoc[gi];
      a->name = vhr_intern(d, ns.v[i], &ok);
      a->o = o;
      if (!ok) rc = vd_nomem(r->err);
    }
    vhr_names_free(&ns);
    if (og >= 0) H5Gclose(og);
    H5Gclose(g);
  }
  return rc;
}

/* A count dataset: its length when it can be read in windows (1-D), else read whole
 * (a scalar, a 2-D dataset: within max_alloc) and checked for negative entries. */
static vd_code count_col(rd *r, hid_t loc, const char *name, const leaf *L, int64_t *n, int64_t **whole) {
  hid_t ds;
  vd_code rc = vh5_open_counts(loc, name, L->where, &ds, n, r->err);
  if (rc) return rc;
  if (ds >= 0) {
    H5Dclose(ds); /* the stream opens it again at its first row */
    return VD_OK;
  }
  if ((rc = vh5_read_i64(loc, name, 1, 0, L->where, whole, n, NULL, r->err))) return rc;
  for (int64_t i = 0; i < *n; i++)
    if ((*whole)[i] < 0) return vd_fail(r->err, VD_INVALID, "%s: %s[%lld] is negative", L->where, name, (long long)i);
  return VD_OK;
}

/* Hands the leaf to a stream (vtkhdf_stream.c): in and its arrays move there. */
static vd_code stream_leaf(rd *r, const leaf *L, vh_stream_init *in) {
  vh_stream *st;
  vd_code rc = vh_stream_new(in, &st, r->err);
  if (rc) return rc;
  vh_doc *d = r->doc;
  if (d->nsegs == d->capsegs) {
    int nc = d->capsegs ? d->capsegs * 2 : 16;
    vh_seg *p = realloc(d->segs, (size_t)nc * sizeof *p);
    if (!p) {
      vh_stream_free(st);
      return vd_nomem(r->err);
    }
    d->segs = p, d->capsegs = nc;
  }
  d->segs[d->nsegs++] = (vh_seg){0, 0, st};
  return VD_OK;
}

vd_code vhr_grid_parts(rd *r, hid_t lg, const leaf *L, int poly) {
  steps s;
  vh_stream_init in = {0};
  vh_counts *c = &in.c;
  int ntopo = poly ? VH_NTOPO : 1;
  hid_t tg[VH_NTOPO] = {-1, -1, -1, -1};
  char m[256];
  vd_code rc = vhr_open_steps(r, lg, L, &s);
  if (rc) goto done;
  c->poly = poly;
  c->nsteps = s.nsteps;
  c->has_steps = s.g >= 0;
  /* The count datasets are sized, not read: the stream reads them in windows */
  if ((rc = count_col(r, lg, "NumberOfPoints", L, &c->n_np, &in.whole[0]))) goto done;
  for (int k = 0; k < ntopo; k++) {
    hid_t g = lg;
    if (poly) {
      tg[k] = H5Lexists(lg, vh_topo_names[k], H5P_DEFAULT) > 0 ? H5Gopen2(lg, vh_topo_names[k], H5P_DEFAULT) : -1;
      if (tg[k] < 0) {
        rc = vd_fail(r->err, VD_INVALID, "%s: PolyData group %s is missing or unreadable (HDF5: %s)", L->where,
                     vh_topo_names[k], vh5_msg(m, sizeof m));
        goto done;
      }
      g = tg[k];
    }
    if ((rc = count_col(r, g, "NumberOfCells", L, &c->n_nc[k], &in.whole[1 + k])) ||
        (rc = count_col(r, g, "NumberOfConnectivityIds", L, &c->n_nci[k], &in.whole[1 + VH_NTOPO + k])))
      goto done;
  }
  if (s.g >= 0) {
    int64_t *po = NULL, *nop = NULL, *pto = NULL, *co = NULL, *cio = NULL;
    rc = vh5_read_i64(s.g, "PartOffsets", 0, 1, L->where, &po, &c->n_part_offsets, NULL, r->err);
    c->part_offsets = po; /* owned by in from here on */
    if (!rc) rc = vh5_read_i64(s.g, "NumberOfParts", 0, 0, L->where, &nop, &c->n_number_of_parts, NULL, r->err);
    c->number_of_parts = nop;
    if (!rc) rc = vh5_read_i64(s.g, "PointOffsets", 0, 1, L->where, &pto, &c->n_point_offsets, NULL, r->err);
    c->point_offsets = pto;
    if (!rc)
      rc = vh5_read_i64(s.g, "CellOffsets", 0, 1, L->where, &co, &c->n_cell_offsets, &c->cell_offsets_cols, r->err);
    c->cell_offsets = co;
    if (!rc)
      rc = vh5_read_i64(s.g, "ConnectivityIdOffsets", 0, 1, L->where, &cio, &c->n_conn_offsets, &c->conn_offsets_cols,
                        r->err);
    c->conn_offsets = cio;
    if (rc) goto done;
    if (poly && ((co && c->cell_offsets_cols != VH_NTOPO && c->cell_offsets_cols != 1) ||
                 (cio && c->conn_offsets_cols != VH_NTOPO && c->conn_offsets_cols != 1))) {
      rc = vd_fail(r->err, VD_INVALID, "%s: PolyData Steps/CellOffsets and ConnectivityIdOffsets need 4 columns", L->where);
      goto done;
    }
  }
  c->values = s.values, c->n_values = s.nvalues;
  s.values = NULL; /* in owns it now */

  /* The virtual-dataset mappings (each source checked): of the count datasets, whose
   * broken entries HDF5 reads as zeros, and of the big datasets, which give a broken
   * entry's sizes back and name the file behind each partition's Points */
  if ((rc = vh5_vds_maps(lg, "NumberOfPoints", L->holder, L->where, &in.cm[0], &in.ncm[0], r->err)) ||
      (rc = vh5_vds_maps(lg, "Points", L->holder, L->where, &in.bm[0], &in.nbm[0], r->err)))
    goto done;
  for (int k = 0; k < ntopo; k++) {
    hid_t g = poly ? tg[k] : lg;
    if ((rc = vh5_vds_maps(g, "NumberOfCells", L->holder, L->where, &in.cm[1 + k], &in.ncm[1 + k], r->err)) ||
        (rc = vh5_vds_maps(g, "NumberOfConnectivityIds", L->holder, L->where, &in.cm[1 + VH_NTOPO + k],
                           &in.ncm[1 + VH_NTOPO + k], r->err)) ||
        (rc = vh5_vds_maps(g, poly ? "Offsets" : "Types", L->holder, L->where, &in.bm[1 + 2 * k], &in.nbm[1 + 2 * k],
                           r->err)) ||
        (rc = vh5_vds_maps(g, "Connectivity", L->holder, L->where, &in.bm[2 + 2 * k], &in.nbm[2 + 2 * k], r->err)))
      goto done;
  }
  if ((r->what & VH_STARTS) && (rc = leaf_arrays_starts(r, lg, L, &s, c, poly))) goto done;

  int ok = 1;
  in.ctx = r->ctx, in.remote = r->remote, in.poly = poly, in.file = r->file, in.base = r->path;
  in.block = vhr_intern(r->doc, L->block, &ok);
  in.type = vhr_intern(r->doc, L->type, &ok);
  in.holder = vhr_intern(r->doc, L->shown, &ok);
  in.where = L->where;
  size_t gl = strlen(L->block) + sizeof "/VTKHDF";
  if ((in.group = malloc(gl))) snprintf(in.group, gl, "/VTKHDF%s", L->block); /* through the Assembly's links */
  else ok = 0;
  if (!ok) {
    rc = vd_nomem(r->err);
    goto done;
  }
  rc = stream_leaf(r, L, &in); /* in is the stream's now, also on failure */
  memset(&in, 0, sizeof in);
done:
  vh_stream_init_free(&in);
  for (int k = 0; k < VH_NTOPO; k++)
    if (tg[k] >= 0) H5Gclose(tg[k]);
  vhr_close_steps(&s);
  return rc;
}

