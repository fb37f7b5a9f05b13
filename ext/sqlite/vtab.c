/* One generic virtual-table module, instantiated once per relation of the catalogue.
 * Argument columns are HIDDEN; xBestIndex refuses plans that leave an argument
 * unbound (SQLITE_CONSTRAINT, so joins bind it from the left) and hands constraints on
 * VD_COL_PUSH columns to the cursor. Plan encoding: idxNum = bitmask of the arguments
 * present; idxStr = "col:op," per pushed constraint, in argv order after the arguments,
 * op one of = < l(<=) > g(>=) I(IN, all values at once). Relations with VD_REL_HINTS
 * also get "U<hex colUsed>;" first and, where the LIMIT can be left to the cursor,
 * "-1:L," and "-1:O," (LIMIT and OFFSET values in argv), handed over as the VD_OP_COLS
 * and VD_OP_LIMIT hints of vd_catalog.h. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glue.h"
SQLITE_EXTENSION_INIT3

typedef struct mod_aux {
  const vd_relation *rel;
  vdsql_conn *conn;
} mod_aux;

typedef struct vt_tab {
  sqlite3_vtab base;
  const vd_relation *rel;
  vd_ctx *ctx;
  sqlite3 *db;
  void *tab;      /* named table (CREATE VIRTUAL TABLE): the core's table state */
  int colmap[64]; /* declared column -> relation column (named tables hide no arguments) */
  /* declared column -> how vt_column gets it: >= 0 its index in the relation's ints()
   * row, -1 through column(), <= -2 argument -2 - fast (an argument column) */
  int fast[64];
  char name[64]; /* the table's own name, for the NOT NULL error SQLite's tables give */
} vt_tab;

typedef struct vt_cur {
  sqlite3_vtab_cursor base;
  void *cur;
  sqlite3_value **args; /* copies, returned for the HIDDEN columns */
  int nargs;
  vd_err err; /* for the per-row calls, so their frames stay small (it is 1 KiB) */
  const int64_t *iv; /* the current row's integers (vd_relation.ints), NULL until asked */
} vt_cur;

