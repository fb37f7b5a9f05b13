/* A core cursor's current row as PostgreSQL Datums, shared by the scans that stream rows:
 * a foreign table's (fdw_scan.c), a function's in FROM (funcscan.c) and a function's
 * value-per-call rows (functions.c). Which attribute reads which relation column, and
 * how, is worked out once per scan, not once per attribute and row. */
#ifndef VDSQL_PG_ROWS_H
#define VDSQL_PG_ROWS_H

#include "fdw.h"

/* How one attribute the query reads is got. */
enum { VDPG_READ_ARG, VDPG_READ_INT, VDPG_READ_COLUMN };
typedef struct vdpg_att_read {
  int att; /* the row's attribute (0-based) */
  int col; /* the relation's column */
  int how; /* VDPG_READ_* */
  int idx; /* READ_ARG: the argument k; READ_INT: the index in the relation's ints() row */
  /* A text column's last value as a text Datum, reused while the core gives the same
   * bytes (status has four values over a million rows): no check of the encoding, no
   * palloc, no copy for a repeated value. The buffer is overwritten by the next
   * different value: a row's Datums live until the next row. */
  text *buf;
  size_t cap;  /* bytes for the text's data in buf */
  bool cached; /* buf holds a checked value */
} vdpg_att_read;

typedef struct vdpg_rows {
  const vd_relation *rel;
  MemoryContext cx;    /* the text buffers' */
  MemoryContext rowcx; /* what vdsql_pg_datum allocates (bytea, numbers as text), reset per row */
  bool rowcx_used;
  bool hide; /* vdsql_config as a function: a credential's value NULL where pg_user_mappings hides it (set by the caller) */
  int natts, nread;
  vdpg_att_read *read; /* the attributes read, in attribute order */
  const Datum *args;   /* READ_ARG: the argument columns' values (k-th argument) */
  const bool *argnull;
} vdpg_rows;

/* Sets up w in cx for a row of natts attributes, attribute a being relation column
 * attcol[a] (-1: none, always NULL), read only when its bit is set in cols (bit 63 stands
 * for every column from 63 on). args and argnull give the argument columns' values. */
void vdpg_rows_init(vdpg_rows *w, const vd_relation *r, MemoryContext cx, int natts, const int *attcol, uint64 cols,
                    const Datum *args, const bool *argnull);
/* The cursor's current row into values/isnull (natts each; the unread attributes NULL).
 * The Datums live until the next call. An error of the core, or text not valid in the
 * database encoding, is returned by code, nothing thrown. */
vd_code vdpg_rows_fill(vdpg_rows *w, void *cur, Datum *values, bool *isnull, vd_err *err);
/* The next row of a cursor read lazily: the scan's identity put back into ctx (other
 * vdsql scans of the query ran since its last row), the cursor moved on only now if
 * *advance (a LIMIT met by the last row makes no request more), then its row filled
 * in and *advance set. False at the end; an error of the core is raised. */
bool vdpg_rows_next(vdpg_rows *w, vd_ctx *ctx, const vdpg_identity *id, void *cur, bool *advance, Datum *values,
                    bool *isnull, vd_err *err);
/* Whether setting key (n bytes) is a credential (vdsql_config's keys). */
bool vdpg_is_credential(const char *key, size_t n);

#endif
