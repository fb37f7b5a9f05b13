/* Who may make vdsql reach what, checked when a call runs (a set-returning function's
 * arguments can come from table data, so nothing is known at CREATE time), in one place
 * for the functions and the foreign-data wrapper. The file_fdw model:
 *   - a local path or file:// URL needs the privileges of pg_read_server_files to read,
 *     and of pg_write_server_files as well to write (a writer reads the dataset too);
 *   - a relative path (also "file:NAME", which is no file URL) is refused: a backend's
 *     working directory is the data directory;
 *   - http(s)://, s3:// and az:// need the privileges of vdsql_network, a role the
 *     extension script creates.
 * EXECUTE on the functions stays PUBLIC's: one function reads local files or the
 * network depending on its url argument, so only the call can tell which privilege it
 * needs, and each refusal (42501) names the url and that privilege, where a revoked
 * EXECUTE would only say "permission denied for function". Superusers have every
 * role's privileges. */
#include "pg_glue.h"

#include "catalog/pg_authid.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"

#define NETWORK_ROLE "vdsql_network"

/* The one wording of every refusal: what the call would do, the url (redacted), what
 * that needs. */
static void refuse(const char *url, const char *what, const char *needs) {
  char shown[600];
  vd_url_shown(url, shown, sizeof shown);
  ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE), errmsg("vdsql: %s \"%s\" needs %s", what, shown, needs)));
}

void vdpg_check_url(const char *url, bool write) {
  if (!url || !*url) return; /* nothing is reached: the core says what is wrong with it */
  switch (vd_url_reach_of(url)) {
    case VD_REACH_RELATIVE: /* "file:NAME" too: the URL layer says which paths are relative */
      refuse(url, "reading relative path", "an absolute path (a backend would resolve it in the data directory)");
      return;
    case VD_REACH_LOCAL:
      if (!has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
        refuse(url, "reading local file", "the privileges of pg_read_server_files");
      if (write && !has_privs_of_role(GetUserId(), ROLE_PG_WRITE_SERVER_FILES))
        refuse(url, "writing local file", "the privileges of pg_write_server_files");
      return;
    case VD_REACH_NETWORK: {
      Oid network = get_role_oid(NETWORK_ROLE, true); /* a dropped role: only superusers pass */
      if (!superuser() && (!OidIsValid(network) || !has_privs_of_role(GetUserId(), network)))
        refuse(url, "reaching", "the privileges of " NETWORK_ROLE);
      return;
    }
    case VD_REACH_NONE: return; /* a scheme vdsql does not know: refused before any request */
  }
}

/* Every relation names its dataset argument url (DESIGN.md); other arguments (a layer,
 * a member name) are not places. */
void vdpg_check_relation_args(const vd_relation *r, const vd_value *args, int nargs) {
  for (int k = 0; k < nargs; k++) {
    int c = vd_rel_arg_col(r, k);
    if (c >= 0 && strcmp(r->cols[c].name, "url") == 0 && args[k].type == VD_TEXT) {
      char *url = pnstrdup(args[k].p, args[k].n);
      vdpg_check_url(url, (r->flags & VD_REL_WRITES) != 0);
      pfree(url);
    }
  }
}

/* A function's arguments are named only in its usage line ("url, layer [, level]"): the
 * k-th name is the k-th argument. */
void vdpg_check_function_args(const vd_function *f, const vd_value *args, int nargs) {
  const char *p = f->args;
  for (int k = 0; k < nargs && p && *p; k++) {
    p += strspn(p, " ,[]");
    size_t n = strcspn(p, " ,[]");
    if (n == 3 && strncmp(p, "url", 3) == 0 && args[k].type == VD_TEXT) {
      char *url = pnstrdup(args[k].p, args[k].n);
      vdpg_check_url(url, (f->flags & VD_FN_WRITES) != 0);
      pfree(url);
    }
    p += n;
  }
}

/* vdsql_config(key, value) follows SET vdsql.<key>'s rule: a secret or a privileged
 * setting is a superuser's to change. */
void vdpg_check_setting(const char *key) {
  const char *k, *doc;
  int action;
  for (int i = 0; vd_config_setting(i, &k, &doc, &action); i++)
    if (strcmp(k, key) == 0 && (vd_config_flags(i) & (VD_SETTING_SECRET | VD_SETTING_PRIVILEGED)) && !superuser())
      ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                      errmsg("vdsql: changing %s needs superuser (as SET vdsql.%s does)", key, key)));
}