/* CREATE VIRTUAL TABLE arguments arrive as SQL tokens: 'text' is unquoted. */
static char *unquote(const char *a) {
  size_t n = strlen(a);
  if (n >= 2 && (a[0] == '\'' || a[0] == '"') && a[n - 1] == a[0]) {
    char *s = sqlite3_malloc64(n), *o = s;
    if (!s) return NULL;
    for (size_t i = 1; i + 1 < n; i++) {
      *o++ = a[i];
      if (a[i] == a[0] && a[i + 1] == a[0]) i++;
    }
    *o = 0;
    return s;
  }
  return sqlite3_mprintf("%s", a);
}

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
  mod_aux *m = aux;
  const vd_relation *r = m->rel;
  int named = r->table && argc > 3; /* eponymous use passes no module arguments */
  void *tab = NULL;
  if (r->table && (r->flags & VD_REL_TABLE_ONLY) && !named) {
    *err = sqlite3_mprintf("%s: use CREATE VIRTUAL TABLE t USING %s(...)", r->name, r->name);
    return SQLITE_ERROR;
  }
  if (named) {
    char *args[16];
    int na = argc - 3 < 16 ? argc - 3 : 16;
    for (int i = 0; i < na; i++) args[i] = unquote(argv[3 + i]);
    vd_err e = {0};
    vd_code rc = r->table->connect(m->conn->ctx, (const char *const *)args, na, &tab, &e);
    for (int i = 0; i < na; i++) sqlite3_free(args[i]);
    if (rc) {
      *err = sqlite3_mprintf("%s", e.msg);
      return vdsql_sqlite_code(rc);
    }
  }
  sqlite3_str *s = sqlite3_str_new(db);
  sqlite3_str_appendall(s, "CREATE TABLE x(");
  int ndecl = 0, colmap[64];
  for (int i = 0; i < r->ncols; i++) {
    static const char *const tn[] = {"", "INTEGER", "REAL", "TEXT", "BLOB"};
    if (named && (r->cols[i].flags & VD_COL_ARG)) continue;
    sqlite3_str_appendf(s, "%s\"%w\" %s%s", ndecl ? ", " : "", r->cols[i].name, tn[r->cols[i].type],
                        (r->cols[i].flags & (VD_COL_ARG | VD_COL_HIDDEN)) ? " HIDDEN" : "");
    if (ndecl < 64) colmap[ndecl] = i;
    ndecl++;
  }
  sqlite3_str_appendall(s, ")");
  char *sql = sqlite3_str_finish(s);
  if (!sql) return SQLITE_NOMEM;
  int rc = sqlite3_declare_vtab(db, sql);
  sqlite3_free(sql);
  vt_tab *t = rc == SQLITE_OK ? sqlite3_malloc(sizeof *t) : NULL;
  if (!t) {
    if (rc == SQLITE_OK) rc = SQLITE_NOMEM;
    else *err = sqlite3_mprintf("%s: %s", r->name, sqlite3_errmsg(db));
    if (tab) r->table->disconnect(tab);
    return rc;
  }
  sqlite3_vtab_config(db, (r->flags & VD_REL_IO) ? SQLITE_VTAB_DIRECTONLY : SQLITE_VTAB_INNOCUOUS);
  if (named) sqlite3_vtab_config(db, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);
  memset(t, 0, sizeof *t);
  t->rel = r;
  t->ctx = m->conn->ctx;
  t->db = db;
  t->tab = tab;
  snprintf(t->name, sizeof t->name, "%s", argv[2]);
  for (int i = 0; i < 64; i++) {
    int col = t->colmap[i] = named ? (i < ndecl ? colmap[i] : 0) : i;
    t->fast[i] = r->ints && r->int_col && col < r->ncols ? r->int_col[col] : -1;
    if (col < r->ncols && (r->cols[col].flags & VD_COL_ARG)) {
      int k = 0;
      for (int j = 0; j < col; j++) k += (r->cols[j].flags & VD_COL_ARG) != 0;
      t->fast[i] = -2 - k;
    }
  }
  *out = &t->base;
  return SQLITE_OK;
}

/* A distinct xCreate keeps a named-table-only module from being eponymous. */
static int vt_create(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
  return vt_connect(db, aux, argc, argv, out, err);
}

static int vt_disconnect(sqlite3_vtab *vt) {
  vt_tab *t = (vt_tab *)vt;
  if (t->tab) t->rel->table->disconnect(t->tab);
  sqlite3_free(vt);
  return SQLITE_OK;
}

static int op_of(unsigned char op) {
  switch (op) {
    case SQLITE_INDEX_CONSTRAINT_EQ: return '=';
    case SQLITE_INDEX_CONSTRAINT_LT: return '<';
    case SQLITE_INDEX_CONSTRAINT_LE: return 'l';
    case SQLITE_INDEX_CONSTRAINT_GT: return '>';
    case SQLITE_INDEX_CONSTRAINT_GE: return 'g';
    default: return 0;
  }
}

static vd_op vd_op_of(int c) {
  switch (c) {
    case '=': return VD_OP_EQ;
    case '<': return VD_OP_LT;
    case 'l': return VD_OP_LE;
    case '>': return VD_OP_GT;
    case 'g': return VD_OP_GE;
    default: return VD_OP_IN;
  }
}

