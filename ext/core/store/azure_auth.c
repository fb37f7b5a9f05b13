/* Azure credentials (connection string, account + key or SAS) and az:// -> blob URL
 * mapping (see azure_auth.h). Errors name the setting and the fault, never a value that
 * may hold a secret (a connection string's part, a key, a SAS). */
#include "azure_auth.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/base64.h"
#include "store.h"

/* Azurite's documented development account (public, printed in Microsoft's docs): what
 * UseDevelopmentStorage=true means. */
#define DEV_ACCOUNT "devstoreaccount1"
#define DEV_KEY "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
#define DEV_ENDPOINT "http://127.0.0.1:10000/" DEV_ACCOUNT

void vd_az_cred_clear(vd_az_cred *c) { OPENSSL_cleanse(c, sizeof *c); }

typedef struct {
  int config; /* 1: from vdsql_config, 0: from the environment */
} src;

static const char *name_of(src s, const char *env, const char *cfg) { return s.config ? cfg : env; }

static vd_code bad(vd_err *err, src s, const char *env, const char *cfg, const char *what) {
  return vd_fail(err, VD_INVALID, "Azure credentials: %s%s %s", s.config ? "vdsql_config " : "",
                 name_of(s, env, cfg), what);
}
#define CS_ENV "AZURE_STORAGE_CONNECTION_STRING"
#define CS_CFG "'azure_connection_string'"

/* Account names go into a host name and the signed resource: Azure allows 3-24 lower-case
 * letters and digits; Azurite (AZURITE_ACCOUNTS) more, so letters, digits and '-'. */
static int account_ok(const char *a, size_t n) {
  if (n == 0 || n >= sizeof ((vd_az_cred *)0)->account) return 0;
  for (size_t i = 0; i < n; i++) {
    char ch = a[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-')) return 0;
  }
  return 1;
}

static int set_key(vd_az_cred *c, const char *k, size_t n) {
  unsigned char *d = NULL;
  size_t dn = 0;
  if (n == 0 || vd_base64_decode(k, n, &d, &dn) || dn == 0 || dn > sizeof c->key) {
    if (d) OPENSSL_cleanse(d, dn);
    free(d);
    return -1;
  }
  memcpy(c->key, d, dn);
  c->keylen = dn;
  OPENSSL_cleanse(d, dn);
  free(d);
  return 0;
}

/* A SAS is a query: printable, no spaces, no fragment; it must carry a signature. */
static int set_sas(vd_az_cred *c, const char *t, size_t n) {
  if (n && t[0] == '?') t++, n--;
  if (n == 0 || n >= sizeof c->sas) return -1;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)t[i] <= ' ' || (unsigned char)t[i] >= 0x7f || t[i] == '#' || t[i] == '?') return -1;
  memcpy(c->sas, t, n);
  c->sas[n] = 0;
  const char *p = c->sas;
  for (; p; p = strchr(p, '&')) {
    if (*p == '&') p++;
    if (strncmp(p, "sig=", 4) == 0 && p[4] && p[4] != '&') return 0;
  }
  c->sas[0] = 0;
  return -1;
}

/* An endpoint is scheme://host[:port][/path]: no userinfo, query or fragment (they would
 * be signed or sent where they should not be). A trailing '/' is dropped. */
static int set_endpoint(vd_az_cred *c, const char *e, size_t n) {
  while (n && e[n - 1] == '/') n--;
  size_t sl = strncasecmp(e, "https://", 8) == 0 ? 8 : strncasecmp(e, "http://", 7) == 0 ? 7 : 0;
  if (!sl || n <= sl || n >= sizeof c->endpoint) return -1;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)e[i] <= ' ' || (unsigned char)e[i] >= 0x7f || strchr("?#@\\", e[i])) return -1;
  if (e[sl] == '/' || e[sl] == ':') return -1; /* no host */
  memcpy(c->endpoint, e, n);
  c->endpoint[n] = 0;
  return 0;
}

