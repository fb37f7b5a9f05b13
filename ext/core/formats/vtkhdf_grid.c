/* VTKHDF partition rows of one leaf: UnstructuredGrid and PolyData from their counts and
 * Steps (streamed, or built whole when a virtual-dataset source is missing and sizes must
 * be recovered from the big datasets' mappings), other types one row per step. */
#include "vtkhdf_read.h"
#include "vtkhdf_stream.h"

/* Steps header: NSteps (1 without Steps or without the attribute) and the time values. */
typedef struct steps {
  hid_t g; /* Steps group or -1 */
  int64_t nsteps;
  double *values;
  int64_t nvalues;
} steps;

static vd_code open_steps(rd *r, hid_t lg, const leaf *L, steps *s) {
  s->g = -1;
  s->nsteps = 1;
  s->values = NULL;
  s->nvalues = 0;
  if (H5Lexists(lg, "Steps", H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return VD_OK;
  }
  char m[256];
  s->g = H5Gopen2(lg, "Steps", H5P_DEFAULT);
  if (s->g < 0) return vd_fail(r->err, VD_INVALID, "%s: cannot open Steps (HDF5: %s)", L->where, vh5_msg(m, sizeof m));
  int64_t ns;
  if (vh5_attr_i64(s->g, "NSteps", &ns, 1) == 1) s->nsteps = ns;
  H5Eclear2(H5E_DEFAULT);
  if (s->nsteps < 0 || s->nsteps > (1 << 30))
    return vd_fail(r->err, VD_INVALID, "%s: Steps/NSteps %lld is out of range", L->where, (long long)s->nsteps);
  return vh5_read_f64(s->g, "Values", L->where, &s->values, &s->nvalues, r->err);
}

static void close_steps(steps *s) {
  if (s->g >= 0) H5Gclose(s->g);
  free(s->values);
}

/* Non-partitioned types: one row per step, counts from the extent. */
vd_code vhr_image_parts(rd *r, hid_t lg, const leaf *L) {
  steps s;
  vd_code rc = open_steps(r, lg, L, &s);
  int64_t ext[6];
  int has_ext = vh5_attr_i64(lg, "WholeExtent", ext, 6) == 6;
  H5Eclear2(H5E_DEFAULT);
  int counted = has_ext && (!strcmp(L->type, "ImageData") || !strcmp(L->type, "RectilinearGrid") ||
                            !strcmp(L->type, "StructuredGrid"));
  if (!rc && s.values && s.nvalues < s.nsteps)
    rc = vd_fail(r->err, VD_INVALID, "%s: Steps/Values has %lld rows but NSteps is %lld (inconsistent Steps lengths)",
                 L->where, (long long)s.nvalues, (long long)s.nsteps);
  for (int64_t t = 0; !rc && t < s.nsteps; t++) {
    vh_part *p;
    if ((rc = vhr_add_part(r, L, &p))) break;
    p->step = t;
    p->partition = 0;
    if (s.values) p->time = s.values[t], p->has_time = 1;
    p->source_file = vhr_intern(r->doc, L->holder, &(int){1});
    if (counted) {
      int64_t np = 1, nc = 1;
      for (int k = 0; k < 3; k++) {
        int64_t dim = ext[2 * k + 1] - ext[2 * k] + 1;
        if (dim <= 0) np = nc = 0;
        np *= dim > 0 ? dim : 0;
        if (dim > 1) nc *= dim - 1;
      }
      p->n_points = np;
      p->n_cells = np ? nc : 0;
    } else {
      /* HyperTreeGrid, OverlappingAMR, Table, or a grid without WholeExtent: not counted here */
      p->status = "unsupported_type";
    }
  }
  close_steps(&s);
  return rc;
}

/* Count datasets and Steps of an UnstructuredGrid or PolyData leaf. */
typedef struct ugbuf {
  int64_t *np, *nc[VH_NTOPO], *nci[VH_NTOPO], *po, *nop, *pto, *co, *cio;
} ugbuf;

static void ugbuf_free(ugbuf *b) {
  free(b->np), free(b->po), free(b->nop), free(b->pto), free(b->co), free(b->cio);
  for (int k = 0; k < VH_NTOPO; k++) free(b->nc[k]), free(b->nci[k]);
}

/* Entries of a count dataset whose VDS source file is missing (the value HDF5 returned
 * is a fill value, not a count). */
static vd_code mark_missing(rd *r, hid_t loc, const char *name, const leaf *L, unsigned char **miss, int64_t n,
                            char ***missfile, int64_t *nmiss) {
  vh5_map *m;
  int nm;
  vd_code rc = vh5_vds_maps(loc, name, L->holder, L->where, &m, &nm, r->err);
  if (rc) return rc;
  for (int i = 0; i < nm && !rc; i++) {
    if (m[i].exists) continue;
    if (!*miss) { /* per-entry arrays only for a leaf that has a missing sub-file */
      *miss = calloc(n ? n : 1, 1);
      *missfile = calloc(n ? n : 1, sizeof **missfile);
      if (!*miss || !*missfile) {
        rc = vd_nomem(r->err);
        break;
      }
    }
    for (int64_t e = m[i].start; e < m[i].start + m[i].count && e < n; e++)
      if (e >= 0 && !(*miss)[e]) {
        /* 1: this entry alone maps to the file, so the big datasets' mappings there give
         * its sizes back; 2: several entries share it (a step file): they cannot be
         * told apart */
        (*miss)[e] = m[i].count == 1 ? 1 : 2;
        (*missfile)[e] = strdup(m[i].resolved);
        ++*nmiss;
      }
  }
  vh5_maps_free(m, nm);
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
  /* short Steps datasets are refused by the partition walk; do not read past them here */
  int short_steps = (c->point_offsets && c->n_point_offsets < c->nsteps) || (c->cell_offsets && c->n_cell_offsets < c->nsteps);
  if (c->has_steps && !short_steps) {
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

/* Big-dataset mappings used to recover a missing partition's size (its rows are still
 * mapped, to a file that is gone) so later partitions keep their true starts. */
typedef struct bigmaps {
  vh5_map *m[1 + 2 * VH_NTOPO];
  int n[1 + 2 * VH_NTOPO];
} bigmaps;

static int64_t recover(const bigmaps *b, int i, int64_t start) {
  for (int k = 0; k < b->n[i]; k++)
    if (b->m[i][k].start == start && !b->m[i][k].exists) return b->m[i][k].count;
  return 0;
}

static vd_code read_whole(hid_t ds, int64_t n, const char *what, const char *name, int64_t **v, vd_err *err) {
  *v = malloc((size_t)(n > 0 ? n : 1) * sizeof **v);
  if (!*v) return vd_nomem(err);
  return n > 0 ? vh5_read_rows(ds, 0, n, *v, what, name, err) : VD_OK;
}

/* Hands a leaf with no missing sub-file to a stream (vtkhdf_stream.c): its Steps arrays
 * and mappings move there (and are cleared here). */
static vd_code stream_leaf(rd *r, hid_t lg, const leaf *L, int poly, steps *s, ugbuf *b, const vh_counts *c) {
  vh_stream_init in = {0};
  int ok = 1;
  in.ctx = r->ctx, in.remote = r->remote, in.poly = poly;
  in.block = vhr_intern(r->doc, L->block, &ok);
  in.type = vhr_intern(r->doc, L->type, &ok);
  in.holder = vhr_intern(r->doc, L->holder, &ok);
  in.where = L->where;
  in.c = *c;
  b->po = b->nop = b->pto = b->co = b->cio = NULL; /* in.c points to them: the stream owns them now */
  s->values = NULL;
  in.file = r->file;
  size_t gl = strlen(L->block) + sizeof "/VTKHDF";
  if ((in.group = malloc(gl))) snprintf(in.group, gl, "/VTKHDF%s", L->block); /* through the Assembly's links */
  else ok = 0;
  vd_code rc = vh5_vds_maps(lg, "Points", L->holder, L->where, &in.pm, &in.npm, r->err);
  if (!rc) rc = vh5_vds_maps(lg, "NumberOfPoints", L->holder, L->where, &in.cm, &in.ncm, r->err);
  if (!rc && !ok) rc = vd_nomem(r->err);
  if (rc) { /* no stream took them: free them here */
    vh_stream_init_free(&in);
    return rc;
  }
  vh_stream *st;
  if ((rc = vh_stream_new(&in, &st, r->err))) return rc;
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
  ugbuf b = {0};
  vh_counts c = {0};
  vh_slot *sl = NULL;
  vh_topo *tp = NULL;
  int64_t nsl = 0;
  unsigned char *miss = NULL;
  char **missfile = NULL;
  bigmaps bm = {0};
  vh5_map *pm = NULL, *cm = NULL;
  int npm = 0, ncm = 0;
  int ntopo = poly ? VH_NTOPO : 1;
  hid_t tg[VH_NTOPO] = {-1, -1, -1, -1};
  hid_t dnp = -1, dnc[VH_NTOPO] = {-1, -1, -1, -1}, dnci[VH_NTOPO] = {-1, -1, -1, -1};
  int windowed = 1;
  char m[256];
  vd_code rc = open_steps(r, lg, L, &s);
  if (rc) goto done;
  c.poly = poly;
  c.nsteps = s.nsteps;
  c.has_steps = s.g >= 0;
  c.values = s.values;
  c.n_values = s.nvalues;
  /* The count datasets are opened, not read: a leaf that can be streamed reads them in
   * windows later; the others read them whole below. */
  if ((rc = vh5_open_counts(lg, "NumberOfPoints", L->where, &dnp, &c.n_np, r->err))) goto done;
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
    if ((rc = vh5_open_counts(g, "NumberOfCells", L->where, &dnc[k], &c.n_nc[k], r->err)) ||
        (rc = vh5_open_counts(g, "NumberOfConnectivityIds", L->where, &dnci[k], &c.n_nci[k], r->err)))
      goto done;
    if (dnc[k] < 0 || dnci[k] < 0) windowed = 0;
  }
  if (dnp < 0) windowed = 0;
  if (s.g >= 0) {
    if ((rc = vh5_read_i64(s.g, "PartOffsets", 0, 1, L->where, &b.po, &c.n_part_offsets, NULL, r->err)) ||
        (rc = vh5_read_i64(s.g, "NumberOfParts", 0, 0, L->where, &b.nop, &c.n_number_of_parts, NULL, r->err)) ||
        (rc = vh5_read_i64(s.g, "PointOffsets", 0, 1, L->where, &b.pto, &c.n_point_offsets, NULL, r->err)) ||
        (rc = vh5_read_i64(s.g, "CellOffsets", 0, 1, L->where, &b.co, &c.n_cell_offsets, &c.cell_offsets_cols,
                           r->err)) ||
        (rc = vh5_read_i64(s.g, "ConnectivityIdOffsets", 0, 1, L->where, &b.cio, &c.n_conn_offsets,
                           &c.conn_offsets_cols, r->err)))
      goto done;
    c.part_offsets = b.po;
    c.number_of_parts = b.nop;
    c.point_offsets = b.pto;
    c.cell_offsets = b.co;
    c.conn_offsets = b.cio;
    if (poly && ((b.co && c.cell_offsets_cols != VH_NTOPO && c.cell_offsets_cols != 1) ||
                 (b.cio && c.conn_offsets_cols != VH_NTOPO && c.conn_offsets_cols != 1))) {
      rc = vd_fail(r->err, VD_INVALID, "%s: PolyData Steps/CellOffsets and ConnectivityIdOffsets need 4 columns", L->where);
      goto done;
    }
  }

  if (!windowed) { /* an odd shape: read whole (and sized) by vh5_read_i64 */
    if ((rc = vh5_read_i64(lg, "NumberOfPoints", 1, 0, L->where, &b.np, &c.n_np, NULL, r->err))) goto done;
    for (int k = 0; k < ntopo; k++)
      if ((rc = vh5_read_i64(poly ? tg[k] : lg, "NumberOfCells", 1, 0, L->where, &b.nc[k], &c.n_nc[k], NULL, r->err)) ||
          (rc = vh5_read_i64(poly ? tg[k] : lg, "NumberOfConnectivityIds", 1, 0, L->where, &b.nci[k], &c.n_nci[k], NULL,
                             r->err)))
        goto done;
  }

  /* Which count entries come from a missing sub-file? */
  int64_t nmiss = 0;
  if ((rc = mark_missing(r, lg, "NumberOfPoints", L, &miss, c.n_np, &missfile, &nmiss))) goto done;
  for (int k = 0; k < ntopo; k++)
    if ((rc = mark_missing(r, poly ? tg[k] : lg, "NumberOfCells", L, &miss, c.n_np, &missfile, &nmiss))) goto done;
  if ((r->what & VH_STARTS) && (rc = leaf_arrays_starts(r, lg, L, &s, &c, poly))) goto done;
  if (windowed && !nmiss) {
    rc = stream_leaf(r, lg, L, poly, &s, &b, &c);
    goto done;
  }
  if (!miss) {
    miss = calloc(c.n_np ? c.n_np : 1, 1);
    missfile = calloc(c.n_np ? c.n_np : 1, sizeof *missfile);
    if (!miss || !missfile) {
      rc = vd_nomem(r->err);
      goto done;
    }
  }
  if (windowed) { /* materialised: missing sub-files (sizes recovered below), or array starts */
    if ((rc = read_whole(dnp, c.n_np, L->where, "NumberOfPoints", &b.np, r->err))) goto done;
    for (int k = 0; k < ntopo; k++)
      if ((rc = read_whole(dnc[k], c.n_nc[k], L->where, "NumberOfCells", &b.nc[k], r->err)) ||
          (rc = read_whole(dnci[k], c.n_nci[k], L->where, "NumberOfConnectivityIds", &b.nci[k], r->err)))
        goto done;
  }
  c.np = b.np;
  for (int k = 0; k < ntopo; k++) c.nc[k] = b.nc[k], c.nci[k] = b.nci[k];
  if (nmiss) {
    /* Points, then per topology Offsets/Types and Connectivity */
    if ((rc = vh5_vds_maps(lg, "Points", L->holder, L->where, &bm.m[0], &bm.n[0], r->err))) goto done;
    for (int k = 0; k < ntopo; k++) {
      hid_t g = poly ? tg[k] : lg;
      if ((rc = vh5_vds_maps(g, poly ? "Offsets" : "Types", L->holder, L->where, &bm.m[1 + 2 * k], &bm.n[1 + 2 * k],
                             r->err)) ||
          (rc = vh5_vds_maps(g, "Connectivity", L->holder, L->where, &bm.m[2 + 2 * k], &bm.n[2 + 2 * k], r->err)))
        goto done;
    }
  }
  /* Compute; when an entry is missing, put back the size its (still mapped) rows have
   * and compute again, so the partitions after it keep their true starts. */
  for (int64_t round = 0;; round++) {
    free(sl), free(tp);
    sl = NULL, tp = NULL;
    if ((rc = vh_compute(&c, L->where, &sl, &tp, &nsl, r->err))) goto done;
    if (!nmiss || round > nmiss) break;
    int changed = 0;
    for (int64_t i = 0; i < nsl && !changed; i++) {
      vh_slot *x = &sl[i];
      if (miss[x->entry] != 1) continue;
      int64_t np = recover(&bm, 0, x->point_off);
      if (np != b.np[x->entry]) b.np[x->entry] = np, changed = 1;
      for (int k = 0; k < ntopo; k++) {
        int64_t nc = poly ? recover(&bm, 1 + 2 * k, tp[i].offs_off[k]) : recover(&bm, 1, x->cell_off);
        if (poly && nc > 0) nc--; /* NC+1 Offsets values */
        int64_t nci = recover(&bm, 2 + 2 * k, poly ? tp[i].conn_off[k] : x->conn_off);
        if (nc != b.nc[k][x->entry]) b.nc[k][x->entry] = nc, changed = 1;
        if (nci != b.nci[k][x->entry]) b.nci[k][x->entry] = nci, changed = 1;
      }
    }
    if (!changed) break;
  }

  if (!(r->what & VH_PARTS)) goto done;
  /* The file behind each partition's Points; for an empty partition (no Points rows
   * mapped) the file its NumberOfPoints entry comes from */
  if ((rc = vh5_vds_maps(lg, "Points", L->holder, L->where, &pm, &npm, r->err)) ||
      (rc = vh5_vds_maps(lg, "NumberOfPoints", L->holder, L->where, &cm, &ncm, r->err)))
    goto done;
  if (r->doc->nparts + nsl > r->doc->capparts) { /* one allocation for all of them */
    if (nsl > (1 << 28)) {
      rc = vd_fail(r->err, VD_INVALID, "%s: %lld partitions is more than vdsql handles", L->where, (long long)nsl);
      goto done;
    }
    vh_part *np = realloc(r->doc->parts, (size_t)(r->doc->nparts + nsl) * sizeof *np);
    if (!np) {
      rc = vd_nomem(r->err);
      goto done;
    }
    r->doc->parts = np;
    r->doc->capparts = (int)(r->doc->nparts + nsl);
  }
  int64_t unknown_step = -1; /* starts after an ambiguous missing entry are unknown */
  for (int64_t i = 0; i < nsl; i++) {
    vh_slot *x = &sl[i];
    vh_part *p;
    if (miss[x->entry] == 2) unknown_step = x->step;
    if ((rc = vhr_add_part(r, L, &p))) goto done;
    p->step = x->step;
    p->partition = x->partition;
    if (s.values && x->step < s.nvalues) p->time = s.values[x->step], p->has_time = 1;
    p->point_off = x->point_off;
    p->cell_off = x->cell_off;
    p->conn_off = x->conn_off;
    p->offsets_off = x->offsets_off;
    if (poly) {
      if (!(p->topo = malloc(sizeof *p->topo))) {
        rc = vd_nomem(r->err);
        goto done;
      }
      *p->topo = tp[i];
    }
    if (unknown_step == x->step && (x->partition > 0 || miss[x->entry] == 2)) {
      /* the missing file held several entries of this step: their sizes (and so the
       * starts after the first of them) are not knowable */
      int first = miss[x->entry] == 2 && (x->partition == 0 || miss[sl[i - 1].entry] != 2 || sl[i - 1].step != x->step);
      if (!first) {
        p->point_off = p->cell_off = p->conn_off = p->offsets_off = VH_NULL;
        for (int k = 0; poly && k < ntopo; k++) p->topo->cell_off[k] = p->topo->conn_off[k] = p->topo->offs_off[k] = VH_NULL;
        if (!miss[x->entry]) p->status = "offsets_unknown";
      }
    }
    const vh5_map *mp = npm ? vh5_map_at(pm, npm, x->point_off) : NULL;
    int missing = miss[x->entry] || (mp && !mp->exists && x->np > 0);
    if (missing) {
      p->status = "missing_source";
      for (int k = 0; poly && k < ntopo; k++) p->topo->nc[k] = p->topo->nci[k] = VH_NULL;
      p->source_file = vhr_intern(r->doc, mp && !mp->exists ? mp->resolved : missfile[x->entry] ? missfile[x->entry] : L->holder, &(int){1});
    } else {
      p->n_points = x->np;
      p->n_cells = x->nc;
      p->n_conn = x->nci;
      const vh5_map *me = ncm ? vh5_map_at(cm, ncm, x->entry) : NULL;
      p->source_file = vhr_intern(r->doc, mp && x->np > 0 ? mp->resolved : me ? me->resolved : L->holder, &(int){1});
    }
    if (!p->source_file) {
      rc = vd_nomem(r->err);
      goto done;
    }
  }
done:
  if (dnp >= 0) H5Dclose(dnp);
  for (int k = 0; k < VH_NTOPO; k++) {
    if (tg[k] >= 0) H5Gclose(tg[k]);
    if (dnc[k] >= 0) H5Dclose(dnc[k]);
    if (dnci[k] >= 0) H5Dclose(dnci[k]);
  }
  for (int i = 0; i < 1 + 2 * VH_NTOPO; i++) vh5_maps_free(bm.m[i], bm.n[i]);
  vh5_maps_free(pm, npm);
  vh5_maps_free(cm, ncm);
  if (missfile)
    for (int64_t e = 0; e < c.n_np; e++) free(missfile[e]);
  free(missfile);
  free(miss);
  free(sl), free(tp);
  ugbuf_free(&b);
  close_steps(&s);
  return rc;
}
