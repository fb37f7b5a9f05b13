/* VTKHDF partition math (vh_compute), on arrays, without HDF5: the spec's cumulative
 * sums, temporal Steps with static meshes, PolyData's own Offsets rule, and refusals. */
#include <stdlib.h>
#include <string.h>

#include "formats/vtkhdf/vtkhdf.h"
#include "tap.h"

static vh_slot *run(vh_counts *c, int64_t *n, vh_topo **tp, vd_err *e) {
  vh_slot *s = NULL;
  if (vh_compute(c, "t", &s, tp, n, e)) return NULL;
  return s;
}

/* ---- streaming: the same leaves through windowed readers must give the same rows ---- */

typedef struct src {
  const int64_t *v;
  int loads;
  int64_t fail_at; /* a load covering this entry fails (-1: never) */
} src;

static vd_code load_src(void *arg, int64_t lo, int64_t n, int64_t *dst, vd_err *err) {
  src *s = arg;
  s->loads++;
  if (s->fail_at >= lo && s->fail_at < lo + n) return vd_fail(err, VD_IO, "t: cannot read entries %lld..", (long long)lo);
  memcpy(dst, s->v + lo, (size_t)n * sizeof *dst);
  return VD_OK;
}

/* Streams c with windows of w entries; 1 when every slot (and topology) equals vh_compute's. */
static int same_streamed(const vh_counts *c, int64_t w, int *loads) {
  vh_slot *ref = NULL;
  vh_topo *rt = NULL;
  int64_t nref = 0;
  vd_err e;
  if (vh_compute(c, "t", &ref, c->poly ? &rt : NULL, &nref, &e)) return 0;
  int ntopo = c->poly ? VH_NTOPO : 1;
  src snp = {c->np, 0, -1}, snc[VH_NTOPO], snci[VH_NTOPO], sscan[VH_NTOPO];
  vh_col np, nc[VH_NTOPO], nci[VH_NTOPO], scan[VH_NTOPO];
  vh_col *pnc[VH_NTOPO], *pnci[VH_NTOPO], *pscan[VH_NTOPO];
  vh_col_lazy(&np, "NumberOfPoints", "t", c->n_np, load_src, &snp);
  np.window = w;
  for (int k = 0; k < ntopo; k++) {
    snc[k] = (src){c->nc[k], 0, -1}, snci[k] = (src){c->nci[k], 0, -1}, sscan[k] = (src){c->nc[k], 0, -1};
    vh_col_lazy(&nc[k], "NumberOfCells", "t", c->n_nc[k], load_src, &snc[k]);
    vh_col_lazy(&nci[k], "NumberOfConnectivityIds", "t", c->n_nci[k], load_src, &snci[k]);
    vh_col_lazy(&scan[k], "NumberOfCells", "t", c->n_nc[k], load_src, &sscan[k]);
    nc[k].window = nci[k].window = scan[k].window = w;
    pnc[k] = &nc[k], pnci[k] = &nci[k], pscan[k] = &scan[k];
  }
  vh_iter it;
  int same = vh_iter_init(&it, c, &np, pnc, pnci, pscan, "t", &e) == VD_OK;
  int64_t i = 0;
  /* in batches of 1, 2, 3, ... rows (vh_iter_fill, with its UnstructuredGrid fast loop) */
  for (int batch = 1; same; batch = batch % 67 + 1) {
    vh_slot x[67];
    vh_topo y[67];
    int got;
    if (vh_iter_fill(&it, x, c->poly ? y : NULL, batch, &got, &e)) same = 0;
    for (int k = 0; k < got && same; k++, i++)
      if (i >= nref || memcmp(&x[k], &ref[i], sizeof x[k]) || (rt && memcmp(&y[k], &rt[i], sizeof y[k]))) same = 0;
    if (got < batch) break;
  }
  same = same && i == nref;
  *loads = snp.loads;
  vh_col_free(&np);
  for (int k = 0; k < ntopo; k++) vh_col_free(&nc[k]), vh_col_free(&nci[k]), vh_col_free(&scan[k]);
  free(ref), free(rt);
  return same;
}

/* A leaf of nparts partitions x nsteps steps with varied counts. moving: each step has
 * its own count entries; else written once (PartOffsets 0). poly: four topologies.
 * conn_static (PolyData): topology stored once (CellOffsets 0) while points move. */
typedef struct gen {
  int64_t np[4096], nc[4][4096], nci[4][4096];
  int64_t po[64], nparts[64], pto[64], co[64 * 4], cio[64 * 4];
} gen;

