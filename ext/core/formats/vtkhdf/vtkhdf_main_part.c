/* vtkhdf_main: what one part file holds, read through the VTKHDF reader (vh_open: Type,
 * partition counts, arrays) plus each mapped dataset's HDF5 type and shape (in the HDF5
 * helper: vtkhdf_main_proxy.c asks for it), and the checks that make a set of parts one
 * dataset. Errors name the part and the difference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vtkhdf_h5.h"
#include "vtkhdf_main_impl.h"
#include "vtkhdf_stream.h"
#include "vtkhdf_vfd.h"

const char *const vm_layout_names[3] = {"partitions", "timesteps", "composite"};

void vm_info_free(vm_info *in) {
  if (!in) return;
  for (int i = 0; i < in->nd; i++) {
    free(in->d[i].path);
    if (in->d[i].type >= 0) H5Tclose(in->d[i].type);
  }
  free(in->d);
  free(in->type);
  free(in);
}

const vm_dset *vm_find(const vm_info *in, const char *path) {
  for (int i = 0; i < in->nd; i++)
    if (!strcmp(in->d[i].path, path)) return &in->d[i];
  return NULL;
}

/* Adds dataset path of g (the part's /VTKHDF) to in->d; expect: the rows it must have
 * for VTK's layout, or -1 for any */
static vd_code add_dset(hid_t g, vm_info *in, const char *file, const char *path, int64_t expect, vd_err *err) {
  char m[256];
  hid_t ds = H5Dopen2(g, path, H5P_DEFAULT);
  if (ds < 0) return vd_fail(err, VD_INVALID, "%s: has no dataset /VTKHDF/%s (HDF5: %s)", file, path, vh5_msg(m, sizeof m));
  hid_t sp = H5Dget_space(ds), ty = H5Dget_type(ds);
  int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
  vm_dset d = {NULL, ty, rank, {0}};
  if (rank > 0) H5Sget_simple_extent_dims(sp, d.dims, NULL);
  if (sp >= 0) H5Sclose(sp);
  H5Dclose(ds);
  vd_code rc = VD_OK;
  if (ty < 0 || rank < 1)
    rc = vd_fail(err, VD_INVALID, "%s: /VTKHDF/%s is not an array", file, path);
  else if (expect >= 0 && (int64_t)d.dims[0] != expect)
    rc = vd_fail(err, VD_INVALID, "%s: /VTKHDF/%s has %lld rows where its counts give %lld", file, path,
                 (long long)d.dims[0], (long long)expect);
  else if (!(d.path = strdup(path)))
    rc = vd_nomem(err);
  else {
    void *p = realloc(in->d, (size_t)(in->nd + 1) * sizeof *in->d);
    if (!p) rc = vd_nomem(err);
    else (in->d = p), in->d[in->nd++] = d;
  }
  if (rc) {
    free(d.path);
    if (ty >= 0) H5Tclose(ty);
  }
  return rc;
}

/* Partition counts summed over the part's rows (one step: the layouts take no temporal
 * parts but composites, which need no counts) */
static vd_code sum_parts(vh_doc *doc, vm_info *in, const char *file, vd_err *err) {
  vh_rows r = {.doc = doc};
  vd_code rc;
  while (!(rc = vh_rows_next(&r, err)) && !r.eof) {
    const vh_part *p = r.cur;
    if (strcmp(p->status, "ok"))
      return vd_fail(err, VD_INVALID, "%s: partition %lld is %s", file, (long long)p->partition, p->status);
    if (p->step != 0) continue;
    in->nparts++;
    in->np += p->n_points == VH_NULL ? 0 : p->n_points;
    if (p->topo) {
      for (int k = 0; k < VH_NTOPO; k++) in->nc[k] += p->topo->nc[k], in->nci[k] += p->topo->nci[k];
    } else {
      in->nc[0] += p->n_cells == VH_NULL ? 0 : p->n_cells;
      in->nci[0] += p->n_conn == VH_NULL ? 0 : p->n_conn;
    }
  }
  return rc;
}

