/* vtkhdf_main: the partitions and timesteps layouts. Every dataset of the main file is a
 * virtual dataset whose mappings send each part's rows, whole and in member order, to
 * the same path in its file, so the main file holds what a single-file writer would have
 * concatenated: counts one entry per partition, Offsets NC+1 per partition (checked when
 * the part was inspected), arrays present in every part only. timesteps adds the Steps
 * group, its offsets summed over the step files (spec section 3); an ImageData step file
 * becomes one slice of a leading time axis. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vtkhdf_h5.h"
#include "vtkhdf_main_impl.h"

static int attr_f64(hid_t obj, const char *name, const double *v, int n) {
  hsize_t d = (hsize_t)n;
  hid_t sp = H5Screate_simple(1, &d, NULL);
  hid_t a = sp >= 0 ? H5Acreate2(obj, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT) : -1;
  int rc = a >= 0 && H5Awrite(a, H5T_NATIVE_DOUBLE, v) >= 0 ? 0 : -1;
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  return rc;
}

/* A small real dataset of Steps (n rows, cols columns; cols 0: 1-D) */
static int small_dset(hid_t g, const char *name, hid_t ftype, hid_t mtype, const void *v, hsize_t n, hsize_t cols) {
  hsize_t d[2] = {n, cols};
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t sp = H5Screate_simple(cols ? 2 : 1, d, NULL);
  hid_t ds = H5Dcreate2(g, name, ftype, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  int rc = ds >= 0 && (n * (cols ? cols : 1) == 0 || H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0) ? 0 : -1;
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(sp);
  H5Pclose(lcpl);
  return rc;
}

/* The main file's type for path: the parts' own when they all agree, else the widest of
 * the class (HDF5 converts each source on read) */
static hid_t main_type(vm_member **m, int n, const char *path) {
  hid_t t0 = vm_find(m[0]->info, path)->type;
  for (int i = 1; i < n; i++)
    if (H5Tequal(vm_find(m[i]->info, path)->type, t0) <= 0)
      return H5Tcopy(H5Tget_class(t0) == H5T_INTEGER ? H5T_STD_I64LE : H5T_IEEE_F64LE);
  return H5Tcopy(t0);
}

/* HDF5 reads '%' in a mapping's source file and dataset names as the start of a printf-
 * style pattern (%b: the block number of an unlimited mapping); '%%' is a '%' */
static char *escape_pct(const char *s) {
  size_t n = 0;
  for (const char *p = s; *p; p++) n += *p == '%' ? 2 : 1;
  char *o = malloc(n + 1), *q = o;
  if (!o) return NULL;
  for (const char *p = s; *p; p++) {
    if (*p == '%') *q++ = '%';
    *q++ = *p;
  }
  *q = 0;
  return o;
}

/* One virtual dataset: member i's whole dataset at path becomes rows [row_i, row_i +
 * rows_i) (or, for image steps, slice i of a new leading axis) */
static vd_code vds(hid_t g, vm_member **m, int n, char **names, const char *path, int image, vd_err *err) {
  const vm_dset *d0 = vm_find(m[0]->info, path);
  int rank = d0->rank + (image ? 1 : 0);
  hsize_t dims[H5S_MAX_RANK + 1];
  if (rank > H5S_MAX_RANK) return vd_fail(err, VD_UNSUPPORTED, "%s: /VTKHDF/%s has too many axes", m[0]->file, path);
  if (image) {
    dims[0] = (hsize_t)n;
    memcpy(dims + 1, d0->dims, (size_t)d0->rank * sizeof *dims);
  } else {
    memcpy(dims, d0->dims, (size_t)d0->rank * sizeof *dims);
    dims[0] = 0;
    for (int i = 0; i < n; i++) dims[0] += vm_find(m[i]->info, path)->dims[0];
  }
  char src0[1100], msg[256];
  snprintf(src0, sizeof src0, "/VTKHDF/%s", path);
  char *src = escape_pct(src0);
  if (!src) return vd_nomem(err);
  hid_t type = main_type(m, n, path);
  hid_t vsp = H5Screate_simple(rank, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  int maps = 0, bad = type < 0 || vsp < 0 || dcpl < 0;
  hsize_t row = 0;
  for (int i = 0; i < n && !bad; i++) {
    const vm_dset *d = vm_find(m[i]->info, path);
    hsize_t start[H5S_MAX_RANK + 1] = {0}, count[H5S_MAX_RANK + 1];
    memcpy(count, dims, (size_t)rank * sizeof *count);
    if (image) start[0] = (hsize_t)i, count[0] = 1;
    else start[0] = row, count[0] = d->dims[0];
    row += d->dims[0];
    if (!count[0]) continue; /* nothing to map, as VTK maps nothing for an empty part */
    hid_t ssp = H5Screate_simple(d->rank, d->dims, NULL);
    char *file = escape_pct(names[i]);
    bad = !file || ssp < 0 || H5Sselect_hyperslab(vsp, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
          H5Pset_virtual(dcpl, vsp, file, src, ssp) < 0;
    free(file);
    if (ssp >= 0) H5Sclose(ssp);
    maps++;
  }
  if (vsp >= 0) H5Sselect_all(vsp);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  /* no mapping at all (every part empty here): a plain empty dataset */
  hid_t ds = bad ? -1 : H5Dcreate2(g, path, type, vsp, lcpl, maps ? dcpl : H5P_DEFAULT, H5P_DEFAULT);
  vd_code rc = ds < 0 ? vd_fail(err, VD_IO, "vtkhdf_main: cannot create the virtual dataset /VTKHDF/%s (HDF5: %s)", path,
                                vh5_msg(msg, sizeof msg))
                      : VD_OK;
  if (ds >= 0) H5Dclose(ds);
  H5Pclose(lcpl);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (vsp >= 0) H5Sclose(vsp);
  if (type >= 0) H5Tclose(type);
  free(src);
  return rc;
}

/* The Steps group of a timesteps main file: members are in step order */
static vd_code steps(hid_t g, vm_member **m, int n, int64_t nsteps, vm_dset **arr, int narr, vd_err *err) {
  int image = m[0]->info->kind == VM_IMAGE;
  size_t ns = (size_t)nsteps;
  double *values = calloc(ns, sizeof *values);
  int64_t *po = calloc(ns, 8), *np = calloc(ns, 8), *pt = calloc(ns, 8), *ce = calloc(ns * VH_NTOPO, 8),
          *co = calloc(ns * VH_NTOPO, 8), *cells = calloc(ns, 8);
  vd_code rc = VD_OK;
  char msg[256];
  if (!values || !po || !np || !pt || !ce || !co || !cells) {
    rc = vd_nomem(err);
    goto done;
  }
  int ntopo = m[0]->info->kind == VM_POLY ? VH_NTOPO : 1;
  int64_t sp = 0, sn = 0, sc[VH_NTOPO] = {0}, sci[VH_NTOPO] = {0}, scell = 0;
  for (int i = 0, t = -1; i < n; i++) {
    const vm_info *in = m[i]->info;
    if (m[i]->step != t) { /* a new step starts at the sums so far */
      t = (int)m[i]->step;
      values[t] = m[i]->has_time ? m[i]->time : (double)t;
      po[t] = sp, pt[t] = sn, cells[t] = scell;
      for (int k = 0; k < ntopo; k++) ce[t * ntopo + k] = sc[k], co[t * ntopo + k] = sci[k];
    }
    np[t] += in->nparts;
    sp += in->nparts, sn += in->np;
    for (int k = 0; k < ntopo; k++) sc[k] += in->nc[k], sci[k] += in->nci[k], scell += in->nc[k];
  }
  hid_t s = H5Gcreate2(g, "Steps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int bad = s < 0 || vm_attr_i64(s, "NSteps", &nsteps, 1) < 0 ||
            small_dset(s, "Values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values, ns, 0) < 0;
  if (!image && !bad)
    bad = small_dset(s, "PartOffsets", H5T_STD_I64LE, H5T_NATIVE_INT64, po, ns, 0) < 0 ||
          small_dset(s, "NumberOfParts", H5T_STD_I64LE, H5T_NATIVE_INT64, np, ns, 0) < 0 ||
          small_dset(s, "PointOffsets", H5T_STD_I64LE, H5T_NATIVE_INT64, pt, ns, 0) < 0 ||
          small_dset(s, "CellOffsets", H5T_STD_I64LE, H5T_NATIVE_INT64, ce, ns, (hsize_t)ntopo) < 0 ||
          small_dset(s, "ConnectivityIdOffsets", H5T_STD_I64LE, H5T_NATIVE_INT64, co, ns, (hsize_t)ntopo) < 0;
  /* per array: where each step's rows start (an image: its slice of the time axis) */
  for (size_t t = 0; image && t < ns; t++) pt[t] = cells[t] = (int64_t)t;
  for (int a = 0; a < narr && !bad; a++) {
    int point = !strncmp(arr[a]->path, "PointData/", 10);
    char p[1100];
    snprintf(p, sizeof p, "%sDataOffsets/%s", point ? "Point" : "Cell", strchr(arr[a]->path, '/') + 1);
    bad = small_dset(s, p, H5T_STD_I64LE, H5T_NATIVE_INT64, point ? pt : cells, ns, 0) < 0;
  }
  if (bad) rc = vd_fail(err, VD_IO, "vtkhdf_main: cannot write the Steps group (HDF5: %s)", vh5_msg(msg, sizeof msg));
  if (s >= 0) H5Gclose(s);
done:
  free(values), free(po), free(np), free(pt), free(ce), free(co), free(cells);
  return rc;
}

vd_code vm_write_vds(vm_table *t, hid_t f, vm_member **m, int n, char **names, vd_err *err) {
  const vm_info *in0 = m[0]->info;
  int image = in0->kind == VM_IMAGE, temporal = t->layout == VM_TIMESTEPS;
  int64_t nsteps = temporal ? m[n - 1]->step + 1 : 1;
  char msg[256];
  if (image && nsteps != n)
    return vd_fail(err, VD_INVALID, "vtkhdf_main: an ImageData is one piece: each step takes one file, and %lld steps have %d",
                   (long long)nsteps, n);
  hid_t gcpl = vm_gcpl();
  hid_t g = H5Gcreate2(f, "VTKHDF", H5P_DEFAULT, gcpl, H5P_DEFAULT);
  if (gcpl >= 0) H5Pclose(gcpl);
  if (g < 0) return vd_fail(err, VD_IO, "vtkhdf_main: cannot create /VTKHDF (HDF5: %s)", vh5_msg(msg, sizeof msg));
  /* the highest Version among the parts; Steps need 2.0 */
  int64_t ver[2] = {in0->version[0], in0->version[1]};
  for (int i = 1; i < n; i++) {
    const int64_t *v = m[i]->info->version;
    if (v[0] > ver[0] || (v[0] == ver[0] && v[1] > ver[1])) ver[0] = v[0], ver[1] = v[1];
  }
  if (temporal && ver[0] < 2) ver[0] = 2, ver[1] = 0;
  int bad = vm_attr_i64(g, "Version", ver, 2) < 0 || vm_attr_type(g, in0->type) < 0;
  if (image && !bad) {
    int64_t ext[6];
    for (int k = 0; k < 6; k++) ext[k] = (int64_t)in0->image[k];
    bad = vm_attr_i64(g, "WholeExtent", ext, 6) < 0 || (in0->nimage[1] && attr_f64(g, "Origin", in0->image + 6, in0->nimage[1]) < 0) ||
          (in0->nimage[2] && attr_f64(g, "Spacing", in0->image + 9, in0->nimage[2]) < 0) ||
          (in0->nimage[3] && attr_f64(g, "Direction", in0->image + 12, in0->nimage[3]) < 0);
  }
  vd_code rc = bad ? vd_fail(err, VD_IO, "vtkhdf_main: cannot write /VTKHDF's attributes (HDF5: %s)", vh5_msg(msg, sizeof msg)) : VD_OK;
  vm_dset **arr = calloc((size_t)in0->nd + 1, sizeof *arr);
  int narr = 0;
  if (!rc && !arr) rc = vd_nomem(err);
  for (int k = 0; k < in0->nd && !rc; k++) {
    const char *p = in0->d[k].path;
    int every = 1;
    for (int i = 1; i < n && every; i++) every = vm_find(m[i]->info, p) != NULL;
    if (!every) continue; /* an array some part lacks: left out, as VTK's writer does */
    if (!strncmp(p, "PointData/", 10) || !strncmp(p, "CellData/", 9)) arr[narr++] = &in0->d[k];
    rc = vds(g, m, n, names, p, image, err);
  }
  if (!rc && temporal) rc = steps(g, m, n, nsteps, arr, narr, err);
  free(arr);
  H5Gclose(g);
  return rc;
}
