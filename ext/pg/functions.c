/* The PostgreSQL front end's functions: every table-valued relation of the catalogue as
 * one value-per-call set-returning function (vdsql_relation; which relation a call is
 * comes from the function's name), every scalar function as vdsql_function. Generic
 * over the catalogue: a relation added later needs nothing here. A call's cursor lives
 * in the call's multi-call memory context, whose reset callback closes it: at the last
 * row, when the caller stops early (a LIMIT over a call in the select list) and when the
 * query fails. In FROM, PostgreSQL would store every row in a tuplestore first whatever
 * the mode: there the planner gets funcscan.c's streaming scan instead. */
#include "postgres.h"

#include "fmgr.h"
#include "access/htup_details.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "rows.h"

PG_FUNCTION_INFO_V1(vdsql_relation);
PG_FUNCTION_INFO_V1(vdsql_function);

/* The catalogue entry a call stands for, by the function's name; a scalar function's is
 * cached in fn_extra (a set-returning function's fn_extra is its FuncCallContext). */
static const void *entry_of(FunctionCallInfo fcinfo, int relation) {
  if (!relation && fcinfo->flinfo->fn_extra) return fcinfo->flinfo->fn_extra;
  char *name = get_func_name(fcinfo->flinfo->fn_oid);
  const void *found = NULL;
  for (int i = 0; relation && name && vd_relations[i] && !found; i++)
    if (strcmp(vd_relations[i]->name, name) == 0) found = vd_relations[i];
  for (int i = 0; !relation && name && vd_functions[i] && !found; i++)
    if (strcmp(vd_functions[i]->name, name) == 0) found = vd_functions[i];
  if (!found)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_FUNCTION),
                    errmsg("vdsql: no %s named \"%s\" in the catalogue (a renamed vdsql function no longer finds its "
                           "relation)", relation ? "relation" : "function", name ? name : "?")));
  if (!relation) fcinfo->flinfo->fn_extra = (void *)found;
  return found;
}

/* One call's rows, in its multi-call memory context. */
typedef struct call_state {
  const vd_relation *r;
  vd_ctx *ctx;
  vdpg_identity *id; /* the call's credentials and endpoints, put back before each row */
  void *cur;         /* the core's cursor, or NULL */
  bool advance;      /* the row returned last is still the cursor's current row */
  bool scalar;       /* one result column: the function returns it, not a record */
  bool byval;        /* the scalar's type */
  int16 len;
  TupleDesc desc;
  Datum *values;
  bool *nulls;
  vdpg_rows rows;
  vd_err err;
} call_state;

static void close_cursor(void *arg) {
  call_state *s = arg;
  if (s->cur) s->r->close(s->cur);
  s->cur = NULL;
}

/* The first call: arguments checked, the cursor opened in the multi-call context. */
static void first_call(FunctionCallInfo fcinfo, FuncCallContext *fc) {
  const vd_relation *r = entry_of(fcinfo, 1);
  ReturnSetInfo *rsinfo = (ReturnSetInfo *)fcinfo->resultinfo;
  if (!rsinfo || !IsA(rsinfo, ReturnSetInfo) || !(rsinfo->allowedModes & SFRM_ValuePerCall))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("vdsql: %s called where a set of rows cannot be taken", r->name)));
  if (r->ncols > VDSQL_PG_MAX_COLS)
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("vdsql: %s has %d columns, more than the %d ext/pg/functions.c takes", r->name, r->ncols,
                           VDSQL_PG_MAX_COLS)));
  MemoryContext old = MemoryContextSwitchTo(fc->multi_call_memory_ctx);
  call_state *s = palloc0(sizeof *s);
  s->r = r;
  MemoryContextCallback *cb = palloc(sizeof *cb);
  cb->func = close_cursor, cb->arg = s;
  MemoryContextRegisterResetCallback(fc->multi_call_memory_ctx, cb); /* before anything can fail */
  fc->user_fctx = s;
  int nargs = 0, nout = 0;
  vd_value args[VDSQL_PG_MAX_COLS];
  int outcol[VDSQL_PG_MAX_COLS];
  for (int c = 0; c < r->ncols; c++) {
    if (r->cols[c].flags & VD_COL_ARG) {
      args[nargs] = PG_ARGISNULL(nargs) ? vd_null() : vdsql_pg_arg(PG_GETARG_DATUM(nargs), r->cols[c].type);
      nargs++;
    } else if (!(r->cols[c].flags & VD_COL_HIDDEN)) { /* as gen_sql declares the result */
      outcol[nout++] = c;
    }
  }
  TupleDesc desc = NULL;
  Oid type = InvalidOid;
  TypeFuncClass tc = get_call_result_type(fcinfo, &type, &desc);
  s->scalar = tc != TYPEFUNC_COMPOSITE;
  if (s->scalar) get_typlenbyval(type, &s->len, &s->byval);
  if ((s->scalar && nout != 1) || (!s->scalar && desc->natts != nout))
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("vdsql: %s returns %d columns here, the catalogue's relation has %d (an extension of "
                           "another version?)", r->name, s->scalar ? 1 : desc->natts, nout)));
  if (!s->scalar) s->desc = BlessTupleDesc(desc);
  s->values = palloc(sizeof(Datum) * (nout ? nout : 1));
  s->nulls = palloc(sizeof(bool) * (nout ? nout : 1));
  vdpg_rows_init(&s->rows, r, fc->multi_call_memory_ctx, nout, outcol, ~(uint64)0, NULL, NULL);
  s->rows.hide = strcmp(r->name, "vdsql_config") == 0;
  s->ctx = vdsql_pg_ctx();
  vdpg_check_relation_args(r, args, nargs); /* before anything is reached */
  s->id = vdpg_identity_take(s->ctx, fc->multi_call_memory_ctx);
  vd_err_clear(&s->err);
  void *c0 = NULL;
  vd_code rc = r->open(s->ctx, args, nargs, NULL, 0, &c0, &s->err);
  s->cur = c0;
  MemoryContextSwitchTo(old);
  if (rc) vdsql_pg_raise(rc, &s->err);
}

