/* Context lifetime and the vdsql_config settings table (see vd_ctx.h), with what each
 * setting is (secret, credential, endpoint, privileged) and the identity of the
 * credentials in force that scopes the document cache. */
#include "vd_ctx.h"

#include <errno.h>
#include <math.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/cache.h"
#include "store/store.h"

static const char *const backend_names[VD_BE_COUNT] = {"file", "http", "s3", "az"};

const char *vd_backend_name(vd_backend_id id) {
  return id < VD_BE_COUNT ? backend_names[id] : "?";
}

vd_ctx *vd_ctx_new(void) {
  vd_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return NULL;
  ctx->cfg.cache_ttl = 60;
  ctx->cfg.cache_size = 16 << 20;
  ctx->cfg.http_timeout = 60;
  ctx->cfg.http_connect_timeout = 10;
  ctx->cfg.http_retries = 3;
  ctx->cfg.http_retry_delay_ms = 100;
  ctx->cfg.request_deadline = 30;
  ctx->cfg.max_parallel = 16;
  ctx->cfg.lindi_prefix = 128 << 10;
  ctx->cfg.vtkhdf_prefix = 1 << 20;
  ctx->cfg.lock_timeout = 5;
  ctx->cfg.commit_lease = 60;
  ctx->cfg.stage_ttl = 86400;
  ctx->cfg.http_max_excess = 4 << 20;
  ctx->cfg.max_alloc = 256 << 20;
  ctx->cfg.env_credentials = 1;
  ctx->cache = vd_cache_new();
  if (!ctx->cache) {
    free(ctx);
    return NULL;
  }
  return ctx;
}

void vd_ctx_free(vd_ctx *ctx) {
  if (!ctx) return;
  if (ctx->h5helper_free) ctx->h5helper_free(ctx->h5helper);
  vd_store_shutdown(ctx);
  vd_cache_free(ctx->cache);
  OPENSSL_cleanse(&ctx->cfg, sizeof ctx->cfg); /* the Azure secrets */
  free(ctx);
}

/* K_STR and K_SECRET: hi is the field's size; a K_SECRET is shown as '(set)', never echoed. */
/* K_URL: a string that must be an http(s) URL (or empty) and is shown redacted, since a
 * URL may carry userinfo or a signed query */
typedef enum { K_REAL, K_INT, K_INT64, K_STR, K_URL, K_SECRET, K_BOOL, K_ACTION } kind;
typedef struct {
  const char *key;
  kind k;
  size_t off;
  double lo, hi; /* K_STR, K_SECRET: hi is the buffer's size */
  const char *doc;
  unsigned flags; /* VD_SETTING_CREDENTIAL, _ENDPOINT, _PRIVILEGED (_SECRET comes from K_SECRET) */
} setting;
#define CRED VD_SETTING_CREDENTIAL
#define WHERE VD_SETTING_ENDPOINT
#define PRIV VD_SETTING_PRIVILEGED

