/* A vdsql relation function in FROM (`FROM vds_chunks(url, layer) c`) as a scan that
 * streams its rows from the core's cursor. PostgreSQL's Function Scan stores every row a
 * function returns in a tuplestore before the first one moves on, in value-per-call mode
 * too, and the tuplestore spills past work_mem: 10M chunks wrote a 2.1 GB temporary
 * file. So the planner hook puts, in place of each Function Scan path of such a call, a
 * custom path of the same cost whose scan reads one row at a time, in flat memory.
 *
 * The cursor is opened at the first row (again after each rescan, e.g. once per catalog
 * row of a nested loop), moved on only when the next row is asked for (a LIMIT met by a
 * row makes no request more), and closed at its last row, at a rescan and at the end of
 * the scan; when a query fails or is cancelled, End is skipped and the reset callback of
 * the scan's memory context closes it. Not at a shutdown: PostgreSQL 15 shuts a plan
 * down after each FETCH from a cursor, and the next FETCH goes on reading. The scan's identity (credentials,
 * endpoints) is taken when the cursor opens and put back before each call into the
 * core: other vdsql scans of the same query run between its rows. */
#include "rows.h"

#include "access/htup_details.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/optimizer.h"
#include "optimizer/plancat.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#define NAME "vdsql function"

PGDLLEXPORT Datum vdsql_relation(PG_FUNCTION_ARGS);

static set_rel_pathlist_hook_type prev_hook;
static CustomPathMethods path_methods;
static CustomScanMethods scan_methods;
static CustomExecMethods exec_methods;

/* custom_private: [0] String: the relation's name; [1] String: the output columns read,
 * a hex bit mask by output column (bit 63: every column from 63 on); [2] Integer: the
 * function's Oid (EXPLAIN's Function Call); [3] String: the cost one execution waits on
 * requests (plan_jit.c). */
enum { PRIV_NAME, PRIV_COLS, PRIV_FUNC, PRIV_WAIT };

double vdpg_funcscan_wait(const CustomScan *cs) {
  if (cs->methods != &scan_methods || list_length(cs->custom_private) <= PRIV_WAIT) return 0;
  return strtod(strVal(list_nth(cs->custom_private, PRIV_WAIT)), NULL);
}

/* The catalogue relation a function stands for, if it is vdsql_relation of a C library
 * that is this one; NULL for any other function. */
const vd_relation *vdpg_relation_of(Oid funcid) {
  HeapTuple tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
  if (!HeapTupleIsValid(tup)) return NULL;
  Form_pg_proc p = (Form_pg_proc)GETSTRUCT(tup);
  bool isnull = true, ours = false;
  char name[NAMEDATALEN];
  strlcpy(name, NameStr(p->proname), sizeof name);
  if (p->prolang == ClanguageId && p->proretset) {
    Datum src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
    ours = !isnull && strcmp(TextDatumGetCString(src), "vdsql_relation") == 0;
  }
  ReleaseSysCache(tup);
  if (!ours) return NULL;
  FmgrInfo fi;
  fmgr_info(funcid, &fi); /* the symbol of this library, not one of the same name elsewhere */
  if (fi.fn_addr != vdsql_relation) return NULL;
  for (int i = 0; vd_relations[i]; i++)
    if (strcmp(vd_relations[i]->name, name) == 0) return vd_relations[i];
  return NULL; /* renamed: the Function Scan stays, and says so */
}

static const vd_relation *relation_named(const char *name) {
  for (int i = 0; vd_relations[i]; i++)
    if (strcmp(vd_relations[i]->name, name) == 0) return vd_relations[i];
  ereport(ERROR, (errcode(ERRCODE_UNDEFINED_FUNCTION), errmsg("vdsql: no relation named \"%s\" in the catalogue", name)));
}