static vd_code geometry(hid_t g, vm_info *in, const char *file, vd_err *err) {
  vd_code rc;
  if (in->nparts < 1) return vd_fail(err, VD_INVALID, "%s: has no partition", file);
  if ((rc = add_dset(g, in, file, "NumberOfPoints", in->nparts, err))) return rc;
  if ((rc = add_dset(g, in, file, "Points", in->np, err))) return rc;
  if (in->kind == VM_UG) {
    if (H5Lexists(g, "FaceConnectivity", H5P_DEFAULT) > 0)
      return vd_fail(err, VD_UNSUPPORTED, "%s: polyhedra (FaceConnectivity) cannot be assembled", file);
    if ((rc = add_dset(g, in, file, "NumberOfCells", in->nparts, err)) ||
        (rc = add_dset(g, in, file, "NumberOfConnectivityIds", in->nparts, err)) ||
        (rc = add_dset(g, in, file, "Types", in->nc[0], err)) ||
        (rc = add_dset(g, in, file, "Offsets", in->nc[0] + in->nparts, err)) ||
        (rc = add_dset(g, in, file, "Connectivity", in->nci[0], err)))
      return rc;
  } else {
    for (int k = 0; k < VH_NTOPO; k++) {
      char p[64];
      static const char *const what[] = {"NumberOfCells", "NumberOfConnectivityIds", "Offsets", "Connectivity"};
      int64_t want[] = {in->nparts, in->nparts, in->nc[k] + in->nparts, in->nci[k]};
      for (int j = 0; j < 4; j++) {
        snprintf(p, sizeof p, "%s/%s", vh_topo_names[k], what[j]);
        if ((rc = add_dset(g, in, file, p, want[j], err))) return rc;
      }
    }
  }
  return VD_OK;
}

