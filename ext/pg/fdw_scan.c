/* Running a scan of a vdsql foreign table: the relation's cursor, opened at the first
 * row with the arguments and hints the plan computed (again after each rescan, e.g. once
 * per catalog row of a nested loop), its rows turned into the columns the query reads.
 * The cursor belongs to a memory context under the query's, whose reset callback closes
 * it: End is skipped when a query fails, the callback never is. */
#include "rows.h"

#include "executor/executor.h"
#include "foreign/fdwapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/rel.h"

typedef struct scan_state {
  vdpg_ftable *ft;
  vd_ctx *ctx;        /* the backend's */
  vdpg_identity *id;  /* the credentials and endpoints the scan started with */
  void *cur;       /* the core's cursor, or NULL */
  bool opened;     /* since the last rescan */
  bool advance;    /* the row returned last is still the cursor's current row */
  uint64 cols;     /* relation columns read */
  int64 limit;     /* VD_OP_LIMIT hint, or -1 */
  List *exprs;     /* ExprState per fdw_exprs entry */
  int *binds;      /* per entry: col * 16 + op */
  Datum args[VDSQL_PG_MAX_COLS]; /* argument columns' values, returned as they were bound */
  bool argnull[VDSQL_PG_MAX_COLS];
  /* per argument k fixed by an option: its text, built once in cx. Rows hand it out as the
   * column's value, so it must outlive every row; per-tuple memory is reset before the
   * row is even projected. */
  Datum fixed[VDSQL_PG_MAX_COLS];
  MemoryContext cx;
  MemoryContext argcx; /* bound arguments' values, kept until the next open */
  /* what open_cursor computed, kept in argcx for each open of the relation: an argument
   * bound to a list (url IN (...)) is opened once per distinct value, in turn */
  vd_value cargs[VDSQL_PG_MAX_COLS];
  vd_filter f[VDSQL_PG_MAX_COLS + 2];
  vd_value one[VDSQL_PG_MAX_COLS + 2];
  int nf;
  bool none;
  int nin;                            /* arguments bound to a list */
  int in_k[VDSQL_PG_MAX_COLS];        /* per list: its argument */
  int in_n[VDSQL_PG_MAX_COLS], in_at[VDSQL_PG_MAX_COLS];
  vd_value *in_v[VDSQL_PG_MAX_COLS];  /* its distinct values */
  Datum *in_d[VDSQL_PG_MAX_COLS];     /* the same as the argument column's Datums */
  vdpg_rows rows;      /* the attributes the query reads */
  vd_err err;
} scan_state;

static void close_cursor(void *arg) {
  scan_state *s = arg;
  if (s->cur) s->ft->rel->close(s->cur);
  s->cur = NULL;
}

