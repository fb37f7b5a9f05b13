/* Writing a named vdsql foreign table (OPTIONS (relation 'lindi_tar', url '...')):
 * INSERT (also COPY and partition routing, batched for INSERT ... SELECT) and, where the
 * relation removes rows, DELETE through the row identity the scan puts in ctid. UPDATE
 * is refused by PostgreSQL itself, since the table does not offer it. The writes join
 * the transaction's core writer (fdw_xact.c): nothing is visible to other readers before
 * COMMIT, and a ROLLBACK leaves the dataset as it was. */
#include "fdw.h"

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "foreign/fdwapi.h"
#include "nodes/makefuncs.h"
#include "optimizer/appendinfo.h"
#include "optimizer/optimizer.h"
#include "funcapi.h"
#include "utils/rel.h"

typedef struct modify_state {
  vdpg_ftable *ft;
  int conflict;
  AttrNumber ctid; /* DELETE: the junk column holding the row identity */
  /* DELETE ... RETURNING: per attribute, the junk column the scan fills with its value
   * (0: not read); wholerow: the junk column of the whole row instead */
  AttrNumber ret[VDSQL_PG_MAX_COLS];
  AttrNumber wholerow;
  bool returning;
  MemoryContext rowcx;
} modify_state;

/* The row identity, and for DELETE ... RETURNING the columns it returns: the executor
 * takes a foreign table's deleted row from what ExecForeignDelete returns, so the scan
 * must read them (only them) for the row it hands over. A child of a partitioned table
 * gets its whole row, its attribute numbers being its own. */
static void add_targets(PlannerInfo *root, Index rtindex, RangeTblEntry *rte, Relation rel) {
  Var *v = makeVar(rtindex, SelfItemPointerAttributeNumber, TIDOID, -1, InvalidOid, 0);
  add_row_identity_var(root, v, rtindex, "ctid");
  if (root->parse->commandType != CMD_DELETE || !root->parse->returningList) return;
  Bitmapset *attrs = NULL;
  pull_varattnos((Node *)root->parse->returningList, root->parse->resultRelation, &attrs);
  bool whole = rtindex != (Index)root->parse->resultRelation ||
               bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs);
  if (whole) {
    add_row_identity_var(root, makeWholeRowVar(rte, rtindex, 0, false), rtindex, "wholerow");
    return;
  }
  TupleDesc d = RelationGetDescr(rel);
  for (int x = -1; (x = bms_next_member(attrs, x)) >= 0;) {
    AttrNumber att = x + FirstLowInvalidHeapAttributeNumber;
    if (att <= 0 || att > d->natts) continue;
    Form_pg_attribute a = TupleDescAttr(d, att - 1);
    add_row_identity_var(root, makeVar(rtindex, att, a->atttypid, a->atttypmod, a->attcollation, 0), rtindex,
                         psprintf("vdsql_returning_%d", att));
  }
}

/* ON CONFLICT DO NOTHING keeps what is there, as OR IGNORE does in SQLite; the table
 * option on_conflict gives the default ('error', 'replace', 'ignore'). */
static List *plan_modify(PlannerInfo *root, ModifyTable *plan, Index rel, int subplan) {
  return list_make1(makeInteger(plan->onConflictAction == ONCONFLICT_NOTHING ? 1 : 0));
}

static modify_state *start(ResultRelInfo *rinfo, int do_nothing) {
  modify_state *m = palloc0(sizeof *m);
  m->ft = vdpg_ftable_get(RelationGetRelid(rinfo->ri_RelationDesc));
  if (!m->ft->named) /* IsForeignRelUpdatable says so first; kept for a table changed since planning */
    ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                    errmsg("vdsql: %s is read-only: writes go to a named table, OPTIONS (relation '%s', %s)",
                           RelationGetRelationName(rinfo->ri_RelationDesc), m->ft->rel->name,
                           m->ft->rel->table ? m->ft->rel->table->args : "...")));
  m->conflict = do_nothing ? VD_CONFLICT_IGNORE : m->ft->conflict;
  m->rowcx = AllocSetContextCreate(CurrentMemoryContext, "vdsql insert", ALLOCSET_SMALL_SIZES);
  vdpg_writer(m->ft, true); /* connects and begins now: a bad url fails before any row */
  return m;
}

static void begin_modify(ModifyTableState *mt, ResultRelInfo *rinfo, List *priv, int subplan, int eflags) {
  if (eflags & EXEC_FLAG_EXPLAIN_ONLY) return;
  modify_state *m = start(rinfo, intVal(linitial(priv)));
  if (mt->operation == CMD_DELETE) {
    Plan *sub = outerPlanState(mt)->plan;
    m->ctid = ExecFindJunkAttributeInTlist(sub->targetlist, "ctid");
    if (!AttributeNumberIsValid(m->ctid)) elog(ERROR, "vdsql: the row identity (ctid) is missing from the plan");
    m->wholerow = ExecFindJunkAttributeInTlist(sub->targetlist, "wholerow");
    m->returning = AttributeNumberIsValid(m->wholerow);
    for (int i = 0; i < m->ft->natts && i < VDSQL_PG_MAX_COLS; i++) {
      m->ret[i] = ExecFindJunkAttributeInTlist(sub->targetlist, psprintf("vdsql_returning_%d", i + 1));
      if (!AttributeNumberIsValid(m->ret[i])) m->ret[i] = 0;
      else m->returning = true;
    }
  }
  rinfo->ri_FdwState = m;
}

