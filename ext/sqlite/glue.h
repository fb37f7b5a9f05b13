/* Internals shared by the SQLite front end's files. */
#ifndef VDSQL_SQLITE_GLUE_H
#define VDSQL_SQLITE_GLUE_H

#include <sqlite3ext.h>

#include "vd_catalog.h"

/* The per-connection context, shared by every module and function of that
 * connection and freed when the last of them is destroyed. */
typedef struct vdsql_conn {
  vd_ctx *ctx;
  int refs;
  sqlite3 *db;
  double not_interrupted_until; /* interrupt.c: a "no" kept a moment */
} vdsql_conn;

void vdsql_conn_release(vdsql_conn *c);
/* The core's cancel check (vd_ctx.interrupted) for the connection: sqlite3_interrupt() */
int vdsql_sqlite_interrupted(void *conn);

/* vd_value <-> sqlite3_value */
void vdsql_result(sqlite3_context *cx, vd_value *v);
/* Converts an argument; text and blobs are borrowed from the sqlite3_value. */
vd_value vdsql_arg(sqlite3_value *v);
int vdsql_sqlite_code(vd_code c);

int vdsql_register_relation(sqlite3 *db, const vd_relation *rel, vdsql_conn *conn);
int vdsql_register_function(sqlite3 *db, const vd_function *fn, vdsql_conn *conn);

#endif
