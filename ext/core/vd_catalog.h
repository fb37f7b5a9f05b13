/* The relation catalogue: every relation and function vdsql offers is described here
 * once (columns, argument columns, constraints the core can use, a cursor) and both
 * front ends are generic over these descriptions. Adding a relation means adding one
 * file in relations/<group>/ (a designated initialiser: .name, VD_COLS(cols), .open, ...)
 * and one line in catalog.c. */
#ifndef VD_CATALOG_H
#define VD_CATALOG_H

#include "vd_ctx.h"
#include "vd_err.h"
#include "vd_value.h"

/* Column flags. */
#define VD_COL_ARG 0x1   /* an input: HIDDEN argument column (SQLite), function parameter (PG) */
#define VD_COL_OPT 0x2   /* with VD_COL_ARG: may be omitted (then NULL) */
#define VD_COL_PUSH 0x4  /* the cursor narrows its scan with =, IN, <, <=, >, >= on it */
#define VD_COL_HIDDEN 0x8 /* not in SELECT * (SQLite: HIDDEN); read and written when named */
#define VD_COL_NOTNULL 0x10 /* a named table's INSERT refuses NULL here (a row's key, a member's bytes):
                              the front end's NOT NULL error, never a duplicate skipped by OR IGNORE /
                              ON CONFLICT DO NOTHING (PostgreSQL 23502, SQLite SQLITE_CONSTRAINT_NOTNULL) */

typedef struct vd_colspec {
  const char *name;
  vd_type type;      /* declared type; NULL values are always allowed */
  unsigned flags;
} vd_colspec;

typedef enum vd_op { VD_OP_EQ = 1, VD_OP_LT, VD_OP_LE, VD_OP_GT, VD_OP_GE, VD_OP_IN, VD_OP_LIMIT, VD_OP_COLS } vd_op;

/* A constraint handed to a cursor. It is a hint: the front end still checks every row,
 * so a cursor may return more rows than match but never fewer. */
typedef struct vd_filter {
  int col;               /* index into the relation's columns */
  vd_op op;
  const vd_value *vals;  /* one value, or the list for VD_OP_IN */
  int nvals;
} vd_filter;

/* Two more hints, only for relations flagged VD_REL_HINTS, each with col -1 and one
 * integer value; a relation that ignores them is still right:
 * - VD_OP_LIMIT: the front end takes at most this many rows (SQL LIMIT plus OFFSET). It
 *   is given only when nothing else is left for the front end to do before cutting: no
 *   other constraint than the arguments, no ordering the cursor does not give (SQLite
 *   3.38+: SQLITE_INDEX_CONSTRAINT_LIMIT/OFFSET; a PostgreSQL foreign scan can pass its
 *   limit_tuples the same way). The cursor may then ask its source for no more (a
 *   listing's page size), and may still return more rows.
 * - VD_OP_COLS: bit c set when column c is read by the statement (bit 63: any column from
 *   63 on), so a cursor can leave out work for columns nobody reads (SQLite: colUsed). */

/* Relation flags. */
#define VD_REL_IO 0x1    /* reads files or the network: never from triggers/views of untrusted schemas */
#define VD_REL_TABLE_ONLY 0x2 /* only as a named table (CREATE VIRTUAL TABLE), not a table-valued function */
#define VD_REL_HINTS 0x4 /* open gets the VD_OP_LIMIT and VD_OP_COLS hints */
#define VD_REL_BACKEND 0x8 /* rows come from the connection's own state (its counters, its settings),
                              which a PostgreSQL parallel worker does not share: PARALLEL RESTRICTED */
#define VD_REL_WRITES 0x10 /* opening it changes its dataset (lindi_repair): PostgreSQL PARALLEL UNSAFE, and
                              its url needs the privileges of a writer */

/* Named, writable tables: CREATE VIRTUAL TABLE t USING rel(args...). Scans use the
 * relation's cursor functions on what open returns. Writes happen inside begin ..
 * sync (where the commit work is done and may fail) .. commit, or rollback. */
enum { VD_CONFLICT_ABORT = 0, VD_CONFLICT_REPLACE = 1, VD_CONFLICT_IGNORE = 2 };

typedef struct vd_table_ops {
  vd_code (*connect)(vd_ctx *ctx, const char *const *args, int nargs, void **tab, vd_err *err);
  void (*disconnect)(void *tab);
  vd_code (*open)(vd_ctx *ctx, void *tab, void **cur, vd_err *err); /* ctx: the connection's, as for connect */
  /* row holds a value for every non-argument column, in order; conflict is the
   * statement's VD_CONFLICT_*: a row that breaks a rule returns VD_CONSTRAINT, which the
   * front end turns into the statement's error, or into skipping the row for OR IGNORE */
  vd_code (*insert)(void *tab, const vd_value *row, int conflict, int64_t *rowid, vd_err *err);
  vd_code (*remove)(void *tab, int64_t rowid, vd_err *err);
  vd_code (*begin)(void *tab, vd_err *err);
  vd_code (*sync)(void *tab, vd_err *err);
  void (*commit)(void *tab);
  void (*rollback)(void *tab);
  void (*savepoint)(void *tab, int n);
  void (*rollback_to)(void *tab, int n);
  void (*release)(void *tab, int n);
  const char *args; /* what CREATE VIRTUAL TABLE t USING rel(...) takes, as users write it */
  /* An inserted row's derived columns, for PostgreSQL's RETURNING: sees_own_rows says
   * that open shows the transaction's own rows before COMMIT, rowid() the id insert
   * gave, so the front end finds the row there; else inserted, when set, opens a cursor
   * on the row insert just gave rowid, as the transaction holds it. */
  int sees_own_rows;
  vd_code (*inserted)(vd_ctx *ctx, void *tab, int64_t rowid, void **cur, vd_err *err);
} vd_table_ops;

