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
 * so that the next call finds out what the context holds and brings it back.
 *
 * Where credentials may go: an endpoint set by a role that is not a superuser (the
 * level PGC_USERSET, as guc.c records who set a value) serves only credentials set at
 * that level, never a superuser's GUCs or the server's environment, which would
 * otherwise be sent to a port of that role's choosing. A secret is refused where
 * every role could read it back (ALTER ROLE/DATABASE ... SET: pg_db_role_setting;
 * CREATE FUNCTION ... SET: pg_proc), and its old strings are cleared when replaced. */
#include "pg_glue.h"

#include "utils/guc.h"
#include "utils/guc_tables.h"

#define MAX_SETTINGS 48

static char *values[MAX_SETTINGS];   /* the GUCs' strings, owned by guc.c */
static char *applied[MAX_SETTINGS];  /* what the backend's context holds (malloc'd), NULL: default */
static bool unknown[MAX_SETTINGS];   /* changed behind applied[] (vdsql_config(key, value)) */
static struct config_string *gucs[MAX_SETTINGS]; /* guc.c's records: who set a value */
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

/* Where guc.c reads a value back into every session: a role's or database's settings,
 * and the test of ALTER ROLE/DATABASE ... SET and CREATE FUNCTION ... SET, which store
 * the value in a catalog every role can read. */
static bool stored_for_all(GucSource source) {
  return source == PGC_S_TEST || source == PGC_S_DATABASE || source == PGC_S_USER || source == PGC_S_DATABASE_USER;
}

static bool check_at(int i, char **newval, GucSource source) {
  if (!*newval || !**newval) return true;
  if (vd_config_secret(i) && stored_for_all(source)) {
    GUC_check_errcode(ERRCODE_INSUFFICIENT_PRIVILEGE);
    GUC_check_errmsg("vdsql: vdsql.%s is a secret: it cannot be kept in ALTER ROLE/DATABASE ... SET or a "
                     "function's SET, whose values every role can read (pg_db_role_setting, pg_proc)",
                     key_of(i));
    GUC_check_errhint("Use SET in the session, ALTER SYSTEM, postgresql.conf, or a user mapping.");
    return false;
  }
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
  if (!unknown[i] && ((!want && !applied[i]) || (want && applied[i] && strcmp(want, applied[i]) == 0))) return VD_OK;
  char *def = NULL;
  vd_code rc = VD_OK;
  if (!want && (defaults || (defaults = vd_ctx_new()))) rc = vd_config_apply(defaults, key_of(i), NULL, &def, err);
  if (!rc && (want || def)) rc = vd_config_apply(ctx, key_of(i), want ? want : def, NULL, err);
  free(def);
  if (rc) return rc;
  if (applied[i]) explicit_bzero(applied[i], strlen(applied[i])); /* a mapping's secret, maybe */
  free(applied[i]);
  applied[i] = want ? strdup(want) : NULL;
  unknown[i] = false;
  return VD_OK;
}

const char *vdsql_pg_setting_applied(int i) { return i >= 0 && i < nsettings ? applied[i] : NULL; }

void vdsql_pg_setting_forget(int i) {
  if (i >= 0 && i < nsettings) unknown[i] = true;
}

/* Whether setting i's GUC holds a value set by a role that is not a superuser. */
static bool set_by_user(int i) {
  return gucs[i] && values[i] && *values[i] && gucs[i]->gen.scontext == PGC_USERSET; /* PGC_SUSET and below: a superuser or the configuration */
}

/* An endpoint set at the users' level: a region only picks among AWS's own endpoints. */
static bool user_endpoint(void) {
  for (int i = 0; i < nsettings; i++)
    if ((vd_config_flags(i) & VD_SETTING_ENDPOINT) && strcmp(key_of(i), "s3_region") != 0 && set_by_user(i))
      return true;
  return false;
}

void vdsql_pg_sync_settings(vd_ctx *ctx, bool env) {
  vd_err err; /* a GUC's value was checked when it was set */
  bool confined = user_endpoint();
  for (int i = 0; i < nsettings; i++) {
    bool cred = (vd_config_flags(i) & VD_SETTING_CREDENTIAL) != 0;
    vdsql_pg_setting_apply(ctx, i, cred && confined && !set_by_user(i) ? NULL : values[i], &err);
  }
  vd_ctx_env_credentials(ctx, env && !confined);
}

