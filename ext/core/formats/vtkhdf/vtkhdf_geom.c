/* VH_GEOM: how long a UnstructuredGrid or PolyData leaf's geometry arrays are (Points,
 * Types, Offsets, Connectivity), from their extents alone: vdsql_check sets each
 * partition's slice against them, because VTK's reader trusts the counts and reads past
 * the end (or HDF5 fills a virtual dataset's gap with zeros) without a word. */
#include "vtkhdf_read.h"

/* dims[0] of loc/name; VH_NULL when there is no such dataset or it is a scalar */
static int64_t rows_of(hid_t loc, const char *name) {
  if (loc < 0 || H5Lexists(loc, name, H5P_DEFAULT) <= 0) return H5Eclear2(H5E_DEFAULT), VH_NULL;
  hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
  if (ds < 0) return H5Eclear2(H5E_DEFAULT), VH_NULL;
  hid_t sp = H5Dget_space(ds);
  hsize_t d[H5S_MAX_RANK];
  int rank = sp >= 0 ? H5Sget_simple_extent_dims(sp, d, NULL) : -1;
  if (sp >= 0) H5Sclose(sp);
  H5Dclose(ds);
  H5Eclear2(H5E_DEFAULT);
  return rank >= 1 && d[0] <= (hsize_t)INT64_MAX ? (int64_t)d[0] : VH_NULL;
}

vd_code vhr_geom(rd *r, hid_t lg, const leaf *L, int poly) {
  vh_doc *d = r->doc;
  GROW(d->geoms, d->ngeoms, d->capgeoms);
  vh_geom *g = &d->geoms[d->ngeoms];
  int ok = 1;
  g->block = vhr_intern(d, L->block, &ok);
  if (!ok) return vd_nomem(r->err);
  g->poly = poly;
  g->points = rows_of(lg, "Points");
  g->types = poly ? VH_NULL : rows_of(lg, "Types");
  for (int k = 0; k < VH_NTOPO; k++) g->offs[k] = g->conn[k] = VH_NULL;
  for (int k = 0; k < (poly ? VH_NTOPO : 1); k++) {
    hid_t tg = lg;
    if (poly) {
      tg = H5Lexists(lg, vh_topo_names[k], H5P_DEFAULT) > 0 ? H5Gopen2(lg, vh_topo_names[k], H5P_DEFAULT) : -1;
      H5Eclear2(H5E_DEFAULT);
    }
    g->offs[k] = rows_of(tg, "Offsets");
    g->conn[k] = rows_of(tg, "Connectivity");
    if (poly && tg >= 0) H5Gclose(tg);
  }
  d->ngeoms++;
  return VD_OK;
}