static vd_code parse_connection_string(const char *cs, src s, vd_az_cred *c, vd_err *err) {
  const char *proto = NULL, *acct = NULL, *key = NULL, *ep = NULL, *suffix = NULL, *sas = NULL, *dev = NULL;
  size_t protol = 0, acctl = 0, keyl = 0, epl = 0, suffixl = 0, sasl = 0, devl = 0;
  struct {
    const char *name;
    const char **v;
    size_t *n;
  } known[] = {{"DefaultEndpointsProtocol", &proto, &protol}, {"AccountName", &acct, &acctl},
               {"AccountKey", &key, &keyl},         {"BlobEndpoint", &ep, &epl},
               {"EndpointSuffix", &suffix, &suffixl}, {"SharedAccessSignature", &sas, &sasl},
               {"UseDevelopmentStorage", &dev, &devl}};
  for (const char *p = cs; *p;) {
    const char *end = strchr(p, ';');
    if (!end) end = p + strlen(p);
    const char *a = p, *b = end;
    while (a < b && (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r')) a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n' || b[-1] == '\r')) b--;
    p = *end ? end + 1 : end;
    if (a == b) continue; /* ";;" and a trailing ';' are common */
    const char *eq = memchr(a, '=', (size_t)(b - a));
    /* the part itself is never shown: it may be the key */
    if (!eq || eq == a) return bad(err, s, CS_ENV, CS_CFG, "has a part that is not Name=value");
    size_t nl = (size_t)(eq - a);
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
      if (strlen(known[i].name) != nl || strncasecmp(known[i].name, a, nl)) continue;
      if (*known[i].v) {
        char what[96];
        snprintf(what, sizeof what, "gives %s twice", known[i].name);
        return bad(err, s, CS_ENV, CS_CFG, what);
      }
      *known[i].v = eq + 1;
      *known[i].n = (size_t)(b - eq - 1);
    }
    /* other parts (QueueEndpoint, TableEndpoint, FileEndpoint, ...) are for other services */
  }
  if (dev) {
    if (devl != 4 || strncasecmp(dev, "true", 4)) return bad(err, s, CS_ENV, CS_CFG, "has UseDevelopmentStorage other than true");
    if (!acct) acct = DEV_ACCOUNT, acctl = strlen(DEV_ACCOUNT);
    if (!key && !sas) key = DEV_KEY, keyl = strlen(DEV_KEY);
    if (!ep) ep = DEV_ENDPOINT, epl = strlen(DEV_ENDPOINT);
  }
  if (acct && !account_ok(acct, acctl))
    return bad(err, s, CS_ENV, CS_CFG, "has an AccountName that is not 1 to 63 letters, digits or '-'");
  if (acct) memcpy(c->account, acct, acctl), c->account[acctl] = 0;
  if (proto && !((protol == 5 && strncasecmp(proto, "https", 5) == 0) || (protol == 4 && strncasecmp(proto, "http", 4) == 0)))
    return bad(err, s, CS_ENV, CS_CFG, "has a DefaultEndpointsProtocol other than https or http");
  if (ep) {
    if (set_endpoint(c, ep, epl))
      return bad(err, s, CS_ENV, CS_CFG, "has a BlobEndpoint that is not an http(s) URL (scheme://host[:port][/path], no query)");
  } else {
    if (!acct) return bad(err, s, CS_ENV, CS_CFG, "has neither AccountName nor BlobEndpoint");
    if (suffix) {
      for (size_t i = 0; i < suffixl; i++)
        if (!((suffix[i] >= 'a' && suffix[i] <= 'z') || (suffix[i] >= 'A' && suffix[i] <= 'Z') ||
              (suffix[i] >= '0' && suffix[i] <= '9') || suffix[i] == '-' || suffix[i] == '.'))
          return bad(err, s, CS_ENV, CS_CFG, "has an EndpointSuffix that is not a host name");
    }
    char e[sizeof c->endpoint];
    int n = snprintf(e, sizeof e, "%s://%s.blob.%.*s", proto ? (protol == 4 ? "http" : "https") : "https", c->account,
                     suffix && suffixl ? (int)suffixl : 16, suffix && suffixl ? suffix : "core.windows.net");
    if (n < 0 || (size_t)n >= sizeof e || set_endpoint(c, e, (size_t)n))
      return bad(err, s, CS_ENV, CS_CFG, "has an EndpointSuffix that is too long");
  }
  /* With both, Shared Key is used: it can do everything the SAS could, and sending a
   * SAS with an Authorization header is refused by the service. */
  if (key) {
    if (set_key(c, key, keyl)) return bad(err, s, CS_ENV, CS_CFG, "has an AccountKey that is not base64 (of at most 128 bytes)");
    if (!acct) return bad(err, s, CS_ENV, CS_CFG, "has an AccountKey but no AccountName to sign with");
  } else if (sas) {
    if (set_sas(c, sas, sasl))
      return bad(err, s, CS_ENV, CS_CFG, "has a SharedAccessSignature that is not a query with sig= (no spaces or '#')");
  } else {
    return bad(err, s, CS_ENV, CS_CFG, "has neither AccountKey nor SharedAccessSignature");
  }
  return VD_OK;
}

