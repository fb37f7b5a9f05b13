/* Shared cursor of the vtkhdf_* relations (see vtkhdf_cursor.h). */
#include "vtkhdf_cursor.h"

#include <stdlib.h>

vd_code vh_cur_open(vd_ctx *ctx, const char *rel, const vd_value *a, unsigned what, void **out, vd_err *err) {
  vh_cur *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  *out = c;
  if (a[0].type == VD_NULL) return VD_OK;
  char *path = vd_value_strdup(&a[0]);
  if (!path) return vd_fail(err, VD_INVALID, "%s: the path must be text", rel);
  vd_code rc = vh_open(ctx, path, what, &c->doc, err);
  free(path);
  if (rc) return rc;
  c->nrows = what == VH_PARTS ? c->doc.nparts : what == VH_ARRAYS ? c->doc.narrays
           : what == VH_SOURCES ? c->doc.nsources : what == VH_STARTS ? c->doc.nstarts : c->doc.nblocks;
  return VD_OK;
}

vd_code vh_cur_next(void *cur, vd_err *err) {
  (void)err;
  ((vh_cur *)cur)->row++;
  return VD_OK;
}
int vh_cur_eof(void *cur) { return ((vh_cur *)cur)->row >= ((vh_cur *)cur)->nrows; }
int64_t vh_cur_rowid(void *cur) { return ((vh_cur *)cur)->row; }
void vh_cur_close(void *cur) {
  if (!cur) return;
  vh_doc_free(&((vh_cur *)cur)->doc);
  free(cur);
}
vd_value vh_int(int64_t v) { return v == VH_NULL ? vd_null() : vd_int(v); }