static int vt_best_index(sqlite3_vtab *vt, sqlite3_index_info *info) {
  vt_tab *t = (vt_tab *)vt;
  const vd_relation *r = t->rel;
  if (t->tab) { /* named table: a full scan of its rows */
    info->estimatedCost = 1000;
    info->estimatedRows = 1000;
    return SQLITE_OK;
  }
  int nargs = vd_rel_nargs(r);
  int argcon[32], unusable[32];
  for (int k = 0; k < nargs && k < 32; k++) argcon[k] = -1, unusable[k] = 0;
  vd_filter plan[64];
  int pushcon[64], npush = 0, limcon = -1, offcon = -1;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (c->op == SQLITE_INDEX_CONSTRAINT_LIMIT || c->op == SQLITE_INDEX_CONSTRAINT_OFFSET) {
      if (c->usable) *(c->op == SQLITE_INDEX_CONSTRAINT_LIMIT ? &limcon : &offcon) = i;
      continue;
    }
    if (c->iColumn < 0 || c->iColumn >= r->ncols) continue;
    const vd_colspec *col = &r->cols[c->iColumn];
    if (col->flags & VD_COL_ARG) {
      int k = 0;
      for (int j = 0; j < c->iColumn; j++) k += (r->cols[j].flags & VD_COL_ARG) != 0;
      if (c->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
      if (!c->usable)
        unusable[k] = 1;
      else if (argcon[k] < 0)
        argcon[k] = i;
    } else if ((col->flags & VD_COL_PUSH) && c->usable && op_of(c->op) && npush < 64) {
      int in = c->op == SQLITE_INDEX_CONSTRAINT_EQ && sqlite3_vtab_in(info, i, -1);
      plan[npush].col = c->iColumn;
      plan[npush].op = in ? VD_OP_IN : vd_op_of(op_of(c->op));
      plan[npush].vals = NULL;
      plan[npush].nvals = 0;
      pushcon[npush++] = i;
    }
  }
  int argv = 0, mask = 0, missing = 0;
  for (int k = 0; k < nargs; k++) {
    int col = vd_rel_arg_col(r, k);
    if (argcon[k] >= 0) {
      info->aConstraintUsage[argcon[k]].argvIndex = ++argv;
      info->aConstraintUsage[argcon[k]].omit = 1;
      mask |= 1 << k;
    } else if (unusable[k]) {
      return SQLITE_CONSTRAINT; /* bind it from an outer loop first */
    } else if (!(r->cols[col].flags & VD_COL_OPT)) {
      /* Not constrained at all in this probe (SQLite also probes subsets, e.g. for
       * OR terms): price the plan out; if it is chosen anyway xFilter says which
       * argument is missing. */
      missing = 1;
    }
  }
  sqlite3_str *s = sqlite3_str_new(NULL);
  if (r->flags & VD_REL_HINTS) sqlite3_str_appendf(s, "U%llx;", (unsigned long long)info->colUsed);
  for (int p = 0; p < npush; p++) {
    info->aConstraintUsage[pushcon[p]].argvIndex = ++argv;
    if (plan[p].op == VD_OP_IN) sqlite3_vtab_in(info, pushcon[p], 1);
    int opc = plan[p].op == VD_OP_IN ? 'I' : op_of(info->aConstraint[pushcon[p]].op);
    sqlite3_str_appendf(s, "%d:%c,", plan[p].col, opc);
  }
  if ((r->flags & VD_REL_HINTS) && limcon >= 0) {
    /* The cursor may stop early only when SQLite cuts right after it: every other
     * constraint is an argument it consumes, and the order asked for is its own. */
    int other = 0;
    for (int i = 0; i < info->nConstraint; i++)
      other += i != limcon && i != offcon && !info->aConstraintUsage[i].omit;
    int ordered = info->nOrderBy == 0 || (r->order_col >= 0 && info->nOrderBy == 1 &&
                                          info->aOrderBy[0].iColumn == r->order_col && !info->aOrderBy[0].desc);
    if (!other && ordered) {
      info->aConstraintUsage[limcon].argvIndex = ++argv;
      sqlite3_str_appendall(s, "-1:L,");
      if (offcon >= 0) {
        info->aConstraintUsage[offcon].argvIndex = ++argv;
        sqlite3_str_appendall(s, "-1:O,");
      }
    }
  }
  info->idxNum = mask;
  info->idxStr = sqlite3_str_finish(s);
  info->needToFreeIdxStr = 1;
  double rows = vd_rel_rows(r, NULL, NULL, 0, plan, npush); /* the arguments' values are not known here */
  info->estimatedRows = (sqlite3_int64)rows;
  info->estimatedCost = missing ? 1e300 : rows * ((r->flags & VD_REL_IO) ? 10.0 : 1.0) + 100.0;
  if (r->order_col >= 0 && info->nOrderBy == 1 && info->aOrderBy[0].iColumn == r->order_col &&
      !info->aOrderBy[0].desc)
    info->orderByConsumed = 1;
  return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out) {
  (void)vt;
  vt_cur *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static void reset(vt_tab *t, vt_cur *c) {
  if (c->cur) t->rel->close(c->cur);
  c->cur = NULL;
  c->iv = NULL;
  for (int i = 0; i < c->nargs; i++) sqlite3_value_free(c->args[i]);
  sqlite3_free(c->args);
  c->args = NULL;
  c->nargs = 0;
}

static int vt_close(sqlite3_vtab_cursor *cur) {
  vt_cur *c = (vt_cur *)cur;
  reset((vt_tab *)cur->pVtab, c);
  sqlite3_free(c);
  return SQLITE_OK;
}

static int fail(sqlite3_vtab *vt, vd_code rc, const vd_err *err) {
  sqlite3_free(vt->zErrMsg);
  vt->zErrMsg = sqlite3_mprintf("%s", err->msg);
  return vdsql_sqlite_code(rc);
}

/* IN lists: values copied out of SQLite, since each next may invalidate the last. */
typedef struct in_list {
  vd_value *v;
  int n;
} in_list;

static int collect_in(sqlite3_value *list, in_list *out) {
  sqlite3_value *x;
  int cap = 0;
  for (int rc = sqlite3_vtab_in_first(list, &x); rc == SQLITE_OK && x; rc = sqlite3_vtab_in_next(list, &x)) {
    if (out->n == cap) {
      cap = cap ? cap * 2 : 16;
      vd_value *nv = sqlite3_realloc64(out->v, cap * sizeof *nv);
      if (!nv) return SQLITE_NOMEM;
      out->v = nv;
    }
    vd_value v = vdsql_arg(x);
    if (v.type == VD_TEXT || v.type == VD_BLOB) {
      void *copy = sqlite3_malloc64(v.n + 1);
      if (!copy) return SQLITE_NOMEM;
      memcpy(copy, v.p ? v.p : "", v.n);
      v.p = copy;
      v.dtor = sqlite3_free;
    }
    out->v[out->n++] = v;
  }
  return SQLITE_OK;
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr, int argc, sqlite3_value **argv) {
  vt_cur *c = (vt_cur *)cur;
  vt_tab *t = (vt_tab *)cur->pVtab;
  const vd_relation *r = t->rel;
  reset(t, c);
  if (t->tab) {
    vd_err e = {0};
    vd_code vrc = r->table->open(t->ctx, t->tab, &c->cur, &e);
    return vrc ? fail(cur->pVtab, vrc, &e) : SQLITE_OK;
  }
  int nargs = vd_rel_nargs(r), a = 0, rc = SQLITE_OK;
  vd_value args[32];
  vd_filter f[64];
  in_list lists[64];
  int nf = 0;
  memset(lists, 0, sizeof lists);
  c->args = sqlite3_malloc64((nargs ? nargs : 1) * sizeof *c->args);
  if (!c->args) return SQLITE_NOMEM;
  memset(c->args, 0, (nargs ? nargs : 1) * sizeof *c->args);
  c->nargs = nargs;
  for (int k = 0; k < nargs; k++) {
    int col = vd_rel_arg_col(r, k);
    if (!(idxNum & (1 << k)) && !(r->cols[col].flags & VD_COL_OPT)) {
      sqlite3_free(cur->pVtab->zErrMsg);
      cur->pVtab->zErrMsg = sqlite3_mprintf("%s: argument '%s' is required", r->name, r->cols[col].name);
      return SQLITE_ERROR;
    }
    if ((idxNum & (1 << k)) && a < argc) {
      args[k] = vdsql_arg(argv[a]);
      c->args[k] = sqlite3_value_dup(argv[a]);
      a++;
    } else {
      args[k] = vd_null();
    }
  }
  vd_value single[64];
  int64_t limit = -1, offset = 0;
  const char *p = idxStr;
  if (p && *p == 'U') { /* the columns the statement reads (VD_REL_HINTS) */
    single[nf] = vd_int((int64_t)strtoull(p + 1, NULL, 16));
    f[nf] = (vd_filter){-1, VD_OP_COLS, &single[nf], 1};
    nf++;
    p = strchr(p, ';');
    if (p) p++;
  }
  while (p && *p && a < argc && nf < 63) {
    int col = atoi(p);
    const char *colon = strchr(p, ':');
    if (!colon) break;
    int opc = colon[1];
    if (opc == 'L' || opc == 'O') { /* LIMIT, OFFSET: one hint of the rows taken, below */
      int64_t x = sqlite3_value_int64(argv[a++]);
      if (opc == 'L') limit = x;
      else offset = x > 0 ? x : 0;
      p = strchr(colon, ',');
      if (p) p++;
      continue;
    }
    f[nf].col = col;
    f[nf].op = vd_op_of(opc);
    if (opc == 'I') {
      if ((rc = collect_in(argv[a], &lists[nf])) != SQLITE_OK) goto out;
      f[nf].vals = lists[nf].v;
      f[nf].nvals = lists[nf].n;
    } else {
      single[nf] = vdsql_arg(argv[a]);
      f[nf].vals = &single[nf];
      f[nf].nvals = 1;
    }
    nf++;
    a++;
    p = strchr(colon, ',');
    if (p) p++;
  }
  if (limit >= 0) { /* a negative LIMIT is none */
    single[nf] = vd_int(limit > INT64_MAX - offset ? INT64_MAX : limit + offset);
    f[nf] = (vd_filter){-1, VD_OP_LIMIT, &single[nf], 1};
    nf++;
  }
  vd_err err = {0};
  vd_code vrc = r->open(t->ctx, args, nargs, f, nf, &c->cur, &err);
  if (vrc) rc = fail(cur->pVtab, vrc, &err);
  else if (r->ints && !r->eof(c->cur)) c->iv = r->ints(c->cur);
out:
  for (int i = 0; i < nf; i++) {
    for (int j = 0; j < lists[i].n; j++)
      if (lists[i].v[j].dtor) lists[i].v[j].dtor((void *)lists[i].v[j].p);
    sqlite3_free(lists[i].v);
  }
  return rc;
}

static int vt_next(sqlite3_vtab_cursor *cur) {
  vt_cur *c = (vt_cur *)cur;
  vt_tab *t = (vt_tab *)cur->pVtab;
  c->iv = NULL;
  vd_code rc = t->rel->next(c->cur, &c->err);
  if (!rc) {
    if (t->rel->ints && !t->rel->eof(c->cur)) c->iv = t->rel->ints(c->cur);
    return SQLITE_OK;
  }
  rc = fail(cur->pVtab, rc, &c->err);
  vd_err_clear(&c->err);
  return rc;
}

static int vt_eof(sqlite3_vtab_cursor *cur) {
  vt_cur *c = (vt_cur *)cur;
  return !c->cur || ((vt_tab *)cur->pVtab)->rel->eof(c->cur);
}

/* The rare paths of vt_column, out of line so the common one stays a few instructions. */
static __attribute__((noinline)) int arg_column(vt_cur *c, sqlite3_context *cx, int k) {
  if (k < c->nargs && c->args[k]) sqlite3_result_value(cx, c->args[k]);
  return SQLITE_OK;
}

static __attribute__((noinline)) int column_failed(vt_cur *c, sqlite3_context *cx, vd_value *v, vd_code rc) {
  if (v->dtor) v->dtor((void *)v->p);
  sqlite3_result_error(cx, c->err.msg, -1);
  int src = fail(c->base.pVtab, rc, &c->err);
  vd_err_clear(&c->err);
  return src;
}

/* Every column that is not an integer of the relation's ints() row. */
static __attribute__((noinline)) int slow_column(vt_cur *c, sqlite3_context *cx, unsigned u, int f) {
  const vt_tab *t = (const vt_tab *)c->base.pVtab;
  if (f >= 0) { /* the row's integers were not taken yet (not expected: vt_next takes them) */
    const int64_t *iv = c->iv = t->rel->ints(c->cur);
    if (iv[f] != VD_INT_NULL) sqlite3_result_int64(cx, iv[f]);
    return SQLITE_OK;
  }
  if (f <= -2) return arg_column(c, cx, -2 - f);
  /* only the fields a column sets are initialised (type and dtor here, the relation sets
   * the value) */
  vd_value v;
  v.type = VD_NULL, v.dtor = NULL;
  vd_code rc = t->rel->column(c->cur, t->colmap[u], &v, &c->err);
  if (rc) return column_failed(c, cx, &v, rc);
  if (v.type == VD_INT) sqlite3_result_int64(cx, v.i);
  else vdsql_result(cx, &v);
  return SQLITE_OK;
}

/* Runs once per column per row (7 million times for a 7-column sum over a million rows):
 * an integer of a relation that offers its row's integers (vd_relation.ints) is one load
 * here; everything else goes out of line. */
static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *cx, int col) {
  vt_cur *c = (vt_cur *)cur;
  const vt_tab *t = (const vt_tab *)cur->pVtab;
  unsigned u = (unsigned)col < 64 ? (unsigned)col : 0;
  int f = t->fast[u];
  if (f >= 0 && c->iv) {
    int64_t x = c->iv[f];
    if (x != VD_INT_NULL) sqlite3_result_int64(cx, x);
    return SQLITE_OK;
  }
  return slow_column(c, cx, u, f);
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out) {
  vt_cur *c = (vt_cur *)cur;
  *out = ((vt_tab *)cur->pVtab)->rel->rowid(c->cur);
  return SQLITE_OK;
}

