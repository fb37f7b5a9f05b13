/* s3://bucket/key backend: every request goes through the http transport
 * (store_http.c) with a hook that maps the s3:// URL to the endpoint's URL and signs it
 * with libcurl's CURLOPT_AWS_SIGV4. libcurl 7.88 signs the path and the query verbatim
 * and adds no payload hash (../shared/spec/object-stores.md section 4), so here: the key
 * is sent percent-encoded (every byte outside A-Za-z0-9-._~ and '/'), query parameters
 * sorted and encoded, x-amz-content-sha256 always sent, and no "Name:" removal entries.
 *
 * Settings: vdsql_config's s3_* keys, else the AWS_* environment variables, read when
 * a request is made (opening a database reaches nothing). With AWS_ENDPOINT_URL (or
 * s3_endpoint) requests are path-style on it (radosgw, MinIO, ...); without, they go to
 * AWS (virtual-host style, path-style for bucket names that are no DNS label: see
 * virtual_host). No key and no secret: requests are sent unsigned (public buckets).
 *
 * Regions: a bucket answers a request sent to or signed for another region with 301
 * PermanentRedirect or 400 AuthorizationHeaderMalformed naming its own (s3_region.h);
 * the request is sent once more, to and signed for that region, and the region is
 * remembered for the bucket in the context, so later requests go right first time. The
 * host of that second request is the bucket's own under the same rule (AWS's host for
 * the region, or the endpoint unchanged), never a Location the answer names.
 *
 * An s3:// URL is a URL: its key may be percent-encoded (vd_url_join encodes names),
 * so it is decoded once and encoded again the way SigV4 wants it; a literal '%' in a
 * key is written %25. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "backend.h"
#include "s3_delete.h"
#include "s3_region.h"
#include "util/base64.h"
#include "xml_min.h"

#define MAX_KEYS 1000 /* what one ListObjectsV2 page may hold */

typedef struct creds {
  const char *endpoint, *region, *key, *secret, *token;
} creds;

/* cfg, else the environment variable env (when use_env) */
static const char *pick(const char *cfg, const char *env, int use_env) {
  if (cfg[0]) return cfg;
  const char *e = use_env ? getenv(env) : NULL;
  return e ? e : "";
}

static void creds_of(const vd_ctx *ctx, creds *c) {
  /* where requests go is not who signs them: the endpoint and region come from the
   * environment whatever env_credentials says; the key, secret and token only with it */
  int cred_env = ctx->cfg.env_credentials;
  c->endpoint = pick(ctx->cfg.s3_endpoint, "AWS_ENDPOINT_URL", 1);
  c->region = pick(ctx->cfg.s3_region, "AWS_REGION", 1);
  if (!c->region[0]) c->region = pick("", "AWS_DEFAULT_REGION", 1);
  if (!c->region[0]) c->region = "us-east-1";
  c->key = pick(ctx->cfg.s3_access_key_id, "AWS_ACCESS_KEY_ID", cred_env);
  c->secret = pick(ctx->cfg.s3_secret_access_key, "AWS_SECRET_ACCESS_KEY", cred_env);
  c->token = pick(ctx->cfg.s3_session_token, "AWS_SESSION_TOKEN", cred_env);
}

/* Appends s[0, n) percent-decoded (when decode) and then encoded as SigV4 wants it
 * ('/' kept when keep_slash) to out (room for 3 * n + 1). */
static char *enc(char *o, const char *s, size_t n, int decode, int keep_slash) {
  if (!decode) return vd_pct_encode(o, s, n, keep_slash);
  size_t dn = vd_pct_decode(o + 2 * n, s, n); /* decoded into the tail: never longer than s */
  return vd_pct_encode(o, o + 2 * n, dn, keep_slash);
}

/* "s3://bucket/key?query" in parts: bucket [b, b + bn), key [k, k + kn) (still as in the
 * URL), query q (NULL: none). -1 when there is no bucket. */
