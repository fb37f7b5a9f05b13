/* VTKHDF partition math (vh_compute), on arrays, without HDF5: the spec's cumulative
 * sums, temporal Steps with static meshes, PolyData's own Offsets rule, and refusals. */
#include <string.h>

#include "formats/vtkhdf.h"
#include "tap.h"

static vh_slot *run(vh_counts *c, int64_t *n, vh_topo **tp, vd_err *e) {
  vh_slot *s = NULL;
  if (vh_compute(c, "t", &s, tp, n, e)) return NULL;
  return s;
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
  return done_testing();
}
