/* Shared cursor of the vtkhdf_* relations (see vtkhdf_cursor.h). */
#include "vtkhdf_cursor.h"

#include <stdlib.h>
#include <string.h>

/* The leaf arrays of block (rows come leaf by leaf, in the order the leaves were read) */
static const vh_leafarrs *leaf_of(vh_cur *c, const char *block) {
  if (c->la && (c->la->block == block || !strcmp(c->la->block, block))) return c->la;
  for (int n = 0; n < c->doc.nlarrs; n++) {
    int i = (c->la_hint + n) % c->doc.nlarrs;
    if (!strcmp(c->doc.larrs[i].block, block)) {
      c->la_hint = i + 1;
      return &c->doc.larrs[i];
    }
  }
  return NULL;
}

/* How many sub-rows the current partition row makes */
static int subrows(vh_cur *c) {
  const vh_part *p = c->rows.cur;
  if (c->fan == VH_FAN_TOPO) return p->topo ? VH_NTOPO : 0;
  if (p->step == VH_NULL || !p->type) return 0;
  c->la = leaf_of(c, p->block);
  return c->la ? c->la->na : 0;
}

/* On to the next sub-row, or the first of the next partition row that has some */
static vd_code next_sub(vh_cur *c, vd_err *err) {
  if (c->rows.cur && c->sub + 1 < c->nsub) {
    c->sub++;
    return VD_OK;
  }
  c->sub = 0;
  do {
    vd_code rc = vhp_rows_next(&c->rows, err);
    if (rc) return rc;
    /* a streamed leaf's rows all make as many sub-rows as its first one (the same type
     * and arrays): none, and the rest of the leaf is skipped unread */
    if (!c->rows.eof && !(c->nsub = subrows(c)) && vhp_rows_streamed(&c->rows)) vhp_rows_skip_leaf(&c->rows);
  } while (!c->rows.eof && !c->nsub);
  return VD_OK;
}

vd_code vh_cur_open(vd_ctx *ctx, const char *rel, const vd_value *a, unsigned what, int fan, void **out, vd_err *err) {
  vh_cur *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  *out = c;
  c->doc.file = -1;
  c->what = what;
  c->fan = fan;
  c->rows.doc = &c->doc;
  c->rows.eof = 1;
  c->doc.file = -1;
  if (a[0].type == VD_NULL) return VD_OK;
  char *path = vd_value_strdup(&a[0]);
  if (!path) return vd_fail(err, VD_INVALID, "%s: the url must be text", rel);
  vd_code rc = vhp_open(ctx, path, what, &c->doc, &c->rows, err);
  free(path);
  if (rc) return rc;
  if (what & VH_PARTS) {
    c->rows.eof = 0;
    rc = fan ? next_sub(c, err) : vhp_rows_next(&c->rows, err);
    if (rc) vh_err_redact(err); /* the last guard: no URL secret leaves in a message */
    return rc;
  }
  c->nrows = what == VH_ARRAYS ? c->doc.narrays : what == VH_SOURCES ? c->doc.nsources : what == VH_AMR ? c->doc.nboxes
             : what == VH_TREES ? c->doc.ntrees : c->doc.nblocks;
  return VD_OK;
}

vd_code vh_cur_next(void *cur, vd_err *err) {
  vh_cur *c = cur;
  c->rowid++;
  if (!(c->what & VH_PARTS)) {
    c->row++;
    return VD_OK;
  }
  vd_code rc = c->fan ? next_sub(c, err) : vhp_rows_next(&c->rows, err);
  if (rc) vh_err_redact(err);
  return rc;
}

int vh_cur_eof(void *cur) {
  vh_cur *c = cur;
  return (c->what & VH_PARTS) ? c->rows.eof : c->row >= c->nrows;
}
int64_t vh_cur_rowid(void *cur) { return ((vh_cur *)cur)->rowid; }
void vh_cur_close(void *cur) {
  if (!cur) return;
  vh_cur *c = cur;
  vhp_close(&c->doc, &c->rows);
  free(c);
}