static int split(const char *url, const char **b, size_t *bn, const char **k, size_t *kn, const char **q) {
  const char *p = strstr(url, "://");
  if (!p) return -1;
  *b = p + 3;
  *bn = strcspn(*b, "/?#");
  if (!*bn) return -1;
  /* a bucket name, nothing else (no userinfo, no port: the endpoint comes from the settings) */
  for (size_t i = 0; i < *bn; i++) {
    char c = (*b)[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_'))
      return -1;
  }
  const char *r = *b + *bn;
  *q = NULL;
  if (*r == '/') r++;
  *k = r;
  *kn = strcspn(r, "?#");
  if (r[*kn] == '?') *q = r + *kn + 1;
  return 0;
}

/* Whether AWS can address bucket b as a virtual host, b.s3.REGION.amazonaws.com over
 * https: one DNS label of 3 to 63 lower-case letters, digits and '-', a letter or digit
 * at each end. A dot makes several labels, which the certificate's wildcard
 * (*.s3.REGION.amazonaws.com) does not cover, so the TLS check would fail; upper case and
 * '_' are legacy names (us-east-1) that no host name can carry. Those go path style
 * (s3.REGION.amazonaws.com/b), the one way AWS still reaches them. */
static int virtual_host(const char *b, size_t bn) {
  if (bn < 3 || bn > 63 || b[0] == '-' || b[bn - 1] == '-') return 0;
  for (size_t i = 0; i < bn; i++)
    if (!((b[i] >= 'a' && b[i] <= 'z') || (b[i] >= '0' && b[i] <= '9') || b[i] == '-')) return 0;
  return 1;
}

/* The endpoint URL of an s3:// URL (malloc'd); NULL when out of memory. */
static char *real_url(const creds *c, const char *url, const char *b, size_t bn, const char *k, size_t kn,
                      const char *q) {
  size_t el = strlen(c->endpoint), ql = q ? strcspn(q, "#") : 0;
  char *out = malloc(el + strlen(c->region) + 3 * (bn + kn) + ql + 64);
  if (!out) return NULL;
  char *o = out;
  if (el) {
    while (el > 0 && c->endpoint[el - 1] == '/') el--;
    o += sprintf(o, "%.*s/%.*s", (int)el, c->endpoint, (int)bn, b);
    if (kn) *o++ = '/';
  } else if (!virtual_host(b, bn)) {
    o += sprintf(o, "https://s3.%s.amazonaws.com/%.*s", c->region, (int)bn, b);
    if (kn) *o++ = '/';
  } else {
    o += sprintf(o, "https://%.*s.s3.%s.amazonaws.com/", (int)bn, b, c->region);
  }
  o = enc(o, k, kn, 1, 1);
  if (q) o += sprintf(o, "?%.*s", (int)ql, q);
  *o = 0;
  return out;
}

/* Appends "name: value" to *l; -1 when out of memory (*l then freed). */
static int add(struct curl_slist **l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add(struct curl_slist **l, const char *fmt, ...) {
  char line[sizeof ((vd_ctx *)0)->cfg.s3_session_token + 64];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  struct curl_slist *t = curl_slist_append(*l, line);
  if (!t) {
    curl_slist_free_all(*l);
    *l = NULL;
    return -1;
  }
  *l = t;
  return 0;
}

/* The headers of a PUT: the body's SHA-256 (signed: curl 7.88 hashes no upload body),
 * an explicit Content-Type (signed like every header we set), x-amz-meta-*, and the
 * conditions (radosgw takes If-Match only unquoted; AWS takes it either way). */
static int put_headers(struct curl_slist **l, const vd_putreq *p) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  char hex[2 * SHA256_DIGEST_LENGTH + 1];
  SHA256(p->len ? (const unsigned char *)p->body : (const unsigned char *)"", p->len, md);
  for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) sprintf(hex + 2 * i, "%02x", md[i]);
  if (add(l, "x-amz-content-sha256: %s", hex) ||
      add(l, "Content-Type: %s", p->content_type ? p->content_type : "application/octet-stream"))
    return -1;
  if (p->content_type) { /* a POST (DeleteObjects): the service wants the body's MD5 (radosgw 16.2 no other checksum) */
    unsigned char m5[EVP_MAX_MD_SIZE];
    unsigned int m5n = 0;
    char *b64 = NULL;
    if (!EVP_Digest(p->len ? p->body : "", p->len, m5, &m5n, EVP_md5(), NULL) ||
        !(b64 = vd_base64_encode(m5, m5n)) || add(l, "Content-MD5: %s", b64)) {
      free(b64);
      return -1;
    }
    free(b64);
    return 0;
  }
  if (p->copy_from) { /* CopyObject: the source's metadata comes along (directive COPY) */
    const char *b, *k, *q;
    size_t bn, kn;
    if (split(p->copy_from, &b, &bn, &k, &kn, &q)) return -1;
    char *src = malloc(3 * (bn + kn) + 4);
    if (!src) return -1;
    src[0] = '/';
    char *o = enc(src + 1, b, bn, 0, 1);
    *o++ = '/';
    enc(o, k, kn, 1, 1);
    int bad = add(l, "x-amz-copy-source: %s", src) || add(l, "x-amz-metadata-directive: COPY");
    free(src);
    if (bad) return -1;
  }
  for (int i = 0; i < p->nmeta && !p->copy_from; i++)
    if (add(l, "x-amz-meta-%s: %s", p->meta[i].key, p->meta[i].value)) return -1;
  if (p->if_match) {
    size_t n = strlen(p->if_match);
    const char *e = p->if_match;
    if (n >= 2 && e[0] == '"' && e[n - 1] == '"') {
      e++;
      n -= 2;
    }
    if (add(l, "If-Match: %.*s", (int)n, e)) return -1;
  }
  if (p->if_none_match && add(l, "If-None-Match: *")) return -1;
  return 0;
}