static void begin(ForeignScanState *node, int eflags) {
  EState *es = node->ss.ps.state;
  MemoryContext cx = AllocSetContextCreate(es->es_query_cxt, "vdsql scan", ALLOCSET_DEFAULT_SIZES);
  scan_state *s = MemoryContextAllocZero(cx, sizeof *s);
  s->cx = cx;
  MemoryContextCallback *cb = MemoryContextAlloc(cx, sizeof *cb);
  cb->func = close_cursor, cb->arg = s;
  MemoryContextRegisterResetCallback(cx, cb); /* before anything can fail */
  node->fdw_state = s;
  if (eflags & EXEC_FLAG_EXPLAIN_ONLY) return;
  MemoryContext old = MemoryContextSwitchTo(cx);
  ForeignScan *fs = (ForeignScan *)node->ss.ps.plan;
  s->ft = vdpg_ftable_get(RelationGetRelid(node->ss.ss_currentRelation));
  /* who the scan acts as is decided now, by the role running the query, and kept to its
   * end: a function of the same query acting as another role changes the context */
  s->ctx = vdpg_ftable_ctx(s->ft);
  s->id = vdpg_identity_take(s->ctx, cx);
  s->argcx = AllocSetContextCreate(cx, "vdsql arguments", ALLOCSET_SMALL_SIZES);
  for (int k = 0; k < vd_rel_nargs(s->ft->rel) && k < VDSQL_PG_MAX_COLS; k++)
    if (s->ft->fixed[k]) s->fixed[k] = PointerGetDatum(cstring_to_text(s->ft->fixed[k]));
  s->cols = strtoull(strVal(list_nth(fs->fdw_private, VDPG_PRIV_COLS)), NULL, 16);
  const char *limit = strVal(list_nth(fs->fdw_private, VDPG_PRIV_LIMIT));
  s->limit = *limit ? strtoll(limit, NULL, 10) : -1;
  List *binds = list_nth(fs->fdw_private, VDPG_PRIV_BINDS);
  s->binds = palloc(sizeof(int) * (list_length(binds) + 1));
  ListCell *lc;
  int i = 0;
  foreach (lc, binds) s->binds[i++] = intVal(lfirst(lc));
  /* the scan's row: the table's, or only the columns read (fdw_plan.c's fdw_scan_tlist) */
  int natts = s->ft->natts, *attcol = s->ft->attcol;
  if (fs->fdw_scan_tlist) {
    natts = list_length(fs->fdw_scan_tlist);
    attcol = palloc(sizeof(int) * natts);
    i = 0;
    foreach (lc, fs->fdw_scan_tlist) {
      Var *v = (Var *)((TargetEntry *)lfirst(lc))->expr;
      attcol[i++] = IsA(v, Var) && v->varattno > 0 && v->varattno <= s->ft->natts ? s->ft->attcol[v->varattno - 1] : -1;
    }
  }
  vdpg_rows_init(&s->rows, s->ft->rel, cx, natts, attcol, s->cols, s->args, s->argnull);
  MemoryContextSwitchTo(old);
  s->exprs = ExecInitExprList(fs->fdw_exprs, (PlanState *)node);
}

/* A value kept in argcx: text and bytes copied out of the memory of one evaluation. */
static vd_value keep(scan_state *s, vd_value v) {
  if ((v.type == VD_TEXT || v.type == VD_BLOB) && v.p) {
    char *p = MemoryContextAlloc(s->argcx, v.n + 1);
    memcpy(p, v.p, v.n);
    p[v.n] = 0;
    v.p = p;
    v.dtor = NULL;
  }
  return v;
}

static bool same_value(const vd_value *a, const vd_value *b) {
  if (a->type != b->type) return false;
  switch (a->type) {
    case VD_INT: return a->i == b->i;
    case VD_REAL: return a->r == b->r;
    case VD_TEXT:
    case VD_BLOB: return a->n == b->n && (a->n == 0 || memcmp(a->p, b->p, a->n) == 0);
    default: return true;
  }
}

/* The elements of an array (an IN list), deconstructed in the current context. */
typedef struct elems {
  Oid type;
  int16 len;
  bool byval;
  Datum *v;
  bool *null;
  int n;
} elems;

static elems array_elems(Datum d) {
  ArrayType *a = DatumGetArrayTypeP(d);
  elems e = {.type = ARR_ELEMTYPE(a)};
  char align;
  get_typlenbyvalalign(e.type, &e.len, &e.byval, &align);
  deconstruct_array(a, e.type, e.len, e.byval, align, &e.v, &e.null, &e.n);
  return e;
}

/* An argument's list: its distinct values other than NULL (a value twice is scanned
 * once, as a UNION of the scans would return it), as core values and as the column's
 * Datums. */