/* A relation's columns and their count from one array, in a designated initialiser:
 * {.name = "x", VD_COLS(cols), .open = ...}. Every entry names its fields, so a field
 * added to vd_relation (PostgreSQL's front end will add some) shifts nothing. */
#define VD_COLS(a) .cols = (a), .ncols = (int)(sizeof(a) / sizeof *(a))

typedef struct vd_relation {
  const char *name;
  const vd_colspec *cols;
  int ncols;
  unsigned flags;
  int order_col;         /* rows come out ascending on this column, or -1 */
  /* What a planner may know of one call (one open, its arguments bound) without making
   * a request, shared by SQLite's xBestIndex and PostgreSQL's planner (vd_rel_rows,
   * vd_rel_requests):
   * - rows: the rows a call returns when nothing better is known at plan time: a layer of
   *   a typical dataset, a catalog's few rows (0: 1000);
   * - known: the same from the arguments' values, only from what the connection already
   *   holds (its document cache, e.g. a layer's chunk count in a cached LayerStatus),
   *   never a request; <= 0 when not known;
   * - requests: the round trips a call makes before its first row (documents, a
   *   listing), and rows_per_request: one more per that many rows (a metadata page of
   *   1024 chunks; 0: none);
   * - estimate: the rows left of a call's `rows` under these pushed filters. */
  double rows;
  double (*known)(vd_ctx *ctx, const vd_value *args, int nargs);
  double requests, rows_per_request;
  double (*estimate)(double rows, const vd_filter *f, int nf);
  /* Positions the new cursor on its first row (or at eof). args[k] is the k-th
   * VD_COL_ARG column in declaration order, VD_NULL when omitted. Strings in args and
   * filters are only valid during the call. */
  vd_code (*open)(vd_ctx *ctx, const vd_value *args, int nargs, const vd_filter *f, int nf,
                  void **cur, vd_err *err);
  vd_code (*next)(void *cur, vd_err *err);
  int (*eof)(void *cur);
  /* Value of a non-argument column of the current row; borrowed pointers stay valid
   * until next/close. */
  vd_code (*column)(void *cur, int col, vd_value *out, vd_err *err);
  int64_t (*rowid)(void *cur);
  void (*close)(void *cur);
  const vd_table_ops *table; /* NULL: read-only table-valued function */
  /* Optional fast path for integer columns, for relations with millions of rows: ints(cur)
   * gives the current row's integers (valid until next/close), int_col[c] the index there
   * of column c, or -1 for a column that goes through column(). VD_INT_NULL there is
   * SQL NULL. A front end asks once per row instead of once per column. */
  const int64_t *(*ints)(void *cur);
  const signed char *int_col;
  const char *doc;           /* one line for vdsql_relations() and the docs */
} vd_relation;

/* Function flags. */
#define VD_FN_IO 0x1
#define VD_FN_WRITES 0x2 /* changes a dataset (vds_create, vds_repair): PARALLEL UNSAFE */
#define VD_FN_SETTER 0x4 /* with its last argument it changes the connection's settings (vdsql_config):
                            that form PARALLEL UNSAFE, the others RESTRICTED (per-connection state) */

typedef struct vd_function {
  const char *name;
  int min_args, max_args;
  unsigned flags;
  vd_type result;            /* declared result type */
  vd_type arg_types[8];      /* declared argument types, in order */
  vd_code (*call)(vd_ctx *ctx, const vd_value *args, int nargs, vd_value *out, vd_err *err);
  const char *args;          /* argument names as users write them: "url, name [, offset, size]" */
  const char *doc;           /* one line for vdsql_relations() and the docs */
} vd_function;

extern const vd_relation *const vd_relations[];
extern const vd_function *const vd_functions[];

/* The rows of one call of r under the pushed filters f: from args (all the relation's
 * arguments, NULL when not known at plan time) through r->known when the connection
 * holds what it needs, else r->rows. ctx may be NULL (then nothing is known). */
double vd_rel_rows(const vd_relation *r, vd_ctx *ctx, const vd_value *args, int nargs, const vd_filter *f, int nf);
/* The requests one call of r returning rows makes. */
double vd_rel_requests(const vd_relation *r, double rows);

/* Index of the k-th argument column of r, or -1. */
int vd_rel_arg_col(const vd_relation *r, int k);
int vd_rel_nargs(const vd_relation *r);
/* The first VD_COL_NOTNULL column that is NULL in an INSERT's row (a value for every
 * non-argument column, in order, as vd_table_ops.insert takes it), or -1. */
int vd_rel_null_col(const vd_relation *r, const vd_value *row);

#endif
