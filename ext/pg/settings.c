/* Every vdsql_config setting is also a GUC vdsql.<key>, defined from the core's one
 * settings table (vd_config_setting): SET vdsql.max_parallel = 4, ALTER SYSTEM,
 * postgresql.conf, and parallel workers get the leader's values. A value is checked by
 * the core when it is set (the same words as vdsql_config's); an empty value means the
 * core's default. Secrets are superuser-only, left out of SHOW ALL and pg_settings,
 * and shown as '(set)' even to a superuser. Privileged settings (what the server may
 * reach, trust or spend: allowed_hosts, connect_to, ca_file, max_alloc, max_parallel,
 * and the sizes a backend holds: cache_size, lindi_prefix, vtkhdf_prefix,
 * http_max_excess) are shown but only a superuser changes them. A server's options and a user mapping's
 * credentials (credentials.c) are applied over the GUCs through vdsql_pg_setting_apply,
 * so that the next call finds out what the context holds and brings it back. */
#include "pg_glue.h"

#include "utils/guc.h"

#define MAX_SETTINGS 48

static char *values[MAX_SETTINGS];   /* the GUCs' strings, owned by guc.c */
static char *applied[MAX_SETTINGS];  /* what the backend's context holds (malloc'd), NULL: default */
static int nsettings;
static vd_ctx *scratch;              /* checks values without touching the backend's context */
static vd_ctx *defaults;             /* never set: the core's defaults, read back by RESET */

static const char *key_of(int i) {
  const char *key, *doc;
  int action;
  return vd_config_setting(i, &key, &doc, &action) ? key : NULL;
}

vd_code vdsql_pg_setting_check(int i, const char *value, vd_err *err) {
  if (!scratch && !(scratch = vd_ctx_new())) return vd_nomem(err);
  return vd_config_apply(scratch, key_of(i), value, NULL, err);
}

static bool check_at(int i, char **newval) {
  if (!*newval || !**newval) return true;
  vd_err err;
  vd_err_clear(&err);
  if (vdsql_pg_setting_check(i, *newval, &err)) {
    GUC_check_errmsg("%s", err.msg);
    return false;
  }
  return true;
}

/* Brings setting i of ctx to value: the value, or for empty the core's default, as a
 * context that was never set shows it (a secret's is empty; the environment is read
 * only at request time). A value the core refuses leaves applied[i] as it was, so the
 * next call tries again. */
vd_code vdsql_pg_setting_apply(vd_ctx *ctx, int i, const char *value, vd_err *err) {
  const char *want = value && *value ? value : NULL;
  if ((!want && !applied[i]) || (want && applied[i] && strcmp(want, applied[i]) == 0)) return VD_OK;
  char *def = NULL;
  vd_code rc = VD_OK;
  if (!want && (defaults || (defaults = vd_ctx_new()))) rc = vd_config_apply(defaults, key_of(i), NULL, &def, err);
  if (!rc && (want || def)) rc = vd_config_apply(ctx, key_of(i), want ? want : def, NULL, err);
  free(def);
  if (rc) return rc;
  if (applied[i]) explicit_bzero(applied[i], strlen(applied[i])); /* a mapping's secret, maybe */
  free(applied[i]);
  applied[i] = want ? strdup(want) : NULL;
  return VD_OK;
}

void vdsql_pg_sync_settings(vd_ctx *ctx) {
  vd_err err; /* a GUC's value was checked when it was set */
  for (int i = 0; i < nsettings; i++) vdsql_pg_setting_apply(ctx, i, values[i], &err);
}

static const char *show_secret_at(int i) { return values[i] && *values[i] ? "(set)" : ""; }

/* guc.c's hooks carry no argument, so one small hook per position in the table */
#define AT(i)                                                                                 \
  static bool check_##i(char **v, void **extra, GucSource source) { return check_at(i, v); } \
  static const char *show_##i(void) { return show_secret_at(i); }
AT(0) AT(1) AT(2) AT(3) AT(4) AT(5) AT(6) AT(7) AT(8) AT(9) AT(10) AT(11) AT(12) AT(13) AT(14) AT(15)
AT(16) AT(17) AT(18) AT(19) AT(20) AT(21) AT(22) AT(23) AT(24) AT(25) AT(26) AT(27) AT(28) AT(29) AT(30)
AT(31) AT(32) AT(33) AT(34) AT(35) AT(36) AT(37) AT(38) AT(39) AT(40) AT(41) AT(42) AT(43) AT(44) AT(45)
AT(46) AT(47)
#define H(i) check_##i
#define S(i) show_##i
static GucStringCheckHook checks[MAX_SETTINGS] = {
    H(0),  H(1),  H(2),  H(3),  H(4),  H(5),  H(6),  H(7),  H(8),  H(9),  H(10), H(11), H(12), H(13), H(14), H(15),
    H(16), H(17), H(18), H(19), H(20), H(21), H(22), H(23), H(24), H(25), H(26), H(27), H(28), H(29), H(30), H(31),
    H(32), H(33), H(34), H(35), H(36), H(37), H(38), H(39), H(40), H(41), H(42), H(43), H(44), H(45), H(46), H(47)};
static GucShowHook shows[MAX_SETTINGS] = {
    S(0),  S(1),  S(2),  S(3),  S(4),  S(5),  S(6),  S(7),  S(8),  S(9),  S(10), S(11), S(12), S(13), S(14), S(15),
    S(16), S(17), S(18), S(19), S(20), S(21), S(22), S(23), S(24), S(25), S(26), S(27), S(28), S(29), S(30), S(31),
    S(32), S(33), S(34), S(35), S(36), S(37), S(38), S(39), S(40), S(41), S(42), S(43), S(44), S(45), S(46), S(47)};

PGDLLEXPORT void _PG_init(void);
void _PG_init(void) {
  const char *key, *doc;
  int action;
  for (int i = 0; vd_config_setting(i, &key, &doc, &action); i++) {
    if (i >= MAX_SETTINGS)
      ereport(ERROR, (errmsg("vdsql: more settings than ext/pg/settings.c has hooks for (%d)", MAX_SETTINGS)));
    nsettings = i + 1;
    if (action) continue; /* 'stats' 'reset' and the like are not values */
    char name[128];
    snprintf(name, sizeof name, "vdsql.%s", key);
    int secret = vd_config_secret(i), privileged = (vd_config_flags(i) & VD_SETTING_PRIVILEGED) != 0;
    DefineCustomStringVariable(strdup(name), doc, NULL, &values[i], "", secret || privileged ? PGC_SUSET : PGC_USERSET,
                               secret ? GUC_SUPERUSER_ONLY | GUC_NO_SHOW_ALL : 0, checks[i], NULL,
                               secret ? shows[i] : NULL);
  }
  vdpg_credentials_init(); /* vdsql.server, PostgreSQL's own */
  vdpg_fdw_plan_init();
  MarkGUCPrefixReserved("vdsql");
}
