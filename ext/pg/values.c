/* The PostgreSQL front end's conversions, its one context per backend and its one
 * mapping from the core's codes to SQLSTATEs (as ext/sqlite/values.c is SQLite's). */
#include "pg_glue.h"

#include <hdf5.h>
#include <stdio.h>

#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"

PG_MODULE_MAGIC;

static vd_ctx *backend_ctx;

/* The core's cancel check: a cancel, a statement_timeout or a terminate is pending and
 * may be served now (not while a rollback holds interrupts). It only reads flags: the
 * error is raised by CHECK_FOR_INTERRUPTS once the core has returned. */
static int pg_interrupted(void *arg) {
  return (QueryCancelPending || ProcDiePending) && INTERRUPTS_CAN_BE_PROCESSED();
}

vd_ctx *vdsql_pg_ctx(void) {
  if (!backend_ctx) {
    /* HDF5 must not run its exit handler in a backend (a crash at exit resets the
     * cluster); this has to come before any other HDF5 call. */
    H5dont_atexit();
    backend_ctx = vd_ctx_new();
    if (!backend_ctx) ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("vdsql: out of memory")));
    backend_ctx->interrupted = pg_interrupted;
  }
  /* the environment's AWS_* / AZURE_STORAGE_* credentials are the server's identity: a
   * superuser's only, decided per call (SET ROLE, SECURITY DEFINER change who runs) */
  vdsql_pg_sync_settings(backend_ctx, superuser());
  vdpg_credentials_current(backend_ctx);
  return backend_ctx;
}

vd_value vdsql_pg_arg(Datum d, vd_type declared) {
  switch (declared) {
    case VD_INT: return vd_int(DatumGetInt64(d));
    case VD_REAL: return vd_real(DatumGetFloat8(d));
    case VD_BLOB: {
      bytea *b = DatumGetByteaPP(d);
      return vd_blob_val(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
    }
    default: {
      text *t = DatumGetTextPP(d);
      return vd_textn(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
    }
  }
}

static bytea *bytes_of(const vd_value *v) {
  bytea *b = palloc(VARHDRSZ + v->n);
  SET_VARSIZE(b, VARHDRSZ + v->n);
  if (v->n) memcpy(VARDATA(b), v->p, v->n);
  return b;
}

vd_code vdsql_pg_text_check(const char *p, size_t n, const char *column, vd_err *err) {
  if (!pg_verify_mbstr(GetDatabaseEncoding(), p ? p : "", (int)n, true))
    return vd_fail(err, VD_INVALID, "column %s: the value is not valid %s text", column, GetDatabaseEncodingName());
  return VD_OK;
}

vd_code vdsql_pg_datum(const vd_value *v, vd_type declared, const char *column, Datum *out, bool *isnull,
                       vd_err *err) {
  *isnull = v->type == VD_NULL;
  *out = (Datum)0;
  if (*isnull) return VD_OK;
  switch (declared) {
    case VD_INT:
      if (v->type == VD_INT) *out = Int64GetDatum(v->i);
      else if (v->type == VD_REAL && v->r == (double)(int64)v->r) *out = Int64GetDatum((int64)v->r);
      else return vd_fail(err, VD_INVALID, "column %s: the value is not an integer", column);
      return VD_OK;
    case VD_REAL:
      if (v->type == VD_REAL) *out = Float8GetDatum(v->r);
      else if (v->type == VD_INT) *out = Float8GetDatum((double)v->i);
      else return vd_fail(err, VD_INVALID, "column %s: the value is not a number", column);
      return VD_OK;
    case VD_BLOB:
      if (v->type == VD_TEXT || v->type == VD_BLOB) {
        *out = PointerGetDatum(bytes_of(v));
        return VD_OK;
      }
      return vd_fail(err, VD_INVALID, "column %s: the value is not bytes", column);
    default: {
      if (v->type == VD_BLOB) { /* a mixed column's bytes (lindi_refs.value): as bytea prints them */
        *out = DirectFunctionCall1(byteaout, PointerGetDatum(bytes_of(v)));
        *out = PointerGetDatum(cstring_to_text(DatumGetCString(*out)));
        return VD_OK;
      }
      char num[64];
      const char *p = v->p;
      size_t n = v->n;
      if (v->type == VD_INT) n = (size_t)snprintf(num, sizeof num, "%lld", (long long)v->i), p = num;
      else if (v->type == VD_REAL) n = (size_t)snprintf(num, sizeof num, "%.17g", v->r), p = num;
      vd_code rc = vdsql_pg_text_check(p, n, column, err);
      if (rc) return rc;
      *out = PointerGetDatum(cstring_to_text_with_len(p ? p : "", (int)n));
      return VD_OK;
    }
  }
}

static int sqlstate(vd_code rc) {
  switch (rc) {
    case VD_INVALID: return ERRCODE_INVALID_PARAMETER_VALUE;
    case VD_NOTFOUND: return ERRCODE_UNDEFINED_FILE;
    case VD_IO: return ERRCODE_IO_ERROR;
    case VD_NOMEM: return ERRCODE_OUT_OF_MEMORY;
    case VD_CONSTRAINT: return ERRCODE_UNIQUE_VIOLATION;
    case VD_BUSY: return ERRCODE_LOCK_NOT_AVAILABLE;
    case VD_READONLY: return ERRCODE_WRONG_OBJECT_TYPE;
    case VD_UNSUPPORTED: return ERRCODE_FEATURE_NOT_SUPPORTED;
    case VD_PRECONDITION: return ERRCODE_T_R_SERIALIZATION_FAILURE;
    case VD_INTERRUPTED: return ERRCODE_QUERY_CANCELED;
    default: return ERRCODE_INTERNAL_ERROR;
  }
}

/* The core's word on what it was doing when stopped (its URL), as the CONTEXT line of
 * PostgreSQL's own cancel error */
static void interrupted_context(void *arg) {
  errcontext("vdsql: %s", (const char *)arg);
}

void vdsql_pg_raise(vd_code rc, const vd_err *err) {
  if (rc == VD_INTERRUPTED) {
    /* PostgreSQL's own error for what stopped the core: "canceling statement due to
     * statement timeout" or "... user request" (57014), or FATAL for a terminate */
    ErrorContextCallback cb = {error_context_stack, interrupted_context, (void *)err->msg};
    error_context_stack = &cb;
    CHECK_FOR_INTERRUPTS();
    error_context_stack = cb.previous;
  }
  ereport(ERROR, (errcode(sqlstate(rc)), errmsg("%s", err->msg[0] ? err->msg : "vdsql: unknown error")));
}