vd_code vd_az_cred_parse(const vd_az_settings *st, vd_az_cred *c, vd_err *err) {
  memset(c, 0, sizeof *c);
  src s = {st->from_config};
  vd_code rc;
  if (st->connection_string && *st->connection_string) {
    rc = parse_connection_string(st->connection_string, s, c, err);
  } else if (st->account && *st->account) {
    size_t al = strlen(st->account);
    if (!account_ok(st->account, al))
      return bad(err, s, "AZURE_STORAGE_ACCOUNT", "'azure_account'", "is not 1 to 63 letters, digits or '-'");
    memcpy(c->account, st->account, al + 1);
    char e[sizeof c->endpoint];
    snprintf(e, sizeof e, "https://%s.blob.core.windows.net", c->account);
    set_endpoint(c, e, strlen(e));
    if (st->key && *st->key) {
      rc = set_key(c, st->key, strlen(st->key))
               ? bad(err, s, "AZURE_STORAGE_KEY", "'azure_key'", "is not base64 (of at most 128 bytes)")
               : VD_OK;
    } else if (st->sas_token && *st->sas_token) {
      rc = set_sas(c, st->sas_token, strlen(st->sas_token))
               ? bad(err, s, "AZURE_STORAGE_SAS_TOKEN", "'azure_sas_token'", "is not a query with sig= (no spaces or '#')")
               : VD_OK;
    } else {
      rc = bad(err, s, "AZURE_STORAGE_ACCOUNT", "'azure_account'",
               s.config ? "is set without 'azure_key' or 'azure_sas_token'"
                        : "is set without AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN");
    }
  } else if ((st->key && *st->key) || (st->sas_token && *st->sas_token)) {
    rc = s.config ? vd_fail(err, VD_INVALID, "Azure credentials: vdsql_config 'azure_key' or 'azure_sas_token' is set without 'azure_account'")
                  : vd_fail(err, VD_INVALID, "Azure credentials: AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN is set without AZURE_STORAGE_ACCOUNT");
  } else {
    rc = vd_fail(err, VD_INVALID,
                 "Azure credentials: none given (set AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT with "
                 "AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN, or the same with vdsql_config 'azure_connection_string', "
                 "'azure_account', 'azure_key', 'azure_sas_token')");
  }
  if (rc) vd_az_cred_clear(c);
  return rc;
}

vd_code vd_az_cred_load(const vd_config *cfg, vd_az_cred *c, vd_err *err) {
  vd_az_settings st = {cfg->azure_connection_string, cfg->azure_account, cfg->azure_key, cfg->azure_sas_token, 1};
  /* settings given per connection replace the environment as a whole: mixing a key
   * from one with an account from the other would sign for an account nobody chose */
  /* ... and the environment stands in only where env_credentials allows it (PostgreSQL:
   * superusers), since it is the server's own identity */
  if (cfg->env_credentials && !*st.connection_string && !*st.account && !*st.key && !*st.sas_token) {
    vd_az_settings env = {getenv("AZURE_STORAGE_CONNECTION_STRING"), getenv("AZURE_STORAGE_ACCOUNT"),
                          getenv("AZURE_STORAGE_KEY"), getenv("AZURE_STORAGE_SAS_TOKEN"), 0};
    return vd_az_cred_parse(&env, c, err);
  }
  return vd_az_cred_parse(&st, c, err);
}

