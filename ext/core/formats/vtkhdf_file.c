/* Reading a VTKHDF file: header, Assembly tree, per-leaf partitions, arrays and the
 * sub-files behind external links and virtual datasets. HDF5 follows links and VDS by
 * itself; we look at them too, because HDF5 silently returns zeros for a missing VDS
 * source and we must never report those zeros as counts. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../store/store.h"
#include "vtkhdf.h"
#include "vtkhdf_h5.h"
#include "vtkhdf_stream.h"
#include "vtkhdf_vfd.h"

typedef struct rd {
  vh_doc *doc;
  vd_ctx *ctx;
  int remote;
  unsigned what;
  hid_t file;
  const char *path;
  vd_err *err;
} rd;

#define GROW(arr, n, cap)                                              \
  do {                                                                 \
    if ((n) == (cap)) {                                                \
      int nc_ = (cap) ? (cap) * 2 : 16;                                \
      void *p_ = realloc((arr), (size_t)nc_ * sizeof *(arr));          \
      if (!p_) return vd_nomem(r->err);                                \
      (arr) = p_;                                                      \
      (cap) = nc_;                                                     \
    }                                                                  \
  } while (0)

static char *dup0(const char *s) { return s ? strdup(s) : NULL; }

/* The pool the rows' strings point into: consecutive rows mostly repeat the same block,
 * type and file, so looking back a few entries keeps one copy of each. NULL stays NULL;
 * *ok is cleared when memory runs out. */
static const char *intern(vh_doc *d, const char *s, int *ok) {
  if (!s) return NULL;
  for (int i = d->nstrs - 1; i >= 0 && i >= d->nstrs - 8; i--)
    if (!strcmp(d->strs[i], s)) return d->strs[i];
  if (d->nstrs == d->capstrs) {
    int nc = d->capstrs ? d->capstrs * 2 : 16;
    char **p = realloc(d->strs, nc * sizeof *p);
    if (!p) return *ok = 0, NULL;
    d->strs = p;
    d->capstrs = nc;
  }
  char *c = strdup(s);
  if (!c) return *ok = 0, NULL;
  return d->strs[d->nstrs++] = c;
}

static const char *const known_types[] = {"ImageData", "RectilinearGrid", "StructuredGrid", "UnstructuredGrid",
                                          "PolyData", "HyperTreeGrid", "OverlappingAMR", "Table",
                                          "PartitionedDataSetCollection", "MultiBlockDataSet", NULL};

/* The Type of a group, with VTK 9.1's rule for Version 1.x files that have none:
 * WholeExtent means ImageData, anything else UnstructuredGrid. NULL: no Type (an empty
 * composite leaf). */
static vd_code read_type(rd *r, hid_t g, const char *where, char **type) {
  *type = vh5_attr_str(g, "Type");
  H5Eclear2(H5E_DEFAULT);
  if (!*type) {
    int64_t ver[2] = {0, 0};
    if (vh5_attr_i64(g, "Version", ver, 2) >= 1 && ver[0] == 1)
      *type = strdup(H5Aexists(g, "WholeExtent") > 0 ? "ImageData" : "UnstructuredGrid");
    H5Eclear2(H5E_DEFAULT);
    return VD_OK;
  }
  for (int i = 0; known_types[i]; i++)
    if (strcmp(*type, known_types[i]) == 0) return VD_OK;
  vd_code rc = vd_fail(r->err, VD_INVALID, "%s: %s has an unknown VTKHDF Type '%s'", r->path, where, *type);
  free(*type);
  *type = NULL;
  return rc;
}

static int is_composite(const char *t) {
  return t && (!strcmp(t, "PartitionedDataSetCollection") || !strcmp(t, "MultiBlockDataSet"));
}

/* ---------------- partitions ---------------- */

typedef struct names {
  char **v;
  int n, cap;
} names;
static int list_children(hid_t g, int by_name, names *ns);
static void names_free(names *ns);

typedef struct leaf {
  const char *block, *type, *holder; /* holder: the file that holds this leaf's group */
  char where[512];                   /* names the leaf in errors */
} leaf;