static vd_code prepare(vd_ctx *ctx, vd_curl *h, const char *url, const char *method, const char *range,
                       const vd_putreq *put, vd_curl_slist **hdrs, vd_err *err) {
  (void)method;
  (void)range; /* CURLOPT_RANGE: SigV4 as curl computes it does not sign Range */
  creds c;
  creds_of(ctx, &c);
  char where[600];
  vd_url_redact(url, where, sizeof where);
  const char *b, *k, *q;
  size_t bn, kn;
  if (split(url, &b, &bn, &k, &kn, &q)) return vd_fail(err, VD_INVALID, "%s: not an s3://bucket/key URL (a bucket name is letters, digits, '.', '-' and '_')", where);
  const char *known = vd_s3_region_of(ctx, b, bn); /* what the bucket itself said */
  if (known) c.region = known;
  if (!c.key[0] != !c.secret[0])
    return vd_fail(err, VD_INVALID, "%s: S3 credentials need both an access key and a secret (%s is not set: "
                   "see vdsql_config('%s') or %s)", where, c.key[0] ? "the secret" : "the access key",
                   c.key[0] ? "s3_secret_access_key" : "s3_access_key_id",
                   c.key[0] ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
  if (c.endpoint[0] && strncasecmp(c.endpoint, "http://", 7) && strncasecmp(c.endpoint, "https://", 8))
    return vd_fail(err, VD_INVALID, "%s: the S3 endpoint is not an http(s) URL (s3_endpoint / AWS_ENDPOINT_URL)", where);
  char *u = real_url(&c, url, b, bn, k, kn, q);
  if (!u) return vd_nomem(err);
  curl_easy_setopt(h, CURLOPT_URL, u);
  free(u);
  struct curl_slist *l = NULL;
  char sigv4[128];
  /* curl 7.88 hashes no body of its own: the header must be there, signed */
  if (put ? put_headers(&l, put) : add(&l, "x-amz-content-sha256: UNSIGNED-PAYLOAD")) return vd_nomem(err);
  if (c.key[0]) {
    snprintf(sigv4, sizeof sigv4, "aws:amz:%s:s3", c.region);
    curl_easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4);
    curl_easy_setopt(h, CURLOPT_USERNAME, c.key); /* may hold ':' (CURLOPT_USERPWD would split there) */
    curl_easy_setopt(h, CURLOPT_PASSWORD, c.secret);
    if (c.token[0] && add(&l, "x-amz-security-token: %s", c.token)) return vd_nomem(err);
  }
  *hdrs = l;
  return VD_OK;
}

