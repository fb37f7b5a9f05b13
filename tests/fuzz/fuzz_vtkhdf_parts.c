/* libFuzzer target: the VTKHDF partition math on hostile counts and Steps arrays (the
 * values a broken or malicious file puts in NumberOfPoints/Cells/ConnectivityIds and the
 * Steps datasets). The input decides the shape (UG or PolyData, steps, entries, which
 * Steps datasets exist, 1-D or (NSteps, 4) offsets, a window size, a batch size) and the
 * values; every leaf goes through vh_compute (in memory) and through the windowed
 * iterator in batches, which must agree row for row or fail alike. Differences abort. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/vtkhdf/vtkhdf.h"
#include "fuzz_input.h"

static int64_t value(in *s) { return hostile_value(s, 13); }

static int64_t *array(in *s, int64_t n) {
  int64_t *a = malloc((size_t)(n ? n : 1) * sizeof *a);
  if (!a) abort();
  for (int64_t i = 0; i < n; i++) a[i] = value(s);
  return a;
}

static vd_code load(void *arg, int64_t lo, int64_t n, int64_t *dst, vd_err *err) {
  memcpy(dst, (const int64_t *)arg + lo, (size_t)n * sizeof *dst);
  return VD_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  in s = {data, size};
  unsigned flags = byte(&s);
  vh_counts c = {0};
  c.poly = flags & 1;
  c.has_steps = (flags & 2) != 0;
  int cols1 = (flags & 4) != 0;
  c.nsteps = c.has_steps ? byte(&s) % 9 : 1;
  int64_t n = byte(&s) % 48, window = 1 + byte(&s) % 9;
  int ntopo = c.poly ? VH_NTOPO : 1, cols = c.poly && !cols1 ? VH_NTOPO : 1;
  int64_t *np = array(&s, n), *nc[VH_NTOPO] = {0}, *nci[VH_NTOPO] = {0};
  c.np = np, c.n_np = n;
  for (int k = 0; k < ntopo; k++) {
    nc[k] = array(&s, n), nci[k] = array(&s, n);
    c.nc[k] = nc[k], c.nci[k] = nci[k], c.n_nc[k] = c.n_nci[k] = n;
  }
  int64_t *steps[5] = {0};
  double *values = NULL;
  if (c.has_steps) {
    int64_t ns = c.nsteps + (int64_t)(flags >> 6) - 1; /* sometimes a row short or long */
    if (ns < 0) ns = 0;
    for (int i = 0; i < 5; i++)
      if (!(flags & (8 << (i % 3))) || i >= 3) steps[i] = array(&s, ns * (i >= 3 ? cols : 1));
    c.part_offsets = steps[0], c.n_part_offsets = steps[0] ? ns : 0;
    c.number_of_parts = steps[1], c.n_number_of_parts = steps[1] ? ns : 0;
    c.point_offsets = steps[2], c.n_point_offsets = steps[2] ? ns : 0;
    c.cell_offsets = steps[3], c.n_cell_offsets = ns, c.cell_offsets_cols = cols;
    c.conn_offsets = steps[4], c.n_conn_offsets = ns, c.conn_offsets_cols = cols;
    values = calloc((size_t)(ns ? ns : 1), sizeof *values);
    c.values = values, c.n_values = ns;
  }

  vh_slot *ref = NULL;
  vh_topo *rt = NULL;
  int64_t nref = 0;
  vd_err e1, e2;
  vd_code rc1 = vh_compute(&c, "fuzz", &ref, c.poly ? &rt : NULL, &nref, &e1);

  vh_col cnp, cnc[VH_NTOPO], cnci[VH_NTOPO], cscan[VH_NTOPO];
  vh_col *pnc[VH_NTOPO], *pnci[VH_NTOPO], *pscan[VH_NTOPO];
  vh_col_lazy(&cnp, "NumberOfPoints", "fuzz", n, load, np);
  cnp.window = window;
  for (int k = 0; k < ntopo; k++) {
    vh_col_lazy(&cnc[k], "NumberOfCells", "fuzz", n, load, nc[k]);
    vh_col_lazy(&cnci[k], "NumberOfConnectivityIds", "fuzz", n, load, nci[k]);
    vh_col_lazy(&cscan[k], "NumberOfCells", "fuzz", n, load, nc[k]);
    cnc[k].window = cnci[k].window = cscan[k].window = window;
    pnc[k] = &cnc[k], pnci[k] = &cnci[k], pscan[k] = &cscan[k];
  }
  vh_iter it;
  vd_code rc2 = vh_iter_init(&it, &c, &cnp, pnc, pnci, pscan, "fuzz", &e2);
  int64_t i = 0;
  int batch = 1 + (int)(flags >> 3) % 7; /* batches of 1..7 rows through vh_iter_fill */
  while (!rc2) {
    vh_slot x[8];
    vh_topo y[8];
    int got;
    rc2 = vh_iter_fill(&it, x, c.poly ? y : NULL, batch, &got, &e2);
    /* in memory, every row the iterator gives must be the same (vh_compute checks all
     * counts first, so it may refuse a file whose bad entry the iterator has not reached) */
    for (int k = 0; k < got; k++, i++)
      if (!rc1 && (i >= nref || memcmp(&x[k], &ref[i], sizeof x[k]) || (rt && memcmp(&y[k], &rt[i], sizeof y[k]))))
        abort();
    if (got < batch) break;
  }
  if (!rc1 && (rc2 || i != nref)) abort();   /* in memory fine: so is the stream, to the end */
  /* refused in memory: the stream must refuse too, unless the fault is a negative count
   * in a window the stream never needed */
  if (rc1 && !rc2 && !strstr(e1.msg, "] is negative")) abort();
  vh_col_free(&cnp);
  for (int k = 0; k < ntopo; k++) vh_col_free(&cnc[k]), vh_col_free(&cnci[k]), vh_col_free(&cscan[k]);
  free(ref), free(rt), free(np), free(values);
  for (int k = 0; k < ntopo; k++) free(nc[k]), free(nci[k]);
  for (int k = 0; k < 5; k++) free(steps[k]);
  return 0;
}
