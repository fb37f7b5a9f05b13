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

/* How iterate gets one attribute the query reads, worked out once per scan (the
 * columns read come from the plan) instead of once per attribute and row. */
enum { READ_ARG, READ_INT, READ_COLUMN };
typedef struct att_read {
  int att;   /* the slot's attribute (0-based) */
  int col;   /* the relation's column */
  int how;   /* READ_* */
  int idx;   /* READ_ARG: the argument k; READ_INT: the index in the relation's ints() row */
  /* A text column's last value as a text Datum, reused while the core gives the same
   * bytes (status has four values over a million rows): no check of the encoding, no
   * palloc, no copy for a repeated value. The buffer is the scan's and is overwritten by
   * the next different value: a row's Datums live until the next row, as they did in
   * the per-row context before. */
  text *buf;
  size_t cap;    /* bytes for the text's data in buf */
  bool cached;   /* buf holds a checked value */
} att_read;

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
  MemoryContext cx, rowcx;
  MemoryContext argcx; /* bound arguments' values, kept until the next open */
  bool rowcx_used; /* since its last reset */
  int nread;
  att_read *read; /* the attributes the query reads, in attribute order */
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
  s->rowcx = AllocSetContextCreate(cx, "vdsql row", ALLOCSET_DEFAULT_SIZES);
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
  const vd_relation *r = s->ft->rel;
  s->read = palloc0(sizeof(att_read) * (s->ft->natts + 1));
  for (int a = 0; a < s->ft->natts; a++) {
    int c = s->ft->attcol[a];
    if (c < 0 || !(s->cols & ((uint64)1 << (c < 63 ? c : 63)))) continue; /* stays NULL */
    att_read *x = &s->read[s->nread++];
    x->att = a, x->col = c;
    if (r->cols[c].flags & VD_COL_ARG) {
      x->how = READ_ARG;
      for (int j = 0; j < c; j++) x->idx += (r->cols[j].flags & VD_COL_ARG) != 0;
    } else if (r->ints && r->int_col && r->int_col[c] >= 0) {
      x->how = READ_INT, x->idx = r->int_col[c];
    } else {
      x->how = READ_COLUMN;
    }
  }
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

/* A text value of a text column as a Datum in the column's buffer: the last one again
 * when the bytes are the same, else checked and copied in. */
static vd_code text_datum(scan_state *s, att_read *x, const vd_value *v, Datum *out) {
  const char *p = v->p ? v->p : "";
  size_t n = v->n;
  if (x->cached && VARSIZE(x->buf) - VARHDRSZ == n && memcmp(VARDATA(x->buf), p, n) == 0) {
    *out = PointerGetDatum(x->buf);
    return VD_OK;
  }
  x->cached = false;
  vd_code rc = vdsql_pg_text_check(p, n, s->ft->rel->cols[x->col].name, &s->err);
  if (rc) return rc;
  if (!x->buf || n > x->cap) {
    size_t cap = n < 32 ? 32 : n * 2;
    if (cap > MaxAllocSize - VARHDRSZ) cap = n; /* too long to double: an error below if too long at all */
    text *b = MemoryContextAlloc(s->cx, VARHDRSZ + cap);
    if (x->buf) pfree(x->buf);
    x->buf = b, x->cap = cap;
  }
  SET_VARSIZE(x->buf, VARHDRSZ + n);
  if (n) memcpy(VARDATA(x->buf), p, n);
  x->cached = true;
  *out = PointerGetDatum(x->buf);
  return VD_OK;
}

static TupleTableSlot *iterate(ForeignScanState *node) {
  scan_state *s = node->fdw_state;
  TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
  const vd_relation *r = s->ft->rel;
  ExecClearTuple(slot);
  if (!s->opened) open_cursor(node, s);
  if (s->cur) vdpg_identity_use(s->ctx, s->id); /* whatever ran since the last row */
  vd_code rc = VD_OK;
  if (s->cur && s->advance) { /* moved on only now: a LIMIT met by the last row fetches nothing more */
    s->advance = false;
    if ((rc = r->next(s->cur, &s->err))) vdsql_pg_raise(rc, &s->err);
  }
  if (!s->cur || r->eof(s->cur)) return slot;
  /* only what vdsql_pg_datum allocates (bytea, numbers as text) lives in rowcx: reset
   * when the last row used it */
  if (s->rowcx_used) MemoryContextReset(s->rowcx);
  s->rowcx_used = false;
  /* every attribute NULL but those read: the unread ones are never looked at */
  memset(slot->tts_isnull, true, sizeof(bool) * s->ft->natts);
  const int64_t *iv = r->ints ? r->ints(s->cur) : NULL;
  for (int j = 0; j < s->nread && rc == VD_OK; j++) {
    att_read *x = &s->read[j];
    Datum *d = &slot->tts_values[x->att];
    bool *isnull = &slot->tts_isnull[x->att];
    if (x->how == READ_ARG) {
      *isnull = s->argnull[x->idx];
      *d = s->args[x->idx];
      continue;
    }
    vd_value v = vd_null();
    if (x->how == READ_INT && iv) {
      if (iv[x->idx] != VD_INT_NULL) *isnull = false, *d = Int64GetDatum(iv[x->idx]);
      continue;
    }
    if ((rc = r->column(s->cur, x->col, &v, &s->err))) break;
    if (v.type == VD_TEXT && r->cols[x->col].type == VD_TEXT) {
      rc = text_datum(s, x, &v, d);
      *isnull = rc != VD_OK;
    } else if (v.type != VD_NULL) {
      MemoryContext old = MemoryContextSwitchTo(s->rowcx);
      s->rowcx_used = true;
      rc = vdsql_pg_datum(&v, r->cols[x->col].type, r->cols[x->col].name, d, isnull, &s->err);
      MemoryContextSwitchTo(old);
    }
    if (v.dtor) v.dtor((void *)v.p);
  }
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