/* Percent-encodes every byte outside RFC 3986's unreserved set (and '/' when keep_slash):
 * the form Shared Key signs as sent and the service decodes back to the name. */
static int append_enc(vd_buf *b, const char *p, size_t n, int keep_slash) {
  char *e = malloc(3 * n + 1);
  int bad = !e || vd_buf_append(b, e, (size_t)(vd_pct_encode(e, p, n, keep_slash) - e));
  free(e);
  return bad ? -1 : 0;
}

typedef struct {
  const char *cont, *key, *query;
  size_t contl, keyl, queryl;
} az_parts;

/* az://container[/key][?query]. Container names are Azure's: 3 to 63 lower-case letters,
 * digits and '-' ($root, $web and $logs are the service's own). */
static vd_code split_az(const char *url, az_parts *p, vd_err *err) {
  char where[600];
  vd_url_redact(url, where, sizeof where);
  memset(p, 0, sizeof *p);
  if (strncasecmp(url, "az://", 5)) return vd_fail(err, VD_INVALID, "%s: not an az://container/key URL", where);
  const char *c = url + 5, *q = strchr(c, '?');
  const char *end = q ? q : c + strlen(c), *slash = memchr(c, '/', (size_t)(end - c));
  p->cont = c;
  p->contl = (size_t)((slash ? slash : end) - c);
  int special = (p->contl == 5 && !strncmp(c, "$root", 5)) || (p->contl == 4 && !strncmp(c, "$web", 4)) ||
                (p->contl == 5 && !strncmp(c, "$logs", 5));
  int good = special || (p->contl >= 3 && p->contl <= 63);
  for (size_t i = 0; good && !special && i < p->contl; i++)
    good = (c[i] >= 'a' && c[i] <= 'z') || (c[i] >= '0' && c[i] <= '9') || c[i] == '-';
  if (!good)
    return vd_fail(err, VD_INVALID, "%s: the container name must be 3 to 63 lower-case letters, digits or '-'", where);
  p->key = slash ? slash + 1 : end;
  p->keyl = (size_t)(end - p->key);
  if (p->keyl > 1024) return vd_fail(err, VD_INVALID, "%s: a blob name is at most 1024 bytes", where);
  for (size_t i = 0; i < p->keyl; i++)
    if ((unsigned char)p->key[i] < 0x20 || p->key[i] == 0x7f)
      return vd_fail(err, VD_INVALID, "%s: the blob name has a control character", where);
  if (q) {
    p->query = q + 1;
    p->queryl = strlen(q + 1);
    for (size_t i = 0; i < p->queryl; i++)
      if ((unsigned char)p->query[i] <= ' ' || (unsigned char)p->query[i] >= 0x7f || p->query[i] == '#')
        return vd_fail(err, VD_INVALID, "%s: the query has a space, a control character, a non-ASCII byte or '#'", where);
  }
  return VD_OK;
}

static vd_code finish_url(const vd_az_cred *c, const az_parts *p, vd_buf *b, int has_query, char **out, vd_err *err) {
  const char *q = p->query ? p->query : c->sas;
  size_t ql = p->query ? p->queryl : strlen(c->sas);
  if (ql && (vd_buf_append(b, has_query ? "&" : "?", 1) || vd_buf_append(b, q, ql))) goto nomem;
  if (vd_buf_append(b, "", 1)) goto nomem;
  *out = (char *)b->data;
  return VD_OK;
nomem:
  vd_buf_free(b);
  return vd_nomem(err);
}

static vd_code blob_url(const vd_az_cred *c, const char *az_url, const az_parts *pp, char **out, vd_err *err);

/* With decode, p's key is replaced by its percent-decoded copy in *buf (malloc'd, the
 * caller frees it): the store's URLs are URLs (vd_url_join encodes names). */
