/* Conversions between the core's values and SQLite's. */
#include "glue.h"
SQLITE_EXTENSION_INIT3

void vdsql_result(sqlite3_context *cx, vd_value *v) {
  switch (v->type) {
    case VD_NULL: sqlite3_result_null(cx); break;
    case VD_INT: sqlite3_result_int64(cx, v->i); break;
    case VD_REAL: sqlite3_result_double(cx, v->r); break;
    case VD_TEXT:
      sqlite3_result_text64(cx, v->p, v->n, v->dtor ? v->dtor : SQLITE_TRANSIENT, SQLITE_UTF8);
      break;
    case VD_BLOB:
      sqlite3_result_blob64(cx, v->p ? v->p : "", v->n, v->dtor ? v->dtor : SQLITE_TRANSIENT);
      break;
  }
  v->dtor = NULL; /* ownership passed to SQLite */
}

vd_value vdsql_arg(sqlite3_value *v) {
  switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER: return vd_int(sqlite3_value_int64(v));
    case SQLITE_FLOAT: return vd_real(sqlite3_value_double(v));
    case SQLITE_TEXT: {
      const char *s = (const char *)sqlite3_value_text(v);
      return vd_textn(s, (size_t)sqlite3_value_bytes(v));
    }
    case SQLITE_BLOB: {
      const void *p = sqlite3_value_blob(v);
      return vd_blob_val(p, (size_t)sqlite3_value_bytes(v));
    }
    default: return vd_null();
  }
}

int vdsql_sqlite_code(vd_code c) {
  switch (c) {
    case VD_OK: return SQLITE_OK;
    case VD_NOMEM: return SQLITE_NOMEM;
    case VD_CONSTRAINT: return SQLITE_CONSTRAINT;
    case VD_BUSY: return SQLITE_BUSY;
    case VD_READONLY: return SQLITE_READONLY;
    case VD_INTERRUPTED: return SQLITE_INTERRUPT;
    default: return SQLITE_ERROR;
  }
}
