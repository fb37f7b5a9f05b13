/* vtkhdf_main: a writable table of the files a VTKHDF main file assembles.
 *   CREATE VIRTUAL TABLE m USING vtkhdf_main('out/main.vtkhdf', 'partitions');
 *   INSERT INTO m(file [, step, time] [, block]) ...; DELETE FROM m WHERE ...
 * At COMMIT the main file is rewritten over the members (formats/vtkhdf/vtkhdf_main.c). */
#include <stdlib.h>
#include <string.h>

#include "formats/vtkhdf/vtkhdf_main.h"
#include "vd_catalog.h"

static const vd_colspec cols[] = {{"file", VD_TEXT, VD_COL_NOTNULL},
                                  {"step", VD_INT, 0},
                                  {"time", VD_REAL, 0},
                                  {"block", VD_TEXT, 0},
                                  {"stored", VD_TEXT, 0}};

typedef struct {
  vm_table *t;
  vm_member **v;
  int n, pos;
  char *stored;
} cur_t;

static vd_code t_connect(vd_ctx *ctx, const char *const *args, int nargs, void **tab, vd_err *err) {
  if (nargs != 2)
    return vd_fail(err, VD_INVALID, "vtkhdf_main takes two arguments: the main file's path and 'partitions', 'timesteps' or 'composite'");
  return vm_open(ctx, args[0], args[1], (vm_table **)tab, err);
}

static void t_disconnect(void *tab) { vm_close(tab); }

static vd_code t_open(vd_ctx *ctx, void *tab, void **out, vd_err *err) {
  (void)ctx;
  cur_t *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  c->t = tab;
  if (!(c->v = vm_rows(tab, &c->n))) {
    free(c);
    return vd_nomem(err);
  }
  *out = c;
  return VD_OK;
}

static vd_code next(void *cur, vd_err *err) {
  (void)err;
  ((cur_t *)cur)->pos++;
  return VD_OK;
}
static int eof(void *cur) { return ((cur_t *)cur)->pos >= ((cur_t *)cur)->n; }
static int64_t rowid(void *cur) { return ((cur_t *)cur)->v[((cur_t *)cur)->pos]->id; }
static void close_(void *cur) {
  cur_t *c = cur;
  if (!c) return;
  vm_rows_free(c->v, c->n);
  free(c->stored);
  free(c);
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  cur_t *c = cur;
  const vm_member *m = c->v[c->pos];
  *v = vd_null();
  switch (col) {
    case 0: *v = vd_text(m->file); break;
    case 1:
      if (m->step != VD_INT_NULL) *v = vd_int(m->step);
      break;
    case 2:
      if (vm_table_layout(c->t) == VM_TIMESTEPS) *v = vd_real(m->has_time ? m->time : (double)m->step);
      break;
    case 3:
      if (m->block) *v = vd_text(m->block);
      break;
    default:
      free(c->stored);
      if (!(c->stored = vm_stored_name(c->t, m->canon))) return vd_nomem(err);
      *v = vd_text(c->stored);
  }
  return VD_OK;
}

static vd_code t_insert(void *tab, const vd_value *row, int replace, int64_t *rid, vd_err *err) {
  (void)replace;
  if (row[0].type != VD_TEXT) return vd_fail(err, VD_CONSTRAINT, "vtkhdf_main: file must be text");
  if (row[1].type != VD_NULL && row[1].type != VD_INT) return vd_fail(err, VD_CONSTRAINT, "vtkhdf_main: step must be an integer");
  if (row[2].type != VD_NULL && row[2].type != VD_INT && row[2].type != VD_REAL)
    return vd_fail(err, VD_CONSTRAINT, "vtkhdf_main: time must be a number");
  if (row[3].type != VD_NULL && row[3].type != VD_TEXT) return vd_fail(err, VD_CONSTRAINT, "vtkhdf_main: block must be text");
  if (row[4].type != VD_NULL) return vd_fail(err, VD_CONSTRAINT, "vtkhdf_main: stored is computed, not given");
  char *file = vd_value_strdup(&row[0]), *block = row[3].type == VD_TEXT ? vd_value_strdup(&row[3]) : NULL;
  vd_code rc = VD_OK;
  if (!file || (row[3].type == VD_TEXT && !block)) rc = vd_nomem(err);
  else if (strlen(file) != row[0].n || (block && strlen(block) != row[3].n))
    rc = vd_fail(err, VD_INVALID, "vtkhdf_main: file and block cannot contain NUL bytes");
  else
    rc = vm_insert(tab, file, row[1].type == VD_INT ? row[1].i : VD_INT_NULL,
                   row[2].type == VD_REAL ? row[2].r : row[2].type == VD_INT ? (double)row[2].i : 0, row[2].type != VD_NULL,
                   block, rid, err);
  free(file);
  free(block);
  return rc;
}

static vd_code t_remove(void *tab, int64_t rid, vd_err *err) { return vm_remove(tab, rid, err); }

static const vd_table_ops ops = {
    .connect = t_connect,
    .disconnect = t_disconnect,
    .open = t_open,
    .insert = t_insert,
    .remove = t_remove,
    .begin = vm_tx_begin,
    .sync = vm_tx_sync,
    .commit = vm_tx_commit,
    .rollback = vm_tx_rollback,
    .savepoint = vm_tx_savepoint,
    .rollback_to = vm_tx_rollback_to,
    .release = vm_tx_release,
    .sees_own_rows = 1,
    .args = "url, layout"};

const vd_relation vd_rel_vtkhdf_main = {
    .name = "vtkhdf_main",
    VD_COLS(cols),
    .flags = VD_REL_IO | VD_REL_TABLE_ONLY,
    .rows = 10, .requests = 4,
    .order_col = -1,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .table = &ops,
    .doc = "the local VTKHDF files a multi-file main file assembles without copying (layout 'partitions', 'timesteps' or 'composite'), as a named table: INSERT and DELETE files, COMMIT rewrites the main file atomically"};
