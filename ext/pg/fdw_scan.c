/* Running a scan of a vdsql foreign table: the relation's cursor, opened at the first
 * row with the arguments and hints the plan computed (again after each rescan, e.g. once
 * per catalog row of a nested loop), its rows turned into the columns the query reads.
 * The cursor belongs to a memory context under the query's, whose reset callback closes
 * it: End is skipped when a query fails, the callback never is. */
#include "fdw.h"

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
  void *cur;       /* the core's cursor, or NULL */
  bool opened;     /* since the last rescan */
  bool advance;    /* the row returned last is still the cursor's current row */
  uint64 cols;     /* relation columns read */
  int64 limit;     /* VD_OP_LIMIT hint, or -1 */
  List *exprs;     /* ExprState per fdw_exprs entry */
  int *binds;      /* per entry: col * 16 + op */
  Datum args[VDSQL_PG_MAX_COLS]; /* argument columns' values, returned as they were bound */
  bool argnull[VDSQL_PG_MAX_COLS];
  MemoryContext cx, rowcx;
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
  s->rowcx = AllocSetContextCreate(cx, "vdsql row", ALLOCSET_DEFAULT_SIZES);
  s->cols = strtoull(strVal(list_nth(fs->fdw_private, VDPG_PRIV_COLS)), NULL, 16);
  const char *limit = strVal(list_nth(fs->fdw_private, VDPG_PRIV_LIMIT));
  s->limit = *limit ? strtoll(limit, NULL, 10) : -1;
  List *binds = list_nth(fs->fdw_private, VDPG_PRIV_BINDS);
  s->binds = palloc(sizeof(int) * (list_length(binds) + 1));
  ListCell *lc;
  int i = 0;
  foreach (lc, binds) s->binds[i++] = intVal(lfirst(lc));
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
  for (int k = 0; k < nargs && k < VDSQL_PG_MAX_COLS; k++) {
    args[k] = s->ft->fixed[k] ? vd_text(s->ft->fixed[k]) : vd_null();
    s->argnull[k] = !s->ft->fixed[k];
    if (s->ft->fixed[k]) s->args[k] = PointerGetDatum(cstring_to_text(s->ft->fixed[k]));
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
      /* kept for the argument's column, in the scan's context (rows outlive this one) */
      MemoryContext o2 = MemoryContextSwitchTo(s->cx);
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
      rc = r->table->open(vdpg_ftable_ctx(s->ft), tab, &c, &s->err);
    } else {
      vdpg_check_relation_args(r, args, nargs); /* arguments can come from data: checked at each open */
      rc = r->open(vdpg_ftable_ctx(s->ft), args, nargs, f, nf, &c, &s->err);
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
  vd_code rc = VD_OK;
  if (s->cur && s->advance) { /* moved on only now: a LIMIT met by the last row fetches nothing more */
    s->advance = false;
    if ((rc = r->next(s->cur, &s->err))) vdsql_pg_raise(rc, &s->err);
  }
  if (!s->cur || r->eof(s->cur)) return slot;
  MemoryContextReset(s->rowcx);
  MemoryContext old = MemoryContextSwitchTo(s->rowcx);
  const int64_t *iv = r->ints ? r->ints(s->cur) : NULL;
  for (int i = 0; i < s->ft->natts && rc == VD_OK; i++) {
    int c = s->ft->attcol[i];
    slot->tts_isnull[i] = true;
    slot->tts_values[i] = (Datum)0;
    if (c < 0 || !(s->cols & ((uint64)1 << (c < 63 ? c : 63)))) continue;
    if (r->cols[c].flags & VD_COL_ARG) {
      int k = 0;
      for (int j = 0; j < c; j++) k += (r->cols[j].flags & VD_COL_ARG) != 0;
      slot->tts_isnull[i] = s->argnull[k];
      slot->tts_values[i] = s->args[k];
      continue;
    }
    int fast = iv && r->int_col ? r->int_col[c] : -1;
    vd_value v = vd_null();
    if (fast >= 0)
      v = iv[fast] == VD_INT_NULL ? vd_null() : vd_int(iv[fast]);
    else
      rc = r->column(s->cur, c, &v, &s->err);
    if (rc == VD_OK)
      rc = vdsql_pg_datum(&v, r->cols[c].type, r->cols[c].name, &slot->tts_values[i], &slot->tts_isnull[i], &s->err);
    if (v.dtor) v.dtor((void *)v.p);
  }
  MemoryContextSwitchTo(old);
  if (rc) vdsql_pg_raise(rc, &s->err);
  ExecStoreVirtualTuple(slot);
  if (s->ft->named && r->rowid) vdpg_rowid_to_tid(r->rowid(s->cur), &slot->tts_tid);
  s->advance = true;
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