/* <Error><Code>SignatureDoesNotMatch</Code>...: only letters, digits and dots are
 * kept, so the message holds the code and nothing a server chose to echo. */
static int error_code(const char *hdr, const char *body, size_t len, char *out, size_t n) {
  (void)hdr;
  if (!len) return -1;
  vd_xml *root = vd_xml_parse(body, len);
  vd_xml *c = vd_xml_is(root, "Error") ? vd_xml_child(root, "Code") : NULL;
  size_t o = 0;
  for (const char *p = c ? c->text : NULL; p && *p && o + 1 < n; p++)
    if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.') out[o++] = *p;
  if (n) out[o] = 0;
  vd_xml_free(root);
  return o ? 0 : -1;
}

/* An answer naming the bucket's region (s3_region.h): remembered, and the request sent
 * again (prepare then takes it). Not when nothing is remembered and the region named is
 * the one signed for: then the fault is another, and the answer stands. When a region is
 * remembered already, a request sent in parallel with the one that learnt it was signed
 * for the old one: it goes again too (once, as every request). */
static int reroute(vd_ctx *ctx, const char *url, long status, const char *hdr, const char *body, size_t len) {
  char region[40];
  const char *b, *k, *q;
  size_t bn, kn;
  if (vd_s3_region_answer(status, hdr, body, len, region, sizeof region) || split(url, &b, &bn, &k, &kn, &q)) return 0;
  creds c;
  creds_of(ctx, &c);
  if (!vd_s3_region_of(ctx, b, bn) && strcmp(region, c.region) == 0) return 0;
  return vd_s3_region_set(ctx, b, bn, region) == 0;
}

static vd_code check_meta(const vd_putreq *p, const char *where, vd_err *err);
static const vd_http_hook s3_hook = {VD_BE_S3, prepare, 0, NULL, error_code, NULL, check_meta, "x-amz-bucket-region",
                                     reroute};

/* "2026-11-24T14:00:00.000Z" -> seconds; 0 when it does not parse. */
static int64_t iso_time(const char *s) {
  struct tm tm = {0};
  const char *e = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
  return e ? (int64_t)timegm(&tm) : 0;
}


/* A CommonPrefixes entry (a listing with a delimiter) into out->prefixes, relative to dir
 * as keys are. */
static vd_code common_prefix(vd_xml *c, const char *dir, size_t dlen, vd_listing *out, const char *where, vd_err *err) {
  vd_xml *p = vd_xml_child(c, "Prefix");
  char *v = p ? vd_xml_text(p, NULL) : NULL;
  if (p && !v) return vd_nomem(err);
  if (!v || strlen(v) <= dlen || strncmp(v, dir, dlen) != 0) {
    free(v);
    return vd_fail(err, VD_IO, "%s: the listing holds a key outside the prefix asked for", where);
  }
  char **np = realloc(out->prefixes, (size_t)(out->nprefixes + 1) * sizeof *np);
  if (np) out->prefixes = np;
  if (!np || !(np[out->nprefixes] = strdup(v + dlen))) {
    free(v);
    return vd_nomem(err);
  }
  out->nprefixes++;
  free(v);
  return VD_OK;
}

/* One ListObjectsV2 page into out: keys (and common prefixes) made relative to dir (dlen
 * bytes, which every key the prefix selects starts with). */
