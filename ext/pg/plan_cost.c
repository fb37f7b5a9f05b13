/* What a call of a vdsql relation costs the planner, for the foreign tables (fdw_plan.c)
 * and the relation functions (their planner support function, vdsql_relation_support:
 * SupportRequestRows and SupportRequestCost), so both price a call alike.
 *
 * Rows: the catalogue's numbers (ext/core, vd_rel_rows, the ones SQLite's xBestIndex
 * uses): with every argument a constant at plan time, what the connection's document
 * cache already holds (a layer's chunk count in a cached LayerStatus), else the
 * relation's rows per call. Planning never makes a request: a plan is made for EXPLAIN
 * and for prepared statements too, by roles the call would refuse (privileges.c checks
 * at the call), and "opening a database never reaches a URL". So the first query of a
 * session on a dataset gets the default, the next ones the layer's own count.
 *
 * Cost: the requests a call makes (vd_rel_requests) priced by where they go, plus its
 * rows. A local read of a document or a page costs seq_page_cost (a page read, which it
 * is); a round trip to a server (http(s), s3://, az://) REMOTE_REQUEST times that: some
 * milliseconds against tens of microseconds. An argument url not known at plan time (a
 * catalog's column) is priced as remote: catalogs of datasets live on object stores, and
 * that is where parallel workers pay. Not dearer: PostgreSQL decides JIT by total cost,
 * and waiting on a server compiles nothing. At 25, a catalog audit of 51 datasets
 * (catalog x vds_layers x vds_audit) costs about 34,000, under jit_above_cost (100,000),
 * and the calls of one of 500 cost far more than starting workers (parallel_setup_cost,
 * 1,000): a Gather (bench/pg, part 3). */
#include "rows.h"

#include "catalog/pg_class.h"
#include "fmgr.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/cost.h"
#include "optimizer/joininfo.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "parser/parsetree.h"

#define REMOTE_REQUEST 25.0

double vdpg_call_rows(const vd_relation *r, vd_ctx *(*ctx)(const void *), const void *arg, const vd_value *args,
                      int nargs, const vd_filter *f, int nf) {
  /* the context only when it may be used: it applies the caller's identity, whose
   * cache scope is the one the call's documents were kept under */
  return vd_rel_rows(r, args && r->known ? ctx(arg) : NULL, args, nargs, f, nf);
}

static vd_ctx *session_ctx(const void *arg) {
  return vdsql_pg_ctx();
}

/* What one request of a call to url costs (none for a relation that reads nothing). */
static double request_cost(const vd_relation *r, const char *url) {
  bool io = (r->flags & VD_REL_IO) != 0;
  return !io ? 0 : (url && vd_url_reach_of(url) != VD_REACH_NETWORK ? 1 : REMOTE_REQUEST) * seq_page_cost;
}

double vdpg_call_wait(const vd_relation *r, const char *url, double rows) {
  return vd_rel_requests(r, rows) * request_cost(r, url);
}

void vdpg_call_cost(const vd_relation *r, const char *url, double rows, Cost *startup, Cost *total) {
  bool io = (r->flags & VD_REL_IO) != 0;
  double req = request_cost(r, url);
  /* the documents come before the first row; the pages as the rows go. A row of a
   * relation that reads files costs 4 cpu_tuple_cost, about a heap row read from disk
   * (measured for vds_chunks against a native table of the same rows, bench/pg). */
  *startup = r->requests * req;
  *total = vd_rel_requests(r, rows) * req + rows * cpu_tuple_cost * (io ? 4 : 1);
}

char *vdpg_call_url(const vd_relation *r, const vd_value *args, int nargs) {
  for (int k = 0, c; args && k < nargs && (c = vd_rel_arg_col(r, k)) >= 0; k++)
    if (strcmp(r->cols[c].name, "url") == 0 && args[k].type == VD_TEXT) return pnstrdup(args[k].p, args[k].n);
  return NULL;
}

/* The arguments of a call as constants, if every one is known at plan time (a Const,
 * or an expression of constants and bound parameters); false otherwise. Text is
 * borrowed from a copy in the current memory context. */
static bool const_args(const vd_relation *r, PlannerInfo *root, List *exprs, vd_value *args, int *nargs) {
  int n = 0;
  ListCell *lc;
  foreach (lc, exprs) {
    int c = vd_rel_arg_col(r, n);
    if (c < 0 || n >= VDSQL_PG_MAX_COLS) return false;
    Node *e = lfirst(lc);
    if (root && !IsA(e, Const)) e = estimate_expression_value(root, e);
    if (!IsA(e, Const)) return false;
    Const *k = (Const *)e;
    args[n++] = k->constisnull ? vd_null() : vdpg_value_of(k->constvalue, k->consttype);
  }
  *nargs = n;
  return true;
}