static void begin_insert(ModifyTableState *mt, ResultRelInfo *rinfo) { rinfo->ri_FdwState = start(rinfo, 0); }

/* INSERT ... RETURNING: the columns the row did not give (size, stored, offsets, a
 * default the relation fills in, a chunk's status and hash) as the table now holds
 * them, read from the relation's cursor on that row or a scan of the table's rows (with
 * the transaction's own) at the row's id. */
static void derived(modify_state *m, void *tab, int64_t rowid, TupleTableSlot *slot) {
  const vd_relation *r = m->ft->rel;
  vd_err err;
  vd_err_clear(&err);
  void *cur = NULL;
  vd_ctx *ctx = vdpg_ftable_ctx(m->ft);
  vd_code rc = r->table->inserted ? r->table->inserted(ctx, tab, rowid, &cur, &err) : r->table->open(ctx, tab, &cur, &err);
  while (!rc && !r->eof(cur) && r->rowid(cur) != rowid) rc = r->next(cur, &err);
  if (!rc && r->eof(cur)) rc = vd_fail(&err, VD_ERROR, "%s: the row just inserted is not in its table", r->name);
  for (int i = 0; i < m->ft->natts && !rc; i++) {
    int c = m->ft->attcol[i];
    if (c < 0 || (r->cols[c].flags & VD_COL_ARG) || !slot->tts_isnull[i]) continue;
    vd_value v = vd_null();
    if ((rc = r->column(cur, c, &v, &err))) break;
    rc = vdsql_pg_datum(&v, r->cols[c].type, r->cols[c].name, &slot->tts_values[i], &slot->tts_isnull[i], &err);
    if (v.dtor) v.dtor((void *)v.p);
  }
  if (cur) r->close(cur);
  if (rc) vdsql_pg_raise(rc, &err);
}

static TupleTableSlot *insert_one(ResultRelInfo *rinfo, TupleTableSlot *slot) {
  modify_state *m = rinfo->ri_FdwState;
  const vd_relation *r = m->ft->rel;
  vd_value row[VDSQL_PG_MAX_COLS];
  int n = 0, pos[VDSQL_PG_MAX_COLS];
  for (int c = 0; c < r->ncols; c++) /* every non-argument column, in order; those without an attribute are NULL */
    if (!(r->cols[c].flags & VD_COL_ARG)) pos[c] = n, row[n++] = vd_null();
  slot_getallattrs(slot);
  TupleDesc d = slot->tts_tupleDescriptor;
  MemoryContext old = MemoryContextSwitchTo(m->rowcx);
  for (int i = 0; i < m->ft->natts; i++) {
    int c = m->ft->attcol[i];
    if (c < 0 || (r->cols[c].flags & VD_COL_ARG) || slot->tts_isnull[i]) continue;
    row[pos[c]] = vdpg_value_of(slot->tts_values[i], TupleDescAttr(d, i)->atttypid);
  }
  MemoryContextSwitchTo(old);
  int nul = vd_rel_null_col(r, row);
  if (nul >= 0) /* as a NOT NULL column of a heap table: ON CONFLICT DO NOTHING does not cover it */
    ereport(ERROR, (errcode(ERRCODE_NOT_NULL_VIOLATION),
                    errmsg("null value in column \"%s\" of relation \"%s\" violates not-null constraint",
                           r->cols[nul].name, RelationGetRelationName(rinfo->ri_RelationDesc)),
                    errdetail("vdsql: %s (%s): %s is %s", m->ft->conn[0], r->name, r->cols[nul].name,
                              strcmp(r->cols[nul].name, "data") == 0 ? "the bytes written, never empty for NULL"
                                                                     : "the row's key")));
  void *tab = vdpg_writer(m->ft, true);
  vd_err err;
  vd_err_clear(&err);
  int64_t rowid = 0;
  vd_code rc = r->table->insert(tab, row, m->conflict, &rowid, &err);
  MemoryContextReset(m->rowcx);
  if (rc == VD_CONSTRAINT && m->conflict == VD_CONFLICT_IGNORE) return NULL; /* kept what was there */
  if (rc == VD_CONSTRAINT) /* the core's words name SQLite's INSERT OR REPLACE; here it is an option */
    ereport(ERROR, (errcode(ERRCODE_UNIQUE_VIOLATION), errmsg("%s", err.msg),
                    errhint("In PostgreSQL: ALTER FOREIGN TABLE %s OPTIONS (ADD on_conflict 'replace'), or INSERT ... "
                            "ON CONFLICT DO NOTHING to keep what is there.",
                            RelationGetRelationName(rinfo->ri_RelationDesc))));
  if (rc) vdsql_pg_raise(rc, &err);
  vdpg_rowid_to_tid(rowid, &slot->tts_tid);
  if (rinfo->ri_projectReturning && (r->table->sees_own_rows || r->table->inserted)) derived(m, tab, rowid, slot);
  return slot;
}

