/* Internals shared by the PostgreSQL front end's files (the SQLite front end's glue.h,
 * for PostgreSQL). Only these files include postgres.h; the core never does. */
#ifndef VDSQL_PG_GLUE_H
#define VDSQL_PG_GLUE_H

#include "postgres.h"

#include "vd_catalog.h"

#define VDSQL_PG_MAX_COLS 64

/* The backend's context (settings, caches, connections), made on first use: curl and
 * HDF5 start lazily in each backend, never in the postmaster. */
vd_ctx *vdsql_pg_ctx(void);
/* Brings the context's settings to the vdsql.* GUCs (settings.c); vdsql_pg_ctx calls it. */
void vdsql_pg_sync_settings(vd_ctx *ctx);

/* An argument Datum of the declared catalogue type as a core value; text is borrowed
 * from a palloc'd copy that lives as long as the call. */
vd_value vdsql_pg_arg(Datum d, vd_type declared);
/* A core value as the Datum of a column declared `declared` (gen_sql's types: bigint,
 * double precision, text, bytea; mixed columns are text). Never throws but for out of
 * memory: text that is not valid in the database encoding, or an integer column given a
 * fraction, is an error returned by name. */
vd_code vdsql_pg_datum(const vd_value *v, vd_type declared, const char *column, Datum *out, bool *isnull,
                       vd_err *err);
/* Raises the core's error with the SQLSTATE of its code (one mapping, here). */
void vdsql_pg_raise(vd_code rc, const vd_err *err) pg_attribute_noreturn();

#endif