vd_code vd_s3_parse_list(const char *body, size_t len, const char *dir, size_t dlen, vd_listing *out,
                         const char *where, vd_err *err) {
  vd_xml *root = vd_xml_parse(body, len);
  if (!vd_xml_is(root, "ListBucketResult")) {
    vd_xml_free(root);
    return vd_fail(err, VD_IO, "%s: the listing is not a ListBucketResult document", where);
  }
  int cap = 0, truncated = 0;
  vd_code rc = VD_OK;
  for (vd_xml *c = root->child; c && !rc; c = c->next) {
    if (vd_xml_is(c, "IsTruncated")) {
      char *v = vd_xml_text(c, NULL);
      truncated = v && strcmp(v, "true") == 0;
      free(v);
    } else if (vd_xml_is(c, "NextContinuationToken")) {
      free(out->next);
      if (!(out->next = vd_xml_text(c, NULL))) rc = vd_nomem(err);
    } else if (vd_xml_is(c, "CommonPrefixes")) {
      rc = common_prefix(c, dir, dlen, out, where, err);
    } else if (vd_xml_is(c, "Contents")) {
      if (out->n == cap) {
        cap = cap ? 2 * cap : 64;
        vd_listent *e = realloc(out->ent, cap * sizeof *e);
        if (!e) {
          rc = vd_nomem(err);
          break;
        }
        out->ent = e;
      }
      vd_listent *e = &out->ent[out->n];
      memset(e, 0, sizeof *e);
      e->info.size = -1;
      char *key = NULL;
      for (vd_xml *f = c->child; f; f = f->next) {
        char *v = NULL;
        if (!(v = vd_xml_text(f, NULL))) {
          rc = vd_nomem(err);
          break;
        }
        if (vd_xml_is(f, "Key")) {
          free(key);
          key = v;
          continue;
        }
        if (vd_xml_is(f, "Size")) {
          char *end;
          long long s = strtoll(v, &end, 10);
          e->info.size = (*v && !*end && s >= 0) ? s : -1;
        } else if (vd_xml_is(f, "ETag")) {
          snprintf(e->info.etag, sizeof e->info.etag, "%s", v);
        } else if (vd_xml_is(f, "LastModified")) {
          e->info.mtime = iso_time(v);
        }
        free(v);
      }
      if (!rc && (!key || strlen(key) < dlen || strncmp(key, dir, dlen) != 0)) {
        rc = vd_fail(err, VD_IO, "%s: the listing holds a key outside the prefix asked for", where);
      } else if (!rc && !(e->key = strdup(key + dlen))) {
        rc = vd_nomem(err);
      }
      free(key);
      if (!rc) out->n++;
    }
  }
  vd_xml_free(root);
  if (!rc && !truncated) {
    free(out->next);
    out->next = NULL;
  } else if (!rc && truncated && (!out->next || !out->next[0])) {
    rc = vd_fail(err, VD_IO, "%s: a truncated listing without a NextContinuationToken", where);
  }
  return rc;
}

static vd_code s3_list(vd_ctx *ctx, const char *url, const char *token, int max, int flags, vd_listing *out,
                       vd_err *err) {
  char where[600];
  vd_url_redact(url, where, sizeof where);
  const char *b, *k, *q;
  size_t bn, kn;
  if (split(url, &b, &bn, &k, &kn, &q)) return vd_fail(err, VD_INVALID, "%s: not an s3://bucket/key URL (a bucket name is letters, digits, '.', '-' and '_')", where);
  /* the prefix decoded (as the service stores keys); dir: up to its last '/' */
  char *prefix = malloc(kn + 1);
  if (!prefix) return vd_nomem(err);
  size_t pl = vd_pct_decode(prefix, k, kn), dlen = pl;
  while (dlen > 0 && prefix[dlen - 1] != '/') dlen--;
  size_t tl = token ? strlen(token) : 0;
  char *lu = malloc(bn + 3 * (pl + tl) + 128);
  if (!lu) {
    free(prefix);
    return vd_nomem(err);
  }
  /* the parameters in byte order of their names, values encoded: signed verbatim by curl 7.88 */
  char *o = lu + sprintf(lu, "s3://%.*s?", (int)bn, b);
  if (token) {
    o += sprintf(o, "continuation-token=");
    o = enc(o, token, tl, 0, 0); /* radosgw's token is a key in clear: '/' and all must be encoded */
    *o++ = '&';
  }
  if (flags & VD_LIST_FOLDER) o += sprintf(o, "delimiter=%%2F&");
  o += sprintf(o, "list-type=2&max-keys=%d&prefix=", max < MAX_KEYS ? max : MAX_KEYS);
  enc(o, prefix, pl, 0, 0);
  vd_getreq r = {0};
  r.url = lu;
  r.len = -1;
  vd_code rc = vd_http_get_listing(ctx, &r, &s3_hook, where, err);
  if (!rc) {
    rc = vd_s3_parse_list(r.body.data ? (const char *)r.body.data : "", r.body.len, prefix, dlen, out, where, err);
  }
  vd_buf_free(&r.body);
  vd_objinfo_free(&r.info);
  free(lu);
  free(prefix);
  return rc;
}

