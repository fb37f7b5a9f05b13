/* vtkhdf_main: the members of an existing main file, read back from what it stores, so
 * a table re-created over it (a new connection) lists and keeps them: the external links
 * of /VTKHDF in creation order (composite), or the mappings of one virtual dataset in
 * row order (NumberOfPoints; an ImageData's first array), each naming one member, with
 * the step found from Steps/PartOffsets (or the slice of the time axis) and the time
 * from Steps/Values. A file that is not such a main file is refused, never replaced. The
 * file on disk may be anyone's: HDF5 reads it in the helper (vm_load_scan, asked for by
 * vm_load through vm_load_read); this process only adds the members it names. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/store.h"
#include "vtkhdf_h5.h"
#include "vtkhdf_main_impl.h"
#include "vtkhdf_stream.h"
#include "vtkhdf_vfd.h"

/* A member named by a stored name: canonical when the file is there, else cleaned */
static vd_code add(vm_table *t, const char *stored, int64_t step, double time, int has_time, const char *block,
                   vd_err *err) {
  char *j = malloc(strlen(t->dir) + strlen(stored) + 2), rp[PATH_MAX];
  if (!j) return vd_nomem(err);
  if (stored[0] == '/') strcpy(j, stored);
  else sprintf(j, "%s/%s", t->dir, stored);
  vm_member *m = calloc(1, sizeof *m);
  if (m) {
    m->canon = realpath(j, rp) ? strdup(rp) : vm_clean_path(j);
    /* as the user named the main file's directory, so names look like what was inserted */
    if ((m->file = malloc(strlen(t->gdir) + strlen(stored) + 1))) sprintf(m->file, "%s%s", stored[0] == '/' ? "" : t->gdir, stored);
  }
  free(j);
  if (!m || !m->file || !m->canon || (block && !(m->block = strdup(block)))) {
    if (m) free(m->file), free(m->canon), free(m->block), free(m);
    return vd_nomem(err);
  }
  m->id = t->next_id++;
  m->step = step, m->time = time, m->has_time = has_time;
  vm_list *l = &t->done;
  if (l->n == l->cap) {
    int nc = l->cap ? l->cap * 2 : 16;
    void *p = realloc(l->v, (size_t)nc * sizeof *l->v);
    if (!p) return free(m->file), free(m->canon), free(m->block), free(m), vd_nomem(err);
    l->v = p, l->cap = nc;
  }
  m->refs = 1;
  l->v[l->n++] = m;
  return VD_OK;
}

/* What the main file names, as read in the helper */
typedef struct found_list {
  vm_found *v;
  int n, cap;
} found_list;

static vd_code keep_found(found_list *l, const char *stored, int64_t step, double time, int has_time, const char *block,
                     vd_err *err) {
  if (l->n == l->cap) {
    int nc = l->cap ? l->cap * 2 : 16;
    void *p = realloc(l->v, (size_t)nc * sizeof *l->v);
    if (!p) return vd_nomem(err);
    l->v = p, l->cap = nc;
  }
  vm_found *f = &l->v[l->n];
  *f = (vm_found){strdup(stored), step, time, has_time, block ? strdup(block) : NULL};
  if (!f->stored || (block && !f->block)) return free(f->stored), free(f->block), vd_nomem(err);
  l->n++;
  return VD_OK;
}

typedef struct {
  found_list *l;
  vd_err *err;
  vd_code rc;
} walk;

static herr_t on_link(hid_t g, const char *name, const H5L_info_t *li, void *arg) {
  walk *w = arg;
  if (li->type != H5L_TYPE_EXTERNAL) return 0; /* Assembly */
  char *file, *obj;
  if (vh5_external_target(g, name, &file, &obj)) return 0;
  w->rc = keep_found(w->l, file, VD_INT_NULL, 0, 0, name, w->err);
  free(file), free(obj);
  return w->rc ? 1 : 0;
}

typedef struct {
  int64_t start;
  char *file;
} map;
static int by_start(const void *a, const void *b) {
  int64_t x = ((const map *)a)->start, y = ((const map *)b)->start;
  return x < y ? -1 : x > y;
}

/* The first array of PointData or CellData (an ImageData has no counts) */
static int first_array(hid_t g, char *out, size_t n) {
  static const char *const gs[] = {"PointData", "CellData"};
  for (int k = 0; k < 2; k++) {
    hid_t d = H5Lexists(g, gs[k], H5P_DEFAULT) > 0 ? H5Gopen2(g, gs[k], H5P_DEFAULT) : -1;
    H5G_info_t gi;
    if (d >= 0 && H5Gget_info(d, &gi) >= 0 && gi.nlinks > 0) {
      char name[512];
      ssize_t l = H5Lget_name_by_idx(d, ".", H5_INDEX_NAME, H5_ITER_INC, 0, name, sizeof name, H5P_DEFAULT);
      H5Gclose(d);
      if (l > 0 && (size_t)l < sizeof name) {
        snprintf(out, n, "%s/%s", gs[k], name);
        return 0;
      }
      continue;
    }
    if (d >= 0) H5Gclose(d);
  }
  return -1;
}

