/* The cursor every vtkhdf_* relation shares: the file is opened once per scan (in the
 * HDF5 helper process: vtkhdf_helper.h) into a vh_doc (only the parts that relation needs). vtkhdf_partitions and vtkhdf_topologies
 * walk rows that are made as they are read (vh_rows); the others walk arrays in memory. */
#ifndef VD_VTKHDF_CURSOR_H
#define VD_VTKHDF_CURSOR_H

#include "formats/vtkhdf/vtkhdf.h"
#include "formats/vtkhdf/vtkhdf_helper.h"
#include "vd_catalog.h"

/* How many rows a relation makes of each partition row */
enum { VH_FAN_NONE, VH_FAN_TOPO, VH_FAN_STARTS };

typedef struct vh_cur {
  vh_doc doc;
  unsigned what;
  int row, nrows;         /* in-memory relations */
  vhp_rows rows;          /* VH_PARTS: made in the HDF5 helper */
  int fan;                /* VH_FAN_*: the partition rows fan out into sub-rows */
  int sub, nsub;          /* the current sub-row of the current partition row, and how many */
  const vh_leafarrs *la;  /* VH_FAN_STARTS: the current row's leaf arrays */
  int la_hint;            /* where to look for the next leaf's */
  int64_t rowid;
} vh_cur;

/* fan: VH_FAN_TOPO for vtkhdf_topologies (four rows per PolyData partition),
 * VH_FAN_STARTS for vtkhdf_array_starts (one per PointData/CellData array). */
vd_code vh_cur_open(vd_ctx *ctx, const char *rel, const vd_value *a, unsigned what, int fan, void **out, vd_err *err);
vd_code vh_cur_next(void *cur, vd_err *err);
int vh_cur_eof(void *cur);
int64_t vh_cur_rowid(void *cur);
void vh_cur_close(void *cur);
/* Sets an integer column in place (the front end starts it NULL); VH_NULL stays NULL */
static inline void vh_put(vd_value *v, int64_t x) {
  if (x != VH_NULL) vd_put_int(v, x);
}

#endif