/* Metadata goes into signed headers: names of letters, digits, '-' and '_' (lower-cased
 * by S3), values of printable ASCII (no CR/LF: nothing can add a header). And libcurl
 * before 8.10 sorts canonical headers as whole "name:value" strings, so a name that is
 * another's prefix followed by a byte below ':' ("a" with "a1", "a-b", "a.b") signs in
 * the wrong order (403, ../shared/spec/object-stores.md 1.5): refused with a reason. */
static vd_code check_meta(const vd_putreq *p, const char *where, vd_err *err) {
  for (int i = 0; i < p->nmeta; i++) {
    const char *k = p->meta[i].key, *v = p->meta[i].value;
    if (!*k) return vd_fail(err, VD_INVALID, "%s: an empty metadata name", where);
    for (const char *c = k; *c; c++)
      if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
        return vd_fail(err, VD_INVALID, "%s: metadata name '%s': S3 takes letters, digits, '-' and '_'", where, k);
    for (const char *c = v; *c; c++)
      if (*c < 0x20 || *c > 0x7e)
        return vd_fail(err, VD_INVALID, "%s: metadata '%s': S3 takes printable ASCII values", where, k);
    if (curl_version_info(CURLVERSION_NOW)->version_num < 0x080a00)
      for (int j = 0; j < p->nmeta; j++) {
        const char *o = p->meta[j].key;
        size_t kl = strlen(k);
        if (j != i && strncasecmp(o, k, kl) == 0 && o[kl] && (unsigned char)o[kl] < ':')
          return vd_fail(err, VD_INVALID,
                         "%s: metadata names '%s' and '%s' together are signed in the wrong order by this libcurl "
                         "(before 8.10); rename one", where, k, o);
      }
  }
  return VD_OK;
}

/* A DeleteObjects answer read for batch b; arg: every object's key, decoded. */
static void read_deleted(const char *body, size_t len, const vd_batch *b, const char *const *where, void *arg,
                         vd_code *rc, vd_err *errs) {
  char **key = arg;
  const char **ks = malloc((size_t)b->m * sizeof *ks);
  if (!ks) {
    for (int j = 0; j < b->m; j++) rc[j] = vd_nomem(&errs[j]);
    return;
  }
  for (int j = 0; j < b->m; j++) ks[j] = key[b->idx[j]];
  vd_s3_parse_delete(body, len, ks, b->m, where, rc, errs);
  free(ks);
}

/* Deletes in batches of up to VD_S3_DELETE_MAX keys of one bucket, the batches in
 * parallel; a key no XML can carry goes alone, as a DELETE. A failed batch fails each of
 * its objects, each message naming its own. */
