/* vdsql_check(url): one row per problem found in one dataset of any format, in the
 * vocabulary the formats share (check_run.h; docs/check.md defines each verdict). */
#include <stdlib.h>

#include "check_run.h"

static const vd_colspec cols[] = {{"format", VD_TEXT, 0}, {"part", VD_TEXT, 0},   {"item", VD_TEXT, 0},
                                  {"verdict", VD_TEXT, 0}, {"detail", VD_TEXT, 0}, {"url", VD_TEXT, VD_COL_ARG}};

typedef struct {
  vc_run *r;
  vc_row row;
  int eof;
  int64_t n;
} check_cur;

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  check_cur *k = calloc(1, sizeof *k);
  if (!k) return vd_nomem(err);
  *out = k;
  k->eof = 1;
  vd_value none = vd_null();
  vd_code rc = vc_open(ctx, na > 0 ? &a[0] : &none, "vdsql_check", &k->r, err);
  return rc ? rc : vc_next(k->r, &k->row, &k->eof, err);
}

static vd_code next(void *cur, vd_err *err) {
  check_cur *k = cur;
  k->n++;
  return k->eof ? VD_OK : vc_next(k->r, &k->row, &k->eof, err);
}

static int eof(void *cur) { return ((check_cur *)cur)->eof; }

static int64_t rowid(void *cur) { return ((check_cur *)cur)->n; }

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  (void)err;
  const check_cur *k = cur;
  const vc_row *r = &k->row;
  switch (col) {
    case 0: *v = vd_text(vc_format(k->r)); break;
    case 1: *v = r->part ? vd_text(r->part) : vd_null(); break;
    case 2: *v = r->item ? vd_text(r->item) : vd_null(); break;
    case 3: *v = vd_text(vc_verdict_name(r->verdict)); break;
    default: *v = r->detail ? vd_text(r->detail) : vd_null(); break;
  }
  return VD_OK;
}

static void close_(void *cur) {
  check_cur *k = cur;
  if (!k) return;
  vc_close(k->r);
  free(k);
}

const vd_relation vd_rel_vdsql_check = {
    .name = "vdsql_check",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 10, .requests = 3,
    .order_col = -1,
    .open = open_,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .doc = "one row per problem found in a dataset of any format (OpenVDS: every vds_audit finding of every layer, pages "
        "and documents that are missing or do not parse): format, part, item, verdict (unreadable, malformed, missing, "
        "short, mismatch, orphan, uncommitted), detail; none for what is fine, never an error for what the data holds"};