static void pathlist_hook(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte) {
  if (prev_hook) prev_hook(root, rel, rti, rte);
  vdpg_catalog_paths(root, rel, rte); /* plan_cost.c: a catalog driving calls */
  if (rte->rtekind != RTE_FUNCTION || rte->funcordinality || list_length(rte->functions) != 1) return;
  RangeTblFunction *rf = linitial(rte->functions);
  if (!IsA(rf->funcexpr, FuncExpr) || rf->funccolnames != NIL) return; /* a column definition list: not ours */
  Oid funcid = ((FuncExpr *)rf->funcexpr)->funcid;
  const vd_relation *r = vdpg_relation_of(funcid);
  if (!r) return;
  /* the output columns the query reads (a whole-row reference, e.g. a row mark's, keeps
   * the Function Scan: this scan's rows are its columns only) */
  Bitmapset *used = NULL;
  pull_varattnos((Node *)rel->reltarget->exprs, rel->relid, &used);
  ListCell *lc;
  foreach (lc, rel->baserestrictinfo) pull_varattnos((Node *)((RestrictInfo *)lfirst(lc))->clause, rel->relid, &used);
  if (bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, used)) return;
  uint64 cols = 0;
  for (int a = 1; a <= rf->funccolcount; a++)
    if (bms_is_member(a - FirstLowInvalidHeapAttributeNumber, used)) cols |= (uint64)1 << (a - 1 < 63 ? a - 1 : 63);
  char mask[20];
  snprintf(mask, sizeof mask, "%llx", (unsigned long long)cols);
  foreach (lc, rel->pathlist) {
    Path *p = lfirst(lc);
    if (p->pathtype != T_FunctionScan) continue;
    CustomPath *cp = makeNode(CustomPath);
    cp->path = *p; /* the same rows, cost, parameterization and parallel safety */
    cp->path.type = T_CustomPath;
    cp->path.pathtype = T_CustomScan;
    /* [3]: what one execution waits on requests (plan_jit.c) */
    char *wait = psprintf("%.17g", vdpg_func_wait(r, root, ((FuncExpr *)rf->funcexpr)->args, p->rows));
    cp->custom_private = list_make4(makeString(pstrdup(r->name)), makeString(pstrdup(mask)), makeInteger((int)funcid),
                                    makeString(wait));
    cp->methods = &path_methods;
    lfirst(lc) = cp;
  }
}

/* The plan: scanrelid 0 (the executor opens a scan relation only for tables), the scan
 * tuple being the function's columns (custom_scan_tlist), the arguments as custom_exprs
 * (the planner turns an outer relation's columns there into nestloop parameters). */
static Plan *plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best, List *tlist, List *clauses,
                       List *custom_plans) {
  RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
  RangeTblFunction *rf = linitial(rte->functions);
  CustomScan *cs = makeNode(CustomScan);
  cs->scan.scanrelid = 0;
  cs->scan.plan.targetlist = tlist;
  cs->scan.plan.qual = extract_actual_clauses(clauses, false);
  cs->custom_exprs = copyObject(((FuncExpr *)rf->funcexpr)->args);
  cs->custom_private = best->custom_private;
  cs->custom_scan_tlist = build_physical_tlist(root, rel);
  cs->custom_relids = bms_copy(rel->relids);
  cs->methods = &scan_methods;
  return &cs->scan.plan;
}

typedef struct fscan {
  CustomScanState css;
  const vd_relation *rel;
  List *args;        /* ExprState per argument */
  MemoryContext cx;  /* the scan's: buffers, the cursor's callback */
  MemoryContext ocx; /* the last open's identity, cleared at the next open */
  vd_ctx *ctx;
  vdpg_identity *id;
  void *cur;    /* the core's cursor, or NULL */
  bool opened;  /* since the last rescan */
  bool advance; /* the row returned last is still the cursor's current row */
  vdpg_rows rows;
  vd_err err;
  /* the call as pg_stat_user_functions counts it (track_functions = all), from the
   * cursor's open to its end, as fmgr counts a Function Scan's call */
  FmgrInfo flinfo;
  PgStat_FunctionCallUsage fcu;
  bool counting;
} fscan;

