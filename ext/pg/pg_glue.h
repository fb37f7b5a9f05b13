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
/* Brings the context's settings to the vdsql.* GUCs (settings.c), and lets the
 * environment's credentials stand in when env; vdsql_pg_ctx calls it. An endpoint GUC
 * set by a role that is not a superuser gets only credentials set at that level: the
 * superuser's credential GUCs are left empty and the environment off. */
void vdsql_pg_sync_settings(vd_ctx *ctx, bool env);
/* The value of setting i the context holds as applied here (NULL: the default). */
const char *vdsql_pg_setting_applied(int i);
/* Setting i of the context was changed behind settings.c (vdsql_config(key, value)):
 * the next apply sets it whatever it holds. */
void vdsql_pg_setting_forget(int i);
/* Sets setting i (vd_config_setting's index) of ctx to value (NULL or empty: the core's
 * default) over its GUC until the next sync, e.g. from a user mapping (settings.c). */
vd_code vdsql_pg_setting_apply(vd_ctx *ctx, int i, const char *value, vd_err *err);
/* Checks a value of setting i with the core's words, touching no backend context. */
vd_code vdsql_pg_setting_check(int i, const char *value, vd_err *err);

/* Privileges, checked when a call runs (privileges.c), each refusal 42501 naming the url
 * and what it needs: a local path or file:// URL needs pg_read_server_files (and
 * pg_write_server_files too when write), an absolute path; http(s)://, s3://, az://
 * need the privileges of vdsql_network. The wrapper calls vdpg_check_url for a foreign
 * table's url (write for INSERT/UPDATE/DELETE). */
void vdpg_check_url(const char *url, bool write);
/* vdpg_check_url for every url argument of a call (a function writes: VD_FN_WRITES). */
void vdpg_check_relation_args(const vd_relation *r, const vd_value *args, int nargs);
void vdpg_check_function_args(const vd_function *f, const vd_value *args, int nargs);
/* vdsql_config(key, value) and a server's options follow SET vdsql.<key>: a secret or a
 * privileged setting is a superuser's to change. */
void vdpg_check_setting(const char *key);

/* The planner's statistics hook for the wrapper's argument columns (fdw_plan.c), set by
 * _PG_init. */
void vdpg_fdw_plan_init(void);
/* The functions' streaming scan in FROM (funcscan.c): its planner hook and its plan
 * node's methods, set by _PG_init. */
void vdpg_funcscan_init(void);
/* The JIT decision without the requests' waits (plan_jit.c): its ExecutorStart hook,
 * set by _PG_init. */
void vdpg_plan_jit_init(void);
/* Credentials (credentials.c): the GUC vdsql.server, defined by _PG_init. */
void vdpg_credentials_init(void);
/* Applies a vdsql server's options and the current user's mapping for it (else the
 * PUBLIC mapping) to ctx: the mapping's credentials replace all of ctx's (the ones it
 * lacks are empty). The wrapper calls it for a foreign table's server, after
 * vdsql_pg_ctx. */
void vdpg_credentials_apply(vd_ctx *ctx, Oid serverid);
/* The same for the server named by vdsql.server, if any (vdsql_pg_ctx calls it):
 * 42704 when it names no vdsql server, 42501 without USAGE on it. */
void vdpg_credentials_current(vd_ctx *ctx);
/* Whether the credentials of the last call's vdsql.server come from a PUBLIC mapping
 * whose options pg_user_mappings hides from the current role: vdsql_config() shows
 * them as NULL then. */
bool vdpg_credentials_hidden(void);
/* One option of the wrapper vdsql's objects (catalog: ForeignDataWrapperRelationId,
 * ForeignServerRelationId, ForeignTableRelationId or UserMappingRelationId), as the
 * validator vdsql_fdw_validator checks it: credentials only in a user mapping (42501),
 * no URL carrying credentials elsewhere (42501), other settings on a server (privileged
 * ones by a superuser), values checked by the core (22023), unknown names refused with
 * the valid ones (HV00D). */
void vdpg_validate_option(const char *name, const char *value, Oid catalog);

/* An argument Datum of the declared catalogue type as a core value; text is borrowed
 * from a palloc'd copy that lives as long as the call. */
vd_value vdsql_pg_arg(Datum d, vd_type declared);
/* A core value as the Datum of a column declared `declared` (gen_sql's types: bigint,
 * double precision, text, bytea; mixed columns are text). Never throws but for out of
 * memory: text that is not valid in the database encoding, or an integer column given a
 * fraction, is an error returned by name. */
vd_code vdsql_pg_datum(const vd_value *v, vd_type declared, const char *column, Datum *out, bool *isnull,
                       vd_err *err);
/* Checks that n bytes of a text value are valid in the database encoding (the core's
 * text comes from files and the network: nothing guarantees it), as vdsql_pg_datum does. */
vd_code vdsql_pg_text_check(const char *p, size_t n, const char *column, vd_err *err);
/* Raises the core's error with the SQLSTATE of its code (one mapping, here). */
void vdsql_pg_raise(vd_code rc, const vd_err *err) pg_attribute_noreturn();

#endif