/* Writes to a named table. argv[0] old rowid (NULL for INSERT), argv[1] new rowid,
 * argv[2..] the declared columns. */
static int vt_update(sqlite3_vtab *vt, int argc, sqlite3_value **argv, sqlite3_int64 *rowid) {
  vt_tab *t = (vt_tab *)vt;
  const vd_table_ops *ops = t->rel->table;
  vd_err e = {0};
  vd_code rc;
  if (!t->tab) {
    rc = vd_fail(&e, VD_READONLY, "%s(...) is read-only; write through CREATE VIRTUAL TABLE t USING %s(path)",
                 t->rel->name, t->rel->name);
  } else if (argc == 1) {
    rc = ops->remove(t->tab, sqlite3_value_int64(argv[0]), &e);
  } else if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    vd_value row[64];
    int n = argc - 2 < 64 ? argc - 2 : 64;
    for (int i = 0; i < n; i++) row[i] = vdsql_arg(argv[2 + i]);
    int64_t id = 0;
    int oc = sqlite3_vtab_on_conflict(t->db), nul = vd_rel_null_col(t->rel, row);
    /* as a NOT NULL column of SQLite's own tables: OR IGNORE skips the row (SQLite turns
     * the constraint code into a skip), OR REPLACE has no default to put there and fails */
    if (nul >= 0) {
      sqlite3_free(vt->zErrMsg);
      vt->zErrMsg = sqlite3_mprintf("NOT NULL constraint failed: %s.%s", t->name, t->rel->cols[nul].name);
      return SQLITE_CONSTRAINT_NOTNULL;
    }
    rc = ops->insert(t->tab, row,
                     oc == SQLITE_REPLACE ? VD_CONFLICT_REPLACE : oc == SQLITE_IGNORE ? VD_CONFLICT_IGNORE
                                                                                        : VD_CONFLICT_ABORT,
                     &id, &e);
    *rowid = id;
  } else {
    rc = vd_fail(&e, VD_UNSUPPORTED, "%s: UPDATE is not supported; use INSERT OR REPLACE or DELETE", t->rel->name);
  }
  return rc ? fail(vt, rc, &e) : SQLITE_OK;
}

