/* Planning a scan of a vdsql foreign table: which WHERE clauses and join clauses bind
 * the relation's arguments (consumed), which narrow its scan (VD_COL_PUSH: handed over
 * as hints and still checked here), the columns read and the LIMIT a lone scan may stop
 * at, as SQLite's xBestIndex hands them over (ext/sqlite/vtab.c). A join clause on an
 * argument gives a parameterized path: `FROM catalog c JOIN vds_layers l ON l.url =
 * c.url` opens the relation once per catalog row. A plan that leaves an argument unbound
 * is refused, naming it. */
#include "fdw.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "foreign/fdwapi.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/selfuncs.h"

typedef struct plan_state {
  vdpg_ftable *ft;
  uint64 base_bound; /* arguments bound by an option or a WHERE clause without other tables */
  double rows;       /* per scan, the arguments bound */
  const char *url;   /* the url when a constant (a WHERE clause or an option), else NULL */
  List *checked;     /* base clauses that filter rows (not those binding arguments) */
} plan_state;

static bool own_var(Node *n, Index varno, AttrNumber *att) {
  if (n && IsA(n, RelabelType)) n = (Node *)((RelabelType *)n)->arg;
  if (!n || !IsA(n, Var)) return false;
  Var *v = (Var *)n;
  if (v->varno != (int)varno || v->varlevelsup != 0 || v->varattno <= 0) return false;
  *att = v->varattno;
  return true;
}

static bool numeric_type(Oid t) {
  return t == INT2OID || t == INT4OID || t == INT8OID || t == FLOAT4OID || t == FLOAT8OID;
}

/* `col op expr` (either way round) with a built-in comparison whose meaning the core
 * shares: numbers with =, <, <=, >, >=; text and bytes with = only (text order depends on
 * the collation, the core compares bytes). expr has no column of this table and no
 * volatile function, so it can be computed before the scan opens. IN lists come as
 * ScalarArrayOpExpr. */
static bool match(PlannerInfo *root, Expr *clause, Index varno, const vdpg_ftable *ft, int *col, vd_op *op,
                  Expr **other) {
  AttrNumber att = 0;
  Oid opno;
  Node *l, *r;
  bool in = false;
  if (IsA(clause, OpExpr) && list_length(((OpExpr *)clause)->args) == 2) {
    opno = ((OpExpr *)clause)->opno;
    l = linitial(((OpExpr *)clause)->args), r = lsecond(((OpExpr *)clause)->args);
  } else if (IsA(clause, ScalarArrayOpExpr) && ((ScalarArrayOpExpr *)clause)->useOr) {
    opno = ((ScalarArrayOpExpr *)clause)->opno;
    l = linitial(((ScalarArrayOpExpr *)clause)->args), r = lsecond(((ScalarArrayOpExpr *)clause)->args);
    in = true;
  } else {
    return false;
  }
  if (opno >= FirstNormalObjectId) return false; /* a user's operator: its meaning is its own */
  bool swapped = false;
  if (!own_var(l, varno, &att)) {
    if (in || !own_var(r, varno, &att)) return false;
    Node *t = l;
    l = r, r = t, swapped = true;
  }
  if (att > ft->natts || ft->attcol[att - 1] < 0) return false;
  if (contain_var_clause(r) && bms_is_member((int)varno, pull_varnos(root, r))) return false;
  if (contain_volatile_functions(r)) return false;
  const char *name = get_opname(opno);
  vd_op o = 0;
  if (!name) return false;
  if (strcmp(name, "=") == 0) o = in ? VD_OP_IN : VD_OP_EQ;
  else if (in) return false;
  else if (strcmp(name, "<") == 0) o = swapped ? VD_OP_GT : VD_OP_LT;
  else if (strcmp(name, "<=") == 0) o = swapped ? VD_OP_GE : VD_OP_LE;
  else if (strcmp(name, ">") == 0) o = swapped ? VD_OP_LT : VD_OP_GT;
  else if (strcmp(name, ">=") == 0) o = swapped ? VD_OP_LE : VD_OP_GE;
  else return false;
  int c = ft->attcol[att - 1];
  vd_type t = ft->rel->cols[c].type;
  Oid rt = exprType(r);
  if (in) rt = get_element_type(rt);
  if (t == VD_INT || t == VD_REAL) {
    if (!numeric_type(rt)) return false;
  } else if (o != VD_OP_EQ && o != VD_OP_IN) {
    return false;
  } else if (rt != vdpg_type_oid(t)) {
    return false;
  }
  *col = c, *op = o, *other = (Expr *)r;
  return true;
}