static void bind_list(scan_state *s, int col, int k, Datum d) {
  const vd_relation *r = s->ft->rel;
  elems l = array_elems(d);
  Oid et = l.type;
  Datum *el = l.v;
  bool *nl = l.null;
  int n = l.n, m = 0, j = s->nin++;
  MemoryContext old = MemoryContextSwitchTo(s->argcx);
  s->in_v[j] = palloc(sizeof(vd_value) * (n ? n : 1));
  s->in_d[j] = palloc(sizeof(Datum) * (n ? n : 1));
  for (int e = 0; e < n; e++) {
    if (nl[e]) continue;
    vd_value v = keep(s, vdpg_value_of(el[e], et));
    bool dup = false;
    for (int x = 0; x < m && !dup; x++) dup = same_value(&s->in_v[j][x], &v);
    if (dup) continue;
    s->in_v[j][m] = v;
    s->in_d[j][m] = datumCopy(el[e], l.byval, l.len);
    if (et != vdpg_type_oid(r->cols[col].type)) { /* an int4 list bound to a bigint column */
      bool isnull;
      vdsql_pg_datum(&v, r->cols[col].type, r->cols[col].name, &s->in_d[j][m], &isnull, &s->err);
    }
    m++;
  }
  MemoryContextSwitchTo(old);
  s->in_k[j] = k, s->in_n[j] = m, s->in_at[j] = 0;
  if (!m) s->none = true;
}

/* Computes the bound values, kept for every open of this scan. A NULL argument, or a
 * NULL compared with a column, matches no row: no cursor then. */
static void bind_values(ForeignScanState *node, scan_state *s) {
  const vd_relation *r = s->ft->rel;
  ExprContext *ec = node->ss.ps.ps_ExprContext;
  MemoryContext old = MemoryContextSwitchTo(ec->ecxt_per_tuple_memory);
  int nargs = vd_rel_nargs(r), nf = 0;
  vd_value *args = s->cargs, *one = s->one;
  vd_filter *f = s->f;
  /* the last open's rows are gone: a parent never uses a row of a scan it rescanned */
  MemoryContextReset(s->argcx);
  s->none = false, s->nin = 0;
  for (int k = 0; k < nargs && k < VDSQL_PG_MAX_COLS; k++) {
    args[k] = s->ft->fixed[k] ? vd_text(s->ft->fixed[k]) : vd_null();
    s->argnull[k] = !s->ft->fixed[k];
    if (s->ft->fixed[k]) s->args[k] = s->fixed[k];
  }
  ListCell *lc;
  int i = 0;
  foreach (lc, s->exprs) {
    ExprState *st = lfirst(lc);
    int col = s->binds[i] / 16, op = s->binds[i] % 16;
    i++;
    bool isnull;
    Datum d = ExecEvalExpr(st, ec, &isnull);
    Oid type = exprType((Node *)st->expr);
    if (isnull) {
      s->none = true;
      continue;
    }
    if (op == 0 || op == VDPG_BIND_ARG_IN) { /* an argument */
      int k = 0;
      for (int j = 0; j < col; j++) k += (r->cols[j].flags & VD_COL_ARG) != 0;
      s->argnull[k] = false;
      if (op == VDPG_BIND_ARG_IN) {
        bind_list(s, col, k, d);
        continue;
      }
      args[k] = keep(s, vdpg_value_of(d, type));
      /* kept for the argument's column until the next open (rows outlive this context) */
      MemoryContext o2 = MemoryContextSwitchTo(s->argcx);
      s->args[k] = datumCopy(d, get_typbyval(type), get_typlen(type));
      if (type != vdpg_type_oid(r->cols[col].type)) { /* an int4 bound to a bigint column */
        vd_value v = args[k];
        bool n;
        vdsql_pg_datum(&v, r->cols[col].type, r->cols[col].name, &s->args[k], &n, &s->err);
      }
      MemoryContextSwitchTo(o2);
    } else if (op == VD_OP_IN) {
      elems l = array_elems(d);
      vd_value *vals = MemoryContextAlloc(s->argcx, sizeof(vd_value) * (l.n ? l.n : 1));
      int m = 0;
      for (int j = 0; j < l.n; j++)
        if (!l.null[j]) vals[m++] = keep(s, vdpg_value_of(l.v[j], l.type));
      f[nf++] = (vd_filter){col, VD_OP_IN, vals, m};
    } else {
      one[nf] = keep(s, vdpg_value_of(d, type));
      f[nf] = (vd_filter){col, op, &one[nf], 1};
      nf++;
    }
  }
  if (r->flags & VD_REL_HINTS) {
    one[nf] = vd_int((int64_t)s->cols);
    f[nf] = (vd_filter){-1, VD_OP_COLS, &one[nf], 1};
    nf++;
    if (s->limit >= 0) {
      one[nf] = vd_int(s->limit);
      f[nf] = (vd_filter){-1, VD_OP_LIMIT, &one[nf], 1};
      nf++;
    }
  }
  s->nf = nf;
  for (int j = 0; j < s->nin; j++) args[s->in_k[j]] = vd_int(0); /* set per open */
  for (int k = 0; k < nargs && !s->none; k++) /* an optional argument left out is NULL, as in SQLite */
    if (args[k].type == VD_NULL && !(r->cols[vd_rel_arg_col(r, k)].flags & VD_COL_OPT)) s->none = true;
  MemoryContextSwitchTo(old);
  ResetExprContext(ec);
}