#define OFF(f) offsetof(vd_config, f)
#define CAP(f) sizeof(((vd_config *)0)->f)
static const setting settings[] = {
    {"cache_ttl", K_REAL, OFF(cache_ttl), 0, 1e9, "seconds a cached document stays fresh (0: no caching)"},
    {"cache_size", K_INT64, OFF(cache_size), 0, 1e12, "bytes the document cache may hold", PRIV},
    {"http_timeout", K_REAL, OFF(http_timeout), 0.001, 1e6, "seconds a request may take"},
    {"http_connect_timeout", K_REAL, OFF(http_connect_timeout), 0.001, 1e6, "seconds to connect"},
    {"http_retries", K_INT, OFF(http_retries), 0, 20, "retries after 5xx or a timeout"},
    {"http_retry_delay_ms", K_INT, OFF(http_retry_delay_ms), 0, 60000, "first backoff, doubled per retry"},
    {"request_deadline", K_REAL, OFF(request_deadline), 0.001, 1e6,
     "seconds one request may take in all, its retries and redirects included"},
    {"max_parallel", K_INT, OFF(max_parallel), 1, 256, "requests in flight at once", PRIV},
    {"ca_file", K_STR, OFF(ca_file), 0, CAP(ca_file), "CA bundle for https", PRIV},
    {"lindi_prefix", K_INT64, OFF(lindi_prefix), 1536, 1e9, "bytes read at the start of a LINDI archive", PRIV},
    {"vtkhdf_prefix", K_INT64, OFF(vtkhdf_prefix), 65536, 1e9,
     "bytes of a remote VTKHDF file read with its first request (smaller files whole)", PRIV},
    {"lock_timeout", K_REAL, OFF(lock_timeout), 0, 1e6, "seconds a writer waits for another writer's lock (an archive, a directory of objects)"},
    {"commit_lease", K_REAL, OFF(commit_lease), 1, 1e6,
     "seconds an OpenVDS commit holds its layer unrenewed; then a writer on another machine may finish it"},
    {"stage_ttl", K_REAL, OFF(stage_ttl), 0, 1e9,
     "seconds after which vds_repair deletes the staged chunks of a transaction that never committed"},
    {"allowed_hosts", K_STR, OFF(allowed_hosts), 0, CAP(allowed_hosts),
     "other hosts a remote dataset's links, sources and redirects may reach (host[:port],...; '*' any)", PRIV},
    {"connect_to", K_STR, OFF(connect_to), 0, CAP(connect_to),
     "connections to host:port go to another host:port (host:port:to-host:to-port,...; TLS still checks host): "
     "tests and private networks", PRIV | WHERE},
    {"http_max_excess", K_INT64, OFF(http_max_excess), 0, 1e12, "bytes a range answer may carry beyond the range", PRIV},
    {"max_alloc", K_INT64, OFF(max_alloc), 1 << 20, 1e12, "bytes one row, value or check may allocate", PRIV},
    {"s3_endpoint", K_URL, OFF(s3_endpoint), 0, CAP(s3_endpoint),
     "S3 endpoint URL, path-style requests (empty: AWS_ENDPOINT_URL, else AWS's regional endpoint)", WHERE},
    {"s3_region", K_STR, OFF(s3_region), 0, CAP(s3_region), "S3 region signed for (empty: AWS_REGION, else us-east-1)", WHERE},
    {"s3_access_key_id", K_STR, OFF(s3_access_key_id), 0, CAP(s3_access_key_id), "S3 access key (empty: AWS_ACCESS_KEY_ID)", CRED},
    {"s3_secret_access_key", K_SECRET, OFF(s3_secret_access_key), 0, CAP(s3_secret_access_key),
     "S3 secret key, never shown (empty: AWS_SECRET_ACCESS_KEY)", CRED},
    {"s3_session_token", K_SECRET, OFF(s3_session_token), 0, CAP(s3_session_token),
     "S3 session token, never shown (empty: AWS_SESSION_TOKEN)", CRED},
    {"azure_connection_string", K_SECRET, OFF(azure_connection_string), 0, CAP(azure_connection_string),
     "Azure Blob connection string (secret; empty: AZURE_STORAGE_CONNECTION_STRING)", CRED},
    {"azure_account", K_STR, OFF(azure_account), 0, CAP(azure_account),
     "Azure storage account, with azure_key or azure_sas_token (empty: AZURE_STORAGE_ACCOUNT)", CRED},
    {"azure_key", K_SECRET, OFF(azure_key), 0, CAP(azure_key), "Azure account key, base64 (secret; empty: AZURE_STORAGE_KEY)", CRED},
    {"azure_sas_token", K_SECRET, OFF(azure_sas_token), 0, CAP(azure_sas_token),
     "Azure SAS token (secret; empty: AZURE_STORAGE_SAS_TOKEN)", CRED},
    {"progress", K_BOOL, OFF(progress), 0, 1, "'on': audits, repairs and uploads over many objects report progress on stderr"},
    {"vtkhdf_absolute_paths", K_BOOL, OFF(vtkhdf_absolute_paths), 0, 1,
     "'on': vtkhdf_main stores its sources' absolute names (default: relative to the main file)"},
    {"stats", K_ACTION, 0, 0, 0, "'reset' zeroes vdsql_stats()"},
    {"cache", K_ACTION, 0, 0, 0, "'clear' empties the document cache"},
};