static int arg_k(const vd_relation *r, int col) {
  int k = 0;
  if (!(r->cols[col].flags & VD_COL_ARG)) return -1;
  for (int j = 0; j < col; j++) k += (r->cols[j].flags & VD_COL_ARG) != 0;
  return k;
}

/* Arguments that must be bound: those not optional and not fixed by an option. */
static uint64 required(const vdpg_ftable *ft) {
  uint64 m = 0;
  for (int k = 0, c; (c = vd_rel_arg_col(ft->rel, k)) >= 0; k++)
    if (!(ft->rel->cols[c].flags & VD_COL_OPT) && !ft->fixed[k]) m |= (uint64)1 << k;
  return m;
}

static vd_ctx *ftable_ctx(const void *ft) {
  return vdpg_ftable_ctx(ft);
}

/* How many values an argument's list gives: a constant array's length, else a guess. */
static double list_values(Expr *e) {
  if (e && IsA(e, Const) && !((Const *)e)->constisnull)
    return Max(1, ArrayGetNItems(ARR_NDIM(DatumGetArrayTypeP(((Const *)e)->constvalue)),
                                 ARR_DIMS(DatumGetArrayTypeP(((Const *)e)->constvalue))));
  return 10;
}

static void rel_size(PlannerInfo *root, RelOptInfo *baserel, Oid relid) {
  plan_state *ps = palloc0(sizeof *ps);
  ps->ft = vdpg_ftable_get(relid);
  const vd_relation *r = ps->ft->rel;
  vd_filter f[VDSQL_PG_MAX_COLS];
  int nf = 0;
  vd_value args[VDSQL_PG_MAX_COLS]; /* the arguments known at plan time: constant clauses, options */
  uint64 constant = 0;
  int nargs = ps->ft->named ? 0 : vd_rel_nargs(r);
  if (nargs > VDSQL_PG_MAX_COLS) nargs = VDSQL_PG_MAX_COLS;
  for (int k = 0; k < nargs; k++) {
    args[k] = vd_null(); /* an optional argument left out */
    if (ps->ft->fixed[k]) args[k] = vd_text(ps->ft->fixed[k]), constant |= (uint64)1 << k;
    else if (r->cols[vd_rel_arg_col(r, k)].flags & VD_COL_OPT) constant |= (uint64)1 << k;
  }
  List *checked = NIL; /* the clauses that filter the relation's rows, not those binding its arguments */
  double in_values = 1;
  ListCell *lc;
  foreach (lc, baserel->baserestrictinfo) {
    RestrictInfo *ri = lfirst(lc);
    int col;
    vd_op op;
    Expr *other;
    if (ps->ft->named || !match(root, ri->clause, baserel->relid, ps->ft, &col, &op, &other)) {
      checked = lappend(checked, ri);
      continue;
    }
    int k = arg_k(r, col);
    if (k >= 0 && (op == VD_OP_EQ || op == VD_OP_IN) && !(ps->base_bound & ((uint64)1 << k))) {
      ps->base_bound |= (uint64)1 << k; /* consumed as in plan(): the first such clause per argument */
      if (op == VD_OP_IN) {
        in_values *= list_values(other); /* a scan per value; the url not one constant */
        continue;
      }
      Node *e = estimate_expression_value(root, (Node *)other);
      if (IsA(e, Const) && k < VDSQL_PG_MAX_COLS) {
        args[k] = ((Const *)e)->constisnull ? vd_null() : vdpg_value_of(((Const *)e)->constvalue, ((Const *)e)->consttype);
        constant |= (uint64)1 << k;
      }
      continue;
    }
    checked = lappend(checked, ri);
    if (k < 0 && (r->cols[col].flags & VD_COL_PUSH) && nf < VDSQL_PG_MAX_COLS) f[nf++] = (vd_filter){col, op, NULL, 0};
  }
  /* rows per call: the layer's own count when url and layer are constants the cache
   * knows, else the relation's default per call (plan_cost.c); times the values of an
   * argument's IN list, a scan per value */
  bool all = nargs > 0 && nargs < 64 && constant == ((uint64)1 << nargs) - 1;
  ps->rows = (ps->ft->named ? 1000 : vdpg_call_rows(r, ftable_ctx, ps->ft, all ? args : NULL, nargs, f, nf)) * in_values;
  ps->url = ps->ft->named ? (ps->ft->nconn ? ps->ft->conn[0] : NULL) : vdpg_call_url(r, args, nargs);
  /* The estimate is already per scan of the bound arguments: `url = ...` picks the
   * dataset and removes none of its rows, so its default selectivity (0.005) must not
   * count. Counted, a 1M-row layer was estimated at 25 rows, and GROUP BY got a sort
   * spilling to disk instead of a hash aggregate (2/3 of the query's time). */
  baserel->rows = clamp_row_est(ps->rows * clauselist_selectivity(root, checked, 0, JOIN_INNER, NULL));
  ps->checked = checked;
  baserel->fdw_private = ps;
}