/* Opens the cursor on the bound values, each list at its current value. */
static void open_one(scan_state *s) {
  const vd_relation *r = s->ft->rel;
  int nargs = vd_rel_nargs(r);
  vd_code rc = VD_OK;
  vd_err_clear(&s->err);
  for (int j = 0; j < s->nin; j++) {
    s->cargs[s->in_k[j]] = s->in_v[j][s->in_at[j]];
    s->args[s->in_k[j]] = s->in_d[j][s->in_at[j]];
  }
  void *c = NULL;
  if (s->ft->named) {
    void *tab = vdpg_writer(s->ft, false); /* checks the url's privileges */
    vdpg_identity_use(s->ctx, s->id);
    rc = r->table->open(s->ctx, tab, &c, &s->err);
  } else {
    vdpg_check_relation_args(r, s->cargs, nargs); /* arguments can come from data: checked at each open */
    vdpg_identity_use(s->ctx, s->id);
    rc = r->open(s->ctx, s->cargs, nargs, s->f, s->nf, &c, &s->err);
  }
  s->cur = c;
  s->advance = false;
  if (rc) vdsql_pg_raise(rc, &s->err);
}

/* Moves the lists on to their next combination of values; false after the last. */
static bool next_values(scan_state *s) {
  for (int j = s->nin - 1; j >= 0; j--) {
    if (++s->in_at[j] < s->in_n[j]) return true;
    s->in_at[j] = 0;
  }
  return false;
}

static void open_cursor(ForeignScanState *node, scan_state *s) {
  bind_values(node, s);
  s->opened = true;
  s->advance = false;
  if (!s->none) open_one(s);
}

static TupleTableSlot *iterate(ForeignScanState *node) {
  scan_state *s = node->fdw_state;
  TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
  const vd_relation *r = s->ft->rel;
  ExecClearTuple(slot);
  if (!s->opened) open_cursor(node, s);
  while (!s->cur || !vdpg_rows_next(&s->rows, s->ctx, s->id, s->cur, &s->advance, slot->tts_values, slot->tts_isnull,
                                    &s->err)) {
    if (s->none || !s->nin || !next_values(s)) return slot;
    close_cursor(s); /* the next value of a list: its rows follow */
    open_one(s);
  }
  ExecStoreVirtualTuple(slot);
  if (s->ft->named && r->rowid) vdpg_rowid_to_tid(r->rowid(s->cur), &slot->tts_tid);
  CHECK_FOR_INTERRUPTS();
  return slot;
}

static void rescan(ForeignScanState *node) {
  scan_state *s = node->fdw_state;
  close_cursor(s);
  s->opened = false;
}

static void end(ForeignScanState *node) {
  scan_state *s = node->fdw_state;
  if (s) MemoryContextDelete(s->cx); /* closes the cursor */
  node->fdw_state = NULL;
}

void vdpg_fdw_scan_routine(FdwRoutine *r) {
  r->BeginForeignScan = begin;
  r->IterateForeignScan = iterate;
  r->ReScanForeignScan = rescan;
  r->EndForeignScan = end;
}
