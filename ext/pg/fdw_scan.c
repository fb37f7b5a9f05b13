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
  vdpg_rows_init(&s->rows, s->ft->rel, cx, s->ft->natts, s->ft->attcol, s->cols, s->args, s->argnull);
  MemoryContextSwitchTo(old);
  s->exprs = ExecInitExprList(fs->fdw_exprs, (PlanState *)node);
}

/* Computes the bound values and opens the cursor. A NULL argument, or a NULL compared
 * with a column, matches no row: no cursor then. */
static void open_cursor(ForeignScanState *node, scan_state *s) {
  const vd_relation *r = s->ft->rel;
  ExprContext *ec = node->ss.ps.ps_ExprContext;
  MemoryContext old = MemoryContextSwitchTo(ec->ecxt_per_tuple_memory);
  int nargs = vd_rel_nargs(r), nf = 0;
  vd_value args[VDSQL_PG_MAX_COLS], one[VDSQL_PG_MAX_COLS + 2];
  vd_filter f[VDSQL_PG_MAX_COLS + 2];
  bool none = false;
  /* the last open's rows are gone: a parent never uses a row of a scan it rescanned */
  MemoryContextReset(s->argcx);
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
      none = true;
      continue;
    }
    if (op == 0) { /* an argument */
      int k = 0;
      for (int j = 0; j < col; j++) k += (r->cols[j].flags & VD_COL_ARG) != 0;
      args[k] = vdpg_value_of(d, type);
      /* kept for the argument's column until the next open (rows outlive this context) */
      MemoryContext o2 = MemoryContextSwitchTo(s->argcx);
      s->args[k] = datumCopy(d, get_typbyval(type), get_typlen(type));
      if (type != vdpg_type_oid(r->cols[col].type)) { /* an int4 bound to a bigint column */
        vd_value v = args[k];
        bool n;
        vdsql_pg_datum(&v, r->cols[col].type, r->cols[col].name, &s->args[k], &n, &s->err);
      }
      MemoryContextSwitchTo(o2);
      s->argnull[k] = false;
    } else if (op == VD_OP_IN) {
      ArrayType *a = DatumGetArrayTypeP(d);
      Oid et = ARR_ELEMTYPE(a);
      int16 len;
      bool byval;
      char align;
      get_typlenbyvalalign(et, &len, &byval, &align);
      Datum *el;
      bool *nl;
      int n;
      deconstruct_array(a, et, len, byval, align, &el, &nl, &n);
      vd_value *vals = palloc(sizeof(vd_value) * (n ? n : 1));
      int m = 0;
      for (int j = 0; j < n; j++)
        if (!nl[j]) vals[m++] = vdpg_value_of(el[j], et);
      f[nf++] = (vd_filter){col, VD_OP_IN, vals, m};
    } else {
      one[nf] = vdpg_value_of(d, type);
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
  for (int k = 0; k < nargs && !none; k++) /* an optional argument left out is NULL, as in SQLite */
    if (args[k].type == VD_NULL && !(r->cols[vd_rel_arg_col(r, k)].flags & VD_COL_OPT)) none = true;
  vd_code rc = VD_OK;
  vd_err_clear(&s->err);
  if (!none) {
    void *c = NULL;
    if (s->ft->named) {
      void *tab = vdpg_writer(s->ft, false); /* checks the url's privileges */
      vdpg_identity_use(s->ctx, s->id);
      rc = r->table->open(s->ctx, tab, &c, &s->err);
    } else {
      vdpg_check_relation_args(r, args, nargs); /* arguments can come from data: checked at each open */
      vdpg_identity_use(s->ctx, s->id);
      rc = r->open(s->ctx, args, nargs, f, nf, &c, &s->err);
    }
    s->cur = c;
  }
  MemoryContextSwitchTo(old);
  ResetExprContext(ec);
  s->opened = true;
  s->advance = false;
  if (rc) vdsql_pg_raise(rc, &s->err);
}

static TupleTableSlot *iterate(ForeignScanState *node) {
  scan_state *s = node->fdw_state;
  TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
  const vd_relation *r = s->ft->rel;
  ExecClearTuple(slot);
  if (!s->opened) open_cursor(node, s);
  if (!s->cur || !vdpg_rows_next(&s->rows, s->ctx, s->id, s->cur, &s->advance, slot->tts_values, slot->tts_isnull,
                                 &s->err))
    return slot;
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