static vd_code decode_key(const char *az_url, az_parts *p, char **buf, vd_err *err) {
  *buf = NULL;
  if (!p->keyl) return VD_OK;
  if (!(*buf = malloc(p->keyl + 1))) return vd_nomem(err);
  size_t dl = vd_pct_decode(*buf, p->key, p->keyl);
  for (size_t i = 0; i < dl; i++)
    if ((unsigned char)(*buf)[i] < 0x20 || (*buf)[i] == 0x7f) {
      char where[600];
      vd_url_redact(az_url, where, sizeof where);
      free(*buf);
      *buf = NULL;
      return vd_fail(err, VD_INVALID, "%s: the blob name has a control character", where);
    }
  p->key = *buf;
  p->keyl = dl;
  return VD_OK;
}

vd_code vd_az_blob_url(const vd_az_cred *c, const char *az_url, int decode, char **out, vd_err *err) {
  az_parts p;
  char *dec = NULL;
  *out = NULL;
  vd_code rc = split_az(az_url, &p, err);
  if (!rc && decode) rc = decode_key(az_url, &p, &dec, err);
  if (!rc) rc = blob_url(c, az_url, &p, out, err);
  free(dec);
  return rc;
}

static vd_code blob_url(const vd_az_cred *c, const char *az_url, const az_parts *pp, char **out, vd_err *err) {
  az_parts p = *pp;
  /* "." and ".." segments are resolved away by HTTP clients and servers (RFC 3986 5.2.4),
   * so such a blob would be another one, or none: refused rather than renamed */
  for (const char *s = p.key, *e = p.key + p.keyl; s < e;) {
    const char *n = memchr(s, '/', (size_t)(e - s));
    size_t l = (size_t)((n ? n : e) - s);
    if ((l == 1 && s[0] == '.') || (l == 2 && s[0] == '.' && s[1] == '.')) {
      char where[600];
      vd_url_redact(az_url, where, sizeof where);
      return vd_fail(err, VD_INVALID, "%s: a blob name with a '.' or '..' segment cannot be addressed over HTTP", where);
    }
    s += l + 1;
  }
  vd_buf b = {0};
  if (vd_buf_append(&b, c->endpoint, strlen(c->endpoint)) || vd_buf_append(&b, "/", 1) ||
      vd_buf_append(&b, p.cont, p.contl) || (p.keyl && (vd_buf_append(&b, "/", 1) || append_enc(&b, p.key, p.keyl, 1)))) {
    vd_buf_free(&b);
    return vd_nomem(err);
  }
  return finish_url(c, &p, &b, 0, out, err);
}

vd_code vd_az_list_url(const vd_az_cred *c, const char *az_url, int decode, int delim, const char *marker,
                       int maxresults, char **out, vd_err *err) {
  az_parts p;
  char *dec = NULL;
  *out = NULL;
  vd_code rc = split_az(az_url, &p, err);
  if (!rc && decode) rc = decode_key(az_url, &p, &dec, err);
  if (rc) return rc;
  vd_buf b = {0};
  char mr[32];
  snprintf(mr, sizeof mr, "&maxresults=%d", maxresults);
  static const char base[] = "?restype=container&comp=list&include=metadata";
  if (vd_buf_append(&b, c->endpoint, strlen(c->endpoint)) || vd_buf_append(&b, "/", 1) ||
      vd_buf_append(&b, p.cont, p.contl) || vd_buf_append(&b, base, sizeof base - 1) ||
      (delim && vd_buf_append(&b, "&delimiter=%2F", 14)) ||
      (p.keyl && (vd_buf_append(&b, "&prefix=", 8) || append_enc(&b, p.key, p.keyl, 0))) ||
      (marker && *marker && (vd_buf_append(&b, "&marker=", 8) || append_enc(&b, marker, strlen(marker), 0))) ||
      (maxresults > 0 && vd_buf_append(&b, mr, strlen(mr)))) {
    vd_buf_free(&b);
    free(dec);
    return vd_nomem(err);
  }
  free(dec);
  return finish_url(c, &p, &b, 1, out, err);
}
