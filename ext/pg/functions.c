/* The PostgreSQL front end's functions: every table-valued relation of the catalogue as
 * one materialize-mode set-returning function (vdsql_relation; which relation a call is
 * comes from the function's name), every scalar function as vdsql_function. Generic
 * over the catalogue: a relation added later needs nothing here. The core runs between
 * PG_TRY and PG_FINALLY, so a cursor is closed whatever PostgreSQL throws; an error of
 * the core is raised only after the core has returned and released what it held. */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "pg_glue.h"

PG_FUNCTION_INFO_V1(vdsql_relation);
PG_FUNCTION_INFO_V1(vdsql_function);

/* The catalogue entry a call stands for, by the function's name, cached in fn_extra. */
static const void *entry_of(FunctionCallInfo fcinfo, int relation) {
  if (fcinfo->flinfo->fn_extra) return fcinfo->flinfo->fn_extra;
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
  fcinfo->flinfo->fn_extra = (void *)found;
  return found;
}

/* Whether setting key is a credential (vdsql_config's keys). */
static bool is_credential(const char *key, size_t n) {
  const char *k, *doc;
  int action;
  for (int i = 0; vd_config_setting(i, &k, &doc, &action); i++)
    if (strlen(k) == n && strncmp(k, key, n) == 0) return (vd_config_flags(i) & VD_SETTING_CREDENTIAL) != 0;
  return false;
}

/* vdsql_config() shows a credential of a PUBLIC mapping as pg_user_mappings shows the
 * mapping's options: NULL to a role that may not read them. */
static bool hide_value(const vd_relation *r, void *cur, int c, vd_value *v) {
  if (!vdpg_credentials_hidden() || strcmp(r->name, "vdsql_config") != 0 || strcmp(r->cols[c].name, "value") != 0)
    return false;
  vd_value key = vd_null();
  vd_err err;
  vd_err_clear(&err);
  bool hide = r->column(cur, 0, &key, &err) == VD_OK && key.type == VD_TEXT && is_credential(key.p, key.n);
  if (key.dtor) key.dtor((void *)key.p);
  if (hide && v->dtor) v->dtor((void *)v->p);
  return hide;
}

Datum vdsql_relation(PG_FUNCTION_ARGS) {
  const vd_relation *r = entry_of(fcinfo, 1);
  vd_ctx *ctx = vdsql_pg_ctx();
  InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
  ReturnSetInfo *rsinfo = (ReturnSetInfo *)fcinfo->resultinfo;
  int nargs = 0, nout = 0;
  vd_value args[VDSQL_PG_MAX_COLS];
  int outcol[VDSQL_PG_MAX_COLS];
  if (r->ncols > VDSQL_PG_MAX_COLS)
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("vdsql: %s has %d columns, more than the %d ext/pg/functions.c takes", r->name, r->ncols,
                           VDSQL_PG_MAX_COLS)));
  for (int c = 0; c < r->ncols; c++) {
    if (r->cols[c].flags & VD_COL_ARG) {
      args[nargs] = PG_ARGISNULL(nargs) ? vd_null() : vdsql_pg_arg(PG_GETARG_DATUM(nargs), r->cols[c].type);
      nargs++;
    } else if (!(r->cols[c].flags & VD_COL_HIDDEN)) { /* as gen_sql declares the result */
      outcol[nout++] = c;
    }
  }
  vdpg_check_relation_args(r, args, nargs); /* before anything is reached */
  /* a row's Datums live in a context reset after the tuplestore has copied them: memory
   * stays flat over millions of rows */
  MemoryContext rowcx = AllocSetContextCreate(CurrentMemoryContext, "vdsql row", ALLOCSET_DEFAULT_SIZES);
  Datum *values = palloc(sizeof(Datum) * (nout ? nout : 1));
  bool *nulls = palloc(sizeof(bool) * (nout ? nout : 1));
  void *volatile cur = NULL;
  vd_err err;
  vd_err_clear(&err);
  vd_code rc = VD_OK;
  PG_TRY();
  {
    void *c0 = NULL;
    rc = r->open(ctx, args, nargs, NULL, 0, &c0, &err);
    cur = c0;
    while (rc == VD_OK && !r->eof(cur)) {
      CHECK_FOR_INTERRUPTS();
      MemoryContext outer = MemoryContextSwitchTo(rowcx);
      const int64_t *iv = r->ints ? r->ints(cur) : NULL;
      for (int j = 0; j < nout && rc == VD_OK; j++) {
        int c = outcol[j], k = iv && r->int_col ? r->int_col[c] : -1;
        vd_value v = vd_null();
        if (k >= 0)
          v = iv[k] == VD_INT_NULL ? vd_null() : vd_int(iv[k]);
        else
          rc = r->column(cur, c, &v, &err);
        if (rc == VD_OK && hide_value(r, cur, c, &v)) v = vd_null();
        if (rc == VD_OK) rc = vdsql_pg_datum(&v, r->cols[c].type, r->cols[c].name, &values[j], &nulls[j], &err);
        if (v.dtor) v.dtor((void *)v.p);
      }
      MemoryContextSwitchTo(outer);
      if (rc == VD_OK) {
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
        MemoryContextReset(rowcx);
        rc = r->next(cur, &err);
      }
    }
  }
  PG_FINALLY();
  {
    if (cur) r->close(cur);
  }
  PG_END_TRY();
  if (rc) vdsql_pg_raise(rc, &err);
  return (Datum)0;
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
    bool cred = is_credential(args[0].p, args[0].n);
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