static void make(gen *g, vh_counts *c, int64_t nparts, int64_t nsteps, int moving, int poly, int conn_static, int cols1) {
  memset(c, 0, sizeof *c);
  int ntopo = poly ? 4 : 1;
  int64_t n = moving ? nparts * nsteps : nparts;
  for (int64_t e = 0; e < n; e++) {
    g->np[e] = (e * 7) % 11;
    for (int k = 0; k < ntopo; k++) {
      g->nc[k][e] = (e * (k + 3)) % 5;
      g->nci[k][e] = g->nc[k][e] * (k + 1);
    }
  }
  int64_t pts = 0, cells[4] = {0}, conn[4] = {0};
  for (int64_t t = 0; t < nsteps; t++) {
    g->po[t] = moving ? t * nparts : 0;
    g->nparts[t] = nparts;
    g->pto[t] = pts;
    for (int k = 0; k < 4; k++) {
      int ck = cols1 ? 0 : k;
      g->co[t * (cols1 ? 1 : 4) + ck] = conn_static ? 0 : cells[ck];
      g->cio[t * (cols1 ? 1 : 4) + ck] = conn_static ? 0 : conn[ck];
    }
    if (moving)
      for (int64_t j = 0; j < nparts; j++) {
        int64_t e = t * nparts + j;
        pts += g->np[e];
        for (int k = 0; k < ntopo; k++) cells[cols1 ? 0 : k] += g->nc[k][e], conn[cols1 ? 0 : k] += g->nci[k][e];
      }
  }
  c->poly = poly, c->nsteps = nsteps, c->has_steps = 1;
  c->np = g->np, c->n_np = n;
  for (int k = 0; k < ntopo; k++) c->nc[k] = g->nc[k], c->nci[k] = g->nci[k], c->n_nc[k] = c->n_nci[k] = n;
  c->part_offsets = g->po, c->n_part_offsets = nsteps, c->number_of_parts = g->nparts, c->n_number_of_parts = nsteps;
  c->point_offsets = g->pto, c->n_point_offsets = nsteps;
  c->cell_offsets = g->co, c->n_cell_offsets = nsteps, c->cell_offsets_cols = cols1 ? 1 : ntopo;
  c->conn_offsets = g->cio, c->n_conn_offsets = nsteps, c->conn_offsets_cols = cols1 ? 1 : ntopo;
}