/* A whole small 1-D Steps dataset as int64 or double (*n values) */
static void *read_steps(hid_t s, const char *name, hid_t mtype, size_t each, int64_t *n) {
  *n = 0;
  hid_t d = H5Lexists(s, name, H5P_DEFAULT) > 0 ? H5Dopen2(s, name, H5P_DEFAULT) : -1;
  if (d < 0) return NULL;
  hid_t sp = H5Dget_space(d);
  hssize_t k = H5Sget_simple_extent_npoints(sp);
  void *v = k > 0 && k < (1 << 26) ? malloc((size_t)k * each) : NULL;
  if (v && H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) free(v), v = NULL;
  if (v) *n = k;
  H5Sclose(sp);
  H5Dclose(d);
  return v;
}

static vd_code load_vds(found_list *fl, vm_layout lay, const char *mp, hid_t g, vd_err *err) {
  char path[600];
  int image = H5Lexists(g, "NumberOfPoints", H5P_DEFAULT) <= 0;
  if (!image) strcpy(path, "NumberOfPoints");
  else if (first_array(g, path, sizeof path))
    return vd_fail(err, VD_INVALID, "vtkhdf_main: %s holds no dataset vtkhdf_main maps; refusing to replace it", mp);
  hid_t d = H5Dopen2(g, path, H5P_DEFAULT);
  hid_t dcpl = d >= 0 ? H5Dget_create_plist(d) : -1;
  size_t nm = 0;
  if (dcpl < 0 || H5Pget_layout(dcpl) != H5D_VIRTUAL || H5Pget_virtual_count(dcpl, &nm) < 0) {
    if (dcpl >= 0) H5Pclose(dcpl);
    if (d >= 0) H5Dclose(d);
    return vd_fail(err, VD_INVALID, "vtkhdf_main: %s is not a multi-file main file (/VTKHDF/%s is not virtual); refusing to replace it",
                   mp, path);
  }
  map *ms = calloc(nm ? nm : 1, sizeof *ms);
  vd_code rc = ms ? VD_OK : vd_nomem(err);
  for (size_t i = 0; i < nm && !rc; i++) {
    ssize_t l = H5Pget_virtual_filename(dcpl, i, NULL, 0);
    hid_t vs = H5Pget_virtual_vspace(dcpl, i);
    hsize_t lo[H5S_MAX_RANK], hi[H5S_MAX_RANK];
    if (l < 0 || vs < 0 || H5Sget_select_bounds(vs, lo, hi) < 0 || !(ms[i].file = malloc((size_t)l + 1)))
      rc = vd_fail(err, VD_INVALID, "vtkhdf_main: %s: cannot read the mappings of /VTKHDF/%s", mp, path);
    else {
      H5Pget_virtual_filename(dcpl, i, ms[i].file, (size_t)l + 1);
      /* stored with each '%' doubled (vtkhdf_main_vds.c) */
      char *o = ms[i].file;
      for (const char *q = ms[i].file; *q; q++) {
        *o++ = *q;
        if (q[0] == '%' && q[1] == '%') q++;
      }
      *o = 0;
      ms[i].start = (int64_t)lo[0];
    }
    if (vs >= 0) H5Sclose(vs);
  }
  H5Pclose(dcpl);
  H5Dclose(d);
  if (!rc) qsort(ms, nm, sizeof *ms, by_start);
  int64_t npo = 0, nnp = 0, nval = 0;
  int64_t *po = NULL, *np = NULL;
  double *val = NULL;
  if (!rc && lay == VM_TIMESTEPS) {
    hid_t s = H5Gopen2(g, "Steps", H5P_DEFAULT);
    if (s >= 0) {
      po = read_steps(s, "PartOffsets", H5T_NATIVE_INT64, 8, &npo);
      np = read_steps(s, "NumberOfParts", H5T_NATIVE_INT64, 8, &nnp);
      val = read_steps(s, "Values", H5T_NATIVE_DOUBLE, 8, &nval);
      H5Gclose(s);
    }
    if (!val || (!image && (!po || !np || npo != nnp)))
      rc = vd_fail(err, VD_INVALID, "vtkhdf_main: %s: its Steps group is not one vtkhdf_main wrote", mp);
  }
  for (size_t i = 0; i < nm && !rc; i++) {
    int64_t step = VD_INT_NULL;
    if (lay == VM_TIMESTEPS) {
      if (image) step = ms[i].start;
      else
        for (int64_t k = 0; k < npo; k++)
          if (ms[i].start >= po[k] && ms[i].start < po[k] + np[k]) step = k;
      if (step == VD_INT_NULL || step >= nval) {
        rc = vd_fail(err, VD_INVALID, "vtkhdf_main: %s: mapping of %s lies in no step", mp, ms[i].file);
        break;
      }
    }
    rc = keep_found(fl, ms[i].file, step, step == VD_INT_NULL ? 0 : val[step], step != VD_INT_NULL, NULL, err);
  }
  for (size_t i = 0; ms && i < nm; i++) free(ms[i].file);
  free(ms), free(po), free(np), free(val);
  return rc;
}