static vd_code add_part(rd *r, const leaf *L, vh_part **out) {
  vh_doc *d = r->doc;
  GROW(d->parts, d->nparts, d->capparts);
  vh_part *p = &d->parts[d->nparts++];
  memset(p, 0, sizeof *p);
  int ok = 1;
  p->block = intern(d, L->block, &ok);
  p->type = intern(d, L->type, &ok);
  p->n_points = p->n_cells = p->n_conn = VH_NULL;
  p->point_off = p->cell_off = p->conn_off = p->offsets_off = VH_NULL;
  p->step = p->partition = VH_NULL;
  p->status = "ok";
  *out = p;
  if (!ok) return vd_nomem(r->err);
  vh_seg *g = d->nsegs ? &d->segs[d->nsegs - 1] : NULL;
  if (g && !g->st && g->hi == d->nparts - 1) {
    g->hi++;
    return VD_OK;
  }
  GROW(d->segs, d->nsegs, d->capsegs);
  d->segs[d->nsegs++] = (vh_seg){d->nparts - 1, d->nparts, NULL};
  return VD_OK;
}

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
static vd_code image_parts(rd *r, hid_t lg, const leaf *L) {
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
    if ((rc = add_part(r, L, &p))) break;
    p->step = t;
    p->partition = 0;
    if (s.values) p->time = s.values[t], p->has_time = 1;
    p->source_file = intern(r->doc, L->holder, &(int){1});
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
  la->block = intern(d, L->block, &ok);
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
  char m[256];
  int cap = 0;
  for (int gi = 0; gi < 2 && !rc; gi++) {
    if (H5Lexists(lg, groups[gi], H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      continue;
    }
    hid_t g = H5Gopen2(lg, groups[gi], H5P_DEFAULT);
    if (g < 0) return vd_fail(r->err, VD_INVALID, "%s: cannot open %s (HDF5: %s)", L->where, groups[gi], vh5_msg(m, sizeof m));
    names ns = {0};
    hid_t og = -1;
    if (s->g >= 0 && H5Lexists(s->g, offs[gi], H5P_DEFAULT) > 0) og = H5Gopen2(s->g, offs[gi], H5P_DEFAULT);
    H5Eclear2(H5E_DEFAULT);
    if (list_children(g, 1, &ns) < 0)
      rc = vd_fail(r->err, VD_INVALID, "%s: cannot list %s (HDF5: %s)", L->where, groups[gi], vh5_msg(m, sizeof m));
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
      a->name = intern(d, ns.v[i], &ok);
      a->o = o;
      if (!ok) rc = vd_nomem(r->err);
    }
    names_free(&ns);
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
  in.block = intern(r->doc, L->block, &ok);
  in.type = intern(r->doc, L->type, &ok);
  in.holder = intern(r->doc, L->holder, &ok);
  in.where = L->where;
  in.c = *c;
  in.steps_own[0] = b->po, in.steps_own[1] = b->nop, in.steps_own[2] = b->pto, in.steps_own[3] = b->co,
  in.steps_own[4] = b->cio;
  b->po = b->nop = b->pto = b->co = b->cio = NULL;
  in.values = s->values;
  s->values = NULL;
  in.file = r->file;
  in.n_np = c->n_np;
  for (int k = 0; k < VH_NTOPO; k++) in.n_nc[k] = c->n_nc[k], in.n_nci[k] = c->n_nci[k];
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

static vd_code grid_parts(rd *r, hid_t lg, const leaf *L, int poly) {
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
    if ((rc = add_part(r, L, &p))) goto done;
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
      p->source_file = intern(r->doc, mp && !mp->exists ? mp->resolved : missfile[x->entry] ? missfile[x->entry] : L->holder, &(int){1});
    } else {
      p->n_points = x->np;
      p->n_cells = x->nc;
      p->n_conn = x->nci;
      const vh5_map *me = ncm ? vh5_map_at(cm, ncm, x->entry) : NULL;
      p->source_file = intern(r->doc, mp && x->np > 0 ? mp->resolved : me ? me->resolved : L->holder, &(int){1});
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

/* ---------------- arrays ---------------- */

static const char *type_name(hid_t t, char *buf, size_t n) {
  H5T_class_t cls = H5Tget_class(t);
  size_t sz = H5Tget_size(t);
  if (cls == H5T_INTEGER) snprintf(buf, n, "%sint%zu", H5Tget_sign(t) == H5T_SGN_NONE ? "u" : "", sz * 8);
  else if (cls == H5T_FLOAT) snprintf(buf, n, "float%zu", sz * 8);
  else if (cls == H5T_STRING) snprintf(buf, n, "string");
  else snprintf(buf, n, "other");
  return buf;
}

static herr_t name_cb(hid_t g, const char *name, const H5L_info_t *li, void *data) {
  names *ns = data;
  if (ns->n == ns->cap) {
    int nc = ns->cap ? ns->cap * 2 : 16;
    char **p = realloc(ns->v, nc * sizeof *p);
    if (!p) return -1;
    ns->v = p;
    ns->cap = nc;
  }
  if (!(ns->v[ns->n] = strdup(name))) return -1;
  ns->n++;
  return 0;
}

static void names_free(names *ns) {
  for (int i = 0; i < ns->n; i++) free(ns->v[i]);
  free(ns->v);
  memset(ns, 0, sizeof *ns);
}

/* Children of g in creation order, or name order when creation order is not tracked. */
static int list_children(hid_t g, int by_name, names *ns) {
  hsize_t idx = 0;
  if (!by_name && H5Literate(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, name_cb, ns) >= 0) return 0;
  H5Eclear2(H5E_DEFAULT);
  names_free(ns);
  idx = 0;
  return H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, name_cb, ns) >= 0 ? 0 : -1;
}

static vd_code leaf_arrays(rd *r, hid_t lg, const leaf *L, int image, int temporal) {
  static const char *const groups[] = {"PointData", "CellData", "FieldData", "RowData"};
  static const char *const assoc[] = {"point", "cell", "field", "row"};
  vd_code rc = VD_OK;
  char m[256];
  for (int gi = 0; gi < 4 && !rc; gi++) {
    if (H5Lexists(lg, groups[gi], H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      continue;
    }
    hid_t g = H5Gopen2(lg, groups[gi], H5P_DEFAULT);
    if (g < 0) return vd_fail(r->err, VD_INVALID, "%s: cannot open %s (HDF5: %s)", L->where, groups[gi], vh5_msg(m, sizeof m));
    names ns = {0};
    if (list_children(g, 1, &ns) < 0) {
      rc = vd_fail(r->err, VD_INVALID, "%s: cannot list %s (HDF5: %s)", L->where, groups[gi], vh5_msg(m, sizeof m));
    }
    for (int i = 0; i < ns.n && !rc; i++) {
      hid_t ds = H5Dopen2(g, ns.v[i], H5P_DEFAULT);
      if (ds < 0) { /* a group or a broken link among the arrays is not an array */
        H5Eclear2(H5E_DEFAULT);
        continue;
      }
      hid_t t = H5Dget_type(ds), sp = H5Dget_space(ds);
      int rank = H5Sget_simple_extent_ndims(sp);
      hsize_t dims[H5S_MAX_RANK] = {0};
      if (rank > 0) H5Sget_simple_extent_dims(sp, dims, NULL);
      int64_t total = 1;
      for (int k = 0; k < rank; k++) total *= (int64_t)dims[k];
      /* components: the last dimension of an (n, c) array; ImageData arrays are
       * (z, y, x[, c]) with a leading time axis when temporal */
      int plain = (image ? 3 : 1) + (image && temporal ? 1 : 0);
      int64_t comps = rank > plain && gi != 2 ? (int64_t)dims[rank - 1] : (gi == 2 && rank == 2 ? (int64_t)dims[1] : 1);
      if (comps < 1) comps = 1;
      char tn[32];
      GROW(r->doc->arrays, r->doc->narrays, r->doc->caparrays);
      vh_array *a = &r->doc->arrays[r->doc->narrays++];
      memset(a, 0, sizeof *a);
      a->block = strdup(L->block);
      a->association = strdup(assoc[gi]);
      a->name = strdup(ns.v[i]);
      a->type = strdup(type_name(t, tn, sizeof tn));
      a->components = comps;
      a->tuples = total / comps;
      a->attribute = vh5_attr_str(ds, "Attribute");
      H5Eclear2(H5E_DEFAULT);
      H5Tclose(t);
      H5Sclose(sp);
      H5Dclose(ds);
      vh5_map *mp;
      int nm;
      if ((rc = vh5_vds_maps(g, ns.v[i], L->holder, L->where, &mp, &nm, r->err))) break;
      const char *src = L->holder;
      for (int k = 0; k < nm; k++)
        if (strcmp(mp[k].resolved, mp[0].resolved)) src = NULL; /* several files: see vtkhdf_sources */
      if (nm && src) src = mp[0].resolved;
      a->source_file = dup0(src);
      vh5_maps_free(mp, nm);
      if (!a->block || !a->association || !a->name || !a->type) rc = vd_nomem(r->err);
    }
    names_free(&ns);
    H5Gclose(g);
  }
  return rc;
}

/* ---------------- a leaf ---------------- */

static vd_code do_leaf(rd *r, hid_t lg, leaf *L) {
  vd_code rc = VD_OK;
  if (!L->type) { /* a composite leaf without Type is an empty block */
    if (r->what & VH_PARTS) {
      vh_part *p;
      if ((rc = add_part(r, L, &p))) return rc;
      p->status = "empty_block";
      p->source_file = intern(r->doc, L->holder, &(int){1});
    }
    return VD_OK;
  }
  if (is_composite(L->type)) return vd_fail(r->err, VD_INVALID, "%s: a composite leaf must not be composite itself", L->where);
  int ug = !strcmp(L->type, "UnstructuredGrid"), poly = !strcmp(L->type, "PolyData");
  if (r->what & VH_PARTS) rc = (ug || poly) ? grid_parts(r, lg, L, poly) : image_parts(r, lg, L);
  if (!rc && (r->what & VH_ARRAYS)) {
    int temporal = H5Lexists(lg, "Steps", H5P_DEFAULT) > 0;
    H5Eclear2(H5E_DEFAULT);
    rc = leaf_arrays(r, lg, L, !strcmp(L->type, "ImageData") || !strcmp(L->type, "RectilinearGrid"), temporal);
  }
  return rc;
}

/* ---------------- composites: the Assembly ---------------- */

static vd_code add_block(rd *r, const char *path, const char *name, const char *kind, const char *leafp,
                         const char *type, int64_t index, const char *ext) {
  if (!(r->what & VH_BLOCKS)) return VD_OK;
  vh_doc *d = r->doc;
  GROW(d->blocks, d->nblocks, d->capblocks);
  vh_block *b = &d->blocks[d->nblocks++];
  b->path = strdup(path);
  b->name = strdup(name);
  b->kind = strdup(kind);
  b->leaf = dup0(leafp);
  b->type = dup0(type);
  b->external_file = dup0(ext);
  b->index = index;
  return b->path && b->name && b->kind ? VD_OK : vd_nomem(r->err);
}

static vd_code assembly(rd *r, hid_t root, hid_t g, const char *path, int depth) {
  char m[256];
  if (depth > 64) return vd_fail(r->err, VD_INVALID, "%s: the Assembly is nested too deep at %s", r->path, path);
  names ns = {0};
  if (list_children(g, 0, &ns) < 0) {
    names_free(&ns);
    return vd_fail(r->err, VD_INVALID, "%s: cannot list %s (HDF5: %s)", r->path, path, vh5_msg(m, sizeof m));
  }
  vd_code rc = VD_OK;
  for (int i = 0; i < ns.n && !rc; i++) {
    char child[1024];
    snprintf(child, sizeof child, "%s/%s", path, ns.v[i]);
    int lt = vh5_link_type(g, ns.v[i]);
    if (lt == H5L_TYPE_SOFT) {
      char *target = vh5_soft_target(g, ns.v[i]);
      if (!target) {
        rc = vd_fail(r->err, VD_INVALID, "%s: cannot read the soft link %s", r->path, child);
        break;
      }
      /* the leaf is /VTKHDF/<name>; it may be an external link into <stem>_<name> */
      const char *lname = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
      char *efile = NULL, *eobj = NULL, *resolved = NULL;
      int exists = 1;
      leaf L = {child, NULL, r->path, ""};
      snprintf(L.where, sizeof L.where, "%s: block %s (%s)", r->path, child, target);
      if (vh5_link_type(root, lname) == H5L_TYPE_EXTERNAL && !vh5_external_target(root, lname, &efile, &eobj)) {
        resolved = vh5_resolve(r->path, efile, &exists);
        L.holder = resolved;
        snprintf(L.where, sizeof L.where, "%s: block %s (%s in %s)", r->path, child, eobj, resolved);
      }
      H5Eclear2(H5E_DEFAULT);
      if (!exists) {
        rc = add_block(r, child, ns.v[i], "leaf", target, NULL, VH_NULL, resolved);
        if (!rc && (r->what & VH_PARTS)) {
          vh_part *p;
          if (!(rc = add_part(r, &L, &p))) {
            p->status = "missing_source";
            p->source_file = intern(r->doc, resolved, &(int){1});
          }
        }
      } else {
        hid_t lg = H5Gopen2(g, ns.v[i], H5P_DEFAULT);
        if (lg < 0) {
          rc = vd_fail(r->err, VD_INVALID, "%s: cannot open the leaf %s (HDF5: %s)", r->path, target, vh5_msg(m, sizeof m));
        } else {
          char *type = NULL;
          int64_t index = VH_NULL;
          if (!(rc = read_type(r, lg, target, &type))) {
            if (vh5_attr_i64(lg, "Index", &index, 1) != 1) index = VH_NULL;
            H5Eclear2(H5E_DEFAULT);
            L.type = type;
            rc = add_block(r, child, ns.v[i], "leaf", target, type, index, resolved);
            if (!rc) rc = do_leaf(r, lg, &L);
          }
          free(type);
          H5Gclose(lg);
        }
      }
      free(efile), free(eobj), free(resolved), free(target);
    } else if (lt == H5L_TYPE_HARD) {
      hid_t cg = H5Gopen2(g, ns.v[i], H5P_DEFAULT);
      if (cg < 0) {
        H5Eclear2(H5E_DEFAULT); /* a dataset inside the Assembly means nothing to VTK */
        continue;
      }
      rc = add_block(r, child, ns.v[i], "node", NULL, NULL, VH_NULL, NULL);
      if (!rc) rc = assembly(r, root, cg, child, depth + 1);
      H5Gclose(cg);
    }
  }
  names_free(&ns);
  return rc;
}

/* ---------------- sources: every external link and VDS mapping ---------------- */

static vd_code add_source(rd *r, const char *object, const char *kind, const char *file, const char *resolved,
                          const char *target, int exists) {
  vh_doc *d = r->doc;
  GROW(d->sources, d->nsources, d->capsources);
  vh_source *s = &d->sources[d->nsources++];
  s->object = strdup(object);
  s->kind = strdup(kind);
  s->file = strdup(file);
  s->resolved = strdup(resolved);
  s->target = strdup(target);
  s->exists = exists;
  return s->object && s->kind && s->file && s->resolved && s->target ? VD_OK : vd_nomem(r->err);
}

static vd_code walk_sources(rd *r, hid_t g, const char *path, const char *holder, int depth) {
  char m[256];
  if (depth > 16) return VD_OK; /* external links may form cycles; stop following */
  names ns = {0};
  if (list_children(g, 1, &ns) < 0) {
    names_free(&ns);
    return vd_fail(r->err, VD_INVALID, "%s: cannot list %s (HDF5: %s)", r->path, path, vh5_msg(m, sizeof m));
  }
  vd_code rc = VD_OK;
  for (int i = 0; i < ns.n && !rc; i++) {
    char child[1024];
    snprintf(child, sizeof child, "%s/%s", path, ns.v[i]);
    int lt = vh5_link_type(g, ns.v[i]);
    if (lt == H5L_TYPE_EXTERNAL) {
      char *file = NULL, *obj = NULL;
      if (vh5_external_target(g, ns.v[i], &file, &obj)) {
        rc = vd_fail(r->err, VD_INVALID, "%s: cannot read the external link %s", r->path, child);
        break;
      }
      int exists;
      char *res = vh5_resolve(holder, file, &exists);
      rc = res ? add_source(r, child, "external_link", file, res, obj, exists) : vd_nomem(r->err);
      if (!rc && exists) {
        hid_t cg = H5Gopen2(g, ns.v[i], H5P_DEFAULT);
        if (cg >= 0) {
          rc = walk_sources(r, cg, child, res, depth + 1);
          H5Gclose(cg);
        }
        H5Eclear2(H5E_DEFAULT);
      }
      free(file), free(obj), free(res);
    } else if (lt == H5L_TYPE_HARD) {
      hid_t o = H5Oopen(g, ns.v[i], H5P_DEFAULT);
      if (o < 0) {
        H5Eclear2(H5E_DEFAULT);
        continue;
      }
      H5I_type_t it = H5Iget_type(o);
      H5Oclose(o);
      if (it == H5I_GROUP) {
        hid_t cg = H5Gopen2(g, ns.v[i], H5P_DEFAULT);
        if (cg >= 0) {
          rc = walk_sources(r, cg, child, holder, depth);
          H5Gclose(cg);
        }
      } else if (it == H5I_DATASET) {
        vh5_map *mp;
        int nm;
        if ((rc = vh5_vds_maps(g, ns.v[i], holder, r->path, &mp, &nm, r->err))) break;
        for (int k = 0; k < nm && !rc; k++)
          rc = add_source(r, child, "virtual", mp[k].file, mp[k].resolved, mp[k].dset, mp[k].exists);
        vh5_maps_free(mp, nm);
      }
    }
  }
  names_free(&ns);
  return rc;
}

/* ---------------- open ---------------- */

static vd_code read_all(rd *r) {
  char m[256];
  if (H5Lexists(r->file, "VTKHDF", H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return vd_fail(r->err, VD_INVALID, "%s: no /VTKHDF group: not a VTKHDF file", r->path);
  }
  hid_t root = H5Gopen2(r->file, "VTKHDF", H5P_DEFAULT);
  if (root < 0) return vd_fail(r->err, VD_INVALID, "%s: cannot open /VTKHDF (HDF5: %s)", r->path, vh5_msg(m, sizeof m));
  char *type = NULL;
  vd_code rc = read_type(r, root, "/VTKHDF", &type);
  if (!rc && !type) rc = vd_fail(r->err, VD_INVALID, "%s: /VTKHDF has no Type attribute (and Version is not 1.x)", r->path);
  if (!rc && is_composite(type)) {
    if ((r->what & (VH_PARTS | VH_ARRAYS | VH_BLOCKS | VH_STARTS))) {
      hid_t ag = H5Lexists(root, "Assembly", H5P_DEFAULT) > 0 ? H5Gopen2(root, "Assembly", H5P_DEFAULT) : -1;
      if (ag < 0) {
        rc = vd_fail(r->err, VD_INVALID, "%s: %s without an /VTKHDF/Assembly group", r->path, type);
      } else {
        rc = assembly(r, root, ag, "/Assembly", 0);
        H5Gclose(ag);
      }
    }
  } else if (!rc) {
    leaf L = {"", type, r->path, ""};
    snprintf(L.where, sizeof L.where, "%s: /VTKHDF", r->path);
    rc = do_leaf(r, root, &L);
  }
  if (!rc && (r->what & VH_SOURCES)) rc = walk_sources(r, root, "/VTKHDF", r->path, 0);
  free(type);
  H5Gclose(root);
  return rc;
}

vd_code vh_open(vd_ctx *ctx, const char *url, unsigned what, vh_doc *doc, vd_err *err) {
  memset(doc, 0, sizeof *doc);
  doc->file = -1;
  doc->ctx = ctx;
  int remote = doc->remote = vh_is_url(url);
  if (!remote && strstr(url, "://") && strncasecmp(url, "file://", 7) != 0)
    return vd_fail(err, VD_UNSUPPORTED, "%s: VTKHDF is read from local files and http(s) URLs only so far", url);
  char *path = remote ? strdup(url) : vd_url_path(url);
  if (!path) return vd_nomem(err);
  doc->path = path;
  if (!*path) return vd_fail(err, VD_INVALID, "vtkhdf: the file path is empty");
  if (!remote) {
    if (access(path, R_OK) != 0) return vd_fail(err, VD_NOTFOUND, "%s: no such file (or not readable)", path);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
      return vd_fail(err, VD_INVALID, "%s: is a directory, not a VTKHDF file", path);
  }

  /* HDF5 prints its error stack by default; the core never prints, so switch it off
   * for this thread while we work and carry its messages into ours. */
  H5E_auto2_t old_fn;
  void *old_data;
  H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  char m[256];
  vd_code rc = VD_OK;
  /* remote: every byte through the store (and its counters), sub-files included */
  hid_t fapl = remote ? vh_vfd_fapl(ctx) : H5Pcreate(H5P_FILE_ACCESS);
  /* read-only and unlocked: VDS reads through a read-write handle can return zeros,
   * and another process may be writing the file */
  if (fapl >= 0 && !remote) H5Pset_file_locking(fapl, 0, 1);
  if (remote) vh5_set_remote(ctx), vh_vfd_begin(ctx);
  htri_t ish5 = remote ? 1 : H5Fis_hdf5(path);
  hid_t f = ish5 > 0 && fapl >= 0 ? H5Fopen(path, H5F_ACC_RDONLY, fapl) : -1;
  if (remote && f < 0 && *vh_vfd_last_error()) {
    rc = vd_fail(err, VD_IO, "%s", vh_vfd_last_error());
    H5Eclear2(H5E_DEFAULT);
  } else if (ish5 <= 0) {
    rc = vd_fail(err, VD_INVALID, "%s: not an HDF5 file", path);
    H5Eclear2(H5E_DEFAULT);
  } else if (f < 0) {
    rc = vd_fail(err, VD_INVALID, "%s: cannot open as HDF5 (HDF5: %s)", path, vh5_msg(m, sizeof m));
  } else {
    rd r = {doc, ctx, remote, what, f, path, err};
    rc = read_all(&r);
    int streams = 0;
    for (int i = 0; i < doc->nsegs; i++) streams += doc->segs[i].st != NULL;
    if (streams && !rc) doc->file = f; /* the streamed leaves read from it later */
    else H5Fclose(f);
  }
  if (fapl >= 0) H5Pclose(fapl);
  if (remote) vh5_set_remote(NULL), vh_vfd_end();
  if (remote && doc->file <= 0) vh_vfd_forget(ctx);
  H5Eclear2(H5E_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
  return rc;
}

vd_code vh_rows_next(vh_rows *it, vd_err *err) {
  if (it->bi < it->bn) { /* the common case: the next row of a streamed batch */
    it->cur = &it->buf[it->bi++];
    return VD_OK;
  }
  vh_doc *d = it->doc;
  while (it->seg < d->nsegs) {
    vh_seg *g = &d->segs[it->seg];
    if (!g->st) {
      if (g->lo + it->i < g->hi) {
        it->cur = &d->parts[g->lo + it->i++];
        return VD_OK;
      }
    } else {
      if (it->bi < it->bn) {
        it->cur = &it->buf[it->bi++];
        return VD_OK;
      }
      if (it->pend) { /* the rows made before the error are out: now the error */
        vd_code rc = vd_fail(err, it->pend, "%s", it->pend_msg);
        it->pend = VD_OK;
        return rc;
      }
      if (!it->i) { /* the leaf is not done: its next batch */
        vd_code rc = vh_stream_fill(g->st, it->buf, it->tbuf, VH_BATCH, &it->bn, err);
        it->bi = 0;
        if (it->bn < VH_BATCH) it->i = 1; /* the leaf ended (or failed) with this batch */
        if (rc) {
          if (!it->bn) return rc;
          it->pend = rc;
          snprintf(it->pend_msg, sizeof it->pend_msg, "%s", err->msg);
          vd_err_clear(err);
        }
        if (it->bn) {
          it->cur = &it->buf[it->bi++];
          return VD_OK;
        }
      }
    }
    it->seg++, it->i = 0, it->bi = it->bn = 0;
  }
  it->eof = 1;
  it->cur = NULL;
  return VD_OK;
}

void vh_doc_free(vh_doc *d) {
  for (int i = 0; i < d->nsegs; i++) vh_stream_free(d->segs[i].st);
  free(d->segs);
  if (d->file > 0) { /* 0 is never an HDF5 id: a doc that was never opened */
    vh_h5scope sc;
    vh_h5_enter(&sc, d->ctx, d->remote);
    H5Fclose(d->file);
    vh_h5_leave(&sc);
    if (d->remote) vh_vfd_forget(d->ctx);
  }
  for (int i = 0; i < d->nparts; i++) free(d->parts[i].topo);
  for (int i = 0; i < d->nstrs; i++) free(d->strs[i]);
  free(d->strs);
  for (int i = 0; i < d->narrays; i++) {
    vh_array *a = &d->arrays[i];
    free(a->block), free(a->association), free(a->name), free(a->type), free(a->attribute), free(a->source_file);
  }
  for (int i = 0; i < d->nsources; i++) {
    vh_source *s = &d->sources[i];
    free(s->object), free(s->kind), free(s->file), free(s->resolved), free(s->target);
  }
  for (int i = 0; i < d->nblocks; i++) {
    vh_block *b = &d->blocks[i];
    free(b->path), free(b->name), free(b->kind), free(b->leaf), free(b->type), free(b->external_file);
  }
  for (int i = 0; i < d->nlarrs; i++) {
    vh_leafarrs *la = &d->larrs[i];
    for (int k = 0; k < la->na; k++) free(la->a[k].o);
    free(la->a), free(la->base_pt), free(la->base_cell);
  }
  free(d->parts), free(d->arrays), free(d->sources), free(d->blocks), free(d->larrs), free(d->path);
  memset(d, 0, sizeof *d);
  d->file = -1;
}
