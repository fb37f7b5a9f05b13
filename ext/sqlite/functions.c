/* Scalar functions from the catalogue, registered once per accepted arity. */
#include <stdlib.h>

#include "glue.h"
SQLITE_EXTENSION_INIT3

typedef struct fn_aux {
  const vd_function *fn;
  vdsql_conn *conn;
} fn_aux;

static void call(sqlite3_context *cx, int argc, sqlite3_value **argv) {
  fn_aux *a = sqlite3_user_data(cx);
  vd_value args[8];
  if (argc > 8) {
    sqlite3_result_error(cx, "too many arguments", -1);
    return;
  }
  for (int i = 0; i < argc; i++) args[i] = vdsql_arg(argv[i]);
  vd_value out = vd_null();
  vd_err err = {0};
  vd_code rc = a->fn->call(a->conn->ctx, args, argc, &out, &err);
  if (rc) {
    if (out.dtor) out.dtor((void *)out.p);
    if (rc == VD_NOMEM) {
      sqlite3_result_error_nomem(cx);
      return;
    }
    sqlite3_result_error(cx, err.msg, -1);
    sqlite3_result_error_code(cx, vdsql_sqlite_code(rc));
    return;
  }
  vdsql_result(cx, &out);
}

static void destroy(void *p) {
  fn_aux *a = p;
  vdsql_conn_release(a->conn);
  free(a);
}

int vdsql_register_function(sqlite3 *db, const vd_function *fn, vdsql_conn *conn) {
  for (int n = fn->min_args; n <= fn->max_args; n++) {
    fn_aux *a = malloc(sizeof *a);
    if (!a) return SQLITE_NOMEM;
    a->fn = fn;
    a->conn = conn;
    conn->refs++;
    int flags = SQLITE_UTF8 | ((fn->flags & VD_FN_IO) ? SQLITE_DIRECTONLY : 0);
    int rc = sqlite3_create_function_v2(db, fn->name, n, flags, a, call, NULL, NULL, destroy);
    if (rc != SQLITE_OK) return rc; /* SQLite calls destroy on failure */
  }
  return SQLITE_OK;
}
