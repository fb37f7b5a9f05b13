/* Writes the VTKHDF test files, with the HDF5 C API, following ../shared/spec/vtkhdf.md
 * (sections 2-5): single-file UnstructuredGrid (static, temporal, 1-D CellOffsets),
 * ImageData, composites (ordered, unordered, empty block), every multi-file layout VTK's
 * writer produces (UseExternalPartitions: VDS into <stem>_part<k>; UseExternalComposite:
 * external links to <stem>_<Block>, whose blocks may be partitioned again;
 * UseExternalTimeSteps: <stem>_<t> step files behind a main Steps group) with relative
 * or absolute source names, and broken files.
 *   usage: mkvtkhdf DIR [abs]   (abs: store absolute source names, as VTK does when its
 *                                FileName is absolute)
 *          mkvtkhdf DIR bench NPARTS NSTEPS   (bench/vtkhdf's big temporal file)
 *          mkvtkhdf DIR big   (the big files of tests/vtkhdf/stream.t)
 *          mkvtkhdf DIR huge  (tests/vtkhdf/hostile.t: extents of 1e9 entries, NSteps 2^30,
 *                              a layout of 1000 part files)
 *          mkvtkhdf DIR urls SAME OTHER   (tests/vtkhdf/hostile.t: sub-files named by http
 *                                          URLs; SAME is the directory URL the files are
 *                                          served from, OTHER the root of another host)
 * The hostile layouts (a broken sub-file, a name that is a URL) get a <stem>.expect.json:
 * their rows as the generator knows them, one array per partition. */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *dir;
static int absolute;