static void s3_del_many(vd_ctx *ctx, vd_delreq *d, int n) {
  char **key = calloc(n ? (size_t)n : 1, sizeof *key), **where = calloc(n ? (size_t)n : 1, sizeof *where);
  int *group = malloc((n ? (size_t)n : 1) * sizeof *group), *order = malloc((n ? (size_t)n : 1) * sizeof *order);
  vd_batch *bs = calloc(n ? (size_t)n : 1, sizeof *bs);
  int nb = 0;
  if (!key || !where || !group || !order || !bs) {
    for (int i = 0; i < n; i++) d[i].rc = vd_nomem(&d[i].err);
    goto out;
  }
  for (int i = 0; i < n; i++) { /* group: -2 failed already, -1 alone, else the first index of its bucket */
    const char *b, *k, *q;
    size_t bn, kn;
    char w[600];
    vd_url_redact(d[i].url, w, sizeof w);
    d[i].rc = VD_OK;
    group[i] = -2;
    if (!(where[i] = strdup(w)) || !(key[i] = malloc(strlen(d[i].url) + 1))) {
      d[i].rc = vd_nomem(&d[i].err);
      continue;
    }
    if (split(d[i].url, &b, &bn, &k, &kn, &q) || q) { /* a query names no object DeleteObjects could take */
      group[i] = -1;
      continue;
    }
    size_t dn = vd_pct_decode(key[i], k, kn);
    if (dn != strlen(key[i]) || !vd_s3_delete_key_ok(key[i])) {
      group[i] = -1;
      continue;
    }
    group[i] = i;
    for (int j = 0; j < i; j++) /* the same bucket as an earlier object: its group */
      if (group[j] >= 0 && strncmp(d[j].url, d[i].url, (size_t)(b + bn - d[i].url)) == 0 &&
          (d[j].url[b + bn - d[i].url] == '/' || !d[j].url[b + bn - d[i].url])) {
        group[i] = group[j];
        break;
      }
  }
  for (int g = 0; g < n; g++) { /* each group cut into batches */
    if (group[g] != g) continue;
    int m = 0;
    for (int i = g; i < n; i++)
      if (group[i] == g) order[m++] = i;
    for (int at = 0; at < m; at += VD_S3_DELETE_MAX) {
      vd_batch *t = &bs[nb];
      t->m = m - at < VD_S3_DELETE_MAX ? m - at : VD_S3_DELETE_MAX;
      const char *b = strstr(d[g].url, "://") + 3;
      size_t bn = strcspn(b, "/?#");
      const char **ks = malloc((size_t)t->m * sizeof *ks);
      char *url = NULL;
      int bad = !ks || !(t->idx = malloc((size_t)t->m * sizeof *t->idx)) || !(url = malloc(bn + 24));
      for (int j = 0; !bad && j < t->m; j++) ks[j] = key[t->idx[j] = order[at + j]];
      if (!bad) {
        sprintf(url, "s3://%.*s?delete=", (int)bn, b);
        bad = vd_s3_delete_body(ks, t->m, &t->body);
      }
      free(ks);
      if (bad) {
        for (int j = at; j < at + t->m; j++) d[order[j]].rc = vd_nomem(&d[order[j]].err);
        free(t->idx);
        free(url);
        vd_buf_free(&t->body);
        memset(t, 0, sizeof *t);
        continue;
      }
      t->put.url = url;
      t->put.body = t->body.data;
      t->put.len = t->body.len;
      t->put.content_type = "application/xml";
      nb++;
    }
  }
  vd_http_send_batches(ctx, bs, nb, &s3_hook, read_deleted, key, d, where);
  for (int i = 0; i < n; i++) /* the ones no batch could carry */
    if (group[i] == -1 && !d[i].rc) d[i].rc = vd_http_del(ctx, d[i].url, &s3_hook, &d[i].err);
out:
  for (int k = 0; bs && k < n; k++) {
    free(bs[k].idx);
    free((char *)bs[k].put.url);
    vd_buf_free(&bs[k].body);
  }
  for (int i = 0; key && i < n; i++) free(key[i]);
  for (int i = 0; where && i < n; i++) free(where[i]);
  free(key), free(where), free(group), free(order), free(bs);
}

/* A DELETE of a missing key is answered 204 like any other; a 404 is a missing bucket,
 * an error. */
VD_HTTP_BACKEND(s3, &s3_hook)
const vd_backend_ops vd_s3_ops = {.id = VD_BE_S3,
                                  .get_many = s3_get_many,
                                  .head = s3_head,
                                  .put = s3_put,
                                  .list = s3_list,
                                  .del = s3_del,
                                  .hook = &s3_hook,
                                  .put_many = s3_put_many,
                                  .del_many = s3_del_many};