static TupleTableSlot *exec_insert(EState *es, ResultRelInfo *rinfo, TupleTableSlot *slot, TupleTableSlot *plan) {
  return insert_one(rinfo, slot);
}

/* The core appends each row at once and commits at the end, so a batch is a loop; what
 * batching saves is PostgreSQL's per-row calls. Rows skipped by ON CONFLICT DO NOTHING
 * are taken out of the batch. */
static TupleTableSlot **exec_batch(EState *es, ResultRelInfo *rinfo, TupleTableSlot **slots, TupleTableSlot **plan,
                                   int *n) {
  int kept = 0;
  for (int i = 0; i < *n; i++)
    if (insert_one(rinfo, slots[i])) slots[kept++] = slots[i];
  *n = kept;
  return slots;
}

/* RETURNING, WITH CHECK OPTION and row triggers need each row back at once. */
static int batch_size(ResultRelInfo *rinfo) {
  TriggerDesc *t = rinfo->ri_TrigDesc;
  if (rinfo->ri_projectReturning || rinfo->ri_WithCheckOptions ||
      (t && (t->trig_insert_after_row || t->trig_insert_before_row)))
    return 1;
  return 1000;
}

/* The deleted row's values, as the scan read them, into the slot RETURNING projects. */
static void deleted_row(modify_state *m, TupleTableSlot *slot, TupleTableSlot *plan) {
  TupleDesc d = slot->tts_tupleDescriptor;
  bool isnull;
  ExecClearTuple(slot);
  memset(slot->tts_isnull, true, sizeof(bool) * d->natts);
  if (m->wholerow) {
    Datum w = ExecGetJunkAttribute(plan, m->wholerow, &isnull);
    if (!isnull) {
      HeapTupleHeader h = DatumGetHeapTupleHeader(w);
      HeapTupleData t;
      t.t_len = HeapTupleHeaderGetDatumLength(h);
      ItemPointerSetInvalid(&t.t_self);
      t.t_tableOid = InvalidOid;
      t.t_data = h;
      heap_deform_tuple(&t, d, slot->tts_values, slot->tts_isnull);
    }
  } else {
    for (int i = 0; i < d->natts && i < VDSQL_PG_MAX_COLS; i++)
      if (m->ret[i]) slot->tts_values[i] = ExecGetJunkAttribute(plan, m->ret[i], &slot->tts_isnull[i]);
  }
  ExecStoreVirtualTuple(slot);
}

static TupleTableSlot *exec_delete(EState *es, ResultRelInfo *rinfo, TupleTableSlot *slot, TupleTableSlot *plan) {
  modify_state *m = rinfo->ri_FdwState;
  bool isnull;
  Datum d = ExecGetJunkAttribute(plan, m->ctid, &isnull);
  if (isnull) elog(ERROR, "vdsql: a row to delete came without its identity");
  vd_err err;
  vd_err_clear(&err);
  vd_code rc = m->ft->rel->table->remove(vdpg_writer(m->ft, true), vdpg_tid_to_rowid((ItemPointer)DatumGetPointer(d)), &err);
  if (rc) vdsql_pg_raise(rc, &err);
  if (m->returning) deleted_row(m, slot, plan);
  return slot;
}

static void end_modify(EState *es, ResultRelInfo *rinfo) {} /* the writer lives until the transaction ends */

static int updatable(Relation rel) {
  vdpg_ftable *ft = vdpg_ftable_get(RelationGetRelid(rel));
  if (!ft->named) return 0;
  return (ft->rel->table->insert ? 1 << CMD_INSERT : 0) | (ft->rel->table->remove ? 1 << CMD_DELETE : 0);
}

void vdpg_fdw_modify_routine(FdwRoutine *r) {
  r->AddForeignUpdateTargets = add_targets;
  r->PlanForeignModify = plan_modify;
  r->BeginForeignModify = begin_modify;
  r->ExecForeignInsert = exec_insert;
  r->ExecForeignBatchInsert = exec_batch;
  r->GetForeignModifyBatchSize = batch_size;
  r->ExecForeignDelete = exec_delete;
  r->EndForeignModify = end_modify;
  r->BeginForeignInsert = begin_insert;
  r->EndForeignInsert = end_modify;
  r->IsForeignRelUpdatable = updatable;
}