static herr_t any_external(hid_t g, const char *name, const H5L_info_t *li, void *arg) {
  (void)g, (void)name, (void)arg;
  return li->type == H5L_TYPE_EXTERNAL;
}

/* Whether /VTKHDF is what vtkhdf_main writes: external links (composite), or virtual
 * datasets (NumberOfPoints, else the first array) */
static int is_main(hid_t g, vm_layout found) {
  if (found == VM_COMPOSITE) {
    hsize_t idx = 0;
    return H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, any_external, NULL) > 0;
  }
  char path[600];
  if (H5Lexists(g, "NumberOfPoints", H5P_DEFAULT) > 0) strcpy(path, "NumberOfPoints");
  else if (first_array(g, path, sizeof path)) return 0;
  hid_t d = H5Dopen2(g, path, H5P_DEFAULT);
  hid_t dcpl = d >= 0 ? H5Dget_create_plist(d) : -1;
  int v = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL;
  if (dcpl >= 0) H5Pclose(dcpl);
  if (d >= 0) H5Dclose(d);
  H5Eclear2(H5E_DEFAULT);
  return v;
}

vd_code vm_load_scan(vd_ctx *ctx, const char *mp, const char *shown, vm_layout lay, vm_found **out, int *n, vd_err *err) {
  found_list fl = {0};
  vd_code rc = VD_OK;
  *out = NULL, *n = 0;
  vh_h5scope quiet; /* HDF5 prints its errors otherwise; the core never prints */
  vh_h5_enter(&quiet, NULL, 0, NULL);
  /* the reader's local driver: reads counted in vdsql_stats, regular files only */
  hid_t fapl = vh_local_fapl(ctx);
  if (fapl >= 0) H5Pset_file_locking(fapl, 0, 1);
  hid_t f = H5Fopen(mp, H5F_ACC_RDONLY, fapl);
  hid_t g = f >= 0 && H5Lexists(f, "VTKHDF", H5P_DEFAULT) > 0 ? H5Gopen2(f, "VTKHDF", H5P_DEFAULT) : -1;
  char *type = g >= 0 ? vh5_attr_str(g, "Type") : NULL;
  int has_steps = g >= 0 && H5Lexists(g, "Steps", H5P_DEFAULT) > 0;
  vm_layout found = type && !strcmp(type, "PartitionedDataSetCollection") ? VM_COMPOSITE : has_steps ? VM_TIMESTEPS : VM_PARTITIONS;
  if (f < 0) rc = vd_fail(err, VD_INVALID, "vtkhdf_main: %s exists and is not an HDF5 file; refusing to replace it", shown);
  else if (!type) rc = vd_fail(err, VD_INVALID, "vtkhdf_main: %s exists and is not a VTKHDF file; refusing to replace it", shown);
  else if (!is_main(g, found))
    rc = vd_fail(err, VD_INVALID, "vtkhdf_main: %s is not a multi-file main file (a %s%s); refusing to replace it", shown,
                 type, found == VM_COMPOSITE ? " without external links" : " without virtual datasets");
  else if (found != lay)
    rc = vd_fail(err, VD_INVALID, "vtkhdf_main: %s holds a '%s' assembly, not '%s'", shown, vm_layout_names[found],
                 vm_layout_names[lay]);
  else if (lay == VM_COMPOSITE) {
    walk w = {&fl, err, VD_OK};
    hsize_t idx = 0;
    /* creation order, as VTK reads it; name order when it was not tracked */
    if (H5Literate(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, on_link, &w) < 0 && !w.rc) {
      H5Eclear2(H5E_DEFAULT);
      idx = 0;
      H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, on_link, &w);
    }
    rc = w.rc;
  } else
    rc = load_vds(&fl, lay, shown, g, err);
  free(type);
  if (g >= 0) H5Gclose(g);
  if (f >= 0) H5Fclose(f);
  H5Pclose(fapl);
  vh_h5_leave(&quiet);
  if (rc) vm_found_free(fl.v, fl.n);
  else *out = fl.v, *n = fl.n;
  return rc;
}

vd_code vm_load(vm_table *t, vd_err *err) {
  char *mp = malloc(strlen(t->dir) + strlen(t->base) + 2);
  if (!mp) return vd_nomem(err);
  sprintf(mp, "%s/%s", strcmp(t->dir, "/") ? t->dir : "", t->base);
  struct stat st;
  if (stat(mp, &st)) { /* a new main file, made at the first commit */
    free(mp);
    return VD_OK;
  }
  vm_found *f = NULL;
  int n = 0;
  vd_code rc = vd_file_check_regular(mp, err);
  if (!rc) rc = vm_load_read(t->ctx, mp, t->path, t->layout, &f, &n, err);
  for (int i = 0; i < n && !rc; i++) rc = add(t, f[i].stored, f[i].step, f[i].time, f[i].has_time, f[i].block, err);
  vm_found_free(f, n);
  free(mp);
  return rc;
}
