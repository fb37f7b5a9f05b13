/* What the foreign-data wrapper's files (fdw*.c) share: a foreign table's description,
 * read from its options and columns, and the per-backend writers that follow the
 * PostgreSQL transaction. */
#ifndef VDSQL_PG_FDW_H
#define VDSQL_PG_FDW_H

#include "pg_glue.h"

#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"
#include "nodes/pg_list.h"
#include "storage/itemptr.h"

#define VDPG_MAX_CONN 8 /* a named table's connect arguments (url, layer, layout...) */

/* A foreign table of the wrapper `vdsql`, over one relation of the catalogue, in one of
 * two modes:
 * - a relation table (IMPORT FOREIGN SCHEMA makes these): argument columns are ordinary
 *   columns bound by WHERE or a join; an option named as an argument fixes it;
 * - a named table (OPTIONS (relation 'lindi_tar', url '...')): every connect argument of
 *   the relation's table is an option; scans see the transaction's own writes, and the
 *   table takes INSERT and, where the relation allows it, DELETE. */
typedef struct vdpg_ftable {
  Oid relid;
  Oid serverid; /* whose user mapping holds the credentials */
  const vd_relation *rel;
  bool named;
  int nconn;
  char *conn[VDPG_MAX_CONN];     /* connect arguments, in the order of rel->table->args (url first) */
  char *fixed[VDSQL_PG_MAX_COLS]; /* per argument k: the option that fixes it, or NULL */
  int conflict;                   /* VD_CONFLICT_*, from the option on_conflict */
  int natts;
  int attcol[VDSQL_PG_MAX_COLS]; /* attribute i (0-based) -> relation column, -1 when dropped */
} vdpg_ftable;

/* Reads a foreign table's description (palloc'd in the current context); every fault
 * (no relation option, a column the relation does not have or of another type) is an
 * error naming the table. */
vdpg_ftable *vdpg_ftable_get(Oid relid);
/* The validator's check of a foreign table's options (credentials.c calls it): the
 * relation, its arguments and connect arguments, on_conflict; a url needs the privileges
 * a call would need. */
void vdpg_ftable_validate(List *options);
/* The declared PostgreSQL type of a core column type (gen_sql's mapping). */
Oid vdpg_type_oid(vd_type t);
/* A Datum of any type as a core value for a filter or an inserted row; text and bytes
 * are borrowed from a detoasted copy in the current context. */
vd_value vdpg_value_of(Datum d, Oid type);
/* Planning a call of a relation (plan_cost.c), for the foreign tables and the relation
 * functions alike: its rows (args NULL when not all known at plan time; from the cache
 * only, never a request; ctx(arg) gives the caller's context, asked for only when
 * needed), the url among constant arguments (palloc'd, or NULL), its cost. */
double vdpg_call_rows(const vd_relation *r, vd_ctx *(*ctx)(const void *), const void *arg, const vd_value *args,
                      int nargs, const vd_filter *f, int nf);
char *vdpg_call_url(const vd_relation *r, const vd_value *args, int nargs);
void vdpg_call_cost(const vd_relation *r, const char *url, double rows, Cost *startup, Cost *total);
/* The part of a call's cost that is waiting on requests (plan_jit.c leaves it out of the
 * JIT decision); vdpg_func_wait: the same for a function's call expression. */
double vdpg_call_wait(const vd_relation *r, const char *url, double rows);
double vdpg_func_wait(const vd_relation *r, PlannerInfo *root, List *args, double rows);
/* What one execution of a plan node waits on requests, if it is a vdsql scan (a foreign
 * scan of a vdsql table, the streaming function scan), else 0. */
double vdpg_fscan_wait(const ForeignScan *fs, List *rtable);
double vdpg_funcscan_wait(const CustomScan *cs);
/* A table that drives calls of vdsql relations (LATERAL functions, joined foreign
 * tables) gets a partial path (plan_cost.c; funcscan.c's pathlist hook calls it). */
void vdpg_catalog_paths(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte);
/* Whether relid is a foreign table of the wrapper vdsql (fdw_plan.c). */
bool vdpg_is_vdsql_ftable(Oid relid);
/* The catalogue relation a function stands for, if it is this library's vdsql_relation
 * (funcscan.c); NULL for any other function. */
const vd_relation *vdpg_relation_of(Oid funcid);
/* The backend's context with the credentials of the table's server for the current user. */
vd_ctx *vdpg_ftable_ctx(const vdpg_ftable *ft);

/* A scan's credentials and endpoints, fixed when it starts (identity.c): taken from
 * what ctx holds now, put back before each of the scan's calls into the core, cleared
 * (explicit_bzero) when owner is reset or deleted. */
typedef struct vdpg_identity vdpg_identity;
vdpg_identity *vdpg_identity_take(vd_ctx *ctx, MemoryContext owner);
void vdpg_identity_use(vd_ctx *ctx, const vdpg_identity *id);

/* The backend's core table of a named foreign table, connected on first use in a
 * transaction and let go at its end. write: the transaction writes it (begin once, and
 * the savepoints of the subtransactions open now). */
void *vdpg_writer(const vdpg_ftable *ft, bool write);

/* A core rowid in a tuple identifier and back (DELETE's row identity). */
void vdpg_rowid_to_tid(int64_t rowid, ItemPointer tid);
int64_t vdpg_tid_to_rowid(ItemPointer tid);

/* The FdwRoutine's parts (fdw_plan.c, fdw_scan.c, fdw_modify.c). */
struct FdwRoutine;
void vdpg_fdw_plan_routine(struct FdwRoutine *r);
void vdpg_fdw_scan_routine(struct FdwRoutine *r);
void vdpg_fdw_modify_routine(struct FdwRoutine *r);

/* fdw_private of a scan plan, a List: [0] String: the columns read, hex bit mask;
 * [1] String: the LIMIT hint, or ""; [2] List of Integer: per fdw_exprs entry,
 * col * 16 + op (op 0: argument of column col, VDPG_BIND_ARG_IN: its list, else a vd_op
 * filter). */
enum { VDPG_PRIV_COLS, VDPG_PRIV_LIMIT, VDPG_PRIV_BINDS, VDPG_PRIV_WAIT };
/* The op of a bind that gives an argument a list (`url IN (...)`, `url = ANY($1)`): the
 * scan opens the relation once per distinct value, one after the other. */
#define VDPG_BIND_ARG_IN 15

#endif
