/* The cursor every vtkhdf_* relation shares: the file is opened once per scan into a
 * vh_doc (only the parts that relation needs). vtkhdf_partitions and vtkhdf_topologies
 * walk rows that are made as they are read (vh_rows); the others walk arrays in memory. */
#ifndef VD_VTKHDF_CURSOR_H
#define VD_VTKHDF_CURSOR_H

#include "../formats/vtkhdf.h"
#include "../vd_catalog.h"

typedef struct vh_cur {
  vh_doc doc;
  unsigned what;
  int row, nrows; /* in-memory relations */
  vh_rows rows;   /* VH_PARTS */
  int topo;       /* vtkhdf_topologies: the topology of the current row, -1 for partitions */
  int64_t rowid;
} vh_cur;

/* topo: 1 for vtkhdf_topologies (rows: the PolyData partitions, four each). */
vd_code vh_cur_open(vd_ctx *ctx, const char *rel, const vd_value *a, unsigned what, int topo, void **out, vd_err *err);
vd_code vh_cur_next(void *cur, vd_err *err);
int vh_cur_eof(void *cur);
int64_t vh_cur_rowid(void *cur);
void vh_cur_close(void *cur);
/* VH_NULL becomes SQL NULL */
vd_value vh_int(int64_t v);
static inline void vh_put(vd_value *v, int64_t x) {
  if (x != VH_NULL) vd_put_int(v, x);
}

#endif
