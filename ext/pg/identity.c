/* The identity of a foreign scan: the credentials and endpoints it started with, and
 * whether the environment's credentials stood in. The backend has one context, and a
 * scan reads its pages and objects lazily, between which other vdsql calls of the same
 * query run (a SECURITY DEFINER function, another server's table): each brings the
 * context to its own identity. So a scan takes its identity once, when it starts, and
 * puts it back into the context before each of its own calls into the core; the strings
 * are cleared when the scan ends, whether it ends well or not. */
#include "fdw.h"

#include "utils/memutils.h"

#define MAX_IDENTITY 48

struct vdpg_identity {
  int n;
  int setting[MAX_IDENTITY]; /* vd_config_setting's index */
  char *value[MAX_IDENTITY]; /* malloc'd, NULL: the default */
  int env;                   /* vd_config.env_credentials */
};

static void identity_clear(void *arg) {
  vdpg_identity *id = arg;
  for (int k = 0; k < id->n; k++)
    if (id->value[k]) {
      explicit_bzero(id->value[k], strlen(id->value[k]));
      free(id->value[k]);
      id->value[k] = NULL;
    }
  id->n = 0;
}

vdpg_identity *vdpg_identity_take(vd_ctx *ctx, MemoryContext owner) {
  vdpg_identity *id = MemoryContextAllocZero(owner, sizeof *id);
  MemoryContextCallback *cb = MemoryContextAlloc(owner, sizeof *cb);
  cb->func = identity_clear, cb->arg = id;
  MemoryContextRegisterResetCallback(owner, cb); /* before a strdup can fail */
  const char *key, *doc;
  int action;
  for (int i = 0; vd_config_setting(i, &key, &doc, &action) && id->n < MAX_IDENTITY; i++) {
    if (action || !(vd_config_flags(i) & (VD_SETTING_CREDENTIAL | VD_SETTING_ENDPOINT))) continue;
    const char *v = vdsql_pg_setting_applied(i);
    id->setting[id->n] = i;
    id->value[id->n] = v ? strdup(v) : NULL;
    if (v && !id->value[id->n]) ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("vdsql: out of memory")));
    id->n++;
  }
  id->env = ctx->cfg.env_credentials;
  return id;
}

void vdpg_identity_use(vd_ctx *ctx, const vdpg_identity *id) {
  vd_ctx_env_credentials(ctx, id->env);
  for (int k = 0; k < id->n; k++) {
    vd_err err;
    vd_err_clear(&err);
    vd_code rc = vdsql_pg_setting_apply(ctx, id->setting[k], id->value[k], &err); /* checked when taken */
    if (rc) vdsql_pg_raise(rc, &err);
  }
}