/* What opening the relation once costs: its requests and rows (plan_cost.c); a
 * parameterized path is this per outer row (the nested loop above multiplies). */
static void costs(const plan_state *ps, double rows, Cost *startup, Cost *total) {
  vdpg_call_cost(ps->ft->rel, ps->url, rows, startup, total);
}

typedef struct cand {
  RestrictInfo *ri;
  int k;
  Relids outer;
} cand;

static bool ec_matches(PlannerInfo *root, RelOptInfo *rel, EquivalenceClass *ec, EquivalenceMember *em, void *arg) {
  AttrNumber att = 0;
  return own_var((Node *)em->em_expr, rel->relid, &att) && att == *(AttrNumber *)arg;
}

static void add_cand(PlannerInfo *root, List **out, RestrictInfo *ri, RelOptInfo *baserel, const plan_state *ps) {
  int col;
  vd_op op;
  Expr *other;
  if (!join_clause_is_movable_to(ri, baserel)) return;
  if (!match(root, ri->clause, baserel->relid, ps->ft, &col, &op, &other) || op != VD_OP_EQ) return;
  int k = arg_k(ps->ft->rel, col);
  if (k < 0) return;
  cand *c = palloc(sizeof *c);
  c->ri = ri, c->k = k;
  c->outer = bms_union(bms_difference(ri->clause_relids, baserel->relids), baserel->lateral_relids);
  *out = lappend(*out, c);
}

