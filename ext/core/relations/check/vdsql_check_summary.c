/* vdsql_check_summary(url): vdsql_check of one dataset in one row (items checked,
 * problems, the worst verdict), for catalogs. */
#include <stdlib.h>

#include "check_run.h"

static const vd_colspec cols[] = {{"format", VD_TEXT, 0},   {"items", VD_INT, 0}, {"problems", VD_INT, 0},
                                  {"worst", VD_TEXT, 0},    {"url", VD_TEXT, VD_COL_ARG}};

typedef struct {
  vc_run *r;
  int64_t problems;
  int worst; /* -1: none */
  int done;
} sum_cur;

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  sum_cur *k = calloc(1, sizeof *k);
  if (!k) return vd_nomem(err);
  *out = k;
  k->worst = -1;
  vd_value none = vd_null();
  vd_code rc = vc_open(ctx, na > 0 ? &a[0] : &none, "vdsql_check_summary", &k->r, err);
  for (int eof = 0; !rc;) {
    vc_row row;
    if ((rc = vc_next(k->r, &row, &eof, err)) || eof) break;
    k->problems++;
    if (k->worst < 0 || row.verdict < k->worst) k->worst = row.verdict;
  }
  if (rc) k->done = 1;
  return rc;
}

static vd_code next(void *cur, vd_err *err) {
  (void)err;
  ((sum_cur *)cur)->done = 1;
  return VD_OK;
}

static int eof(void *cur) { return ((sum_cur *)cur)->done; }

static int64_t rowid(void *cur) {
  (void)cur;
  return 0;
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  (void)err;
  const sum_cur *k = cur;
  switch (col) {
    case 0: *v = vd_text(vc_format(k->r)); break;
    case 1: *v = vd_int(vc_items(k->r)); break;
    case 2: *v = vd_int(k->problems); break;
    default: *v = k->worst >= 0 ? vd_text(vc_verdict_name(k->worst)) : vd_null(); break;
  }
  return VD_OK;
}

static void close_(void *cur) {
  sum_cur *k = cur;
  if (!k) return;
  vc_close(k->r);
  free(k);
}

const vd_relation vd_rel_vdsql_check_summary = {
    .name = "vdsql_check_summary",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 1, .requests = 3,
    .order_col = -1,
    .open = open_,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .doc = "vdsql_check of one dataset in one row: format, items checked, problems, the worst verdict (NULL: none)"};
