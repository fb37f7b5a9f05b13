/* Every HDF5 id vdsql opens is closed on every path: vh_open on every generated VTKHDF
 * file (good, multi-file, missing sub-files, broken) and every shared fixture, for every
 * relation's needs, leaves no file, group, dataset, attribute or named datatype open
 * (H5Fget_obj_count over all files; HDF5 1.10 has no public count of dataspaces and
 * property lists, which the ASan runs cover as leaks). */
#include <dirent.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#include "formats/vtkhdf/vtkhdf.h"
#include "tap.h"

static const unsigned kinds[] = {H5F_OBJ_FILE, H5F_OBJ_GROUP, H5F_OBJ_DATASET, H5F_OBJ_ATTR, H5F_OBJ_DATATYPE};
#define NK (int)(sizeof kinds / sizeof *kinds)

static void counts(ssize_t *n) {
  for (int i = 0; i < NK; i++) n[i] = H5Fget_obj_count(H5F_OBJ_ALL, kinds[i]);
}

static int run_dir(vd_ctx *ctx, const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int files = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    const char *n = e->d_name;
    size_t l = strlen(n);
    if (!((l > 7 && !strcmp(n + l - 7, ".vtkhdf")) || (l > 4 && !strcmp(n + l - 4, ".hdf")) || (l > 3 && !strcmp(n + l - 3, ".h5"))))
      continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, n);
    ssize_t before[NK], after[NK];
    counts(before);
    int opened = 0;
    static const unsigned whats[] = {VH_PARTS, VH_ARRAYS, VH_SOURCES, VH_BLOCKS, VH_PARTS | VH_STARTS, VH_AMR, VH_TREES};
    for (size_t w = 0; w < sizeof whats / sizeof *whats; w++) {
      unsigned what = whats[w];
      /* streamed rows open datasets at the first row: free before it, after one row and
       * after all of them */
      for (int rows = 0; rows < ((what & VH_PARTS) ? 3 : 1); rows++) {
        vh_doc doc;
        vd_err err;
        int good = vh_open(ctx, path, what, &doc, &err) == VD_OK;
        opened += good;
        vh_rows it = {&doc};
        for (int i = 0; good && rows && (rows == 2 || i < 1); i++)
          if (vh_rows_next(&it, &err) || it.eof) break;
        vh_doc_free(&doc);
      }
    }
    counts(after);
    int same = 1;
    for (int i = 0; i < NK; i++) same &= before[i] == after[i];
    ok(same, "%s (%s): no HDF5 id left open after every relation's read", n, opened ? "read" : "refused");
    if (!same)
      for (int i = 0; i < NK; i++)
        if (before[i] != after[i]) diag("object kind %u: %zd open before, %zd after", kinds[i], before[i], after[i]);
    files++;
  }
  closedir(d);
  return files;
}

int main(void) {
  vd_ctx *ctx = vd_ctx_new();
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  const char *td = getenv("VDSQL_TESTDATA");
  char dir[4096];
  if (td && *td) {
    snprintf(dir, sizeof dir, "%s/vtkhdf", td);
    if (!run_dir(ctx, dir)) skip(1, "no VTKHDF files in $VDSQL_TESTDATA/vtkhdf (scripts/run-tests generates them)");
  } else {
    skip(1, "VDSQL_TESTDATA not set: generated VTKHDF files not checked (scripts/run-tests sets it)");
  }
  snprintf(dir, sizeof dir, "%s/fixtures/vtkhdf", shared_dir());
  if (!run_dir(ctx, dir)) fixture_missing(1, "HDF5 ids left open after reading the VTKHDF fixtures");
  vd_ctx_free(ctx);
  return done_testing();
}