static void paths(PlannerInfo *root, RelOptInfo *baserel, Oid relid) {
  plan_state *ps = baserel->fdw_private;
  uint64 need = required(ps->ft);
  Cost startup, total;
  costs(ps, baserel->rows, &startup, &total);
  if (!ps->ft->named && (need & ~ps->base_bound)) /* kept so that planning never fails; chosen, it is refused */
    startup = total = disable_cost;
  add_path(baserel, (Path *)create_foreignscan_path(root, baserel, NULL, baserel->rows, startup, total, NIL,
                                                    baserel->lateral_relids, NULL, NIL));
  if (ps->ft->named || !(need & ~ps->base_bound)) return;
  /* join clauses that bind an argument, written ones and those an equivalence implies */
  List *cands = NIL;
  ListCell *lc, *lc2;
  foreach (lc, baserel->joininfo) add_cand(root, &cands, lfirst(lc), baserel, ps);
  for (int k = 0, c; (c = vd_rel_arg_col(ps->ft->rel, k)) >= 0; k++) {
    if (!(need & ~ps->base_bound & ((uint64)1 << k))) continue;
    for (int i = 0; i < ps->ft->natts; i++) {
      if (ps->ft->attcol[i] != c) continue;
      AttrNumber att = (AttrNumber)(i + 1);
      List *ecs = generate_implied_equalities_for_column(root, baserel, ec_matches, &att, baserel->lateral_referencers);
      foreach (lc2, ecs) add_cand(root, &cands, lfirst(lc2), baserel, ps);
    }
  }
  /* one path per set of outer tables that binds every argument: each candidate's own
   * set, and all of them together */
  List *sets = NIL;
  Relids all = NULL;
  foreach (lc, cands) {
    sets = lappend(sets, ((cand *)lfirst(lc))->outer);
    all = bms_union(all, ((cand *)lfirst(lc))->outer);
  }
  if (all) sets = lappend(sets, all);
  List *done = NIL;
  foreach (lc, sets) {
    Relids outer = lfirst(lc);
    bool seen = false;
    foreach (lc2, done) seen |= bms_equal(lfirst(lc2), outer);
    if (seen || bms_overlap(outer, baserel->lateral_referencers)) continue;
    done = lappend(done, outer);
    uint64 bound = ps->base_bound;
    foreach (lc2, cands) {
      cand *c = lfirst(lc2);
      if (bms_is_subset(c->outer, outer)) bound |= (uint64)1 << c->k;
    }
    if (need & ~bound) continue;
    ParamPathInfo *ppi = get_baserel_parampathinfo(root, baserel, outer);
    /* rows per scan: as in rel_size, the join clauses that bind arguments filter
     * nothing (ppi_rows counts them: 25 rows for a 1M-chunk layer joined on url and
     * layer, and a Memoize that overflowed above it); the others do */
    List *filter = list_copy(ps->checked);
    if (ppi) {
      foreach (lc2, ppi->ppi_clauses) { /* equivalences make new clauses: matched, not compared */
        RestrictInfo *ri = lfirst(lc2);
        int col;
        vd_op op;
        Expr *other;
        if (!match(root, ri->clause, baserel->relid, ps->ft, &col, &op, &other) || op != VD_OP_EQ ||
            arg_k(ps->ft->rel, col) < 0)
          filter = lappend(filter, ri);
      }
    }
    double rows = clamp_row_est(ps->rows * clauselist_selectivity(root, filter, 0, JOIN_INNER, NULL));
    costs(ps, rows, &startup, &total);
    add_path(baserel, (Path *)create_foreignscan_path(root, baserel, NULL, rows, startup, total, NIL, outer, NULL,
                                                      NIL));
  }
}

/* A target list entry: attribute att of the table, as the scan's relation varno. */
static TargetEntry *column_entry(Oid relid, Index varno, int att, int resno) {
  Oid type, coll;
  int32 typmod;
  get_atttypetypmodcoll(relid, (AttrNumber)att, &type, &typmod, &coll);
  return makeTargetEntry((Expr *)makeVar(varno, (AttrNumber)att, type, typmod, coll, 0), (AttrNumber)resno, NULL, false);
}

double vdpg_fscan_wait(const ForeignScan *fs, List *rtable) {
  if (fs->scan.scanrelid == 0 || list_length(fs->fdw_private) <= VDPG_PRIV_WAIT) return 0;
  RangeTblEntry *rte = rt_fetch(fs->scan.scanrelid, rtable);
  if (rte->rtekind != RTE_RELATION || !vdpg_is_vdsql_ftable(rte->relid)) return 0; /* another wrapper's plan */
  return strtod(strVal(list_nth(fs->fdw_private, VDPG_PRIV_WAIT)), NULL);
}

