/* lindi_repair(url): rebuilds a LINDI archive's index and entry from its tar headers
 * (local, S3, Azure) (formats/lindi/lindi_writer_repair.c) and gives one row per action taken;
 * none for a healthy archive, which is only read. */
#include <stdlib.h>

#include "formats/lindi/lindi_writer.h"
#include "vd_catalog.h"

static const vd_colspec cols[] = {{"action", VD_TEXT, 0}, {"name", VD_TEXT, 0},   {"header_offset", VD_INT, 0},
                                  {"size", VD_INT, 0},    {"detail", VD_TEXT, 0}, {"url", VD_TEXT, VD_COL_ARG}};

typedef struct {
  lindi_repair_log log;
  int row;
} cur_t;

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)na, (void)f, (void)nf;
  cur_t *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  *out = c;
  if (a[0].type == VD_NULL) return VD_OK;
  char *url = vd_value_strdup(&a[0]);
  if (!url) return vd_fail(err, VD_INVALID, "lindi_repair: the archive url must be text");
  vd_code rc = lindi_repair(ctx, url, &c->log, err);
  free(url);
  return rc;
}

static vd_code next(void *cur, vd_err *err) {
  (void)err;
  ((cur_t *)cur)->row++;
  return VD_OK;
}
static int eof(void *cur) { return ((cur_t *)cur)->row >= ((cur_t *)cur)->log.n; }
static int64_t rowid(void *cur) { return ((cur_t *)cur)->row; }
static void close_(void *cur) {
  if (!cur) return;
  lindi_repair_log_free(&((cur_t *)cur)->log);
  free(cur);
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  (void)err;
  const lindi_repair_row *r = &((cur_t *)cur)->log.rows[((cur_t *)cur)->row];
  switch (col) {
    case 0: *v = vd_text(r->action); break;
    case 1: *v = r->name ? vd_text(r->name) : vd_null(); break;
    case 2: *v = vd_int(r->o); break;
    case 3: *v = vd_int(r->s); break;
    default: *v = vd_text(r->detail); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_lindi_repair = {
    .name = "lindi_repair",
    VD_COLS(cols),
    .flags = VD_REL_IO | VD_REL_WRITES,
    .rows = 10, .requests = 1,
    .order_col = -1,
    .open = open_,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .doc = "rebuilds a LINDI archive's .tar_index.json and .tar_entry.json from its tar headers (files: crash-safe "
           "as every LINDI write; S3, Azure: one conditional whole-object rewrite): one row per action (listed, relisted, unlisted, unreadable, trashed, cut, index, entry), "
           "none and no write for a healthy archive; the dry run is vdsql_check(url)"};