vd_code vm_inspect_here(vd_ctx *ctx, vm_layout lay, const char *file, vm_info **out, vd_err *err) {
  *out = NULL;
  vm_info *in = calloc(1, sizeof *in);
  if (!in) return vd_nomem(err);
  vh_doc doc;
  vd_code rc = vh_open(ctx, file, VH_PARTS | VH_ARRAYS, &doc, err);
  if (rc) {
    vh_doc_free(&doc);
    free(in);
    return rc;
  }
  vh_h5scope quiet; /* HDF5 prints its errors otherwise; the core never prints */
  vh_h5_enter(&quiet, NULL, 0, NULL);
  /* the reader's local driver: reads counted in vdsql_stats, regular files only */
  hid_t fapl = vh_local_fapl(ctx);
  if (fapl >= 0) H5Pset_file_locking(fapl, 0, 1);
  hid_t f = fapl >= 0 ? H5Fopen(file, H5F_ACC_RDONLY, fapl) : -1;
  hid_t g = f >= 0 ? H5Gopen2(f, "VTKHDF", H5P_DEFAULT) : -1;
  char m[256];
  if (g < 0) {
    rc = vd_fail(err, VD_INVALID, "%s: has no /VTKHDF group (HDF5: %s)", file, vh5_msg(m, sizeof m));
    goto done;
  }
  in->type = vh5_attr_str(g, "Type");
  if (!in->type && doc.nparts > 0 && doc.parts[0].type) in->type = strdup(doc.parts[0].type);
  if (!in->type) {
    rc = vd_fail(err, VD_INVALID, "%s: /VTKHDF has no Type", file);
    goto done;
  }
  in->version[0] = 1;
  vh5_attr_i64(g, "Version", in->version, 2);
  in->kind = !strcmp(in->type, "UnstructuredGrid") ? VM_UG : !strcmp(in->type, "PolyData") ? VM_POLY
             : !strcmp(in->type, "ImageData") ? VM_IMAGE : VM_OTHER;
  in->nsteps = 1;
  if (H5Lexists(g, "Steps", H5P_DEFAULT) > 0) {
    hid_t s = H5Gopen2(g, "Steps", H5P_DEFAULT);
    in->temporal = 1;
    if (s >= 0) {
      int64_t n;
      if (vh5_attr_i64(s, "NSteps", &n, 1) == 1) in->nsteps = n;
      H5Gclose(s);
    }
  }
  H5Eclear2(H5E_DEFAULT);
  if (lay == VM_COMPOSITE) {
    if (!strcmp(in->type, "PartitionedDataSetCollection") || !strcmp(in->type, "MultiBlockDataSet"))
      rc = vd_fail(err, VD_INVALID, "%s: is a %s; a composite's blocks must be simple datasets", file, in->type);
    goto done;
  }
  if (in->temporal) {
    rc = vd_fail(err, VD_INVALID, "%s: is temporal (has Steps); the %s layout takes single-step files", file,
                 vm_layout_names[lay]);
    goto done;
  }
  if (in->kind == VM_OTHER || (in->kind == VM_IMAGE && lay == VM_PARTITIONS)) {
    rc = vd_fail(err, VD_UNSUPPORTED, "%s: Type %s cannot be assembled as %s (%s)", file, in->type,
                 vm_layout_names[lay],
                 lay == VM_PARTITIONS ? "UnstructuredGrid and PolyData only" : "UnstructuredGrid, PolyData and ImageData only");
    goto done;
  }
  if (in->kind == VM_IMAGE) {
    static const char *const an[] = {"WholeExtent", "Origin", "Spacing", "Direction"};
    static const int off[] = {0, 6, 9, 12}, max[] = {6, 3, 3, 9};
    for (int k = 0; k < 4; k++) in->nimage[k] = vh5_attr_real(g, an[k], in->image + off[k], max[k]);
    H5Eclear2(H5E_DEFAULT);
    if (in->nimage[0] != 6) {
      rc = vd_fail(err, VD_INVALID, "%s: ImageData without a WholeExtent of 6 values", file);
      goto done;
    }
  } else if ((rc = sum_parts(&doc, in, file, err)) || (rc = geometry(g, in, file, err))) {
    goto done;
  }
  for (int i = 0; i < doc.narrays && !rc; i++) {
    const vh_array *a = &doc.arrays[i];
    int pt = !strcmp(a->association, "point"), ce = !strcmp(a->association, "cell");
    if (!pt && !ce) continue; /* FieldData has no per-part layout to concatenate: left out */
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", pt ? "PointData" : "CellData", a->name);
    int64_t cells = 0;
    for (int k = 0; k < VH_NTOPO; k++) cells += in->nc[k];
    rc = add_dset(g, in, file, p, in->kind == VM_IMAGE ? -1 : pt ? in->np : cells, err);
  }
done:
  if (g >= 0) H5Gclose(g);
  if (f >= 0) H5Fclose(f);
  if (fapl >= 0) H5Pclose(fapl);
  vh_h5_leave(&quiet);
  vh_doc_free(&doc);
  if (rc) vm_info_free(in);
  else *out = in;
  return rc;
}

static const char *class_name(hid_t t) {
  switch (H5Tget_class(t)) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "floating-point";
    case H5T_STRING: return "string";
    default: return "non-numeric";
  }
}

