/* lindi_tar: a writable table over a local LINDI archive.
 *   CREATE VIRTUAL TABLE a USING lindi_tar('path/x.lindi.tar');
 *   INSERT INTO a(name, data) ...; INSERT OR REPLACE ...; DELETE FROM a WHERE ...
 * Rows are the live members (index entries); changes become visible to lindi, tar and
 * vdsql together at COMMIT (formats/lindi/lindi_writer.c). */
#include <stdlib.h>
#include <string.h>

#include "formats/lindi/lindi_writer.h"
#include "vd_catalog.h"

static const vd_colspec cols[] = {{"name", VD_TEXT, VD_COL_NOTNULL},
                                  {"data", VD_BLOB, VD_COL_NOTNULL},
                                  {"size", VD_INT, 0},
                                  {"header_offset", VD_INT, 0},
                                  {"data_offset", VD_INT, 0}};

typedef struct {
  lindi_writer *w;
  int pos;
  vd_buf data;
} cur_t;

static void skip_dead(cur_t *c) {
  while (c->pos < lindi_writer_count(c->w) && !lindi_writer_file(c->w, c->pos)) c->pos++;
}

static vd_code t_connect(vd_ctx *ctx, const char *const *args, int nargs, void **tab, vd_err *err) {
  if (nargs != 1) return vd_fail(err, VD_INVALID, "lindi_tar takes one argument: the archive path");
  return lindi_writer_open(ctx, args[0], (lindi_writer **)tab, err);
}

static vd_code t_open(vd_ctx *ctx, void *tab, void **out, vd_err *err) {
  if (lindi_writer_scan_start(tab, err)) return err->code;
  cur_t *c = calloc(1, sizeof *c);
  if (!c) {
    lindi_writer_scan_end(tab);
    return vd_nomem(err);
  }
  c->w = tab;
  skip_dead(c);
  *out = c;
  return VD_OK;
}

static vd_code next(void *cur, vd_err *err) {
  cur_t *c = cur;
  c->pos++;
  skip_dead(c);
  return VD_OK;
}
static int eof(void *cur) { return ((cur_t *)cur)->pos >= lindi_writer_count(((cur_t *)cur)->w); }
static int64_t rowid(void *cur) { return ((cur_t *)cur)->pos; }
static void close_(void *cur) {
  if (!cur) return;
  lindi_writer_scan_end(((cur_t *)cur)->w);
  vd_buf_free(&((cur_t *)cur)->data);
  free(cur);
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  cur_t *c = cur;
  const lindi_file *f = lindi_writer_file(c->w, c->pos);
  switch (col) {
    case 0: *v = vd_text(f->name); break;
    case 1:
      if (lindi_writer_read(c->w, c->pos, &c->data, err)) return err->code;
      *v = vd_blob_val(c->data.data ? (const void *)c->data.data : "", c->data.len);
      break;
    case 2: *v = vd_int(f->s); break;
    case 3: *v = vd_int(f->o); break;
    default: *v = vd_int(f->d); break;
  }
  return VD_OK;
}

static vd_code t_insert(void *tab, const vd_value *row, int replace, int64_t *rid, vd_err *err) {
  if (row[0].type != VD_TEXT) return vd_fail(err, VD_CONSTRAINT, "lindi_tar: name must be text");
  if (row[1].type != VD_NULL && row[1].type != VD_BLOB && row[1].type != VD_TEXT)
    return vd_fail(err, VD_CONSTRAINT, "lindi_tar: data must be a blob or text");
  char *name = vd_value_strdup(&row[0]);
  if (!name) return vd_nomem(err);
  if (strlen(name) != row[0].n) {
    free(name);
    return vd_fail(err, VD_INVALID, "lindi_tar: member name contains a NUL byte");
  }
  int pos;
  vd_code rc = lindi_writer_put(tab, name, row[1].p, row[1].type == VD_NULL ? 0 : row[1].n, replace == VD_CONFLICT_REPLACE, &pos, err);
  free(name);
  *rid = pos;
  return rc;
}

static vd_code t_remove(void *tab, int64_t rid, vd_err *err) { return lindi_writer_delete(tab, (int)rid, err); }
static const vd_table_ops ops = {
    .connect = t_connect,
    .disconnect = lindi_tx_disconnect,
    .open = t_open,
    .insert = t_insert,
    .remove = t_remove,
    .begin = lindi_tx_begin,
    .sync = lindi_tx_sync,
    .commit = lindi_tx_commit,
    .rollback = lindi_tx_rollback,
    .savepoint = lindi_tx_savepoint,
    .rollback_to = lindi_tx_rollback_to,
    .release = lindi_tx_release,
    .sees_own_rows = 1,
    .args = "url"};

const vd_relation vd_rel_lindi_tar = {
    .name = "lindi_tar",
    VD_COLS(cols),
    .flags = VD_REL_IO | VD_REL_TABLE_ONLY,
    .rows = 100, .requests = 1,
    .order_col = -1,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .table = &ops,
    .doc = "the live members of a local LINDI archive as a named table: INSERT appends, INSERT OR REPLACE and DELETE trash the old copy; committed crash-safely"};
