/* tar_members(url): every header of a tar archive, found by walking it from the start
 * (any ustar/GNU/pax tar; LINDI trash included; tar_scan.h), with whether the LINDI index
 * lists it. */
#include <stdlib.h>

#include "formats/lindi/lindi.h"
#include "formats/tar/tar_scan.h"
#include "vd_catalog.h"

static const vd_colspec cols[] = {
    {"name", VD_TEXT, 0},     {"header_offset", VD_INT, 0}, {"data_offset", VD_INT, 0}, {"size", VD_INT, 0},
    {"type", VD_TEXT, 0},     {"mode", VD_INT, 0},          {"mtime", VD_INT, 0},       {"checksum_ok", VD_INT, 0},
    {"in_index", VD_INT, 0},  {"stored_size", VD_INT, 0},   {"linkname", VD_TEXT, 0},
    {"url", VD_TEXT, VD_COL_ARG}};

typedef struct {
  tar_scan *s;  /* NULL: no rows (a NULL url) */
  int lindi;    /* index loaded */
  lindi_index ix;
} cur_t;

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  cur_t *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  *out = c;
  if (a[0].type == VD_NULL) return VD_OK;
  char *url = vd_value_strdup(&a[0]);
  if (!url) return vd_fail(err, VD_INVALID, "tar_members: the archive url must be text");
  vd_err why;
  vd_code rc = lindi_open(ctx, url, &c->ix, &why);
  if (rc == VD_UNSUPPORTED) { /* a .lindi.json: no tar at all, said as lindi_files says it */
    *err = why;
    free(url);
    return rc;
  }
  c->lindi = rc == VD_OK; /* not LINDI: in_index is NULL */
  rc = tar_scan_open(ctx, url, &c->s, err);
  free(url);
  return rc;
}

static vd_code next(void *cur, vd_err *err) { return tar_scan_next(((cur_t *)cur)->s, err); }
static int eof(void *cur) {
  const cur_t *c = cur;
  return !c->s || c->s->done;
}
static int64_t rowid(void *cur) { return ((cur_t *)cur)->s->off; }

static void close_(void *cur) {
  cur_t *c = cur;
  if (!c) return;
  tar_scan_close(c->s);
  lindi_index_free(&c->ix);
  free(c);
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  cur_t *c = cur;
  const tar_scan *s = c->s;
  const lindi_file *f;
  switch (col) {
    case 0: *v = vd_text(s->name); break;
    case 1: *v = vd_int(s->off); break;
    case 2: *v = vd_int(s->data_off); break;
    case 3: *v = vd_int(s->size); break;
    case 4: *v = vd_text(tar_type_name(s->h.type)); break;
    case 5: *v = vd_int(s->h.mode); break;
    case 6: *v = vd_int(s->h.mtime); break;
    case 7: *v = vd_int(s->h.checksum_ok); break;
    case 9: *v = vd_int(s->stored); break;
    case 10: *v = s->link[0] ? vd_text(s->link) : vd_null(); break;
    case 8:
      f = c->lindi ? lindi_find(&c->ix, s->name) : NULL;
      *v = c->lindi ? vd_int(f && f->o == s->off) : vd_null();
      break;
    default: *v = vd_null(); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_tar_members = {
    .name = "tar_members",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 100, .requests = 1, .rows_per_request = 10,
    .order_col = 1,
    .open = open_,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .doc = "every tar header of an archive, trash included: offsets, size (a sparse file's real size) and bytes stored, type, "
           "checksum, whether the index lists it"};