static ForeignScan *plan(PlannerInfo *root, RelOptInfo *baserel, Oid relid, ForeignPath *best, List *tlist,
                         List *scan_clauses, Plan *outer_plan) {
  plan_state *ps = baserel->fdw_private;
  const vdpg_ftable *ft = ps->ft;
  const vd_relation *r = ft->rel;
  List *local = NIL, *exprs = NIL, *binds = NIL;
  uint64 bound = 0;
  ListCell *lc;
  foreach (lc, scan_clauses) {
    RestrictInfo *ri = lfirst(lc);
    int col;
    vd_op op;
    Expr *other;
    if (ri->pseudoconstant) continue; /* PostgreSQL checks those once, above the scan */
    if (!ft->named && match(root, ri->clause, baserel->relid, ft, &col, &op, &other)) {
      int k = arg_k(r, col);
      if (k >= 0 && (op == VD_OP_EQ || op == VD_OP_IN) && !(bound & ((uint64)1 << k))) { /* consumed: the relation's input */
        bound |= (uint64)1 << k;
        exprs = lappend(exprs, other);
        binds = lappend(binds, makeInteger(col * 16 + (op == VD_OP_IN ? VDPG_BIND_ARG_IN : 0)));
        continue;
      }
      if (k < 0 && (r->cols[col].flags & VD_COL_PUSH)) { /* a hint: also checked here */
        exprs = lappend(exprs, other);
        binds = lappend(binds, makeInteger(col * 16 + (int)op));
      }
    }
    local = lappend(local, ri->clause);
  }
  uint64 missing = ft->named ? 0 : required(ft) & ~bound;
  if (missing) {
    int k = 0;
    while (!(missing & ((uint64)1 << k))) k++;
    const char *a = r->cols[vd_rel_arg_col(r, k)].name;
    ereport(ERROR, (errcode(ERRCODE_FDW_UNABLE_TO_CREATE_EXECUTION),
                    errmsg("vdsql: a scan of %s needs its argument %s: WHERE %s = a constant, a parameter or a column "
                           "of a table joined before it (or the table option %s)",
                           get_rel_name(relid), a, a, a)));
  }
  /* the columns the statement reads: its target list and the clauses checked here */
  Bitmapset *attrs = NULL;
  pull_varattnos((Node *)baserel->reltarget->exprs, baserel->relid, &attrs);
  foreach (lc, local) pull_varattnos(lfirst(lc), baserel->relid, &attrs);
  uint64 cols = 0;
  bool plain = true; /* only columns of the table: no whole row, no system column */
  List *scan_tlist = NIL;
  for (int x = -1; (x = bms_next_member(attrs, x)) >= 0;) {
    int att = x + FirstLowInvalidHeapAttributeNumber;
    if (att <= 0) plain = false;
    if (att == 0) cols = ~(uint64)0; /* the whole row */
    else if (att > 0 && att <= ft->natts && ft->attcol[att - 1] >= 0)
      cols |= (uint64)1 << (ft->attcol[att - 1] < 63 ? ft->attcol[att - 1] : 63);
    if (att > 0) scan_tlist = lappend(scan_tlist, column_entry(relid, baserel->relid, att, list_length(scan_tlist) + 1));
  }
  /* The scan's rows hold only what the statement reads (fdw_scan_tlist), and its output
   * is what the path promised, not the physical row PostgreSQL hands a scan whose parent
   * takes any shape: EXPLAIN's Output then lists the columns computed, and no column is
   * carried as NULL. A whole row or a system column (DELETE's ctid) keeps the table's
   * own row. */
  if (!plain) {
    scan_tlist = NIL;
  } else if (!scan_tlist) {
    /* no column at all (count(*)). Where PostgreSQL takes any row (it handed over the
     * whole row), one argument column, a copy of the value bound, spares the executor a
     * projection per row (8% of a count(*) over 1M chunks); else nothing */
    int a = -1;
    for (int i = 0; i < ft->natts && a < 0; i++)
      if (ft->attcol[i] >= 0 && (r->cols[ft->attcol[i]].flags & VD_COL_ARG)) a = i;
    if (a >= 0 && tlist) {
      scan_tlist = list_make1(column_entry(relid, baserel->relid, a + 1, 1));
      tlist = list_make1(column_entry(relid, baserel->relid, a + 1, 1));
      cols |= (uint64)1 << (ft->attcol[a] < 63 ? ft->attcol[a] : 63);
    } else {
      tlist = NIL;
    }
  } else {
    PathTarget *pt = best->path.pathtarget;
    List *out = NIL;
    int i = 0;
    foreach (lc, pt->exprs) {
      TargetEntry *te = makeTargetEntry(copyObject(lfirst(lc)), list_length(out) + 1, NULL, false);
      if (pt->sortgrouprefs) te->ressortgroupref = pt->sortgrouprefs[i];
      out = lappend(out, te);
      i++;
    }
    tlist = out;
  }
  /* a LIMIT the scan may stop at: only when nothing is left to do between the scan and
   * the cut (no other table, no clause checked here, no ordering, no grouping: PostgreSQL
   * sets limit_tuples only without grouping, aggregates, DISTINCT or windows) */
  char *limit = "";
  if ((r->flags & VD_REL_HINTS) && !ft->named && local == NIL && root->limit_tuples > 0 &&
      baserel->reloptkind == RELOPT_BASEREL && bms_membership(root->all_baserels) == BMS_SINGLETON &&
      root->parse->sortClause == NIL)
    limit = psprintf("%.0f", root->limit_tuples);
  /* what one execution of the scan waits on requests (plan_jit.c) */
  char *wait = psprintf("%.17g", vdpg_call_wait(r, ps->url, best->path.rows));
  List *priv = list_make4(makeString(psprintf("%llx", (unsigned long long)cols)), makeString(limit), binds,
                          makeString(wait));
  return make_foreignscan(tlist, local, baserel->relid, exprs, priv, scan_tlist, NIL, outer_plan);
}

