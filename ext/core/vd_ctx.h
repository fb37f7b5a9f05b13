/* A vdsql context: one per database connection (SQLite) or backend (PostgreSQL).
 * It owns the settings given with vdsql_config, the request counters, the document
 * cache and the transport handles (curl), so nothing is process-global. */
#ifndef VD_CTX_H
#define VD_CTX_H

#include <stddef.h>
#include <stdint.h>

#include "vd_err.h"

typedef enum vd_backend_id { VD_BE_FILE = 0, VD_BE_HTTP, VD_BE_S3, VD_BE_AZ, VD_BE_COUNT } vd_backend_id;

typedef struct vd_stats {
  int64_t requests;   /* requests sent (every attempt, retries included) */
  int64_t bytes;      /* body bytes received or sent */
  int64_t retries;    /* attempts repeated after a transient failure */
  int64_t cache_hits; /* documents served from the cache instead of a request */
} vd_stats;

typedef struct vd_config {
  double cache_ttl;        /* seconds a cached document stays fresh; 0 disables caching */
  int64_t cache_size;      /* bytes the document cache may hold */
  double http_timeout;     /* seconds for a whole request */
  double http_connect_timeout;
  int http_retries;        /* extra attempts after a transient failure */
  int http_retry_delay_ms; /* first backoff; doubles each attempt */
  double request_deadline; /* seconds one request may take in all, its retries and
                              redirects included (each try also within http_timeout) */
  int max_parallel;        /* requests in flight at once */
  char ca_file[512];       /* extra CA bundle for https (tests use a self-signed cert) */
  int64_t lindi_prefix;    /* bytes read from the start of a LINDI archive to find its index */
  int64_t vtkhdf_prefix;   /* bytes of a remote VTKHDF file asked for with its first request */
  double lock_timeout;     /* seconds a writer waits for another writer's lock */
  double commit_lease;     /* seconds an OpenVDS commit holds its layer's record unrenewed,
                              after which a writer on another machine may finish it */
  double stage_ttl;        /* seconds after which vds_repair deletes an uncommitted
                              transaction's staged chunk objects */
  char allowed_hosts[512]; /* hosts (host or host:port, comma-separated, '*' any) that links,
                              sources and redirects of a remote dataset may reach besides
                              its own scheme, host and port */
  int64_t http_max_excess; /* bytes a range answer may carry beyond the range asked for */
  char connect_to[512];    /* host:port:to-host:to-port,... : connections to host:port go to
                              to-host:to-port (curl's CONNECT_TO; TLS still checks host) */
  int64_t max_alloc;       /* bytes one row, one value or one check may allocate */
  /* S3 per connection; empty: the AWS_* environment variable, read when a request is
   * made (never when the extension loads). Secrets are never shown back. */
  char s3_endpoint[512];        /* AWS_ENDPOINT_URL: path-style requests to it */
  char s3_region[64];           /* AWS_REGION */
  char s3_access_key_id[256];   /* AWS_ACCESS_KEY_ID */
  char s3_secret_access_key[256]; /* AWS_SECRET_ACCESS_KEY */
  char s3_session_token[4096];  /* AWS_SESSION_TOKEN */
  /* Azure Blob credentials (store/azure_auth.h); all empty: the AZURE_STORAGE_* variables.
   * The secrets are never shown by vdsql_config (it says '(set)'). */
  char azure_connection_string[4096];
  char azure_account[64];
  char azure_key[256];
  char azure_sas_token[4096];
  int progress;              /* 'on': long multi-object jobs report progress on stderr */
  /* Not a setting: whether the AWS_* / AZURE_STORAGE_* credentials of the process
   * environment stand in for empty credential settings (on: vd_ctx_new). PostgreSQL
   * turns it off for any role but a superuser, which would otherwise sign requests with
   * the server's identity. Change it with vd_ctx_env_credentials. */
  int env_credentials;
  int vtkhdf_absolute_paths; /* vtkhdf_main: absolute source names instead of relative */
} vd_config;