static void streaming_tests(void) {
  static gen g;
  vh_counts c;
  static const int64_t windows[] = {1, 2, 3, 7, 64, 8192};
  static const struct {
    const char *name;
    int64_t nparts, nsteps;
    int moving, poly, conn_static, cols1;
  } cases[] = {
      {"UG, moving mesh", 37, 5, 1, 0, 0, 0},
      {"UG, static mesh (entries reused by every step)", 41, 4, 0, 0, 0, 0},
      {"PolyData, moving mesh, (NSteps, 4) CellOffsets", 23, 6, 1, 1, 0, 0},
      {"PolyData, static topology under moving points", 19, 5, 1, 1, 1, 0},
      {"PolyData, static mesh", 17, 3, 0, 1, 0, 0},
      {"PolyData, 1-D CellOffsets", 13, 4, 1, 1, 0, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int all = 1, loads = 0, loads1 = 0;
    for (size_t w = 0; w < sizeof windows / sizeof *windows; w++) {
      make(&g, &c, cases[i].nparts, cases[i].nsteps, cases[i].moving, cases[i].poly, cases[i].conn_static, cases[i].cols1);
      int l;
      all &= same_streamed(&c, windows[w], &l);
      if (windows[w] == 3) loads = l;
      if (windows[w] == 8192) loads1 = l;
    }
    ok(all, "streamed with windows of 1..8192 entries, in batches of 1..67 rows = computed in memory: %s",
       cases[i].name);
    int64_t n = cases[i].moving ? cases[i].nparts * cases[i].nsteps : cases[i].nparts;
    if (cases[i].moving)
      ok(loads == (n + 2) / 3 && loads1 == 1, "%s: each window of NumberOfPoints is read once (%d loads of 3, %d of 8192)",
         cases[i].name, loads, loads1);
    else
      ok(loads == cases[i].nsteps * ((n + 2) / 3), "%s: a static mesh re-reads its entries once per step (%d loads)",
         cases[i].name, loads);
  }

  /* without NumberOfParts (static mesh: PartOffsets say how many) */
  make(&g, &c, 29, 3, 0, 0, 0, 0);
  c.number_of_parts = NULL;
  int l;
  ok(same_streamed(&c, 4, &l), "no NumberOfParts: streamed = in memory");

  /* a negative count beyond the first window: refused when its window is read */
  {
    make(&g, &c, 50, 2, 1, 0, 0, 0);
    g.nc[0][77] = -2;
    src snp = {c.np, 0, -1}, snc = {c.nc[0], 0, -1}, snci = {c.nci[0], 0, -1};
    vh_col np, nc, nci;
    vh_col *pnc = &nc, *pnci = &nci;
    vh_col_lazy(&np, "NumberOfPoints", "t", c.n_np, load_src, &snp);
    vh_col_lazy(&nc, "NumberOfCells", "t", c.n_nc[0], load_src, &snc);
    vh_col_lazy(&nci, "NumberOfConnectivityIds", "t", c.n_nci[0], load_src, &snci);
    np.window = nc.window = nci.window = 16;
    vh_iter it;
    vd_err e;
    int64_t rows = 0;
    vd_code rc = vh_iter_init(&it, &c, &np, &pnc, &pnci, NULL, "t", &e);
    for (int eof = 0; !rc && !eof;) {
      vh_slot x;
      if (!(rc = vh_iter_next(&it, &x, NULL, &eof, &e)) && !eof) rows++;
    }
    ok(rc == VD_INVALID && strstr(e.msg, "NumberOfCells[77] is negative") && rows == 64,
       "negative count in a later window: rows of the earlier windows, then '%s'", e.msg);
    /* a failing read */
    g.nc[0][77] = 1;
    vh_col_free(&nc);
    snci.fail_at = 40;
    rc = vh_iter_init(&it, &c, &np, &pnc, &pnci, NULL, "t", &e);
    rows = 0;
    for (int eof = 0; !rc && !eof;) {
      vh_slot x;
      if (!(rc = vh_iter_next(&it, &x, NULL, &eof, &e)) && !eof) rows++;
    }
    ok(rc == VD_IO && strstr(e.msg, "cannot read entries 32") && rows == 32, "a failing read ends the walk with its error: %s",
       e.msg);
    vh_col_free(&np), vh_col_free(&nc), vh_col_free(&nci);
  }
}

int main(void) {
  vd_err e;
  int64_t n;

  /* single step, 3 partitions, the middle one empty (spec section 2) */
  {
    int64_t np[] = {6, 0, 5}, nc[] = {2, 0, 3}, nci[] = {8, 0, 12};
    vh_counts c = {0};
    c.nsteps = 1, c.np = np, c.n_np = 3, c.nc[0] = nc, c.nci[0] = nci, c.n_nc[0] = 3, c.n_nci[0] = 3;
    vh_slot *s = run(&c, &n, NULL, &e);
    ok(s && n == 3, "static UG: 3 partitions");
    if (s && n == 3) {
      ok(s[1].point_off == 6 && s[2].point_off == 6, "Points starts 0, 6, 6");
      ok(s[2].cell_off == 2 && s[2].conn_off == 8, "Types and Connectivity starts are plain sums");
      ok(s[1].offsets_off == 3 && s[2].offsets_off == 4, "Offsets starts add one value per earlier partition (+j)");
    }
    free(s);
  }

  /* temporal, static mesh: counts written once, Steps offsets repeat */
  {
    int64_t np[] = {8}, nc[] = {5}, nci[] = {20}, po[] = {0, 0}, nparts[] = {1, 1}, z[] = {0, 0};
    vh_counts c = {0};
    c.nsteps = 2, c.has_steps = 1, c.np = np, c.n_np = 1, c.nc[0] = nc, c.nci[0] = nci, c.n_nc[0] = 1, c.n_nci[0] = 1;
    c.part_offsets = po, c.n_part_offsets = 2, c.number_of_parts = nparts, c.n_number_of_parts = 2;
    c.point_offsets = z, c.n_point_offsets = 2, c.cell_offsets = z, c.n_cell_offsets = 2, c.cell_offsets_cols = 1;
    c.conn_offsets = z, c.n_conn_offsets = 2, c.conn_offsets_cols = 1;
    vh_slot *s = run(&c, &n, NULL, &e);
    ok(s && n == 2 && s[1].entry == 0 && s[1].np == 8 && s[1].point_off == 0 && s[1].offsets_off == 0,
       "static mesh: both steps share the one count entry and start at 0");
    free(s);
    /* without NumberOfParts VTK divides, len(NumberOfPoints) / NSteps = 0 parts here;
     * PartOffsets tell the truth */
    c.number_of_parts = NULL;
    s = run(&c, &n, NULL, &e);
    ok(s && n == 2 && s[1].np == 8, "no NumberOfParts: a static mesh still has its partition in every step");
    free(s);
  }

  /* PolyData: connectivity stored once, PartOffsets grows, CellOffsets stay 0 */
  {
    int64_t np[] = {4, 3, 4, 3}, po[] = {0, 2}, nparts[] = {2, 2}, pto[] = {0, 7}, z[8] = {0};
    int64_t nc[4][4] = {{0, 0, 0, 0}, {1, 0, 1, 0}, {2, 1, 2, 1}, {0, 0, 0, 0}};
    int64_t nci[4][4] = {{0, 0, 0, 0}, {2, 0, 2, 0}, {6, 3, 6, 3}, {0, 0, 0, 0}};
    vh_counts c = {0};
    c.poly = 1, c.nsteps = 2, c.has_steps = 1, c.np = np, c.n_np = 4;
    for (int k = 0; k < 4; k++) c.nc[k] = nc[k], c.nci[k] = nci[k], c.n_nc[k] = c.n_nci[k] = 4;
    c.part_offsets = po, c.n_part_offsets = 2, c.number_of_parts = nparts, c.n_number_of_parts = 2;
    c.point_offsets = pto, c.n_point_offsets = 2;
    c.cell_offsets = z, c.n_cell_offsets = 2, c.cell_offsets_cols = 4;
    c.conn_offsets = z, c.n_conn_offsets = 2, c.conn_offsets_cols = 4;
    vh_topo *t = NULL;
    vh_slot *s = run(&c, &n, &t, &e);
    ok(s && t && n == 4, "PolyData: 2 steps x 2 partitions");
    if (s && t && n == 4) {
      ok(s[3].point_off == 11 && s[3].cell_off == 3 && s[3].nc == 1 && s[3].nci == 3, "PolyData totals and CellData start");
      ok(t[3].offs_off[2] == 3 && t[3].offs_off[1] == 2 && t[3].offs_off[0] == 1 && t[3].conn_off[2] == 6,
         "PolyData Offsets starts ignore PartOffsets (step 1 starts like step 0)");
      ok(s[3].offsets_off == VH_NULL && s[3].conn_off == VH_NULL, "PolyData rows have no single Offsets/Connectivity start");
    }
    free(s), free(t);
  }

  /* refusals */
  {
    int64_t np[] = {4, 4}, nc[] = {1, 1}, nci[] = {4, 4}, po[] = {0, 1}, nparts[] = {1, 5}, pto[] = {0, 4}, z[] = {0, 0};
    vh_counts c = {0};
    c.nsteps = 2, c.has_steps = 1, c.np = np, c.n_np = 2, c.nc[0] = nc, c.nci[0] = nci, c.n_nc[0] = 2, c.n_nci[0] = 2;
    c.part_offsets = po, c.n_part_offsets = 2, c.number_of_parts = nparts, c.n_number_of_parts = 2;
    c.point_offsets = pto, c.n_point_offsets = 2, c.cell_offsets = z, c.n_cell_offsets = 2, c.cell_offsets_cols = 1;
    c.conn_offsets = z, c.n_conn_offsets = 2, c.conn_offsets_cols = 1;
    ok(!run(&c, &n, NULL, &e) && strstr(e.msg, "count entries"), "a step running past the count datasets is refused: %s", e.msg);
    nparts[1] = 1;
    c.n_part_offsets = 1;
    ok(!run(&c, &n, NULL, &e) && strstr(e.msg, "inconsistent Steps lengths"), "short Steps dataset refused: %s", e.msg);
    c.n_part_offsets = 2;
    pto[1] = -1;
    ok(!run(&c, &n, NULL, &e) && strstr(e.msg, "negative"), "negative offset refused: %s", e.msg);
    pto[0] = 9, pto[1] = 4;
    ok(!run(&c, &n, NULL, &e) && strstr(e.msg, "not monotonic"), "decreasing offsets refused: %s", e.msg);
    pto[0] = 0;
    np[1] = -3;
    ok(!run(&c, &n, NULL, &e) && strstr(e.msg, "negative"), "negative count refused: %s", e.msg);
    c.np = NULL;
    ok(!run(&c, &n, NULL, &e) && strstr(e.msg, "NumberOfPoints is missing"), "missing counts refused: %s", e.msg);
  }
  streaming_tests();
  return done_testing();
}
