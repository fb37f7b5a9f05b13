/* The backend's core tables of named foreign tables, and how their transactions follow
 * PostgreSQL's: a table is connected on first use in a transaction and let go at its
 * end; a write begins the core's transaction once and takes the savepoints of the
 * subtransactions open at that moment (lazily, as postgres_fdw does). Then:
 *   PRE_COMMIT   -> sync: the core's commit work, which may fail and abort the transaction
 *   COMMIT       -> commit: never fails (an error here would make PostgreSQL PANIC)
 *   ABORT        -> rollback (skipped when error handling is itself failing)
 *   PRE_PREPARE  -> refused: the core has no prepared state to keep
 *   RELEASE / ROLLBACK TO (also PL/pgSQL exception blocks) -> release / rollback_to.
 * Core savepoint n stands for subtransaction level n + 2 (level 1 is the transaction). */
#include "fdw.h"

#include "access/xact.h"
#include "utils/memutils.h"

typedef struct writer {
  Oid relid, serverid;
  const vd_relation *rel;
  void *tab;
  bool in_tx;
  int levels; /* core savepoints taken: those of levels 2 .. levels + 1 */
  struct writer *next;
} writer;

static writer *writers;
static bool registered;

static void let_go(bool commit) {
  writer *w = writers;
  writers = NULL;
  while (w) {
    writer *next = w->next;
    if (w->in_tx) {
      if (commit) w->rel->table->commit(w->tab);
      else if (!in_error_recursion_trouble()) w->rel->table->rollback(w->tab);
    }
    if (!in_error_recursion_trouble() || !w->in_tx) w->rel->table->disconnect(w->tab);
    pfree(w);
    w = next;
  }
}

static void xact_cb(XactEvent ev, void *arg) {
  if (!writers) return; /* every transaction of the backend comes here */
  switch (ev) {
    case XACT_EVENT_PRE_COMMIT:
    case XACT_EVENT_PARALLEL_PRE_COMMIT:
      for (writer *w = writers; w; w = w->next) {
        if (!w->in_tx) continue;
        vd_err err;
        vd_err_clear(&err);
        vdpg_ftable ft = {.serverid = w->serverid};
        vdpg_ftable_ctx(&ft); /* the uploads of the commit use the table's credentials */
        vd_code rc = w->rel->table->sync(w->tab, &err);
        if (rc) vdsql_pg_raise(rc, &err); /* the transaction aborts; ABORT rolls back */
      }
      break;
    case XACT_EVENT_PRE_PREPARE:
      for (writer *w = writers; w; w = w->next)
        if (w->in_tx)
          ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                          errmsg("vdsql: cannot PREPARE a transaction that wrote a vdsql foreign table")));
      break;
    case XACT_EVENT_COMMIT:
    case XACT_EVENT_PARALLEL_COMMIT:
    case XACT_EVENT_PREPARE:
      let_go(true);
      break;
    case XACT_EVENT_ABORT:
    case XACT_EVENT_PARALLEL_ABORT:
      let_go(false);
      break;
  }
}

static void subxact_cb(SubXactEvent ev, SubTransactionId sub, SubTransactionId parent, void *arg) {
  if (ev != SUBXACT_EVENT_PRE_COMMIT_SUB && ev != SUBXACT_EVENT_ABORT_SUB) return;
  int level = GetCurrentTransactionNestLevel(); /* the subtransaction ending */
  for (writer *w = writers; w; w = w->next) {
    if (!w->in_tx || w->levels < level - 1) continue; /* no savepoint of this level */
    if (ev == SUBXACT_EVENT_ABORT_SUB && !in_error_recursion_trouble()) w->rel->table->rollback_to(w->tab, level - 2);
    if (w->rel->table->release) w->rel->table->release(w->tab, level - 2);
    w->levels = level - 2;
  }
}

void *vdpg_writer(const vdpg_ftable *ft, bool write) {
  vdpg_check_url(ft->conn[0], write); /* local files: pg_read/write_server_files, else vdsql_network */
  vd_ctx *ctx = vdpg_ftable_ctx(ft);
  writer *w = writers;
  while (w && w->relid != ft->relid) w = w->next;
  if (!w) {
    if (!registered) {
      RegisterXactCallback(xact_cb, NULL);
      RegisterSubXactCallback(subxact_cb, NULL);
      registered = true;
    }
    void *tab = NULL;
    vd_err err;
    vd_err_clear(&err);
    vd_code rc = ft->rel->table->connect(ctx, (const char *const *)ft->conn, ft->nconn, &tab, &err);
    if (rc) vdsql_pg_raise(rc, &err);
    w = MemoryContextAllocZero(TopMemoryContext, sizeof *w);
    w->relid = ft->relid, w->serverid = ft->serverid, w->rel = ft->rel, w->tab = tab;
    w->next = writers;
    writers = w;
  }
  if (!write) return w->tab;
  if (!w->in_tx) {
    vd_err err;
    vd_err_clear(&err);
    vd_code rc = w->rel->table->begin(w->tab, &err);
    if (rc) vdsql_pg_raise(rc, &err);
    w->in_tx = true;
    w->levels = 0;
  }
  int level = GetCurrentTransactionNestLevel();
  if (w->levels < level - 1) { /* the core fills every level up to this one */
    w->rel->table->savepoint(w->tab, level - 2);
    w->levels = level - 1;
  }
  return w->tab;
}