int vd_config_setting(int i, const char **key, const char **doc, int *action) {
  if (i < 0 || i >= (int)(sizeof settings / sizeof *settings)) return 0;
  *key = settings[i].key;
  *doc = settings[i].doc;
  *action = settings[i].k == K_ACTION;
  return 1;
}

int vd_config_secret(int i) {
  return i >= 0 && i < (int)(sizeof settings / sizeof *settings) && settings[i].k == K_SECRET;
}

unsigned vd_config_flags(int i) {
  if (i < 0 || i >= (int)(sizeof settings / sizeof *settings)) return 0;
  return settings[i].flags | (settings[i].k == K_SECRET ? VD_SETTING_SECRET : 0);
}

/* The cache's scope: a digest of every credential and endpoint setting and of whether
 * the environment stands in, so that a document fetched as one identity is not served
 * to another. Only the digest is kept; a secret never leaves its field. */
static void scope_cache(vd_ctx *ctx) {
  unsigned char d[EVP_MAX_MD_SIZE];
  EVP_MD_CTX *h = EVP_MD_CTX_new();
  int good = h && EVP_DigestInit_ex(h, EVP_sha256(), NULL) &&
             EVP_DigestUpdate(h, &ctx->cfg.env_credentials, sizeof ctx->cfg.env_credentials);
  for (size_t i = 0; good && i < sizeof settings / sizeof *settings; i++)
    if (settings[i].flags & (CRED | WHERE)) {
      const char *v = (const char *)&ctx->cfg + settings[i].off;
      good = EVP_DigestUpdate(h, v, strlen(v) + 1); /* with its NUL: "ab","c" is not "a","bc" */
    }
  good = good && EVP_DigestFinal_ex(h, d, NULL);
  EVP_MD_CTX_free(h);
  if (!good) { /* no digest: forget every document rather than risk serving one across */
    vd_cache_clear(ctx->cache);
    return;
  }
  uint64_t scope;
  memcpy(&scope, d, sizeof scope);
  vd_cache_scope(ctx->cache, scope);
}

void vd_ctx_env_credentials(vd_ctx *ctx, int on) {
  if (ctx->cfg.env_credentials == !!on) return;
  ctx->cfg.env_credentials = !!on;
  scope_cache(ctx);
}

vd_url_reach vd_url_reach_of(const char *url) {
  if (vd_url_relative(url)) return VD_REACH_RELATIVE;
  return vd_store_is_local(url) ? VD_REACH_LOCAL : vd_store_is_remote(url) ? VD_REACH_NETWORK : VD_REACH_NONE;
}

void vd_url_shown(const char *url, char *out, size_t n) { vd_url_redact(url, out, n); }

static char *show(const vd_ctx *ctx, const setting *s) {
  char buf[600];
  const char *base = (const char *)&ctx->cfg;
  switch (s->k) {
    case K_REAL: snprintf(buf, sizeof buf, "%g", *(const double *)(base + s->off)); break;
    case K_INT: snprintf(buf, sizeof buf, "%d", *(const int *)(base + s->off)); break;
    case K_INT64: snprintf(buf, sizeof buf, "%lld", (long long)*(const int64_t *)(base + s->off)); break;
    case K_STR: snprintf(buf, sizeof buf, "%s", base + s->off); break;
    case K_URL: vd_url_redact(base + s->off, buf, sizeof buf); break;
    case K_SECRET: snprintf(buf, sizeof buf, "%s", base[s->off] ? "(set)" : ""); break;
    case K_BOOL: snprintf(buf, sizeof buf, "%s", *(const int *)(base + s->off) ? "on" : "off"); break;
    case K_ACTION: snprintf(buf, sizeof buf, "ok"); break;
  }
  return strdup(buf);
}

/* connect_to's entries each have four ':'-separated fields (colons inside [] are an IPv6
 * address's): libcurl skips an entry it cannot read without a word, so a typo would
 * send requests to the real host instead. */