static int tx(sqlite3_vtab *vt, vd_code (*op)(void *, vd_err *)) {
  vt_tab *t = (vt_tab *)vt;
  vd_err e = {0};
  if (!t->tab) return SQLITE_OK; /* the eponymous (read-only) instance */
  vd_code rc = op(t->tab, &e);
  return rc ? fail(vt, rc, &e) : SQLITE_OK;
}
static int vt_begin(sqlite3_vtab *vt) { return tx(vt, ((vt_tab *)vt)->rel->table->begin); }
static int vt_sync(sqlite3_vtab *vt) { return tx(vt, ((vt_tab *)vt)->rel->table->sync); }
static int vt_commit(sqlite3_vtab *vt) {
  if (((vt_tab *)vt)->tab) ((vt_tab *)vt)->rel->table->commit(((vt_tab *)vt)->tab);
  return SQLITE_OK;
}
static int vt_rollback(sqlite3_vtab *vt) {
  if (((vt_tab *)vt)->tab) ((vt_tab *)vt)->rel->table->rollback(((vt_tab *)vt)->tab);
  return SQLITE_OK;
}
static int vt_savepoint(sqlite3_vtab *vt, int n) {
  if (((vt_tab *)vt)->tab) ((vt_tab *)vt)->rel->table->savepoint(((vt_tab *)vt)->tab, n);
  return SQLITE_OK;
}
static int vt_release(sqlite3_vtab *vt, int n) {
  if (((vt_tab *)vt)->tab && ((vt_tab *)vt)->rel->table->release) ((vt_tab *)vt)->rel->table->release(((vt_tab *)vt)->tab, n);
  return SQLITE_OK;
}
static int vt_rollback_to(sqlite3_vtab *vt, int n) {
  if (((vt_tab *)vt)->tab) ((vt_tab *)vt)->rel->table->rollback_to(((vt_tab *)vt)->tab, n);
  return SQLITE_OK;
}