static void count_end(fscan *s) {
  if (s->counting) pgstat_end_function_usage(&s->fcu, true);
  s->counting = false;
}

static void close_cursor(void *arg) {
  fscan *s = arg;
  if (s->cur) s->rel->close(s->cur);
  s->cur = NULL;
}

static Node *create_state(CustomScan *cs) {
  fscan *s = (fscan *)newNode(sizeof(fscan), T_CustomScanState);
  s->css.methods = &exec_methods;
  return (Node *)s;
}

static void scan_begin(CustomScanState *node, EState *es, int eflags) {
  fscan *s = (fscan *)node;
  CustomScan *cs = (CustomScan *)node->ss.ps.plan;
  MemoryContext cx = AllocSetContextCreate(es->es_query_cxt, "vdsql function scan", ALLOCSET_DEFAULT_SIZES);
  s->cx = cx;
  MemoryContextCallback *cb = MemoryContextAlloc(cx, sizeof *cb);
  cb->func = close_cursor, cb->arg = s;
  MemoryContextRegisterResetCallback(cx, cb); /* before anything can fail */
  s->ocx = AllocSetContextCreate(cx, "vdsql function scan identity", ALLOCSET_SMALL_SIZES);
  /* EXECUTE on the function, as a Function Scan checks it when its plan starts (a
   * REVOKE EXECUTE must hold whichever scan runs the call) */
  Oid fn = (Oid)intVal(list_nth(cs->custom_private, PRIV_FUNC));
  AclResult acl = pg_proc_aclcheck(fn, GetUserId(), ACL_EXECUTE);
  if (acl != ACLCHECK_OK) aclcheck_error(acl, OBJECT_FUNCTION, get_func_name(fn));
  InvokeFunctionExecuteHook(fn);
  fmgr_info_cxt(fn, &s->flinfo, cx);
  s->rel = relation_named(strVal(list_nth(cs->custom_private, PRIV_NAME)));
  uint64 cols = strtoull(strVal(list_nth(cs->custom_private, PRIV_COLS)), NULL, 16);
  const vd_relation *r = s->rel;
  int attcol[VDSQL_PG_MAX_COLS], natts = 0;
  for (int c = 0; c < r->ncols && natts < VDSQL_PG_MAX_COLS; c++)
    if (!(r->cols[c].flags & (VD_COL_ARG | VD_COL_HIDDEN))) attcol[natts++] = c; /* as gen_sql declares the result */
  int have = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor->natts;
  if (have != natts)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("vdsql: %s returns %d columns here, the catalogue's relation has %d (an extension of "
                           "another version?)", r->name, have, natts)));
  /* the mask is by output column; rows read relation columns */
  uint64 relcols = 0;
  for (int a = 0; a < natts; a++)
    if (cols & ((uint64)1 << (a < 63 ? a : 63))) relcols |= (uint64)1 << (attcol[a] < 63 ? attcol[a] : 63);
  vdpg_rows_init(&s->rows, r, cx, natts, attcol, relcols, NULL, NULL);
  s->rows.hide = strcmp(r->name, "vdsql_config") == 0;
  s->args = ExecInitExprList(cs->custom_exprs, &node->ss.ps);
}