typedef struct vd_cache vd_cache;
typedef struct vd_http vd_http;

typedef struct vd_ctx {
  vd_config cfg;
  vd_stats stats[VD_BE_COUNT];
  vd_cache *cache;
  vd_http *http; /* created on first use */
  void *lindi_writers; /* open archive writers, shared by the tables of one archive */
  void *s3_regions;    /* the region each S3 bucket answered with (store/s3_region.c) */
  /* The HDF5 helper process of this context (formats/vtkhdf/vtkhdf_helper.h), and what
   * ends it when the context is freed (a pointer: the context knows no format) */
  void *h5helper;
  void (*h5helper_free)(void *h5helper);
  /* The front end's cancel check (NULL: never): the core asks it between turns of its
   * transfers (at least every 100 ms while one is set), in its waits and long loops, and
   * then stops, releases what it holds and returns VD_INTERRUPTED. It is never called
   * from inside a curl or HDF5 callback, and must not jump. */
  int (*interrupted)(void *arg);
  void *interrupted_arg;
} vd_ctx;

vd_ctx *vd_ctx_new(void);
/* VD_INTERRUPTED ("interrupted") when the front end's check says so, else VD_OK. Inline:
 * every layer calls it, and it calls nothing above vd_err. */
static inline vd_code vd_ctx_check_interrupt(vd_ctx *ctx, vd_err *err) {
  if (ctx && ctx->interrupted && ctx->interrupted(ctx->interrupted_arg))
    return vd_fail(err, VD_INTERRUPTED, "interrupted");
  return VD_OK;
}
void vd_ctx_free(vd_ctx *ctx);

const char *vd_backend_name(vd_backend_id id);

/* vdsql_config: set (value != NULL) or read a setting; *out gets the current value as
 * text (malloc'd). Unknown keys are an error that lists the known ones. */
vd_code vd_config_apply(vd_ctx *ctx, const char *key, const char *value, char **out, vd_err *err);
/* The i-th setting (from 0): its key, its meaning, whether it is an action rather than a
 * value; 0 past the last. */
int vd_config_setting(int i, const char **key, const char **doc, int *action);
/* Whether the i-th setting is a secret (a key, a token: never shown back). */
int vd_config_secret(int i);
/* What kind of setting the i-th is (0 past the last), for front ends with their own
 * rules (PostgreSQL: user mappings, superuser-only settings); one table, no second list. */
#define VD_SETTING_SECRET 0x1     /* never shown back */
#define VD_SETTING_CREDENTIAL 0x2 /* says who acts (keys, tokens, accounts): PostgreSQL takes
                                     these from a user mapping, never from a server or table */
#define VD_SETTING_ENDPOINT 0x4   /* says where s3:// and az:// URLs go */
#define VD_SETTING_PRIVILEGED 0x8 /* widens what the server reaches, trusts or spends
                                     (allowed_hosts, connect_to, ca_file, max_alloc,
                                     max_parallel, and the sizes a backend holds:
                                     cache_size, lindi_prefix, vtkhdf_prefix,
                                     http_max_excess): PostgreSQL lets only a superuser
                                     change it */
unsigned vd_config_flags(int i);
/* Turns the environment's credentials on or off (vd_config.env_credentials). */
void vd_ctx_env_credentials(vd_ctx *ctx, int on);

/* What reaching a URL takes, as a front end checks it before a call: the server's own
 * files (an absolute path, file:///), a path relative to the working directory (also
 * "file:NAME", which is no file URL: a server refuses it), the network (http(s)://,
 * s3://, az://), or nothing (a scheme vdsql does not know: the call refuses it before
 * any request). */
typedef enum vd_url_reach { VD_REACH_NONE = 0, VD_REACH_LOCAL, VD_REACH_NETWORK, VD_REACH_RELATIVE } vd_url_reach;
vd_url_reach vd_url_reach_of(const char *url);
/* url as messages show it: userinfo and query values hidden (the store's one redaction). */
void vd_url_shown(const char *url, char *out, size_t n);

#endif