static const char *show_secret_at(int i) { return values[i] && *values[i] ? "(set)" : ""; }

/* Whether guc.c still holds str for setting i anywhere but its current value (its
 * reset or boot value, a SET LOCAL's or a function's saved one): then it must stay. */
static bool still_held(int i, const char *str) {
  struct config_string *g = gucs[i];
  if (!g || str == g->reset_val || str == g->boot_val) return true;
  for (GucStack *st = g->gen.stack; st; st = st->prev)
    if (str == st->prior.val.stringval || str == st->masked.val.stringval) return true;
  return false;
}

/* A secret's old string, about to be freed by guc.c, is cleared first. */
static void assign_secret_at(int i, const char *newval) {
  char *old = values[i];
  if (old && old != newval && *old && !still_held(i, old)) explicit_bzero(old, strlen(old));
}

/* guc.c's hooks carry no argument, so one small hook per position in the table */
#define AT(i)                                                                                 \
  static bool check_##i(char **v, void **extra, GucSource source) { return check_at(i, v, source); } \
  static void assign_##i(const char *v, void *extra) { assign_secret_at(i, v); }                    \
  static const char *show_##i(void) { return show_secret_at(i); }
AT(0) AT(1) AT(2) AT(3) AT(4) AT(5) AT(6) AT(7) AT(8) AT(9) AT(10) AT(11) AT(12) AT(13) AT(14) AT(15)
AT(16) AT(17) AT(18) AT(19) AT(20) AT(21) AT(22) AT(23) AT(24) AT(25) AT(26) AT(27) AT(28) AT(29) AT(30)
AT(31) AT(32) AT(33) AT(34) AT(35) AT(36) AT(37) AT(38) AT(39) AT(40) AT(41) AT(42) AT(43) AT(44) AT(45)
AT(46) AT(47)
#define H(i) check_##i
#define S(i) show_##i
#define A(i) assign_##i
static GucStringCheckHook checks[MAX_SETTINGS] = {
    H(0),  H(1),  H(2),  H(3),  H(4),  H(5),  H(6),  H(7),  H(8),  H(9),  H(10), H(11), H(12), H(13), H(14), H(15),
    H(16), H(17), H(18), H(19), H(20), H(21), H(22), H(23), H(24), H(25), H(26), H(27), H(28), H(29), H(30), H(31),
    H(32), H(33), H(34), H(35), H(36), H(37), H(38), H(39), H(40), H(41), H(42), H(43), H(44), H(45), H(46), H(47)};
static GucStringAssignHook assigns[MAX_SETTINGS] = {
    A(0),  A(1),  A(2),  A(3),  A(4),  A(5),  A(6),  A(7),  A(8),  A(9),  A(10), A(11), A(12), A(13), A(14), A(15),
    A(16), A(17), A(18), A(19), A(20), A(21), A(22), A(23), A(24), A(25), A(26), A(27), A(28), A(29), A(30), A(31),
    A(32), A(33), A(34), A(35), A(36), A(37), A(38), A(39), A(40), A(41), A(42), A(43), A(44), A(45), A(46), A(47)};
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
                               secret ? GUC_SUPERUSER_ONLY | GUC_NO_SHOW_ALL : 0, checks[i],
                               secret ? assigns[i] : NULL, secret ? shows[i] : NULL);
  }
  /* guc.c's records of the settings just defined (who set each value) */
  struct config_generic **all = get_guc_variables();
  for (int g = 0, n = GetNumConfigOptions(); g < n; g++) {
    if (all[g]->vartype != PGC_STRING || strncmp(all[g]->name, "vdsql.", 6) != 0) continue;
    for (int i = 0; i < nsettings; i++)
      if (key_of(i) && strcmp(all[g]->name + 6, key_of(i)) == 0) gucs[i] = (struct config_string *)all[g];
  }
  vdpg_credentials_init(); /* vdsql.server, PostgreSQL's own */
  vdpg_fdw_plan_init();
  vdpg_funcscan_init();
  vdpg_plan_jit_init();
  MarkGUCPrefixReserved("vdsql");
}
