/* The helpers every part of the VTKHDF reader shares (vtkhdf_read.h), at the bottom of
 * the reader so that grid, tree, types and file call down into them and never into each
 * other: interned strings, a group's Type and WholeExtent, a new partition row, a
 * group's children, a leaf's data group and its Steps. */
#include <stdlib.h>
#include <string.h>

#include "vtkhdf_read.h"
#include "vtkhdf_shape.h"

static const char *const known_types[] = {"ImageData", "RectilinearGrid", "StructuredGrid", "UnstructuredGrid",
                                          "PolyData", "HyperTreeGrid", "OverlappingAMR", "Table",
                                          "PartitionedDataSetCollection", "MultiBlockDataSet", NULL};

char *vhr_dup0(const char *s) { return s ? strdup(s) : NULL; }

/* The pool the rows' strings point into: consecutive rows mostly repeat the same block,
 * type and file, so looking back a few entries keeps one copy of each. NULL stays NULL;
 * *ok is cleared when memory runs out. */
const char *vhr_intern(vh_doc *d, const char *s, int *ok) {
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

/* The Type of a group, with VTK 9.1's rule for Version 1.x files that have none:
 * WholeExtent means ImageData, anything else UnstructuredGrid. NULL: no Type (an empty
 * composite leaf). */
vd_code vhr_read_type(rd *r, hid_t g, const char *where, char **type) {
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
  vd_code rc = vd_fail(r->err, VD_INVALID, "%s: %s has an unknown VTKHDF Type '%s'", r->name, where, *type);
  free(*type);
  *type = NULL;
  return rc;
}

vd_code vhr_whole_extent(rd *r, hid_t g, const char *where, int64_t ext[6], int *has) {
  double v[6];
  *has = vh5_attr_i64(g, "WholeExtent", ext, 6) == 6;
  if (!*has && vh5_attr_real(g, "WholeExtent", v, 6) == 6) {
    int bad = vh_whole_numbers(v, 6, ext);
    H5Eclear2(H5E_DEFAULT);
    if (bad >= 0)
      return vd_fail(r->err, VD_INVALID, "%s: WholeExtent[%d] is %.17g, not a whole number (an extent counts points)",
                     where, bad, v[bad]);
    *has = 1;
  }
  H5Eclear2(H5E_DEFAULT);
  return VD_OK;
}

vd_code vhr_add_part(rd *r, const leaf *L, vh_part **out) {
  vh_doc *d = r->doc;
  GROW(d->parts, d->nparts, d->capparts);
  vh_part *p = &d->parts[d->nparts++];
  memset(p, 0, sizeof *p);
  int ok = 1;
  p->block = vhr_intern(d, L->block, &ok);
  p->type = vhr_intern(d, L->type, &ok);
  p->n_points = p->n_cells = p->n_conn = VH_NULL;
  p->point_off = p->cell_off = p->conn_off = p->offsets_off = p->n_trees = VH_NULL;
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

void vhr_names_free(names *ns) {
  for (int i = 0; i < ns->n; i++) free(ns->v[i]);
  free(ns->v);
  memset(ns, 0, sizeof *ns);
}

vd_code vhr_children(rd *r, hid_t g, int by_name, const char *prefix, const char *name, names *ns) {
  hsize_t idx = 0;
  memset(ns, 0, sizeof *ns);
  if (!by_name && H5Literate(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, name_cb, ns) >= 0) return VD_OK;
  H5Eclear2(H5E_DEFAULT);
  vhr_names_free(ns);
  idx = 0;
  if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, name_cb, ns) >= 0) return VD_OK;
  char m[256];
  vhr_names_free(ns);
  return vd_fail(r->err, VD_INVALID, "%s: cannot list %s (HDF5: %s)", prefix, name, vh5_msg(m, sizeof m));
}

vd_code vhr_data_group(rd *r, hid_t lg, const leaf *L, const char *name, hid_t *g, names *ns) {
  memset(ns, 0, sizeof *ns);
  *g = -1;
  if (H5Lexists(lg, name, H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return VD_OK;
  }
  char m[256];
  if ((*g = H5Gopen2(lg, name, H5P_DEFAULT)) < 0)
    return vd_fail(r->err, VD_INVALID, "%s: cannot open %s (HDF5: %s)", L->where, name, vh5_msg(m, sizeof m));
  vd_code rc = vhr_children(r, *g, 1, L->where, name, ns);
  if (rc) H5Gclose(*g), *g = -1;
  return rc;
}

vd_code vhr_open_steps(rd *r, hid_t lg, const leaf *L, steps *s) {
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

void vhr_close_steps(steps *s) {
  if (s->g >= 0) H5Gclose(s->g);
  free(s->values);
}