/* The arguments' values and the cursor, as a call of the function gets them. */
static void open_cursor(fscan *s) {
  const vd_relation *r = s->rel;
  ExprContext *ec = s->css.ss.ps.ps_ExprContext;
  MemoryContext old = MemoryContextSwitchTo(ec->ecxt_per_tuple_memory);
  vd_value args[VDSQL_PG_MAX_COLS];
  int nargs = 0;
  ListCell *lc;
  foreach (lc, s->args) {
    if (nargs >= VDSQL_PG_MAX_COLS) break;
    bool isnull;
    Datum d = ExecEvalExpr(lfirst(lc), ec, &isnull);
    int c = vd_rel_arg_col(r, nargs);
    args[nargs++] = isnull || c < 0 ? vd_null() : vdsql_pg_arg(d, r->cols[c].type);
  }
  MemoryContextReset(s->ocx); /* the last open's identity, cleared */
  count_end(s);
  LOCAL_FCINFO(fcinfo, 0);
  InitFunctionCallInfoData(*fcinfo, &s->flinfo, 0, InvalidOid, NULL, NULL);
  pgstat_init_function_usage(fcinfo, &s->fcu);
  s->counting = true;
  s->ctx = vdsql_pg_ctx();
  vdpg_check_relation_args(r, args, nargs); /* before anything is reached */
  s->id = vdpg_identity_take(s->ctx, s->ocx);
  void *c = NULL;
  vd_err_clear(&s->err);
  vd_code rc = r->open(s->ctx, args, nargs, NULL, 0, &c, &s->err);
  s->cur = c;
  MemoryContextSwitchTo(old);
  ResetExprContext(ec);
  s->opened = true;
  s->advance = false;
  if (rc) vdsql_pg_raise(rc, &s->err);
}

static TupleTableSlot *next_row(ScanState *ss) {
  fscan *s = (fscan *)ss;
  TupleTableSlot *slot = ss->ss_ScanTupleSlot;
  ExecClearTuple(slot);
  if (!s->opened) open_cursor(s);
  if (!s->cur) return slot;
  if (!vdpg_rows_next(&s->rows, s->ctx, s->id, s->cur, &s->advance, slot->tts_values, slot->tts_isnull, &s->err)) {
    close_cursor(s); /* what it holds goes now, not at the end of the query */
    count_end(s);
    return slot;
  }
  ExecStoreVirtualTuple(slot);
  CHECK_FOR_INTERRUPTS();
  return slot;
}

static bool recheck(ScanState *ss, TupleTableSlot *slot) {
  return true;
}

static TupleTableSlot *scan_exec(CustomScanState *node) {
  return ExecScan(&node->ss, next_row, recheck);
}

static void scan_rescan(CustomScanState *node) {
  fscan *s = (fscan *)node;
  close_cursor(s);
  count_end(s);
  s->opened = false;
}

static void scan_end(CustomScanState *node) {
  fscan *s = (fscan *)node;
  count_end(s);
  if (s->cx) MemoryContextDelete(s->cx); /* closes the cursor */
  s->cx = NULL;
}

/* The call as a Function Scan shows it: an outer row's column, a nestloop parameter
 * here, is named by its relation. */
static void scan_explain(CustomScanState *node, List *ancestors, ExplainState *es) {
  CustomScan *cs = (CustomScan *)node->ss.ps.plan;
  Oid fn = (Oid)intVal(list_nth(cs->custom_private, PRIV_FUNC));
  FuncExpr *fe = makeFuncExpr(fn, RECORDOID, cs->custom_exprs, InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
  List *dp = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
  ExplainPropertyText("Function Call", deparse_expression((Node *)fe, dp, es->verbose, false), es);
}

void vdpg_funcscan_init(void) {
  path_methods.CustomName = NAME;
  path_methods.PlanCustomPath = plan_path;
  scan_methods.CustomName = NAME;
  scan_methods.CreateCustomScanState = create_state;
  exec_methods.CustomName = NAME;
  exec_methods.BeginCustomScan = scan_begin;
  exec_methods.ExecCustomScan = scan_exec;
  exec_methods.EndCustomScan = scan_end;
  exec_methods.ReScanCustomScan = scan_rescan;
  exec_methods.ExplainCustomScan = scan_explain;
  RegisterCustomScanMethods(&scan_methods); /* a parallel worker finds the plan's methods by name */
  prev_hook = set_rel_pathlist_hook;
  set_rel_pathlist_hook = pathlist_hook;
}
