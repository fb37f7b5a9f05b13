/* Entry point of the SQLite extension: `.load ./vdsql` calls sqlite3_vdsql_init, which
 * creates the connection's context and registers every relation and function of the
 * catalogue. */
#include "glue.h"
SQLITE_EXTENSION_INIT1

void vdsql_conn_release(vdsql_conn *c) {
  if (c && --c->refs == 0) {
    vd_ctx_free(c->ctx);
    sqlite3_free(c);
  }
}

#ifdef _WIN32
__declspec(dllexport)
#endif
__attribute__((visibility("default"))) int sqlite3_vdsql_init(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
  SQLITE_EXTENSION_INIT2(api);
  vdsql_conn *conn = sqlite3_malloc(sizeof *conn);
  if (!conn) return SQLITE_NOMEM;
  conn->refs = 1; /* held by this function until registration is done */
  conn->db = db;
  conn->not_interrupted_until = 0;
  conn->ctx = vd_ctx_new();
  if (!conn->ctx) {
    sqlite3_free(conn);
    return SQLITE_NOMEM;
  }
  conn->ctx->interrupted = vdsql_sqlite_interrupted;
  conn->ctx->interrupted_arg = conn;
  int rc = SQLITE_OK;
  for (int i = 0; rc == SQLITE_OK && vd_relations[i]; i++) rc = vdsql_register_relation(db, vd_relations[i], conn);
  for (int i = 0; rc == SQLITE_OK && vd_functions[i]; i++) rc = vdsql_register_function(db, vd_functions[i], conn);
  if (rc != SQLITE_OK && err) *err = sqlite3_mprintf("vdsql: registration failed: %s", sqlite3_errmsg(db));
  vdsql_conn_release(conn);
  return rc;
}
