/* lindi_files(url): the entries of a LINDI archive's .tar_index.json, in index order. */
#include <stdlib.h>

#include "formats/lindi/lindi.h"
#include "vd_catalog.h"

static const vd_colspec cols[] = {{"name", VD_TEXT, 0}, {"header_offset", VD_INT, 0}, {"data_offset", VD_INT, 0},
                                  {"size", VD_INT, 0},  {"url", VD_TEXT, VD_COL_ARG}};

typedef struct {
  lindi_index ix;
  int row;
} cur_t;

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  cur_t *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  *out = c;
  if (a[0].type == VD_NULL) return VD_OK;
  char *url = vd_value_strdup(&a[0]);
  if (!url) return vd_fail(err, VD_INVALID, "lindi_files: the archive url must be text");
  vd_code rc = lindi_open(ctx, url, &c->ix, err);
  free(url);
  return rc;
}

static vd_code next(void *cur, vd_err *err) {
  ((cur_t *)cur)->row++;
  return VD_OK;
}
static int eof(void *cur) { return ((cur_t *)cur)->row >= ((cur_t *)cur)->ix.n; }
static int64_t rowid(void *cur) { return ((cur_t *)cur)->row; }
static void close_(void *cur) {
  if (!cur) return;
  lindi_index_free(&((cur_t *)cur)->ix);
  free(cur);
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  const lindi_file *f = &((cur_t *)cur)->ix.files[((cur_t *)cur)->row];
  switch (col) {
    case 0: *v = vd_text(f->name); break;
    case 1: *v = vd_int(f->o); break;
    case 2: *v = vd_int(f->d); break;
    default: *v = vd_int(f->s); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_lindi_files = {
    .name = "lindi_files",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 100, .requests = 1,
    .order_col = -1,
    .open = open_,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .doc = "the index of a LINDI archive: one row per member with header and data offsets and size"};
