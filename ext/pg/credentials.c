/* Credentials per user: a foreign server of the wrapper vdsql holds settings that say
 * where (s3_endpoint, cache_ttl, ...: any setting that is not a credential), and each
 * role's USER MAPPING for it holds who (the settings flagged VD_SETTING_CREDENTIAL:
 * s3_access_key_id, s3_secret_access_key, azure_*, ...). Table and server options are
 * readable by every role (pg_foreign_server.srvoptions), mapping options only by their
 * role, so a credential is accepted in a mapping and nowhere else, and a URL that
 * carries one (user:pass@, sig=, X-Amz-Signature=, X-Amz-Credential=) is refused in
 * any other option. The option names are vdsql_config's keys, from the core's one table.
 *
 * The wrapper's validator is vdsql_fdw_validator; the wrapper's handler (foreign tables,
 * fdw_*.c) calls vdpg_credentials_apply for its server. The set-returning functions use
 * the server named by the GUC vdsql.server (empty: none), for the current user at each
 * call, so SET ROLE and SECURITY DEFINER functions act with their own mapping. With a
 * server, the mapping is all the credentials a call has: the ones it does not give are
 * empty, never the GUCs' (set by a superuser for everyone) nor the environment's, and its
 * endpoints are the server's (none: AWS's own), never the GUCs': a server's or a
 * mapping's credentials go only where the server says. vdsql_config() shows a PUBLIC
 * mapping's credentials only to whom pg_user_mappings shows its options. */
#include "fdw.h"
#include "pg_glue.h"

#include <ctype.h>

#include "access/reloptions.h"
#include "catalog/pg_foreign_data_wrapper.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_foreign_table.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(vdsql_fdw_validator);

static char *server_name; /* vdsql.server */
static bool hidden;       /* the credentials applied last are a mapping's the current role may not read */

void vdpg_credentials_init(void) {
  DefineCustomStringVariable("vdsql.server",
                             "a foreign server of the wrapper vdsql whose options and user mapping the vdsql "
                             "functions use (empty: none)",
                             NULL, &server_name, "", PGC_USERSET, 0, NULL, NULL, NULL);
}

/* The index of setting name in the core's table (not an action), or -1. */
static int setting_of(const char *name) {
  const char *key, *doc;
  int action;
  for (int i = 0; vd_config_setting(i, &key, &doc, &action); i++)
    if (!action && strcmp(key, name) == 0) return i;
  return -1;
}

/* The options of userid's mapping for the server, else of the PUBLIC mapping, as
 * GetUserMapping finds them; NIL without either (GetUserMapping would throw). *public
 * says whether they are the PUBLIC mapping's. */
static List *mapping_options(Oid userid, Oid serverid, bool *public) {
  HeapTuple tp = SearchSysCache2(USERMAPPINGUSERSERVER, ObjectIdGetDatum(userid), ObjectIdGetDatum(serverid));
  *public = false;
  if (!HeapTupleIsValid(tp)) {
    tp = SearchSysCache2(USERMAPPINGUSERSERVER, ObjectIdGetDatum(InvalidOid), ObjectIdGetDatum(serverid));
    *public = true;
  }
  if (!HeapTupleIsValid(tp)) return NIL;
  bool isnull;
  Datum d = SysCacheGetAttr(USERMAPPINGUSERSERVER, tp, Anum_pg_user_mapping_umoptions, &isnull);
  List *options = isnull ? NIL : untransformRelOptions(d);
  ReleaseSysCache(tp);
  return options;
}

static const char *option(List *options, const char *name) {
  ListCell *lc;
  foreach (lc, options) {
    DefElem *def = lfirst_node(DefElem, lc);
    if (strcmp(def->defname, name) == 0) return defGetString(def);
  }
  return NULL;
}

void vdpg_credentials_apply(vd_ctx *ctx, Oid serverid) {
  ForeignServer *srv = GetForeignServer(serverid);
  bool public;
  List *mine = mapping_options(GetUserId(), serverid, &public);
  /* pg_user_mappings shows a PUBLIC mapping's options to members of the server's owner */
  hidden = public && mine && !superuser() && !has_privs_of_role(GetUserId(), srv->owner);
  vd_ctx_env_credentials(ctx, 0); /* the server's identity is not this server's to lend */
  const char *key, *doc;
  int action;
  for (int i = 0; vd_config_setting(i, &key, &doc, &action); i++) {
    if (action) continue;
    unsigned flags = vd_config_flags(i);
    bool cred = (flags & VD_SETTING_CREDENTIAL) != 0;
    const char *value = option(cred ? mine : srv->options, key);
    /* the GUC's value stays, but for an endpoint: the mapping's credentials go only to
     * the server's (none given: AWS's own) */
    if (!cred && !value && !(flags & VD_SETTING_ENDPOINT)) continue;
    vd_err err;
    vd_err_clear(&err);
    vd_code rc = vdsql_pg_setting_apply(ctx, i, value, &err); /* a credential not in the mapping: empty */
    if (rc) vdsql_pg_raise(rc, &err);
  }
}

bool vdpg_credentials_hidden(void) { return hidden; }

void vdpg_credentials_current(vd_ctx *ctx) {
  hidden = false;
  if (!server_name || !*server_name) return;
  ForeignServer *srv = GetForeignServerByName(server_name, true);
  if (!srv)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                    errmsg("vdsql: vdsql.server names \"%s\", which is no foreign server", server_name)));
  ForeignDataWrapper *fdw = GetForeignDataWrapper(srv->fdwid);
  if (strcmp(fdw->fdwname, "vdsql") != 0)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                    errmsg("vdsql: vdsql.server names \"%s\", a server of the foreign-data wrapper %s, not vdsql",
                           server_name, fdw->fdwname)));
  /* as for a foreign table on it: naming a server is using it */
  if (pg_foreign_server_aclcheck(srv->serverid, GetUserId(), ACL_USAGE) != ACLCHECK_OK)
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("vdsql: using server \"%s\" (vdsql.server) needs USAGE on it", server_name)));
  vdpg_credentials_apply(ctx, srv->serverid);
}