static void die(const char *what) {
  fprintf(stderr, "mkvtkhdf: %s failed\n", what);
  exit(1);
}
#define CK(x)                  \
  do {                         \
    if ((x) < 0) die(#x);      \
  } while (0)

static char *path_of(const char *name) {
  static char buf[8][4096];
  static int k;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

/* the name a main file stores for a sub-file: its basename, or its absolute path */
static const char *stored(const char *name) {
  if (!absolute) return name;
  static char buf[4][4096];
  static int k;
  k = (k + 1) % 4;
  char *real = realpath(dir, NULL);
  snprintf(buf[k], sizeof buf[k], "%s/%s", real ? real : dir, name);
  free(real);
  return buf[k];
}

static hid_t ordered_gcpl(void) {
  hid_t p = H5Pcreate(H5P_GROUP_CREATE);
  CK(H5Pset_link_creation_order(p, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED));
  return p;
}

static hid_t new_file(const char *name) {
  hid_t f = H5Fcreate(path_of(name), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  CK(f);
  return f;
}

static hid_t group(hid_t loc, const char *name, int ordered) {
  hid_t p = ordered ? ordered_gcpl() : H5P_DEFAULT;
  hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, p, H5P_DEFAULT);
  CK(g);
  if (ordered) H5Pclose(p);
  return g;
}

/* VTK writes Type as a fixed-length string of exactly its length (no NUL) */
static void attr_type(hid_t g, const char *type) {
  hid_t t = H5Tcopy(H5T_C_S1);
  CK(H5Tset_size(t, strlen(type)));
  CK(H5Tset_cset(t, H5T_CSET_UTF8));
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(g, "Type", t, sp, H5P_DEFAULT, H5P_DEFAULT);
  CK(a);
  CK(H5Awrite(a, t, type));
  H5Aclose(a), H5Sclose(sp), H5Tclose(t);
}

static void attr_ints(hid_t g, const char *name, hid_t type, int n, const long long *v) {
  hsize_t d = n;
  hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &d, NULL);
  hid_t a = H5Acreate2(g, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
  CK(a);
  CK(H5Awrite(a, H5T_NATIVE_LLONG, v));
  H5Aclose(a), H5Sclose(sp);
}

static void header(hid_t g, const char *type, int major, int minor) {
  long long v[2] = {major, minor};
  attr_ints(g, "Version", H5T_STD_I64LE, 2, v);
  if (type) attr_type(g, type);
}

/* a dataset of n rows (x cols) of type ft, written from native long long or double */
static void dset(hid_t loc, const char *name, hid_t ft, int64_t n, int cols, const void *v, int is_double) {
  hsize_t d[2] = {(hsize_t)n, (hsize_t)cols};
  hid_t sp = H5Screate_simple(cols > 1 ? 2 : 1, d, NULL);
  hid_t ds = H5Dcreate2(loc, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CK(ds);
  if (n) CK(H5Dwrite(ds, is_double ? H5T_NATIVE_DOUBLE : H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
  H5Dclose(ds), H5Sclose(sp);
}
static void di64(hid_t loc, const char *name, int64_t n, const long long *v) { dset(loc, name, H5T_STD_I64LE, n, 1, v, 0); }

/* ---- an UnstructuredGrid with nparts partitions (one step) ---- */
typedef struct ug {
  int nparts;
  long long np[8], nc[8], nci[8];
} ug;

static long long sum(const long long *v, int n) {
  long long s = 0;
  for (int i = 0; i < n; i++) s += v[i];
  return s;
}

/* Points/Types/Offsets/Connectivity/arrays of the partitions, concatenated. seed makes
 * every partition's values distinct, so a wrong slice shows. */
static void ug_body(hid_t g, const ug *u, double seed) {
  long long tp = sum(u->np, u->nparts), tc = sum(u->nc, u->nparts), tci = sum(u->nci, u->nparts);
  double *pts = calloc(tp * 3 + 1, sizeof *pts);
  long long *types = calloc(tc + 1, sizeof *types), *offs = calloc(tc + u->nparts + 1, sizeof *offs),
            *conn = calloc(tci + 1, sizeof *conn), *ids = calloc(tc + 1, sizeof *ids);
  double *pres = calloc(tp + 1, sizeof *pres);
  long long ip = 0, ic = 0, io = 0, ik = 0;
  for (int p = 0; p < u->nparts; p++) {
    for (long long i = 0; i < u->np[p]; i++, ip++) {
      pts[ip * 3] = seed + p, pts[ip * 3 + 1] = i, pts[ip * 3 + 2] = 0;
      pres[ip] = seed * 100 + p;
    }
    long long per = u->nc[p] ? u->nci[p] / u->nc[p] : 0;
    offs[io++] = 0; /* every partition stores NC+1 values, restarting at 0 */
    for (long long c = 0; c < u->nc[p]; c++, ic++) {
      types[ic] = 10; /* VTK_TETRA */
      ids[ic] = p * 1000 + c;
      offs[io++] = (c + 1 == u->nc[p]) ? u->nci[p] : (c + 1) * per;
    }
    for (long long k = 0; k < u->nci[p]; k++) conn[ik++] = u->np[p] ? k % u->np[p] : 0;
  }
  di64(g, "NumberOfPoints", u->nparts, u->np);
  di64(g, "NumberOfCells", u->nparts, u->nc);
  di64(g, "NumberOfConnectivityIds", u->nparts, u->nci);
  dset(g, "Points", H5T_IEEE_F64LE, tp, 3, pts, 1);
  dset(g, "Types", H5T_STD_U8LE, tc, 1, types, 0);
  di64(g, "Offsets", io, offs);
  di64(g, "Connectivity", tci, conn);
  hid_t pd = group(g, "PointData", 0), cd = group(g, "CellData", 0);
  dset(pd, "Pressure", H5T_IEEE_F32LE, tp, 1, pres, 1);
  di64(cd, "CellId", tc, ids);
  /* the optional Attribute marker (2.6) */
  hid_t ds = H5Dopen2(cd, "CellId", H5P_DEFAULT);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, strlen("GlobalIds"));
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(ds, "Attribute", t, sp, H5P_DEFAULT, H5P_DEFAULT);
  CK(H5Awrite(a, t, "GlobalIds"));
  H5Aclose(a), H5Sclose(sp), H5Tclose(t), H5Dclose(ds);
  H5Gclose(pd), H5Gclose(cd);
  free(pts), free(types), free(offs), free(conn), free(ids), free(pres);
}

static void ug_file(const char *name, const ug *u, double seed) {
  hid_t f = new_file(name), g = group(f, "VTKHDF", 1);
  header(g, "UnstructuredGrid", 2, 3);
  ug_body(g, u, seed);
  H5Gclose(g), H5Fclose(f);
}

/* ---- virtual datasets: main dataset rows [vstart, vstart+n) <- rows [sstart, ..) of the
 * same path in a sub-file ---- */
typedef struct vmap {
  const char *file;
  int64_t vstart, sstart, n;
} vmap;

static void vds(hid_t loc, const char *dpath, const char *name, hid_t ft, int64_t total, int cols, const vmap *m, int nm) {
  hsize_t d[2] = {(hsize_t)total, (hsize_t)cols};
  int rank = cols > 1 ? 2 : 1;
  hid_t vsp = H5Screate_simple(rank, d, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  for (int i = 0; i < nm; i++) {
    if (!m[i].n) continue; /* VTK maps nothing for an empty part */
    hsize_t vs[2] = {(hsize_t)m[i].vstart, 0}, cnt[2] = {(hsize_t)m[i].n, (hsize_t)cols}, ss[2] = {(hsize_t)m[i].sstart, 0};
    hsize_t sd[2] = {(hsize_t)(m[i].sstart + m[i].n), (hsize_t)cols};
    CK(H5Sselect_hyperslab(vsp, H5S_SELECT_SET, vs, NULL, cnt, NULL));
    hid_t ssp = H5Screate_simple(rank, sd, NULL);
    CK(H5Sselect_hyperslab(ssp, H5S_SELECT_SET, ss, NULL, cnt, NULL));
    CK(H5Pset_virtual(dcpl, vsp, stored(m[i].file), dpath, ssp));
    H5Sclose(ssp);
  }
  CK(H5Sselect_none(vsp));
  hid_t ds = H5Dcreate2(loc, name, ft, vsp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CK(ds);
  H5Dclose(ds), H5Pclose(dcpl), H5Sclose(vsp);
}

/* The main file of UseExternalPartitions for g at group path gpath: every dataset is a
 * VDS over the part files (each a one-partition UG). */
static void ug_vds_main(hid_t g, const char *gpath, const ug *u, char files[][256]) {
  vmap m[8];
  char dp[512];
  long long tp = 0, tc = 0, tci = 0, to = 0;
#define MAPS(field_n, field_s, extra)                                                     \
  do {                                                                                     \
    long long acc = 0;                                                                     \
    for (int p = 0; p < u->nparts; p++) {                                                  \
      long long cnt = (field_n);                                                           \
      m[p] = (vmap){files[p], acc, 0, cnt};                                                \
      acc += cnt;                                                                          \
    }                                                                                      \
    field_s = acc;                                                                         \
  } while (0)
  MAPS(1, to, 0);
  snprintf(dp, sizeof dp, "%s/NumberOfPoints", gpath);
  vds(g, dp, "NumberOfPoints", H5T_STD_I64LE, u->nparts, 1, m, u->nparts);
  snprintf(dp, sizeof dp, "%s/NumberOfCells", gpath);
  vds(g, dp, "NumberOfCells", H5T_STD_I64LE, u->nparts, 1, m, u->nparts);
  snprintf(dp, sizeof dp, "%s/NumberOfConnectivityIds", gpath);
  vds(g, dp, "NumberOfConnectivityIds", H5T_STD_I64LE, u->nparts, 1, m, u->nparts);
  MAPS(u->np[p], tp, 0);
  snprintf(dp, sizeof dp, "%s/Points", gpath);
  vds(g, dp, "Points", H5T_IEEE_F64LE, tp, 3, m, u->nparts);
  hid_t pd = group(g, "PointData", 0), cd = group(g, "CellData", 0);
  snprintf(dp, sizeof dp, "%s/PointData/Pressure", gpath);
  vds(pd, dp, "Pressure", H5T_IEEE_F32LE, tp, 1, m, u->nparts);
  MAPS(u->nc[p], tc, 0);
  snprintf(dp, sizeof dp, "%s/Types", gpath);
  vds(g, dp, "Types", H5T_STD_U8LE, tc, 1, m, u->nparts);
  snprintf(dp, sizeof dp, "%s/CellData/CellId", gpath);
  vds(cd, dp, "CellId", H5T_STD_I64LE, tc, 1, m, u->nparts);
  MAPS(u->nc[p] ? u->nc[p] + 1 : 0, to, 0);
  snprintf(dp, sizeof dp, "%s/Offsets", gpath);
  vds(g, dp, "Offsets", H5T_STD_I64LE, to, 1, m, u->nparts);
  MAPS(u->nci[p], tci, 0);
  snprintf(dp, sizeof dp, "%s/Connectivity", gpath);
  vds(g, dp, "Connectivity", H5T_STD_I64LE, tci, 1, m, u->nparts);
  H5Gclose(pd), H5Gclose(cd);
#undef MAPS
}

/* UseExternalPartitions: stem.vtkhdf + stem_part<k>.vtkhdf; names[k], when given and
 * not empty, is the name stored for part k instead of its file name (a URL, ...) */
static void ext_partitions_named(const char *stem, const ug *u, char names[][256]) {
  char files[8][256], name[256];
  for (int p = 0; p < u->nparts; p++) {
    snprintf(files[p], sizeof files[p], "%s_part%d.vtkhdf", stem, p);
    ug one = {1, {u->np[p]}, {u->nc[p]}, {u->nci[p]}};
    ug_file(files[p], &one, p);
    if (names && names[p][0]) snprintf(files[p], sizeof files[p], "%s", names[p]);
  }
  snprintf(name, sizeof name, "%s.vtkhdf", stem);
  hid_t f = new_file(name), g = group(f, "VTKHDF", 1);
  header(g, "UnstructuredGrid", 2, 3);
  ug_vds_main(g, "/VTKHDF", u, files);
  H5Gclose(g), H5Fclose(f);
}
static void ext_partitions(const char *stem, const ug *u) { ext_partitions_named(stem, u, NULL); }

/* UseExternalComposite on a PartitionedDataSetCollection: /VTKHDF/<Block> is an external
 * link to <stem>_<Block>.vtkhdf:/VTKHDF; BlockB is partitioned again
 * (<stem>_BlockB_part<k>, as UseExternalPartitions forces on composites). */
static void ext_composite(const char *stem) {
  char a[256], b[256], name[256], files[8][256];
  ug ua = {1, {4}, {1}, {4}}, ub = {2, {5, 3}, {2, 1}, {8, 4}};
  snprintf(a, sizeof a, "%s_BlockA.vtkhdf", stem);
  hid_t f = new_file(a), g = group(f, "VTKHDF", 1);
  header(g, "UnstructuredGrid", 2, 3);
  long long idx = 0;
  attr_ints(g, "Index", H5T_STD_I64LE, 1, &idx); /* written through the link: lands in the sub-file */
  ug_body(g, &ua, 10);
  H5Gclose(g), H5Fclose(f);
  for (int p = 0; p < ub.nparts; p++) {
    snprintf(files[p], sizeof files[p], "%s_BlockB_part%d.vtkhdf", stem, p);
    ug one = {1, {ub.np[p]}, {ub.nc[p]}, {ub.nci[p]}};
    ug_file(files[p], &one, 20 + p);
  }
  snprintf(b, sizeof b, "%s_BlockB.vtkhdf", stem);
  f = new_file(b), g = group(f, "VTKHDF", 1);
  header(g, "UnstructuredGrid", 2, 3);
  idx = 1;
  attr_ints(g, "Index", H5T_STD_I64LE, 1, &idx);
  ug_vds_main(g, "/VTKHDF", &ub, files);
  H5Gclose(g), H5Fclose(f);

  snprintf(name, sizeof name, "%s.vtkhdf", stem);
  f = new_file(name), g = group(f, "VTKHDF", 1);
  header(g, "PartitionedDataSetCollection", 2, 3);
  CK(H5Lcreate_external(stored(a), "/VTKHDF", g, "BlockA", H5P_DEFAULT, H5P_DEFAULT));
  CK(H5Lcreate_external(stored(b), "/VTKHDF", g, "BlockB", H5P_DEFAULT, H5P_DEFAULT));
  hid_t as = group(g, "Assembly", 1), grp = group(as, "Solid", 1);
  CK(H5Lcreate_soft("/VTKHDF/BlockA", grp, "BlockA", H5P_DEFAULT, H5P_DEFAULT));
  CK(H5Lcreate_soft("/VTKHDF/BlockB", as, "BlockB", H5P_DEFAULT, H5P_DEFAULT));
  H5Gclose(grp), H5Gclose(as), H5Gclose(g), H5Fclose(f);
}

/* UseExternalTimeSteps: <stem>_<t>.vtkhdf are plain 2-partition UG files; the main file
 * has a real Steps group (offsets summed over the step files) and VDS for the data. */
static void ext_steps(const char *stem) {
  enum { NS = 3, NP = 2 };
  ug st[NS] = {{NP, {4, 3}, {1, 1}, {4, 4}}, {NP, {5, 3}, {2, 1}, {8, 4}}, {NP, {6, 3}, {2, 0}, {8, 0}}};
  char files[NS][256], name[256];
  for (int t = 0; t < NS; t++) {
    snprintf(files[t], sizeof files[t], "%s_%d.vtkhdf", stem, t);
    ug_file(files[t], &st[t], t * 10);
  }
  snprintf(name, sizeof name, "%s.vtkhdf", stem);
  hid_t f = new_file(name), g = group(f, "VTKHDF", 1);
  header(g, "UnstructuredGrid", 2, 3);
  vmap m[NS];
  long long acc;
#define STEPMAP(dsname, ft, cols, cnt_expr)                                       \
  do {                                                                             \
    acc = 0;                                                                       \
    for (int t = 0; t < NS; t++) {                                                 \
      long long c_ = (cnt_expr);                                                   \
      m[t] = (vmap){files[t], acc, 0, c_};                                         \
      acc += c_;                                                                   \
    }                                                                              \
    vds(g, "/VTKHDF/" dsname, dsname, ft, acc, cols, m, NS);                       \
  } while (0)
  STEPMAP("NumberOfPoints", H5T_STD_I64LE, 1, NP);
  STEPMAP("NumberOfCells", H5T_STD_I64LE, 1, NP);
  STEPMAP("NumberOfConnectivityIds", H5T_STD_I64LE, 1, NP);
  STEPMAP("Points", H5T_IEEE_F64LE, 3, sum(st[t].np, NP));
  STEPMAP("Types", H5T_STD_U8LE, 1, sum(st[t].nc, NP));
  STEPMAP("Offsets", H5T_STD_I64LE, 1, sum(st[t].nc, NP) + NP);
  STEPMAP("Connectivity", H5T_STD_I64LE, 1, sum(st[t].nci, NP));
#undef STEPMAP
  hid_t s = group(g, "Steps", 1);
  long long ns = NS;
  attr_ints(s, "NSteps", H5T_STD_I64LE, 1, &ns);
  double vals[NS] = {0.0, 0.5, 1.0};
  dset(s, "Values", H5T_IEEE_F64LE, NS, 1, vals, 1);
  long long po[NS], nparts[NS], pto[NS], co[NS], cio[NS];
  long long a = 0, b = 0, c = 0;
  for (int t = 0; t < NS; t++) {
    po[t] = t * NP, nparts[t] = NP, pto[t] = a, co[t] = b, cio[t] = c;
    a += sum(st[t].np, NP), b += sum(st[t].nc, NP), c += sum(st[t].nci, NP);
  }
  di64(s, "PartOffsets", NS, po);
  di64(s, "NumberOfParts", NS, nparts);
  di64(s, "PointOffsets", NS, pto);
  /* CellOffsets in the (NSteps, NTopo) form VTK writes; ConnectivityIdOffsets 1-D */
  {
    hsize_t d[2] = {NS, 1};
    hid_t sp = H5Screate_simple(2, d, NULL);
    hid_t ds = H5Dcreate2(s, "CellOffsets", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CK(H5Dwrite(ds, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, co));
    H5Dclose(ds), H5Sclose(sp);
  }
  di64(s, "ConnectivityIdOffsets", NS, cio); /* 1-D: accepted too */
  H5Gclose(s), H5Gclose(g), H5Fclose(f);
}

/* Temporal single-file UG, moving geometry: 3 steps x 2 partitions, CellOffsets 1-D. */
static void ug_temporal(void) {
  ug all = {6, {4, 3, 5, 3, 6, 3}, {1, 1, 2, 1, 2, 0}, {4, 4, 8, 4, 8, 0}};
  hid_t f = new_file("ug_temporal.vtkhdf"), g = group(f, "VTKHDF", 1);
  header(g, "UnstructuredGrid", 2, 3);
  ug_body(g, &all, 0);
  hid_t s = group(g, "Steps", 1);
  long long ns = 3;
  attr_ints(s, "NSteps", H5T_STD_I32LE, 1, &ns);
  double vals[3] = {0.0, 0.25, 0.5};
  dset(s, "Values", H5T_IEEE_F32LE, 3, 1, vals, 1);
  long long po[3] = {0, 2, 4}, np[3] = {2, 2, 2}, pto[3] = {0, 7, 15}, co[3] = {0, 2, 5}, cio[3] = {0, 8, 20};
  di64(s, "PartOffsets", 3, po);
  di64(s, "NumberOfParts", 3, np);
  di64(s, "PointOffsets", 3, pto);
  di64(s, "CellOffsets", 3, co);
  di64(s, "ConnectivityIdOffsets", 3, cio);
  H5Gclose(s), H5Gclose(g), H5Fclose(f);
}

/* Temporal PolyData like warping_spheres: points move (stored per step), connectivity is
 * stored once (CellOffsets and ConnectivityIdOffsets stay 0) while PartOffsets grows and
 * every topology keeps one count entry per (step, part); empty topologies store one
 * Offsets value per part. Checks PolyData's own Offsets rule. */
static void poly_temporal(void) {
  enum { NS = 2, NP = 2 };
  static const long long np[NP] = {4, 3};
  /* per topology (Vertices, Lines, Polygons, Strips), per part */
  static const long long nc[4][NP] = {{0, 0}, {1, 0}, {2, 1}, {0, 0}}, nci[4][NP] = {{0, 0}, {2, 0}, {6, 3}, {0, 0}};
  static const char *const topo[4] = {"Vertices", "Lines", "Polygons", "Strips"};
  hid_t f = new_file("poly.vtkhdf"), g = group(f, "VTKHDF", 1);
  header(g, "PolyData", 2, 3);
  long long cnt[NS * NP];
  for (int e = 0; e < NS * NP; e++) cnt[e] = np[e % NP];
  di64(g, "NumberOfPoints", NS * NP, cnt);
  double pts[NS * 7 * 3];
  for (int i = 0; i < NS * 7 * 3; i++) pts[i] = i;
  dset(g, "Points", H5T_IEEE_F64LE, NS * 7, 3, pts, 1);
  for (int k = 0; k < 4; k++) {
    hid_t t = group(g, topo[k], 0);
    long long c[NS * NP], ci[NS * NP], offs[16], conn[16];
    int no = 0, nn = 0;
    for (int e = 0; e < NS * NP; e++) c[e] = nc[k][e % NP], ci[e] = nci[k][e % NP];
    for (int p = 0; p < NP; p++) { /* stored once */
      long long per = nc[k][p] ? nci[k][p] / nc[k][p] : 0;
      for (long long i = 0; i <= nc[k][p]; i++) offs[no++] = i * per;
      for (long long i = 0; i < nci[k][p]; i++) conn[nn++] = i % np[p];
    }
    di64(t, "NumberOfCells", NS * NP, c);
    di64(t, "NumberOfConnectivityIds", NS * NP, ci);
    di64(t, "Offsets", no, offs);
    di64(t, "Connectivity", nn, conn);
    H5Gclose(t);
  }
  hid_t st = group(g, "Steps", 1);
  long long ns = NS;
  attr_ints(st, "NSteps", H5T_STD_I64LE, 1, &ns);
  double vals[NS] = {0.0, 2.5};
  dset(st, "Values", H5T_IEEE_F64LE, NS, 1, vals, 1);
  long long po[NS] = {0, NP}, npa[NS] = {NP, NP}, pto[NS] = {0, 7}, zero[NS * 4] = {0};
  di64(st, "PartOffsets", NS, po);
  di64(st, "NumberOfParts", NS, npa);
  di64(st, "PointOffsets", NS, pto);
  dset(st, "CellOffsets", H5T_STD_I64LE, NS, 4, zero, 0);
  dset(st, "ConnectivityIdOffsets", H5T_STD_I64LE, NS, 4, zero, 0);
  H5Gclose(st), H5Gclose(g), H5Fclose(f);
}

static void image(const char *name, int with_type) {
  hid_t f = new_file(name), g = group(f, "VTKHDF", 1);
  header(g, with_type ? "ImageData" : NULL, with_type ? 2 : 1, with_type ? 3 : 0);
  long long ext[6] = {0, 4, 0, 3, 0, 2};
  attr_ints(g, "WholeExtent", H5T_STD_I64LE, 6, ext);
  double *v = calloc(2 * 3 * 4 * 5, sizeof *v);
  hid_t pd = group(g, "PointData", 0);
  hsize_t d[5] = {2, 3, 4, 5, 3};
  int rank = with_type ? 4 : 3;
  hid_t sp = H5Screate_simple(rank, with_type ? d : d + 1, NULL);
  hid_t ds = H5Dcreate2(pd, "Temperature", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CK(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
  H5Dclose(ds), H5Sclose(sp);
  /* a 3-component vector: (t, z, y, x, 3) */
  sp = H5Screate_simple(rank + 1, with_type ? d : d + 1, NULL);
  double *w = calloc(2 * 3 * 4 * 5 * 3, sizeof *w);
  ds = H5Dcreate2(pd, "Velocity", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CK(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, w));
  H5Dclose(ds), H5Sclose(sp), H5Gclose(pd);
  if (with_type) {
    hid_t s = group(g, "Steps", 1);
    long long ns = 2;
    attr_ints(s, "NSteps", H5T_STD_I64LE, 1, &ns);
    double vals[2] = {0.0, 0.1};
    dset(s, "Values", H5T_IEEE_F64LE, 2, 1, vals, 1);
    H5Gclose(s);
  }
  free(v), free(w);
  H5Gclose(g), H5Fclose(f);
}

/* MultiBlockDataSet whose Assembly does not track creation order (name order then), with
 * a nested node and an empty leaf (no Type). */
static void mb_unordered(void) {
  hid_t f = new_file("mb_unordered.vtkhdf"), g = group(f, "VTKHDF", 0);
  header(g, "MultiBlockDataSet", 2, 3);
  ug u = {1, {3}, {1}, {3}};
  hid_t b0 = group(g, "Block_0", 0);
  header(b0, "UnstructuredGrid", 2, 3);
  ug_body(b0, &u, 1);
  hid_t b1 = group(g, "Block_1", 0); /* empty: no Type */
  hid_t as = group(g, "Assembly", 0), zeta = group(as, "Zeta", 0);
  CK(H5Lcreate_soft("/VTKHDF/Block_0", zeta, "mesh", H5P_DEFAULT, H5P_DEFAULT));
  CK(H5Lcreate_soft("/VTKHDF/Block_1", as, "Alpha", H5P_DEFAULT, H5P_DEFAULT));
  H5Gclose(zeta), H5Gclose(as), H5Gclose(b1), H5Gclose(b0), H5Gclose(g), H5Fclose(f);
}

/* ---- broken files ---- */
static void temporal_with(const char *name, const long long *pto, hid_t pto_type, int nsteps_attr, int npo) {
  ug all = {2, {4, 4}, {1, 1}, {4, 4}};
  hid_t f = new_file(name), g = group(f, "VTKHDF", 1);
  header(g, "UnstructuredGrid", 2, 3);
  ug_body(g, &all, 0);
  hid_t s = group(g, "Steps", 1);
  long long ns = nsteps_attr;
  attr_ints(s, "NSteps", H5T_STD_I64LE, 1, &ns);
  long long po[2] = {0, 1}, np[2] = {1, 1}, z[2] = {0, 0};
  di64(s, "PartOffsets", npo, po);
  di64(s, "NumberOfParts", 2, np);
  dset(s, "PointOffsets", pto_type, 2, 1, pto, 0);
  di64(s, "CellOffsets", 2, z);
  di64(s, "ConnectivityIdOffsets", 2, z);
  H5Gclose(s), H5Gclose(g), H5Fclose(f);
}

static void bad_files(void) {
  FILE *t = fopen(path_of("not_hdf5.vtkhdf"), "w");
  if (!t) die("not_hdf5");
  fputs("this is not an HDF5 file\n", t);
  fclose(t);
  hid_t f = new_file("no_vtkhdf.h5"), g = group(f, "Other", 0);
  H5Gclose(g), H5Fclose(f);
  f = new_file("bad_type.vtkhdf"), g = group(f, "VTKHDF", 0);
  header(g, "Mesh", 2, 3);
  H5Gclose(g), H5Fclose(f);
  f = new_file("no_type_v2.vtkhdf"), g = group(f, "VTKHDF", 0);
  header(g, NULL, 2, 3);
  H5Gclose(g), H5Fclose(f);
  f = new_file("no_counts.vtkhdf"), g = group(f, "VTKHDF", 0);
  header(g, "UnstructuredGrid", 2, 3);
  H5Gclose(g), H5Fclose(f);
  long long ok2[2] = {0, 4}, neg[2] = {0, -5}, down[2] = {4, 0}, sat[2] = {0, 2147483647};
  temporal_with("steps_short.vtkhdf", ok2, H5T_STD_I64LE, 2, 1);  /* PartOffsets has 1 row */
  temporal_with("negative_offset.vtkhdf", neg, H5T_STD_I64LE, 2, 2);
  temporal_with("non_monotonic.vtkhdf", down, H5T_STD_I64LE, 2, 2);
  temporal_with("int32_overflow.vtkhdf", sat, H5T_STD_I32LE, 2, 2);
  temporal_with("too_many_steps.vtkhdf", ok2, H5T_STD_I64LE, 5, 2); /* NSteps 5, rows 2 */
  /* an HDF5 file cut short (an interrupted copy): HDF5's own message must come through */
  FILE *in = fopen(path_of("ug3.vtkhdf"), "rb"), *out = fopen(path_of("truncated.vtkhdf"), "wb");
  if (!in || !out) die("truncated.vtkhdf");
  char buf[2048];
  size_t got = fread(buf, 1, sizeof buf, in);
  if (fwrite(buf, 1, got, out) != got) die("truncated.vtkhdf");
  fclose(in), fclose(out);
  f = new_file("pdc_no_assembly.vtkhdf"), g = group(f, "VTKHDF", 0);
  header(g, "PartitionedDataSetCollection", 2, 3);
  H5Gclose(g), H5Fclose(f);
}

/* ---- hostile layouts (tests/vtkhdf/hostile.t, docs/vtkhdf.md) ---- */

/* <stem>.expect.json: the rows vtkhdf_partitions must give for a 3-partition layout, from
 * the generator's own counts (the true ones, also for a partition whose sub-file is
 * broken: its row must then have NULL counts, the starts stay), each partition's status
 * and the source_file it must name (a basename, or a whole URL). */
static void expect_parts(const char *stem, const ug *u, const char *const *status, const char *const *source) {
  char name[300];
  snprintf(name, sizeof name, "%s.expect.json", stem);
  FILE *f = fopen(path_of(name), "w");
  if (!f) die(name);
  long long pt = 0, c = 0, ci = 0;
  fprintf(f, "[\n");
  for (int p = 0; p < u->nparts; p++) {
    fprintf(f,
            "  {\"block\": \"\", \"step\": 0, \"partition\": %d, \"n_points\": %lld, \"n_cells\": %lld, "
            "\"n_connectivity_ids\": %lld, \"point_offset\": %lld, \"cell_offset\": %lld, \"connectivity_offset\": %lld, "
            "\"offsets_offset\": %lld, \"status\": \"%s\", \"source_file\": \"%s\"}%s\n",
            p, u->np[p], u->nc[p], u->nci[p], pt, c, ci, c + p, status[p], source[p], p + 1 < u->nparts ? "," : "");
    pt += u->np[p], c += u->nc[p], ci += u->nci[p];
  }
  fprintf(f, "]\n");
  fclose(f);
}

static void text_file(const char *name) {
  FILE *t = fopen(path_of(name), "w");
  if (!t) die(name);
  fputs("this is not an HDF5 file\n", t);
  fclose(t);
}

/* A UseExternalPartitions layout of 3 non-empty partitions whose part1 is broken after
 * the main file is written: how = "text" (a text file), "empty" (an HDF5 file without
 * /VTKHDF), "no_nci" (its NumberOfConnectivityIds deleted), "short" (its count
 * datasets hold no rows). HDF5 reads the fill value (0) for every one of them. */
static const ug hostile3 = {3, {6, 4, 5}, {2, 1, 3}, {8, 4, 12}};
static void broken_part(const char *stem, const char *how) {
  char part1[300];
  ext_partitions(stem, &hostile3);
  snprintf(part1, sizeof part1, "%s_part1.vtkhdf", stem);
  if (!strcmp(how, "text")) {
    text_file(part1);
  } else if (!strcmp(how, "empty")) {
    hid_t f = new_file(part1), g = group(f, "Other", 0);
    H5Gclose(g), H5Fclose(f);
  } else {
    hid_t f = H5Fopen(path_of(part1), H5F_ACC_RDWR, H5P_DEFAULT);
    CK(f);
    hid_t g = H5Gopen2(f, "VTKHDF", H5P_DEFAULT);
    CK(g);
    if (!strcmp(how, "no_nci")) {
      CK(H5Ldelete(g, "NumberOfConnectivityIds", H5P_DEFAULT));
    } else {
      static const char *const counts[] = {"NumberOfPoints", "NumberOfCells", "NumberOfConnectivityIds"};
      for (int i = 0; i < 3; i++) {
        CK(H5Ldelete(g, counts[i], H5P_DEFAULT));
        di64(g, counts[i], 0, NULL);
      }
    }
    H5Gclose(g), H5Fclose(f);
  }
  char s0[300], s1[300], s2[300];
  snprintf(s0, sizeof s0, "%s_part0.vtkhdf", stem);
  snprintf(s2, sizeof s2, "%s_part2.vtkhdf", stem);
  snprintf(s1, sizeof s1, "%s", part1);
  const char *st[3] = {"ok", "bad_source", "ok"}, *src[3] = {s0, s1, s2};
  expect_parts(stem, &hostile3, st, src);
}

/* A PartitionedDataSetCollection whose BlockA is an external link to a file that is not
 * HDF5 ("text") or holds no /VTKHDF ("empty"), or that names another host (target);
 * BlockB is a plain external file. Expectation: one row per block. */
static void broken_elink(const char *stem, const char *how, const char *target, const char *astatus,
                         const char *asource, const char *bsource) {
  char a[300], b[300], name[300];
  snprintf(a, sizeof a, "%s_BlockA.vtkhdf", stem);
  snprintf(b, sizeof b, "%s_BlockB.vtkhdf", stem);
  ug ua = {1, {4}, {1}, {4}}, ub = {1, {5}, {2}, {8}};
  if (!strcmp(how, "text")) {
    text_file(a);
  } else if (!strcmp(how, "empty")) {
    hid_t f = new_file(a), g = group(f, "Other", 0);
    H5Gclose(g), H5Fclose(f);
  } else {
    ug_file(a, &ua, 10);
  }
  ug_file(b, &ub, 20);
  snprintf(name, sizeof name, "%s.vtkhdf", stem);
  hid_t f = new_file(name), g = group(f, "VTKHDF", 1);
  header(g, "PartitionedDataSetCollection", 2, 3);
  CK(H5Lcreate_external(target ? target : a, "/VTKHDF", g, "BlockA", H5P_DEFAULT, H5P_DEFAULT));
  CK(H5Lcreate_external(b, "/VTKHDF", g, "BlockB", H5P_DEFAULT, H5P_DEFAULT));
  hid_t as = group(g, "Assembly", 1);
  CK(H5Lcreate_soft("/VTKHDF/BlockA", as, "BlockA", H5P_DEFAULT, H5P_DEFAULT));
  CK(H5Lcreate_soft("/VTKHDF/BlockB", as, "BlockB", H5P_DEFAULT, H5P_DEFAULT));
  H5Gclose(as), H5Gclose(g), H5Fclose(f);
  snprintf(name, sizeof name, "%s.expect.json", stem);
  FILE *e = fopen(path_of(name), "w");
  if (!e) die(name);
  /* BlockA: the true counts (when it is a real file elsewhere) and its status */
  fprintf(e,
          "[\n  {\"block\": \"/Assembly/BlockA\", \"step\": %s, \"partition\": %s, \"n_points\": 4, \"n_cells\": 1, "
          "\"n_connectivity_ids\": 4, \"point_offset\": 0, \"cell_offset\": 0, \"connectivity_offset\": 0, "
          "\"offsets_offset\": 0, \"status\": \"%s\", \"source_file\": \"%s\"},\n",
          strcmp(astatus, "ok") ? "null" : "0", strcmp(astatus, "ok") ? "null" : "0", astatus, asource);
  fprintf(e,
          "  {\"block\": \"/Assembly/BlockB\", \"step\": 0, \"partition\": 0, \"n_points\": 5, \"n_cells\": 2, "
          "\"n_connectivity_ids\": 8, \"point_offset\": 0, \"cell_offset\": 0, \"connectivity_offset\": 0, "
          "\"offsets_offset\": 0, \"status\": \"ok\", \"source_file\": \"%s\"}\n]\n",
          bsource);
  fclose(e);
}

static void hostile_files(void) {
  broken_part("src_text", "text");
  broken_part("src_empty", "empty");
  broken_part("src_no_nci", "no_nci");
  broken_part("src_short", "short");
  broken_elink("elink_text", "text", NULL, "bad_source", "elink_text_BlockA.vtkhdf", "elink_text_BlockB.vtkhdf");
  broken_elink("elink_empty", "empty", NULL, "bad_source", "elink_empty_BlockA.vtkhdf", "elink_empty_BlockB.vtkhdf");
}

/* Files whose sizes come from the file, not from its bytes: count datasets (and Points,
 * ...) of 1e9 entries behind a virtual dataset whose source is gone, the same with a
 * 2-D NumberOfPoints (read whole), an ImageData and an UnstructuredGrid with NSteps =
 * 2^30. Each main file is a few KB. */
static void huge_files(void) {
  const long long n = 1000000000LL;
  static const char *const names[] = {"NumberOfPoints", "NumberOfCells", "NumberOfConnectivityIds", "Types",
                                      "Offsets", "Connectivity"};
  for (int twod = 0; twod < 2; twod++) {
    hid_t f = new_file(twod ? "huge_2d.vtkhdf" : "huge_missing.vtkhdf"), g = group(f, "VTKHDF", 1);
    header(g, "UnstructuredGrid", 2, 3);
    for (int i = 0; i < 6; i++) {
      char dp[300];
      snprintf(dp, sizeof dp, "/VTKHDF/%s", names[i]);
      vmap m = {"huge_gone.vtkhdf", 0, 0, n};
      vds(g, dp, names[i], H5T_STD_I64LE, n, 1, &m, 1);
    }
    vmap m = {"huge_gone.vtkhdf", 0, 0, n};
    vds(g, "/VTKHDF/Points", "Points", H5T_IEEE_F64LE, n, 3, &m, 1);
    if (twod) { /* NumberOfPoints again, as (n, 1): not windowed, read whole */
      CK(H5Ldelete(g, "NumberOfPoints", H5P_DEFAULT));
      hsize_t d[2] = {(hsize_t)n, 1};
      hid_t vsp = H5Screate_simple(2, d, NULL), ssp = H5Screate_simple(2, d, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
      CK(H5Pset_virtual(dcpl, vsp, "huge_gone.vtkhdf", "/VTKHDF/NumberOfPoints", ssp));
      hid_t ds = H5Dcreate2(g, "NumberOfPoints", H5T_STD_I64LE, vsp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
      CK(ds);
      H5Dclose(ds), H5Pclose(dcpl), H5Sclose(ssp), H5Sclose(vsp);
    }
    H5Gclose(g), H5Fclose(f);
  }
  hid_t f = new_file("huge_steps.vtkhdf"), g = group(f, "VTKHDF", 1);
  header(g, "ImageData", 2, 3);
  long long ext[6] = {0, 1, 0, 1, 0, 1}, ns = 1LL << 30;
  attr_ints(g, "WholeExtent", H5T_STD_I64LE, 6, ext);
  hid_t s = group(g, "Steps", 1);
  attr_ints(s, "NSteps", H5T_STD_I64LE, 1, &ns);
  H5Gclose(s), H5Gclose(g), H5Fclose(f);
  /* an UnstructuredGrid of one partition whose Steps group has NSteps = 2^30 and no
   * datasets: every step has len(NumberOfPoints) / NSteps = 0 partitions */
  ug one = {1, {4}, {1}, {4}};
  f = new_file("huge_nsteps.vtkhdf"), g = group(f, "VTKHDF", 1);
  header(g, "UnstructuredGrid", 2, 3);
  ug_body(g, &one, 0);
  s = group(g, "Steps", 1);
  attr_ints(s, "NSteps", H5T_STD_I64LE, 1, &ns);
  H5Gclose(s), H5Gclose(g), H5Fclose(f);
}

/* UseExternalPartitions over n part files (many_part<k>.vtkhdf, counts only and Points):
 * HDF5's own read of a virtual dataset keeps each source it opened open (about 0.6 MB
 * of metadata cache each). Expectation: every partition's counts and point start. */
static void many_parts(int n) {
  vmap *m = calloc(n, sizeof *m);
  char (*files)[64] = calloc(n, sizeof *files);
  long long *np = calloc(n, sizeof *np), acc = 0;
  if (!m || !files || !np) die("malloc");
  FILE *e = fopen(path_of("many_parts.expect.json"), "w");
  if (!e) die("many_parts.expect.json");
  fprintf(e, "[\n");
  for (int k = 0; k < n; k++) {
    snprintf(files[k], sizeof files[k], "many_part%d.vtkhdf", k);
    np[k] = 1 + k % 7;
    long long nc = k % 3, nci = 4 * nc;
    hid_t f = new_file(files[k]), g = group(f, "VTKHDF", 0);
    header(g, "UnstructuredGrid", 2, 3);
    di64(g, "NumberOfPoints", 1, &np[k]);
    di64(g, "NumberOfCells", 1, &nc);
    di64(g, "NumberOfConnectivityIds", 1, &nci);
    double pts[7 * 3] = {0};
    dset(g, "Points", H5T_IEEE_F64LE, np[k], 3, pts, 1);
    H5Gclose(g), H5Fclose(f);
    fprintf(e, "  {\"partition\": %d, \"n_points\": %lld, \"n_cells\": %lld, \"n_connectivity_ids\": %lld, "
               "\"point_offset\": %lld}%s\n", k, np[k], nc, nci, acc, k + 1 < n ? "," : "");
    acc += np[k];
  }
  fprintf(e, "]\n");
  fclose(e);
  hid_t f = new_file("many_parts.vtkhdf"), g = group(f, "VTKHDF", 1);
  header(g, "UnstructuredGrid", 2, 3);
  static const char *const counts[] = {"NumberOfPoints", "NumberOfCells", "NumberOfConnectivityIds"};
  for (int i = 0; i < 3; i++) {
    char dp[64];
    snprintf(dp, sizeof dp, "/VTKHDF/%s", counts[i]);
    for (int k = 0; k < n; k++) m[k] = (vmap){files[k], k, 0, 1};
    vds(g, dp, counts[i], H5T_STD_I64LE, n, 1, m, n);
  }
  acc = 0;
  for (int k = 0; k < n; k++) m[k] = (vmap){files[k], acc, 0, np[k]}, acc += np[k];
  vds(g, "/VTKHDF/Points", "Points", H5T_IEEE_F64LE, acc, 3, m, n);
  H5Gclose(g), H5Fclose(f);
  free(m), free(files), free(np);
}

/* Sub-files named by URLs, for a main file served from the directory URL same (the
 * generator's DIR): part1 of url_other on the host other; part1 of url_same by an
 * absolute URL on the same host; part1 of url_joined by a relative name holding a URL
 * (joined to the main file's directory it makes a malformed URL) and its part2 by a
 * protocol-relative name (an absolute path to HDF5: found by its basename next to the
 * main file); url_elink's BlockA an external link to other. */
static void url_files(const char *same, const char *other) {
  char names[3][256] = {"", "", ""}, s0[600], s1[600], s2[600];
  const char *ok3[3] = {"ok", "ok", "ok"}, *src[3] = {s0, s1, s2};
  snprintf(names[1], sizeof names[1], "%s/url_other_part1.vtkhdf", other);
  ext_partitions_named("url_other", &hostile3, names);
  snprintf(s0, sizeof s0, "%s/url_other_part0.vtkhdf", same);
  snprintf(s1, sizeof s1, "%s", names[1]);
  snprintf(s2, sizeof s2, "%s/url_other_part2.vtkhdf", same);
  const char *dis[3] = {"ok", "disallowed_source", "ok"};
  expect_parts("url_other", &hostile3, dis, src);

  snprintf(names[1], sizeof names[1], "%s/url_same_part1.vtkhdf", same);
  ext_partitions_named("url_same", &hostile3, names);
  snprintf(s0, sizeof s0, "%s/url_same_part0.vtkhdf", same);
  snprintf(s1, sizeof s1, "%s", names[1]);
  snprintf(s2, sizeof s2, "%s/url_same_part2.vtkhdf", same);
  expect_parts("url_same", &hostile3, ok3, src);

  const char *host = strstr(other, "://") ? strstr(other, "://") + 3 : other;
  snprintf(names[1], sizeof names[1], "h/%s/url_joined_part1.vtkhdf", other);
  snprintf(names[2], sizeof names[2], "//%s/url_joined_part2.vtkhdf", host);
  ext_partitions_named("url_joined", &hostile3, names);
  snprintf(s0, sizeof s0, "%s/url_joined_part0.vtkhdf", same);
  snprintf(s1, sizeof s1, "%s/%s", same, names[1]);
  snprintf(s2, sizeof s2, "%s/url_joined_part2.vtkhdf", same);
  expect_parts("url_joined", &hostile3, dis, src);

  char target[600], bsrc[600];
  snprintf(target, sizeof target, "%s/url_elink_BlockA.vtkhdf", other);
  snprintf(bsrc, sizeof bsrc, "%s/url_elink_BlockB.vtkhdf", same);
  broken_elink("url_elink", "file", target, "disallowed_source", target, bsrc);
}

/* bench/vtkhdf: a temporal UnstructuredGrid with nparts partitions x nsteps steps, moving
 * geometry (new count entries every step). Counts and Steps are written; the big arrays
 * are created at their full size but chunked and unwritten, so the file stays small
 * while its metadata is exactly what a real file of that size has. */
static void big_dataset(hid_t g, const char *name, hid_t ft, long long n, int cols) {
  hsize_t d[2] = {(hsize_t)n, (hsize_t)cols}, ch[2] = {1 << 16, (hsize_t)cols};
  if (ch[0] > d[0]) ch[0] = d[0] ? d[0] : 1;
  hid_t sp = H5Screate_simple(cols > 1 ? 2 : 1, d, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  CK(H5Pset_chunk(dcpl, cols > 1 ? 2 : 1, ch));
  hid_t ds = H5Dcreate2(g, name, ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CK(ds);
  H5Dclose(ds), H5Pclose(dcpl), H5Sclose(sp);
}

/* A big temporal leaf for bench/vtkhdf and the streaming tests: nparts partitions x
 * nsteps steps with varied, deterministic counts. moving: new count entries every step
 * (else written once, every step reusing them: a static mesh); moving 2: points move but
 * cells are stored once, their counts still repeated per step and CellOffsets 0 (as in
 * warping_spheres: the case where PolyData's Offsets rule and UG's differ); poly: PolyData with four
 * topologies and (NSteps, 4) Steps offsets; neg_at >= 0 puts a negative NumberOfCells
 * there (a broken file whose fault sits far from the start). */
static void big_file(const char *name, long long nparts, long long nsteps, int moving, int poly, long long neg_at) {
  static const char *const topo[4] = {"Vertices", "Lines", "Polygons", "Strips"};
  int ntopo = poly ? 4 : 1, once = moving == 2;
  long long n = moving ? nparts * nsteps : nparts;
  long long *np = malloc(n * sizeof *np), *nc[4], *nci[4];
  for (int k = 0; k < ntopo; k++) {
    nc[k] = malloc(n * sizeof **nc), nci[k] = malloc(n * sizeof **nci);
    if (!nc[k] || !nci[k]) die("malloc");
  }
  if (!np) die("malloc");
  long long tp = 0, tc[4] = {0}, tci[4] = {0};
  long long *po = malloc(nsteps * sizeof *po), *npa = malloc(nsteps * sizeof *npa), *pto = malloc(nsteps * sizeof *pto),
            *co = malloc(nsteps * 4 * sizeof *co), *cio = malloc(nsteps * 4 * sizeof *cio);
  double *vals = malloc(nsteps * sizeof *vals);
  if (!po || !npa || !pto || !co || !cio || !vals) die("malloc");
  for (long long t = 0; t < nsteps; t++) {
    po[t] = moving ? t * nparts : 0, npa[t] = nparts, vals[t] = t * 0.1;
    pto[t] = moving ? tp : 0;
    for (int k = 0; k < ntopo; k++)
      co[t * ntopo + k] = moving && !once ? tc[k] : 0, cio[t * ntopo + k] = moving && !once ? tci[k] : 0;
    if (!moving && t > 0) continue;
    for (long long j = 0; j < nparts; j++) {
      long long e = (moving ? t : 0) * nparts + j;
      np[e] = 8 + (j * 7 + t) % 13;
      tp += np[e];
      for (int k = 0; k < ntopo; k++) {
        nc[k][e] = (j % (17 + k) == 0) ? 0 : 1 + (j * (3 + k) + (once ? 0 : t)) % 5;
        nci[k][e] = nc[k][e] * (poly ? k + 1 : 4);
        if (!once || t == 0) tc[k] += nc[k][e], tci[k] += nci[k][e];
      }
    }
  }
  if (neg_at >= 0 && neg_at < n) nc[0][neg_at] = -1;
  hid_t f = new_file(name), g = group(f, "VTKHDF", 1);
  header(g, poly ? "PolyData" : "UnstructuredGrid", 2, 3);
  di64(g, "NumberOfPoints", n, np);
  big_dataset(g, "Points", H5T_IEEE_F64LE, tp, 3);
  for (int k = 0; k < ntopo; k++) {
    hid_t tg = poly ? group(g, topo[k], 0) : g;
    di64(tg, "NumberOfCells", n, nc[k]);
    di64(tg, "NumberOfConnectivityIds", n, nci[k]);
    if (!poly) big_dataset(tg, "Types", H5T_STD_U8LE, tc[k], 1);
    big_dataset(tg, "Offsets", H5T_STD_I64LE, tc[k] + (once ? nparts : n), 1);
    big_dataset(tg, "Connectivity", H5T_STD_I64LE, tci[k], 1);
    if (poly) H5Gclose(tg);
  }
  hid_t st = group(g, "Steps", 1);
  attr_ints(st, "NSteps", H5T_STD_I64LE, 1, &nsteps);
  dset(st, "Values", H5T_IEEE_F64LE, nsteps, 1, vals, 1);
  di64(st, "PartOffsets", nsteps, po);
  di64(st, "NumberOfParts", nsteps, npa);
  di64(st, "PointOffsets", nsteps, pto);
  dset(st, "CellOffsets", H5T_STD_I64LE, nsteps, ntopo, co, 0);
  dset(st, "ConnectivityIdOffsets", H5T_STD_I64LE, nsteps, ntopo, cio, 0);
  H5Gclose(st), H5Gclose(g), H5Fclose(f);
  free(np), free(po), free(npa), free(pto), free(co), free(cio), free(vals);
  for (int k = 0; k < ntopo; k++) free(nc[k]), free(nci[k]);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: mkvtkhdf DIR [abs]\n");
    return 2;
  }
  dir = argv[1];
  absolute = argc > 2 && !strcmp(argv[2], "abs");
  mkdir(dir, 0777);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  if (argc > 4 && !strcmp(argv[2], "bench")) { /* mkvtkhdf DIR bench NPARTS NSTEPS */
    big_file("bench.vtkhdf", atoll(argv[3]), atoll(argv[4]), 1, 0, -1);
    return 0;
  }
  if (argc > 2 && !strcmp(argv[2], "big")) { /* mkvtkhdf DIR big: tests/vtkhdf/stream.t */
    big_file("big_ug.vtkhdf", 20000, 3, 1, 0, -1);
    big_file("big_static.vtkhdf", 20000, 3, 0, 0, -1);
    big_file("big_poly.vtkhdf", 10000, 3, 1, 1, -1);
    big_file("big_poly_cells_once.vtkhdf", 10000, 3, 2, 1, -1);
    big_file("big_negative.vtkhdf", 20000, 1, 1, 0, 12345);
    return 0;
  }
  if (argc > 2 && !strcmp(argv[2], "huge")) { /* mkvtkhdf DIR huge: tests/vtkhdf/hostile.t */
    huge_files();
    many_parts(1000);
    return 0;
  }
  if (argc > 3 && !strcmp(argv[2], "many")) { /* mkvtkhdf DIR many N: tests/vtkhdf/remote.t */
    many_parts(atoi(argv[3]));
    return 0;
  }
  if (argc > 4 && !strcmp(argv[2], "urls")) { /* mkvtkhdf DIR urls SAME OTHER: tests/vtkhdf/hostile.t */
    url_files(argv[3], argv[4]);
    return 0;
  }
  ug three = {3, {6, 0, 5}, {2, 0, 3}, {8, 0, 12}};
  if (absolute) { /* only the multi-file layouts differ */
    ext_partitions("abs_partitions", &three);
    ext_composite("abs_composite");
    ext_steps("abs_steps");
    return 0;
  }
  ug_file("ug3.vtkhdf", &three, 0);
  ug_temporal();
  poly_temporal();
  image("image.vtkhdf", 1);
  image("image_v1.vtkhdf", 0);
  mb_unordered();
  ext_partitions("ext_partitions", &three);
  /* the same layout with one sub-file gone from the start (also servable over http) */
  ext_partitions("ext_missing", &three);
  if (remove(path_of("ext_missing_part1.vtkhdf"))) die("remove ext_missing_part1.vtkhdf");
  ext_composite("ext_composite");
  ext_steps("ext_steps");
  bad_files();
  hostile_files();
  return 0;
}