Datum vdsql_relation(PG_FUNCTION_ARGS) {
  if (SRF_IS_FIRSTCALL()) first_call(fcinfo, SRF_FIRSTCALL_INIT());
  FuncCallContext *fc = SRF_PERCALL_SETUP();
  call_state *s = fc->user_fctx;
  if (!s->cur) SRF_RETURN_DONE(fc);
  CHECK_FOR_INTERRUPTS();
  if (!vdpg_rows_next(&s->rows, s->ctx, s->id, s->cur, &s->advance, s->values, s->nulls, &s->err))
    SRF_RETURN_DONE(fc); /* deletes the multi-call context: closes the cursor */
  if (s->scalar) {
    if (s->nulls[0]) SRF_RETURN_NEXT_NULL(fc);
    SRF_RETURN_NEXT(fc, datumCopy(s->values[0], s->byval, s->len)); /* out of the buffer the next row reuses */
  }
  SRF_RETURN_NEXT(fc, HeapTupleGetDatum(heap_form_tuple(s->desc, s->values, s->nulls)));
}

/* vdsql_config(key, value) changed the context behind settings.c: a credential or an
 * endpoint lasts only that call (the next brings the GUC back, at the level it was set
 * at); other settings stay until their GUC changes. */
static void forget_setting(const char *key, size_t n) {
  const char *k, *doc;
  int action;
  for (int i = 0; vd_config_setting(i, &k, &doc, &action); i++)
    if (strlen(k) == n && strncmp(k, key, n) == 0 &&
        (vd_config_flags(i) & (VD_SETTING_CREDENTIAL | VD_SETTING_ENDPOINT)))
      vdsql_pg_setting_forget(i);
}

Datum vdsql_function(PG_FUNCTION_ARGS) {
  const vd_function *f = entry_of(fcinfo, 0);
  vd_ctx *ctx = vdsql_pg_ctx();
  int n = PG_NARGS();
  vd_value args[8];
  for (int a = 0; a < n && a < 8; a++)
    args[a] = PG_ARGISNULL(a) ? vd_null() : vdsql_pg_arg(PG_GETARG_DATUM(a), f->arg_types[a]);
  vdpg_check_function_args(f, args, n < 8 ? n : 8);
  if ((f->flags & VD_FN_SETTER) && n == f->max_args && args[0].type == VD_TEXT) {
    char *key = pnstrdup(args[0].p, args[0].n);
    vdpg_check_setting(key);
    pfree(key);
  }
  vd_value out = vd_null();
  vd_err err;
  vd_err_clear(&err);
  vd_code rc = f->call(ctx, args, n < 8 ? n : 8, &out, &err);
  if ((f->flags & VD_FN_SETTER) && args[0].type == VD_TEXT) {
    bool cred = vdpg_is_credential(args[0].p, args[0].n);
    if (n == f->max_args) forget_setting(args[0].p, args[0].n); /* the next call brings the GUC back */
    if (cred && vdpg_credentials_hidden() && rc == VD_OK) { /* as pg_user_mappings: NULL */
      if (out.dtor) out.dtor((void *)out.p);
      out = vd_null();
    }
  }
  Datum d = (Datum)0;
  bool isnull = true;
  if (rc == VD_OK) rc = vdsql_pg_datum(&out, f->result, f->name, &d, &isnull, &err);
  if (out.dtor) out.dtor((void *)out.p);
  if (rc) vdsql_pg_raise(rc, &err);
  if (isnull) PG_RETURN_NULL();
  return d;
}