/* Query parameters that carry a credential or a signature made with one: Azure SAS
 * (sig), S3 presigned URLs of SigV2 (Signature, AWSAccessKeyId) and SigV4 (X-Amz-*),
 * with their temporary session's token, Google Cloud Storage's, OAuth's tokens. */
static const char *const credential_params[] = {
    "sig",          "signature",         "awsaccesskeyid",   "x-amz-signature", "x-amz-credential",
    "x-amz-security-token", "security-token", "x-goog-signature", "x-goog-credential", "googleaccessid",
    "access_token", "token",             "api_key",          "apikey",           "key",
    "password",     "passwd",            "secret",           NULL};

/* A query parameter's name, percent-decoded and cut at 63 bytes, into out. */
static void param_name(const char *p, char *out, size_t size) {
  size_t n = 0;
  while (*p && *p != '=' && *p != '&' && *p != '#' && n + 1 < size) {
    if (*p == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
      char hex[3] = {p[1], p[2], 0};
      out[n++] = (char)strtol(hex, NULL, 16);
      p += 3;
    } else {
      out[n++] = *p++;
    }
  }
  out[n] = 0;
}

/* A URL that carries a credential: userinfo (user:pass@host) or a query parameter of
 * credential_params, however its name is cased or percent-encoded. */
static bool carries_credentials(const char *v) {
  const char *auth = strstr(v, "://");
  if (auth) {
    auth += 3;
    size_t n = strcspn(auth, "/?#");
    if (memchr(auth, '@', n)) return true;
  }
  const char *q = strchr(v, '?');
  for (const char *p = q; p && *p && *p != '#'; p++) {
    if (*p != '?' && *p != '&' && *p != ';') continue;
    char name[64];
    param_name(p + 1, name, sizeof name);
    for (int k = 0; credential_params[k]; k++)
      if (pg_strcasecmp(name, credential_params[k]) == 0) return true;
  }
  return false;
}

static const char *object_of(Oid catalog) {
  return catalog == UserMappingRelationId ? "a user mapping"
         : catalog == ForeignServerRelationId ? "a server"
         : catalog == ForeignTableRelationId ? "a foreign table"
         : "the foreign-data wrapper";
}

/* The option names valid on catalog's objects, for the hint of a refusal. */
static char *valid_names(Oid catalog) {
  StringInfoData s;
  initStringInfo(&s);
  const char *key, *doc;
  int action;
  for (int i = 0; vd_config_setting(i, &key, &doc, &action); i++) {
    bool cred = (vd_config_flags(i) & VD_SETTING_CREDENTIAL) != 0;
    if (action || (catalog == UserMappingRelationId) != cred || catalog == ForeignDataWrapperRelationId ||
        catalog == ForeignTableRelationId)
      continue;
    appendStringInfo(&s, "%s%s", s.len ? ", " : "", key);
  }
  if (catalog == ForeignTableRelationId) appendStringInfoString(&s, "relation, url and the relation's arguments");
  return s.len ? s.data : "none";
}

void vdpg_validate_option(const char *name, const char *value, Oid catalog) {
  int i = setting_of(name);
  unsigned flags = i >= 0 ? vd_config_flags(i) : 0;
  if (catalog != UserMappingRelationId && carries_credentials(value))
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("vdsql: option %s of %s carries credentials in its URL (user:password@, or a "
                           "parameter such as sig=, Signature=, AWSAccessKeyId=, X-Amz-Signature=, "
                           "X-Amz-Credential= or X-Amz-Security-Token=), which every role can read",
                           name, object_of(catalog)),
                    errhint("Give credentials as options of a user mapping.")));
  if (catalog == ForeignTableRelationId) {
    return; /* a foreign table's options are checked together against its relation (fdw.c) */
  }
  if (i >= 0 && (flags & VD_SETTING_CREDENTIAL) && catalog != UserMappingRelationId)
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("vdsql: %s is a credential: it belongs in a user mapping, not in %s, whose options every "
                           "role can read",
                           name, object_of(catalog))));
  if (i < 0 || catalog == ForeignDataWrapperRelationId || catalog == ForeignTableRelationId ||
      (catalog == UserMappingRelationId && !(flags & VD_SETTING_CREDENTIAL)))
    ereport(ERROR, (errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
                    errmsg("vdsql: %s is not an option of %s", name, object_of(catalog)),
                    errhint("Valid options there: %s.", valid_names(catalog))));
  vdpg_check_setting(name); /* a privileged setting on a server: a superuser's, as SET */
  vd_err err;
  vd_err_clear(&err);
  vd_code rc = vdsql_pg_setting_check(i, value, &err);
  if (rc) vdsql_pg_raise(rc, &err);
}

Datum vdsql_fdw_validator(PG_FUNCTION_ARGS) {
  List *options = untransformRelOptions(PG_GETARG_DATUM(0));
  Oid catalog = PG_GETARG_OID(1);
  ListCell *lc;
  foreach (lc, options) {
    DefElem *def = lfirst_node(DefElem, lc);
    vdpg_validate_option(def->defname, defGetString(def), catalog);
  }
  if (catalog == ForeignTableRelationId) vdpg_ftable_validate(options);
  PG_RETURN_VOID();
}
