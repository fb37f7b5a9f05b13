/* libFuzzer target: the readers of OverlappingAMR, HyperTreeGrid, Table and
 * StructuredGrid leaves (vtkhdf_types.c) on hostile values. The input decides the Type,
 * Version (2.2 singular AMR names or plural), NSteps, and every count, box extent,
 * tree depth and Steps offset, mostly small, sometimes negative or near INT64_MAX; a
 * small VTKHDF file of them is written with the HDF5 C API (HDF5's own structures stay
 * valid: this fuzzes vdsql's arithmetic, not HDF5) and read for every relation that
 * uses these readers, walking every row. A crash, a sanitizer finding or an HDF5 id
 * left open aborts. */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/vtkhdf/vtkhdf.h"
#include "fuzz_input.h"

static int64_t value(in *s) { return hostile_value(s, 11); }

static void ints(hid_t loc, const char *name, in *s, int64_t n, int cols) {
  int64_t *v = malloc((size_t)(n * cols + 1) * sizeof *v);
  for (int64_t i = 0; i < n * cols; i++) v[i] = value(s);
  hsize_t d[2] = {(hsize_t)n, (hsize_t)cols};
  hid_t sp = H5Screate_simple(cols > 1 ? 2 : 1, d, NULL);
  hid_t ds = H5Dcreate2(loc, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (n) H5Dwrite(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  H5Dclose(ds), H5Sclose(sp);
  free(v);
}

static void attr(hid_t g, const char *name, hid_t t, int n, const void *v) {
  hsize_t d = (hsize_t)n;
  hid_t sp = H5Screate_simple(1, &d, NULL), a = H5Acreate2(g, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, t, v);
  H5Aclose(a), H5Sclose(sp);
}

static void type_attr(hid_t g, const char *type) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, strlen(type));
  hid_t sp = H5Screate(H5S_SCALAR), a = H5Acreate2(g, "Type", t, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, t, type);
  H5Aclose(a), H5Sclose(sp), H5Tclose(t);
}

static hid_t grp(hid_t loc, const char *name) { return H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT); }

static void write_file(const char *path, in *s) {
  static const char *const types[] = {"OverlappingAMR", "HyperTreeGrid", "Table", "StructuredGrid"};
  unsigned flags = byte(s);
  const char *type = types[flags % 4];
  int v22 = (flags & 4) != 0, nsteps = (int)(flags >> 4) % 4; /* 0: no Steps */
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), g = grp(f, "VTKHDF");
  int64_t ver[2] = {2, v22 ? 2 : 8};
  attr(g, "Version", H5T_NATIVE_INT64, 2, ver);
  type_attr(g, type);
  double three[3] = {0.5, -1, 2};
  attr(g, "Origin", H5T_NATIVE_DOUBLE, 3, three);
  hid_t st = -1;
  if (nsteps) {
    st = grp(g, "Steps");
    int64_t ns = nsteps + (int)(byte(s) % 3) - 1; /* sometimes off by one */
    attr(st, "NSteps", H5T_NATIVE_INT64, 1, &ns);
  }
  if (!strcmp(type, "OverlappingAMR")) {
    int nlev = (int)byte(s) % 3;
    for (int k = 0; k < nlev; k++) {
      char n[32];
      snprintf(n, sizeof n, "Level%d", k);
      hid_t lv = grp(g, n);
      attr(lv, "Spacing", H5T_NATIVE_DOUBLE, 3, three);
      ints(lv, "AMRBox", s, byte(s) % 6, byte(s) % 8 == 0 ? 5 : 6);
      hid_t pd = grp(lv, "PointData");
      ints(pd, "A", s, 3, 1);
      H5Gclose(pd);
      if (st >= 0 && byte(s) % 8) {
        snprintf(n, sizeof n, "Level%d", k);
        hid_t sl = grp(st, n);
        ints(sl, v22 ? "NumberOfAMRBox" : "NumberOfAMRBoxes", s, nsteps, 1);
        ints(sl, v22 ? "AMRBoxOffset" : "AMRBoxOffsets", s, nsteps, 1);
        hid_t po = grp(sl, v22 ? "PointDataOffset" : "PointDataOffsets");
        ints(po, "A", s, nsteps - (byte(s) % 5 == 0), 1);
        H5Gclose(po), H5Gclose(sl);
      }
      H5Gclose(lv);
    }
  } else if (!strcmp(type, "HyperTreeGrid")) {
    int np = (int)byte(s) % 4 + (nsteps ? nsteps : 0), nt = (int)byte(s) % 12, nd = (int)byte(s) % 20;
    static const char *const per_part[] = {"NumberOfTrees", "NumberOfCells", "NumberOfDepths", "DescriptorsSize"};
    for (int i = 0; i < 4; i++) ints(g, per_part[i], s, np, 1);
    ints(g, "TreeIds", s, nt, 1);
    ints(g, "DepthPerTree", s, nt, 1);
    ints(g, "NumberOfCellsPerTreeDepth", s, nd, 1);
    if (byte(s) % 2) ints(g, "Mask", s, byte(s) % 8, 1);
    if (st >= 0) {
      static const char *const offs[] = {"PartOffsets", "NumberOfParts", "TreeIdsOffsets", "DepthPerTreeOffsets",
                                         "NumberOfCellsPerTreeDepthOffsets", "DescriptorsOffsets", "MaskOffsets"};
      for (int i = 0; i < 7; i++)
        if (byte(s) % 8) ints(st, offs[i], s, nsteps, 1);
    }
  } else if (!strcmp(type, "Table")) {
    ints(g, "NumberOfRows", s, byte(s) % 4, 1);
    hid_t rd = grp(g, "RowData");
    ints(rd, "C", s, 4, 1);
    H5Gclose(rd);
    if (st >= 0) {
      hid_t ro = grp(st, "RowDataOffsets");
      ints(ro, "C", s, nsteps, 1);
      H5Gclose(ro);
    }
  } else {
    int64_t dims[3] = {value(s), value(s), value(s)};
    attr(g, "Dimensions", H5T_NATIVE_INT64, 3, dims);
    if (st >= 0) ints(st, "PointOffsets", s, nsteps, 1);
  }
  if (st >= 0) H5Gclose(st);
  H5Gclose(g), H5Fclose(f);
}

static vd_ctx *ctx;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  ctx = vd_ctx_new();
  snprintf(path, sizeof path, "/tmp/vdsql-fuzz-types.%d.vtkhdf", (int)getpid());
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  in s = {data, size};
  write_file(path, &s);
  ssize_t before = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
  static const unsigned whats[] = {VH_PARTS, VH_AMR, VH_TREES, VH_ARRAYS};
  for (size_t w = 0; w < sizeof whats / sizeof *whats; w++) {
    vh_doc doc;
    vd_err err;
    if (vh_open(ctx, path, whats[w], &doc, &err) == VD_OK) {
      vh_rows it = {&doc};
      if (whats[w] == VH_PARTS)
        while (!vh_rows_next(&it, &err) && !it.eof) (void)it.cur->n_points;
    }
    vh_doc_free(&doc);
  }
  if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) != before) abort();
  unlink(path);
  return 0;
}