static const char *op_text(int op) {
  static const char *const t[] = {"=", "=", "<", "<=", ">", ">=", "IN"};
  return op >= 0 && op <= VD_OP_IN ? t[op] : "?";
}

/* EXPLAIN shows the relation and, with VERBOSE, what reaches the core: the arguments,
 * the hints (checked again here), the columns read and the LIMIT. */
static void explain(ForeignScanState *node, ExplainState *es) {
  ForeignScan *fs = (ForeignScan *)node->ss.ps.plan;
  vdpg_ftable *ft = vdpg_ftable_get(RelationGetRelid(node->ss.ss_currentRelation));
  const vd_relation *r = ft->rel;
  ExplainPropertyText("vdsql relation", ft->named ? psprintf("%s (named table)", r->name) : r->name, es);
  if (!es->verbose) return;
  List *dp = set_deparse_context_plan(es->deparse_cxt, (Plan *)fs, NIL);
  StringInfoData args, hints, cols;
  initStringInfo(&args), initStringInfo(&hints), initStringInfo(&cols);
  for (int k = 0, c; (c = vd_rel_arg_col(r, k)) >= 0; k++)
    if (ft->fixed[k]) appendStringInfo(&args, "%s%s = %s (option)", args.len ? ", " : "", r->cols[c].name, quote_literal_cstr(ft->fixed[k]));
  for (int i = 0; i < ft->nconn; i++)
    appendStringInfo(&args, "%s%s (option)", args.len ? ", " : "", quote_literal_cstr(ft->conn[i]));
  ListCell *lb, *le;
  forboth(lb, (List *)list_nth(fs->fdw_private, VDPG_PRIV_BINDS), le, fs->fdw_exprs) {
    int b = intVal(lfirst(lb)), col = b / 16, op = b % 16;
    char *e = deparse_expression(lfirst(le), dp, false, false);
    StringInfo s = op && op != VDPG_BIND_ARG_IN ? &hints : &args;
    if (op == VDPG_BIND_ARG_IN)
      appendStringInfo(s, "%s%s = ANY (%s) (a scan per value)", s->len ? ", " : "", r->cols[col].name, e);
    else
      appendStringInfo(s, "%s%s %s %s", s->len ? ", " : "", r->cols[col].name, op_text(op), e);
  }
  uint64 m = strtoull(strVal(list_nth(fs->fdw_private, VDPG_PRIV_COLS)), NULL, 16);
  for (int c = 0; c < r->ncols; c++)
    if (m & ((uint64)1 << (c < 63 ? c : 63))) appendStringInfo(&cols, "%s%s", cols.len ? ", " : "", r->cols[c].name);
  if (args.len) ExplainPropertyText("vdsql arguments", args.data, es);
  if (hints.len) ExplainPropertyText("vdsql hints", hints.data, es);
  ExplainPropertyText("vdsql columns", cols.len ? cols.data : "(none)", es);
  const char *limit = strVal(list_nth(fs->fdw_private, VDPG_PRIV_LIMIT));
  if (*limit) ExplainPropertyText("vdsql limit", limit, es);
}