static int connect_entries(const char *v) {
  int colons = 0, depth = 0;
  for (const char *p = v;; p++) {
    if (*p == ',' || !*p) {
      if (colons != 3 && !(colons == 0 && p == v && !*p)) return 0; /* empty: none */
      if (!*p) return depth == 0;
      colons = 0;
      continue;
    }
    if (*p == '[') depth++;
    else if (*p == ']') depth--;
    else if (*p == ':' && !depth) colons++;
    if (depth < 0 || depth > 1) return 0;
  }
}

vd_code vd_config_apply(vd_ctx *ctx, const char *key, const char *value, char **out, vd_err *err) {
  const setting *s = NULL;
  for (size_t i = 0; i < sizeof settings / sizeof *settings; i++)
    if (key && strcmp(settings[i].key, key) == 0) s = &settings[i];
  if (!s) {
    char known[1024] = "";
    for (size_t i = 0; i < sizeof settings / sizeof *settings; i++) {
      strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
      strncat(known, settings[i].key, sizeof known - strlen(known) - 1);
    }
    return vd_fail(err, VD_INVALID, "vdsql_config: unknown key '%s' (known: %s)", key ? key : "NULL",
                   known);
  }
  char *base = (char *)&ctx->cfg;
  if (value) {
    if (s->k == K_ACTION) {
      if (strcmp(s->key, "stats") == 0 && strcmp(value, "reset") == 0)
        memset(ctx->stats, 0, sizeof ctx->stats);
      else if (strcmp(s->key, "cache") == 0 && strcmp(value, "clear") == 0)
        vd_cache_clear(ctx->cache);
      else
        return vd_fail(err, VD_INVALID, "vdsql_config('%s', '%s'): unknown action", s->key, value);
    } else if (s->k == K_BOOL) {
      int on = strcmp(value, "on") == 0 || strcmp(value, "1") == 0;
      if (!on && strcmp(value, "off") != 0 && strcmp(value, "0") != 0)
        return vd_fail(err, VD_INVALID, "vdsql_config('%s', '%s'): expected 'on' or 'off'", s->key, value);
      *(int *)(base + s->off) = on;
    } else if (s->k == K_STR || s->k == K_URL || s->k == K_SECRET) {
      size_t n = strlen(value), cap = (size_t)s->hi;
      if (n >= cap)
        return vd_fail(err, VD_INVALID, "vdsql_config('%s'): value too long", s->key);
      if (s->k == K_URL && n && strncasecmp(value, "http://", 7) && strncasecmp(value, "https://", 8)) {
        char shown[600];
        vd_url_redact(value, shown, sizeof shown);
        return vd_fail(err, VD_INVALID, "vdsql_config('%s', '%s'): expected an http:// or https:// URL", s->key,
                       shown);
      }
      if (s->off == OFF(connect_to) && !connect_entries(value))
        return vd_fail(err, VD_INVALID, "vdsql_config('%s', '%s'): expected host:port:to-host:to-port entries, "
                       "comma-separated (an IPv6 address in [])", s->key, value);
      /* a shorter value must not leave the tail of the one it replaces (a secret) behind */
      if (s->flags & CRED) OPENSSL_cleanse(base + s->off, cap);
      memcpy(base + s->off, value, n + 1);
      if (s->flags & (CRED | WHERE)) scope_cache(ctx);
      vd_store_config_changed(ctx);
    } else {
      char *end;
      errno = 0;
      double x = strtod(value, &end);
      if (errno || end == value || *end || !isfinite(x) || x < s->lo || x > s->hi ||
          (s->k != K_REAL && x != floor(x)))
        return vd_fail(err, VD_INVALID, "vdsql_config('%s', '%s'): expected %s from %g to %g", s->key,
                       value, s->k != K_REAL ? "a whole number" : "a number", s->lo, s->hi);
      if (s->k == K_REAL)
        *(double *)(base + s->off) = x;
      else if (s->k == K_INT64)
        *(int64_t *)(base + s->off) = (int64_t)x;
      else
        *(int *)(base + s->off) = (int)x;
      if (s->off == OFF(cache_size)) vd_cache_trim(ctx->cache, ctx->cfg.cache_size);
      vd_store_config_changed(ctx);
    }
  }
  if (out && !(*out = show(ctx, s))) return vd_nomem(err);
  return VD_OK;
}
