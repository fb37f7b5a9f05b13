/* PostgreSQL decides whether to JIT-compile a query from its plan's total cost
 * (jit_above_cost, 100,000). A vdsql scan's cost is mostly requests (plan_cost.c: a round
 * trip to a server costs 25 page reads), and JIT compiles expressions and tuple
 * deforming: waiting on a server compiles nothing. A catalog audit of 500 datasets cost
 * 140,000, more than half of it requests, and spent 134 ms of its 1.1 s compiling
 * (bench/pg, part 3). So before a plan runs, this decides JIT again, as PostgreSQL does
 * (the same three thresholds), on the cost without what the vdsql scans in it wait on
 * requests: each scan's wait per execution (fdw_plan.c and funcscan.c keep it in the
 * plan node) times its executions (a nested loop's inner side runs once per outer row,
 * unless a Materialize or a Memoize keeps its rows).
 * A plan without a vdsql scan is left as it is. It is an ExecutorStart hook, not a
 * planner hook: the module is loaded while a session's first vdsql query is planned
 * (its wrapper or its support function), after PostgreSQL has called the planner hooks
 * there were, but before that plan starts. JIT happens in ExecutorStart (the
 * expressions are compiled as the plan's nodes are set up), so turning flags off here
 * is in time; the flags only ever go off, so a plan kept in a plan cache stays right. */
#include "fdw.h"

#include "executor/executor.h"
#include "jit/jit.h"
#include "nodes/plannodes.h"

static ExecutorStart_hook_type prev_start;

/* What the vdsql scans of the plan under p wait on requests, run loops times. */
static double waits(Plan *p, List *rtable, double loops) {
  if (!p) return 0;
  double w = 0;
  ListCell *lc;
  switch (nodeTag(p)) {
  case T_ForeignScan:
    w = loops * vdpg_fscan_wait((ForeignScan *)p, rtable);
    break;
  case T_CustomScan:
    w = loops * vdpg_funcscan_wait((CustomScan *)p);
    foreach (lc, ((CustomScan *)p)->custom_plans) w += waits(lfirst(lc), rtable, loops);
    break;
  case T_NestLoop: { /* the inner side once per outer row: but a Materialize runs its side once, a Memoize once per
                       key it keeps */
    Plan *in = innerPlan(p);
    double rows = Max(outerPlan(p)->plan_rows, 1);
    if (IsA(in, Material))
      return waits(outerPlan(p), rtable, loops) + waits(outerPlan(in), rtable, loops);
    if (IsA(in, Memoize))
      return waits(outerPlan(p), rtable, loops) +
             waits(outerPlan(in), rtable, loops * Min(rows, Max(((Memoize *)in)->est_entries, 1)));
    return waits(outerPlan(p), rtable, loops) + waits(in, rtable, loops * rows);
  }
  case T_Append:
    foreach (lc, ((Append *)p)->appendplans) w += waits(lfirst(lc), rtable, loops);
    break;
  case T_MergeAppend:
    foreach (lc, ((MergeAppend *)p)->mergeplans) w += waits(lfirst(lc), rtable, loops);
    break;
  case T_SubqueryScan:
    w = waits(((SubqueryScan *)p)->subplan, rtable, loops);
    break;
  default:
    break;
  }
  return w + waits(outerPlan(p), rtable, loops) + waits(innerPlan(p), rtable, loops);
}

/* The JIT flags PostgreSQL gave st, decided again on its cost without the waits. */
static void decide(PlannedStmt *st) {
  if (!(st->jitFlags & PGJIT_PERFORM)) return;
  double w = waits(st->planTree, st->rtable, 1);
  ListCell *lc;
  foreach (lc, st->subplans) w += waits(lfirst(lc), st->rtable, 1);
  if (w <= 0) return;
  double cost = st->planTree->total_cost - w;
  if (cost <= jit_above_cost) {
    st->jitFlags = PGJIT_NONE;
  } else {
    if (jit_optimize_above_cost < 0 || cost <= jit_optimize_above_cost) st->jitFlags &= ~PGJIT_OPT3;
    if (jit_inline_above_cost < 0 || cost <= jit_inline_above_cost) st->jitFlags &= ~PGJIT_INLINE;
  }
}

static void start(QueryDesc *q, int eflags) {
  if (q->plannedstmt) decide(q->plannedstmt);
  if (prev_start) prev_start(q, eflags);
  else standard_ExecutorStart(q, eflags);
}

void vdpg_plan_jit_init(void) {
  prev_start = ExecutorStart_hook;
  ExecutorStart_hook = start;
}