/* A read-only relation's scan may run in a parallel worker (below a Gather, inside a
 * nested loop over a partial scan of a catalog); a named table's writer and the
 * connection's own counters are not a worker's. */
static bool parallel_safe(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte) {
  /* asked before the relation's size (fdw_private is not made yet) */
  vdpg_ftable *ft = vdpg_ftable_get(rte->relid);
  return !ft->named && !(ft->rel->flags & (VD_REL_BACKEND | VD_REL_WRITES));
}

/* Statistics for an argument column of a vdsql foreign table: one distinct value, no
 * NULL. It is true of every scan (the column gives back the value bound), and it is what
 * the planner needs for the clauses that bind arguments: `url = '...'` then selects
 * every row, and a join `ch.url = c.url` with a catalog keeps all of each dataset's rows
 * (1 / the catalog's distinct urls, not 1 / 200 per clause), so the join's row count, and
 * the GROUP BY above it (a hash aggregate, not a sort spilling to disk), are right. */
static get_relation_stats_hook_type prev_stats_hook;

static bool arg_stats(PlannerInfo *root, RangeTblEntry *rte, AttrNumber attnum, VariableStatData *vardata) {
  if (prev_stats_hook && prev_stats_hook(root, rte, attnum, vardata)) return true;
  if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_FOREIGN_TABLE || attnum <= 0) return false;
  if (!vdpg_is_vdsql_ftable(rte->relid)) return false; /* another wrapper's */
  vdpg_ftable *ft = vdpg_ftable_get(rte->relid);
  if (ft->named || attnum > ft->natts) return false;
  int c = ft->attcol[attnum - 1];
  if (c < 0 || !(ft->rel->cols[c].flags & VD_COL_ARG)) return false;
  Datum values[Natts_pg_statistic];
  bool nulls[Natts_pg_statistic];
  memset(values, 0, sizeof values);
  memset(nulls, false, sizeof nulls);
  for (int k = 0; k < STATISTIC_NUM_SLOTS; k++) {
    nulls[Anum_pg_statistic_stanumbers1 - 1 + k] = true;
    nulls[Anum_pg_statistic_stavalues1 - 1 + k] = true;
  }
  values[Anum_pg_statistic_starelid - 1] = ObjectIdGetDatum(rte->relid);
  values[Anum_pg_statistic_staattnum - 1] = Int16GetDatum(attnum);
  values[Anum_pg_statistic_stainherit - 1] = BoolGetDatum(false);
  values[Anum_pg_statistic_stanullfrac - 1] = Float4GetDatum(0);
  values[Anum_pg_statistic_stawidth - 1] = Int32GetDatum(32);
  values[Anum_pg_statistic_stadistinct - 1] = Float4GetDatum(1);
  Relation sd = table_open(StatisticRelationId, AccessShareLock);
  vardata->statsTuple = heap_form_tuple(RelationGetDescr(sd), values, nulls);
  table_close(sd, AccessShareLock);
  vardata->freefunc = heap_freetuple;
  vardata->acl_ok = true; /* made up, not read from the data: nothing to protect */
  return true;
}

bool vdpg_is_vdsql_ftable(Oid relid) {
  return GetFdwRoutineByRelId(relid)->GetForeignRelSize == rel_size;
}

void vdpg_fdw_plan_init(void) {
  prev_stats_hook = get_relation_stats_hook;
  get_relation_stats_hook = arg_stats;
}

void vdpg_fdw_plan_routine(FdwRoutine *r) {
  r->GetForeignRelSize = rel_size;
  r->GetForeignPaths = paths;
  r->GetForeignPlan = plan;
  r->ExplainForeignScan = explain;
  r->IsForeignScanParallelSafe = parallel_safe;
}
