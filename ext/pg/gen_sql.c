/* Writes sql/vdsql--<version>.sql, the PostgreSQL install script, from the relation
 * catalogue: every relation becomes a set-returning function whose parameters are the
 * relation's argument columns and whose result columns are the others; every scalar
 * function becomes a C function. Nothing here is written by hand per relation. Then the
 * role vdsql_network and the foreign-data wrapper vdsql (its validator; the handler comes
 * with the foreign tables). */
#include <stdio.h>
#include <string.h>

#include "vd_catalog.h"

static const char *pg_type(vd_type t) {
  switch (t) {
    case VD_INT: return "bigint";
    case VD_REAL: return "double precision";
    case VD_TEXT: return "text";
    case VD_BLOB: return "bytea";
    default: return "text"; /* mixed-type columns (vds_metadata.value) travel as text */
  }
}

int main(int argc, char **argv) {
  const char *version = argc > 1 ? argv[1] : "0.1";
  printf("-- vdsql %s: generated from the relation catalogue by ext/pg/gen_sql.c; do not edit.\n", version);
  printf("\\echo Use \"CREATE EXTENSION vdsql\" to load this file. \\quit\n\n");
  /* Reaching the network needs the privileges of vdsql_network, checked when a call runs
   * (ext/pg/privileges.c), as local files need pg_read_server_files. Roles are
   * cluster-wide and outlive DROP EXTENSION: made only when absent. */
  printf("DO $$ BEGIN\n  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'vdsql_network') THEN\n"
         "    CREATE ROLE vdsql_network NOLOGIN;\n  END IF;\nEND $$;\n\n");
  /* the relations' planner support function: its first call loads the module while a
   * query is planned, so that a function in FROM streams its rows (ext/pg/funcscan.c) */
  printf("CREATE FUNCTION vdsql_relation_support(internal) RETURNS internal\n"
         "  AS 'MODULE_PATHNAME', 'vdsql_relation_support' LANGUAGE C STRICT PARALLEL SAFE;\n\n");
  for (int i = 0; vd_relations[i]; i++) {
    const vd_relation *r = vd_relations[i];
    if (r->flags & VD_REL_TABLE_ONLY) continue; /* named tables become foreign tables (FDW), not functions */
    printf("CREATE FUNCTION %s(", r->name);
    int first = 1;
    for (int c = 0; c < r->ncols; c++)
      if (r->cols[c].flags & VD_COL_ARG) {
        printf("%s\"%s\" %s%s", first ? "" : ", ", r->cols[c].name, pg_type(r->cols[c].type),
               (r->cols[c].flags & VD_COL_OPT) ? " DEFAULT NULL" : "");
        first = 0;
      }
    printf(")\n  RETURNS TABLE(");
    first = 1;
    for (int c = 0; c < r->ncols; c++) /* a hidden column (vds_chunks.data: every chunk object read) is
                                           left out: a function computes all it returns */
      if (!(r->cols[c].flags & (VD_COL_ARG | VD_COL_HIDDEN))) {
        printf("%s\"%s\" %s", first ? "" : ", ", r->cols[c].name, pg_type(r->cols[c].type)); /* quoted: exists, index... */
        first = 0;
      }
    /* read-only relations run in parallel workers too (curl starts lazily in each);
     * a connection's own counters and settings are not a worker's */
    /* ROWS: the catalogue's rows per call, what the support function says when the
     * arguments are not constants (plan_cost.c), so pg_proc tells the same */
    printf(")\n  AS 'MODULE_PATHNAME', 'vdsql_relation' LANGUAGE C %s PARALLEL %s ROWS %.0f SUPPORT vdsql_relation_support;\n",
           (r->flags & VD_REL_IO) ? "VOLATILE" : "STABLE", (r->flags & VD_REL_WRITES) ? "UNSAFE" : (r->flags & VD_REL_BACKEND) ? "RESTRICTED" : "SAFE",
           r->rows > 0 ? r->rows : 1000);
    /* EXECUTE stays PUBLIC's: whether a call reads local files or the network depends on
     * its url, so the call checks (privileges.c) and its refusal names what is needed */
    printf("\n");
  }
  for (int i = 0; vd_functions[i]; i++) {
    const vd_function *f = vd_functions[i];
    for (int n = f->min_args; n <= f->max_args; n++) {
      printf("CREATE FUNCTION %s(", f->name);
      for (int a = 0; a < n; a++) printf("%s%s", a ? ", " : "", pg_type(f->arg_types[a]));
      const char *par = (f->flags & VD_FN_WRITES) || ((f->flags & VD_FN_SETTER) && n == f->max_args) ? "UNSAFE"
                        : (f->flags & VD_FN_SETTER) ? "RESTRICTED"
                                                    : "SAFE";
      printf(") RETURNS %s AS 'MODULE_PATHNAME', 'vdsql_function' LANGUAGE C VOLATILE PARALLEL %s;\n",
             pg_type(f->result), par);
    }
  }
  /* ---- the foreign-data wrapper vdsql (ext/pg/fdw*.c): every relation as a foreign
   * table, WHERE and joins pushed down, the named tables writable; the validator checks
   * every option of its objects (ext/pg/credentials.c: credentials only in user mappings;
   * fdw.c: a foreign table's options against its relation) ---- */
  printf("\nCREATE FUNCTION vdsql_fdw_handler() RETURNS fdw_handler AS 'MODULE_PATHNAME' LANGUAGE C STRICT;\n");
  printf("CREATE FUNCTION vdsql_fdw_validator(text[], oid) RETURNS void\n"
         "  AS 'MODULE_PATHNAME', 'vdsql_fdw_validator' LANGUAGE C STRICT;\n");
  printf("CREATE FOREIGN DATA WRAPPER vdsql HANDLER vdsql_fdw_handler VALIDATOR vdsql_fdw_validator;\n");
  /* ---- end of the foreign-data wrapper ---- */
  return 0;
}
