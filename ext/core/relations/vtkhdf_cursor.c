/* Shared cursor of the vtkhdf_* relations (see vtkhdf_cursor.h). */
#include "vtkhdf_cursor.h"

#include <stdlib.h>

/* vtkhdf_topologies: on to the next topology, or the next PolyData partition */
static vd_code next_topo(vh_cur *c, vd_err *err) {
  if (c->rows.cur && c->rows.cur->topo && c->topo < VH_NTOPO - 1) {
    c->topo++;
    return VD_OK;
  }
  c->topo = 0;
  do {
    vd_code rc = vh_rows_next(&c->rows, err);
    if (rc) return rc;
  } while (!c->rows.eof && !c->rows.cur->topo);
  return VD_OK;
}

vd_code vh_cur_open(vd_ctx *ctx, const char *rel, const vd_value *a, unsigned what, int topo, void **out, vd_err *err) {
  vh_cur *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  *out = c;
  c->doc.file = -1;
  c->what = what;
  c->topo = topo ? 0 : -1;
  c->rows.doc = &c->doc;
  c->rows.eof = 1;
  if (a[0].type == VD_NULL) return VD_OK;
  char *path = vd_value_strdup(&a[0]);
  if (!path) return vd_fail(err, VD_INVALID, "%s: the path must be text", rel);
  vd_code rc = vh_open(ctx, path, what, &c->doc, err);
  free(path);
  if (rc) return rc;
  if (what == VH_PARTS) {
    c->rows.eof = 0;
    return topo ? next_topo(c, err) : vh_rows_next(&c->rows, err);
  }
  c->nrows = what == VH_ARRAYS ? c->doc.narrays : what == VH_SOURCES ? c->doc.nsources
           : what == VH_STARTS ? c->doc.nstarts : c->doc.nblocks;
  return VD_OK;
}

vd_code vh_cur_next(void *cur, vd_err *err) {
  vh_cur *c = cur;
  c->rowid++;
  if (c->what != VH_PARTS) {
    c->row++;
    return VD_OK;
  }
  return c->topo >= 0 ? next_topo(c, err) : vh_rows_next(&c->rows, err);
}

int vh_cur_eof(void *cur) {
  vh_cur *c = cur;
  return c->what == VH_PARTS ? c->rows.eof : c->row >= c->nrows;
}
int64_t vh_cur_rowid(void *cur) { return ((vh_cur *)cur)->rowid; }
void vh_cur_close(void *cur) {
  if (!cur) return;
  vh_doc_free(&((vh_cur *)cur)->doc);
  free(cur);
}
vd_value vh_int(int64_t v) { return v == VH_NULL ? vd_null() : vd_int(v); }