double vdpg_func_wait(const vd_relation *r, PlannerInfo *root, List *args, double rows) {
  vd_value a[VDSQL_PG_MAX_COLS];
  int n = 0;
  return vdpg_call_wait(r, const_args(r, root, args, a, &n) ? vdpg_call_url(r, a, n) : NULL, rows);
}

PGDLLEXPORT Datum vdsql_relation_support(PG_FUNCTION_ARGS);

/* The relation functions' planner support function: the rows and the cost of a call, as
 * above. That the planner calls it also loads this module while the query is planned,
 * before the paths are made: a function in FROM is otherwise first called by the
 * executor, and a session's first query would get PostgreSQL's Function Scan instead of
 * the streaming one (funcscan.c). */
PG_FUNCTION_INFO_V1(vdsql_relation_support);
Datum vdsql_relation_support(PG_FUNCTION_ARGS) {
  Node *req = (Node *)PG_GETARG_POINTER(0);
  Oid funcid;
  Node *node;
  PlannerInfo *root;
  if (IsA(req, SupportRequestRows)) {
    SupportRequestRows *q = (SupportRequestRows *)req;
    funcid = q->funcid, node = q->node, root = q->root;
  } else if (IsA(req, SupportRequestCost)) {
    SupportRequestCost *q = (SupportRequestCost *)req;
    funcid = q->funcid, node = q->node, root = q->root;
  } else {
    PG_RETURN_POINTER(NULL);
  }
  const vd_relation *r = vdpg_relation_of(funcid);
  if (!r || !node || !IsA(node, FuncExpr)) PG_RETURN_POINTER(NULL);
  vd_value args[VDSQL_PG_MAX_COLS];
  int nargs = 0;
  bool known = const_args(r, root, ((FuncExpr *)node)->args, args, &nargs);
  double rows = vdpg_call_rows(r, session_ctx, NULL, known ? args : NULL, nargs, NULL, 0);
  if (IsA(req, SupportRequestRows)) {
    ((SupportRequestRows *)req)->rows = rows;
    PG_RETURN_POINTER(req);
  }
  /* A Function Scan counts a call's whole cost (startup and per_tuple here) once, at
   * its start, and cpu_tuple_cost per row it returns on top. */
  Cost startup, total;
  vdpg_call_cost(r, known ? vdpg_call_url(r, args, nargs) : NULL, rows, &startup, &total);
  SupportRequestCost *q = (SupportRequestCost *)req;
  q->startup = 0;
  q->per_tuple = Max(total - rows * cpu_tuple_cost, 0);
  PG_RETURN_POINTER(req);
}

/* Whether rel gives the arguments of a vdsql relation that reads files or the network:
 * a function in FROM that refers to its columns (LATERAL), or a vdsql foreign table with
 * a join clause on it (the arguments bound per row, fdw_plan.c). */
static bool feeds_calls(PlannerInfo *root, RelOptInfo *rel) {
  for (int i = -1; (i = bms_next_member(rel->lateral_referencers, i)) >= 0;) {
    RangeTblEntry *rte = root->simple_rte_array[i];
    if (rte->rtekind != RTE_FUNCTION || list_length(rte->functions) != 1) continue;
    Node *fe = ((RangeTblFunction *)linitial(rte->functions))->funcexpr;
    const vd_relation *r = IsA(fe, FuncExpr) ? vdpg_relation_of(((FuncExpr *)fe)->funcid) : NULL;
    if (r && (r->flags & VD_REL_IO)) return true;
  }
  for (int i = 1; i < root->simple_rel_array_size; i++) {
    RangeTblEntry *rte = root->simple_rte_array[i];
    RelOptInfo *other = root->simple_rel_array[i];
    if (!other || other == rel || rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_FOREIGN_TABLE) continue;
    if (vdpg_is_vdsql_ftable(rte->relid) && have_relevant_joinclause(root, rel, other)) return true;
  }
  return false;
}

/* A catalog of datasets gets a partial scan: a Parallel Seq Scan below the calls its
 * rows drive, so that the planner may put a Gather over them where the calls' cost pays
 * for the workers. PostgreSQL never scans a table under min_parallel_table_scan_size (8
 * MB) in parallel unless told (parallel_workers), and a catalog of URLs is a few pages:
 * hundreds of datasets wait on a server one by one. A Parallel Seq Scan deals out
 * pages, so the workers are one fewer than the pages (a one-page catalog stays serial),
 * at most max_parallel_workers_per_gather. A table whose parallel_workers is set, or
 * that already has a partial path, is left as it is. */
void vdpg_catalog_paths(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte) {
  if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_RELATION || rte->tablesample) return;
  if (rel->reloptkind != RELOPT_BASEREL || !rel->consider_parallel || rel->partial_pathlist != NIL ||
      rel->rel_parallel_workers != -1 || rel->lateral_relids != NULL)
    return;
  int workers = Min(max_parallel_workers_per_gather, (int)rel->pages - 1);
  if (workers <= 0 || !feeds_calls(root, rel)) return;
  add_partial_path(rel, create_seqscan_path(root, rel, NULL, workers));
}