static const sqlite3_module table_module = {
    .iVersion = 2,
    .xCreate = vt_create,
    .xConnect = vt_connect,
    .xBestIndex = vt_best_index,
    .xDisconnect = vt_disconnect,
    .xDestroy = vt_disconnect, /* DROP TABLE forgets the table, never the archive */
    .xOpen = vt_open,
    .xClose = vt_close,
    .xFilter = vt_filter,
    .xNext = vt_next,
    .xEof = vt_eof,
    .xColumn = vt_column,
    .xRowid = vt_rowid,
    .xUpdate = vt_update,
    .xBegin = vt_begin,
    .xSync = vt_sync,
    .xCommit = vt_commit,
    .xRollback = vt_rollback,
    .xSavepoint = vt_savepoint,
    .xRelease = vt_release,
    .xRollbackTo = vt_rollback_to,
};

/* The other two kinds of module are derived from table_module, so the callbacks are
 * listed once: a read-only table-valued function (eponymous only: no xCreate, no write
 * hooks) and a module that is both a table-valued function and a named writable table
 * (SQLite makes a module eponymous only when xCreate is xConnect). */
static sqlite3_module module, both_module;

static void derive_modules(void) { /* once per process (pthread_once) */
  both_module = table_module;
  both_module.xCreate = vt_connect;
  module = table_module;
  module.iVersion = 0;
  module.xCreate = NULL;
  module.xUpdate = NULL;
  module.xBegin = module.xSync = module.xCommit = module.xRollback = NULL;
  module.xSavepoint = module.xRelease = module.xRollbackTo = NULL;
}

static void aux_destroy(void *p) {
  mod_aux *m = p;
  vdsql_conn_release(m->conn);
  sqlite3_free(m);
}

int vdsql_register_relation(sqlite3 *db, const vd_relation *rel, vdsql_conn *conn) {
  mod_aux *m = sqlite3_malloc(sizeof *m);
  if (!m) return SQLITE_NOMEM;
  m->rel = rel;
  m->conn = conn;
  conn->refs++;
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, derive_modules);
  const sqlite3_module *mod = !rel->table ? &module : (rel->flags & VD_REL_TABLE_ONLY) ? &table_module : &both_module;
  return sqlite3_create_module_v2(db, rel->name, mod, m, aux_destroy);
}
