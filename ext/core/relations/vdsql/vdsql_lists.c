/* vdsql_relations() and vdsql_config() as a table: the SQL surface and the settings,
 * listed from the catalogue and the settings table themselves, so they cannot drift
 * from what is registered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vd_buf.h"
#include "vd_catalog.h"

/* --- vdsql_relations(): relations first, then scalar functions --- */
static const vd_colspec rel_cols[] = {{"name", VD_TEXT, 0},
                                      {"kind", VD_TEXT, 0},
                                      {"arguments", VD_TEXT, 0},
                                      {"columns", VD_TEXT, 0},
                                      {"description", VD_TEXT, 0}};

typedef struct {
  int row, nrel, nfn;
  vd_buf text;
} list_cur;

static vd_code rel_open(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)ctx, (void)a, (void)na, (void)f, (void)nf;
  list_cur *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  while (vd_relations[c->nrel]) c->nrel++;
  while (vd_functions[c->nfn]) c->nfn++;
  *out = c;
  return VD_OK;
}

static vd_code list_next(void *cur, vd_err *err) {
  (void)err;
  ((list_cur *)cur)->row++;
  return VD_OK;
}
static int rel_eof(void *cur) { return ((list_cur *)cur)->row >= ((list_cur *)cur)->nrel + ((list_cur *)cur)->nfn; }
static int64_t list_rowid(void *cur) { return ((list_cur *)cur)->row; }
static void list_close(void *cur) {
  if (!cur) return;
  vd_buf_free(&((list_cur *)cur)->text);
  free(cur);
}

/* Argument or result columns of r, comma-separated; optional arguments in [ ]. */
static vd_code names(list_cur *c, const vd_relation *r, int args, vd_value *v, vd_err *err) {
  c->text.len = 0;
  int first = 1, opt = 0;
  for (int i = 0; i < r->ncols; i++) {
    unsigned fl = r->cols[i].flags;
    if (!(fl & VD_COL_ARG) != !args) continue;
    const char *sep = first ? "" : ", ";
    if (args && (fl & VD_COL_OPT) && !opt) sep = first ? "[" : " [, ", opt = 1;
    vd_buf_append(&c->text, sep, strlen(sep));
    vd_buf_append(&c->text, r->cols[i].name, strlen(r->cols[i].name));
    first = 0;
  }
  if (opt) vd_buf_append(&c->text, "]", 1);
  if (vd_buf_append(&c->text, "", 1)) return vd_nomem(err);
  *v = vd_text((const char *)c->text.data);
  return VD_OK;
}

static vd_code rel_column(void *cur, int col, vd_value *v, vd_err *err) {
  list_cur *c = cur;
  if (c->row < c->nrel) {
    const vd_relation *r = vd_relations[c->row];
    switch (col) {
      case 0: *v = vd_text(r->name); return VD_OK;
      case 1: *v = vd_text(r->table ? "writable" : "table"); return VD_OK;
      case 2:
        if ((r->flags & VD_REL_TABLE_ONLY) && r->table->args) { /* only CREATE VIRTUAL TABLE ... USING r(args) */
          *v = vd_text(r->table->args);
          return VD_OK;
        }
        return names(c, r, 1, v, err);
      case 3: return names(c, r, 0, v, err);
      default: *v = vd_text(r->doc ? r->doc : ""); return VD_OK;
    }
  }
  const vd_function *f = vd_functions[c->row - c->nrel];
  switch (col) {
    case 0: *v = vd_text(f->name); break;
    case 1: *v = vd_text("function"); break;
    case 2: *v = vd_text(f->args ? f->args : ""); break;
    case 3: *v = vd_text(f->result == VD_BLOB ? "(a BLOB)" : f->result == VD_INT ? "(an integer)" : "(text)"); break;
    default: *v = vd_text(f->doc ? f->doc : ""); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_vdsql_relations = {
    .name = "vdsql_relations",
    VD_COLS(rel_cols),
    .flags = 0,
    .rows = 40, .requests = 0,
    .order_col = -1,
    .open = rel_open,
    .next = list_next,
    .eof = rel_eof,
    .column = rel_column,
    .rowid = list_rowid,
    .close = list_close,
    .doc = "every relation and function of vdsql: kind (table, writable, function), arguments, columns, description"};

/* --- vdsql_config(): every setting with its value --- */
static const vd_colspec cfg_cols[] = {{"key", VD_TEXT, 0}, {"value", VD_TEXT, 0}, {"meaning", VD_TEXT, 0}};

typedef struct {
  vd_ctx *ctx;
  int row;
  char *value;
} cfg_cur;

static vd_code cfg_open(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)a, (void)na, (void)f, (void)nf;
  cfg_cur *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  c->ctx = ctx;
  *out = c;
  return VD_OK;
}
static vd_code cfg_next(void *cur, vd_err *err) {
  (void)err;
  ((cfg_cur *)cur)->row++;
  return VD_OK;
}
static int cfg_eof(void *cur) {
  const char *k, *d;
  int act;
  return !vd_config_setting(((cfg_cur *)cur)->row, &k, &d, &act);
}
static int64_t cfg_rowid(void *cur) { return ((cfg_cur *)cur)->row; }
static void cfg_close(void *cur) {
  if (!cur) return;
  free(((cfg_cur *)cur)->value);
  free(cur);
}
static vd_code cfg_column(void *cur, int col, vd_value *v, vd_err *err) {
  cfg_cur *c = cur;
  const char *key, *doc;
  int action;
  vd_config_setting(c->row, &key, &doc, &action);
  if (col == 0) {
    *v = vd_text(key);
  } else if (col == 2) {
    *v = vd_text(doc);
  } else if (!action) { /* an action has no value to show */
    free(c->value);
    c->value = NULL;
    if (vd_config_apply(c->ctx, key, NULL, &c->value, err)) return err->code;
    *v = vd_text(c->value);
  }
  return VD_OK;
}

const vd_relation vd_rel_vdsql_config = {
    .name = "vdsql_config",
    VD_COLS(cfg_cols),
    .flags = VD_REL_BACKEND,
    .rows = 50, .requests = 0,
    .order_col = -1,
    .open = cfg_open,
    .next = cfg_next,
    .eof = cfg_eof,
    .column = cfg_column,
    .rowid = cfg_rowid,
    .close = cfg_close,
    .doc = "every setting of vdsql_config with its value and meaning"};