vd_code vm_check_pair(vm_layout lay, const vm_member *ref, const vm_member *m, vd_err *err) {
  const vm_info *a = ref->info, *b = m->info;
  if (!strcmp(ref->canon, m->canon))
    return vd_fail(err, VD_CONSTRAINT, "%s: is already a member (a file can be listed once)", m->file);
  if (lay == VM_COMPOSITE) {
    if (a->nsteps != b->nsteps)
      return vd_fail(err, VD_INVALID, "%s: has NSteps %lld where %s has %lld (a composite's blocks share their steps)",
                     m->file, (long long)b->nsteps, ref->file, (long long)a->nsteps);
    return VD_OK;
  }
  if (strcmp(a->type, b->type))
    return vd_fail(err, VD_INVALID, "%s: is a %s where %s is a %s", m->file, b->type, ref->file, a->type);
  if (a->kind == VM_IMAGE) {
    static const char *const an[] = {"WholeExtent", "Origin", "Spacing", "Direction"};
    static const int off[] = {0, 6, 9, 12};
    for (int k = 0; k < 4; k++)
      if (a->nimage[k] != b->nimage[k] || memcmp(a->image + off[k], b->image + off[k], (size_t)a->nimage[k] * sizeof(double)))
        return vd_fail(err, VD_INVALID, "%s: its %s differs from %s's", m->file, an[k], ref->file);
  }
  for (int i = 0; i < b->nd; i++) {
    const vm_dset *x = &b->d[i], *y = vm_find(a, x->path);
    if (!y) continue; /* an array not in every part is left out of the main file, as VTK does */
    if (H5Tget_class(x->type) != H5Tget_class(y->type) || (H5Tget_class(x->type) != H5T_INTEGER && H5Tget_class(x->type) != H5T_FLOAT))
      return vd_fail(err, VD_INVALID, "%s: /VTKHDF/%s is %s where %s has %s", m->file, x->path, class_name(x->type),
                     ref->file, class_name(y->type));
    int dims_differ = x->rank != y->rank;
    /* rows vary between parts; an image's whole shape and every array's components must not */
    for (int k = a->kind == VM_IMAGE ? 0 : 1; k < x->rank && !dims_differ; k++) dims_differ = x->dims[k] != y->dims[k];
    if (dims_differ && a->kind != VM_IMAGE) {
      unsigned long long cx = 1, cy = 1;
      for (int k = 1; k < x->rank; k++) cx *= x->dims[k];
      for (int k = 1; k < y->rank; k++) cy *= y->dims[k];
      if (cx != cy || x->rank != y->rank)
        return vd_fail(err, VD_INVALID, "%s: /VTKHDF/%s has %llu components where %s has %llu", m->file, x->path, cx,
                       ref->file, cy);
    }
    if (dims_differ) {
      char sx[128] = "", sy[128] = "";
      for (int k = 0; k < x->rank; k++) snprintf(sx + strlen(sx), sizeof sx - strlen(sx), "%s%llu", k ? "x" : "", (unsigned long long)x->dims[k]);
      for (int k = 0; k < y->rank; k++) snprintf(sy + strlen(sy), sizeof sy - strlen(sy), "%s%llu", k ? "x" : "", (unsigned long long)y->dims[k]);
      return vd_fail(err, VD_INVALID, "%s: /VTKHDF/%s has shape %s where %s has %s", m->file,
                     x->path, sx, ref->file, sy);
    }
  }
  return VD_OK;
}

/* Lexically cleaned absolute path ("." and ".." folded): for names whose file is gone */
char *vm_clean_path(const char *p) {
  size_t n = strlen(p);
  char *o = malloc(n + 2);
  if (!o) return NULL;
  size_t k = 0;
  const char *s = p;
  while (*s) {
    while (*s == '/') s++;
    const char *e = strchr(s, '/');
    size_t l = e ? (size_t)(e - s) : strlen(s);
    if (l == 0) break;
    if (l == 1 && s[0] == '.') {
    } else if (l == 2 && s[0] == '.' && s[1] == '.') {
      while (k > 0 && o[k - 1] != '/') k--;
      if (k > 0) k--;
    } else {
      o[k++] = '/';
      memcpy(o + k, s, l);
      k += l;
    }
    s += l;
  }
  if (!k) o[k++] = '/';
  o[k] = 0;
  return o;
}

hid_t vm_gcpl(void) {
  hid_t p = H5Pcreate(H5P_GROUP_CREATE);
  if (p >= 0) H5Pset_link_creation_order(p, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  return p;
}

int vm_attr_i64(hid_t obj, const char *name, const int64_t *v, int n) {
  hsize_t d = (hsize_t)n;
  hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &d, NULL);
  hid_t a = sp >= 0 ? H5Acreate2(obj, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT) : -1;
  int rc = a >= 0 && H5Awrite(a, H5T_NATIVE_INT64, v) >= 0 ? 0 : -1;
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  return rc;
}

int vm_attr_type(hid_t obj, const char *type) {
  /* as VTK writes it: UTF-8, sized to the string, no room for a NUL */
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, strlen(type));
  H5Tset_cset(t, H5T_CSET_UTF8);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, "Type", t, sp, H5P_DEFAULT, H5P_DEFAULT);
  int rc = a >= 0 && H5Awrite(a, t, type) >= 0 ? 0 : -1;
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return rc;
}
