/* Backend dispatch (the one scheme table), the cached document path and URL helpers
 * (see store.h, backend.h). */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>

#include <curl/curl.h>

#include "backend.h"
#include "cache.h"

void vd_objinfo_free(vd_objinfo *i) {
  for (int k = 0; k < i->nmeta; k++) {
    free(i->meta[k].key);
    free(i->meta[k].value);
  }
  free(i->meta);
  i->meta = NULL;
  i->nmeta = 0;
}

int vd_objinfo_add_meta(vd_objinfo *i, const char *key, size_t klen, const char *val, size_t vlen) {
  vd_kv *m = realloc(i->meta, (i->nmeta + 1) * sizeof *m);
  if (!m) return -1;
  i->meta = m;
  char *k = strndup(key, klen), *v = strndup(val, vlen);
  if (!k || !v) {
    free(k);
    free(v);
    return -1;
  }
  for (char *p = k; *p; p++)
    if (*p >= 'A' && *p <= 'Z') *p += 32;
  m[i->nmeta].key = k;
  m[i->nmeta].value = v;
  i->nmeta++;
  return 0;
}

const char *vd_objinfo_meta(const vd_objinfo *i, const char *suffix) {
  size_t sl = strlen(suffix);
  for (int k = 0; k < i->nmeta; k++) {
    size_t kl = strlen(i->meta[k].key);
    if (kl >= sl && strcasecmp(i->meta[k].key + kl - sl, suffix) == 0) return i->meta[k].value;
  }
  return NULL;
}

/* Length of url's scheme when it has one ("scheme://"), else 0. */
static size_t scheme_len(const char *url) {
  const char *p = url;
  while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '+')
    p++;
  return p > url && p[0] == ':' && p[1] == '/' && p[2] == '/' ? (size_t)(p - url) : 0;
}

static int has_scheme(const char *url) { return scheme_len(url) > 0; }

/* The one place where a scheme picks a backend. */
static const struct {
  const char *scheme;
  const vd_backend_ops *ops;
} schemes[] = {
    {"file", &vd_file_ops},
    {"http", &vd_http_ops},
    {"https", &vd_http_ops},
    {"s3", &vd_s3_ops},
    {"az", &vd_az_ops},
};

const vd_backend_ops *vd_backend_of(const char *url) {
  size_t n = scheme_len(url);
  if (!n) return &vd_file_ops; /* a path */
  for (size_t i = 0; i < sizeof schemes / sizeof *schemes; i++)
    if (strlen(schemes[i].scheme) == n && strncasecmp(url, schemes[i].scheme, n) == 0) return schemes[i].ops;
  return NULL;
}

vd_backend_id vd_url_backend(const char *url) {
  const vd_backend_ops *b = vd_backend_of(url);
  return b ? b->id : VD_BE_FILE; /* unknown schemes are refused before any request */
}

int vd_store_is_local(const char *url) {
  const vd_backend_ops *b = vd_backend_of(url);
  return b && (b->caps & VD_CAP_LOCAL);
}

int vd_store_is_remote(const char *url) {
  const vd_backend_ops *b = vd_backend_of(url);
  return b && !(b->caps & VD_CAP_LOCAL);
}

int vd_store_can_write(const char *url) {
  const vd_backend_ops *b = vd_backend_of(url);
  return b && (b->caps & VD_CAP_WRITE);
}

int vd_store_on_http(const char *url) {
  const vd_backend_ops *b = vd_backend_of(url);
  return b && (b == &vd_http_ops || b->hook);
}

static int carries_query(const char *url) {
  const vd_backend_ops *b = vd_backend_of(url);
  return b && (b->caps & VD_CAP_QUERY);
}

char *vd_url_path(const char *url) {
  if (strncasecmp(url, "file://", 7) == 0) {
    const char *p = url + 7;
    if (strncasecmp(p, "localhost/", 10) == 0) p += 9;
    return strdup(p);
  }
  return strdup(url);
}

/* Hand-written rather than curl_easy_escape: callers need '/' kept in keys and no
 * allocation per call (curl's escapes '/' and returns a new string). */
char *vd_pct_encode(char *out, const void *s, size_t n, int keep_slash) {
  static const char hex[] = "0123456789ABCDEF";
  const unsigned char *p = s;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = p[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
        c == '~' || (keep_slash && c == '/')) {
      *out++ = (char)c;
    } else {
      *out++ = '%';
      *out++ = hex[c >> 4];
      *out++ = hex[c & 15];
    }
  }
  *out = 0;
  return out;
}

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

size_t vd_pct_decode(char *out, const char *s, size_t n) {
  char *w = out;
  for (size_t i = 0; i < n; i++) {
    int h, l;
    if (s[i] == '%' && i + 2 < n && (h = hexval(s[i + 1])) >= 0 && (l = hexval(s[i + 2])) >= 0) {
      *w++ = (char)(h * 16 + l);
      i += 2;
    } else {
      *w++ = s[i];
    }
  }
  *w = 0;
  return (size_t)(w - out);
}

/* pre[0, plen) + sep + name (percent-encoded with encode: RFC 3986 unreserved and '/'
 * kept, so a name can never change the URL's structure) + q (a ?query, or NULL). */
static char *build(const char *pre, size_t plen, const char *sep, const char *name, int encode, const char *q) {
  size_t nlen = strlen(name), qlen = q ? strlen(q) : 0, slen = strlen(sep);
  char *out = malloc(plen + slen + nlen * 3 + qlen + 1);
  if (!out) return NULL;
  char *o = out;
  memcpy(o, pre, plen);
  o += plen;
  memcpy(o, sep, slen);
  o += slen;
  if (encode) {
    o = vd_pct_encode(o, name, nlen, 1);
  } else {
    memcpy(o, name, nlen);
    o += nlen;
  }
  if (q) {
    memcpy(o, q, qlen);
    o += qlen;
  }
  *o = 0;
  return out;
}

/* Object names from datasets are joined into URLs; for remote stores they are
 * percent-encoded. The base's ?query (backends with VD_CAP_QUERY) goes at the end. */
char *vd_url_join(const char *base, const char *name) {
  const char *q = carries_query(base) ? strchr(base, '?') : NULL;
  size_t blen = q ? (size_t)(q - base) : strlen(base);
  while (blen > 0 && base[blen - 1] == '/' && !(blen == 1)) blen--;
  return build(base, blen, blen == 1 && base[0] == '/' ? "" : "/", name, vd_store_is_remote(base), q);
}

char *vd_url_sibling(const char *file_url, const char *name) {
  const char *q = carries_query(file_url) ? strchr(file_url, '?') : NULL;
  size_t dn = q ? (size_t)(q - file_url) : strlen(file_url);
  while (dn > 0 && file_url[dn - 1] != '/') dn--;
  return build(file_url, dn, "", name, 0, q);
}

char *vd_url_list_dir(const char *url) {
  const char *q = carries_query(url) ? strchr(url, '?') : NULL;
  size_t n = q ? (size_t)(q - url) : strlen(url), sl = scheme_len(url);
  if (sl && !memchr(url + sl + 3, '/', n - sl - 3)) /* "s3://bucket": the bucket's root */
    return build(url, n, "/", "", 0, q);
  return vd_url_sibling(url, "");
}

/* The authority (userinfo, host, port) of a URL with a scheme: [*a, *z). */
static void authority(const char *url, const char **a, const char **z) {
  *a = url + scheme_len(url) + 3;
  *z = *a + strcspn(*a, "/?#");
}

char *vd_url_carry_query(const char *base, const char *url) {
  const char *q = carries_query(base) ? strchr(base, '?') : NULL;
  size_t sl = scheme_len(base);
  if (!q || strpbrk(url, "?#") || sl != scheme_len(url) || strncasecmp(base, url, sl) != 0) return strdup(url);
  const char *ba, *bz, *ua, *uz;
  authority(base, &ba, &bz);
  authority(url, &ua, &uz);
  if (bz > q || bz - ba != uz - ua || strncasecmp(ba, ua, (size_t)(bz - ba)) != 0) return strdup(url);
  size_t ul = strlen(url), ql = strcspn(q, "#");
  char *out = malloc(ul + ql + 1);
  if (out) {
    memcpy(out, url, ul);
    memcpy(out + ul, q, ql);
    out[ul + ql] = 0;
  }
  return out;
}

/* Written by hand rather than with curl's URL parser: a URL that reaches an error is
 * often malformed, and it must be redacted all the same. */
void vd_url_redact(const char *url, char *out, size_t n) {
  if (!has_scheme(url)) {
    snprintf(out, n, "%s", url);
    return;
  }
  const char *auth = strstr(url, "://") + 3, *p = auth;
  while (*p && !strchr("/?#", *p)) p++;
  const char *at = NULL; /* the last '@' of the authority ends any userinfo */
  for (const char *q = auth; q < p; q++)
    if (*q == '@') at = q;
  const char *host = at ? at + 1 : auth, *q = strchr(p, '?'), *hash = strchr(p, '#');
  if (hash && (!q || hash < q)) q = hash;
  snprintf(out, n, "%.*s%.*s%s", (int)(auth - url), url, (int)((q ? q : p + strlen(p)) - host), host,
           q ? "?..." : "");
}

/* Scheme, lower-cased host and port of a remote URL (http(s) today); -1 when it is not one. */
static int origin_of(const char *url, char *scheme, char *host, size_t hn, long *port) {
  CURLU *u = curl_url();
  char *s = NULL, *h = NULL, *pt = NULL;
  int rc = -1;
  /* schemes curl does not speak (s3://, az://) parse too; they have no default port (0) */
  if (u && curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
      curl_url_get(u, CURLUPART_SCHEME, &s, 0) == CURLUE_OK && curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK &&
      vd_store_is_remote(url) && strlen(s) < 8 && strlen(h) < hn) {
    if (curl_url_get(u, CURLUPART_PORT, &pt, CURLU_DEFAULT_PORT) != CURLUE_OK) pt = NULL;
    snprintf(scheme, 8, "%s", s);
    for (char *c = scheme; *c; c++) *c = (char)tolower((unsigned char)*c);
    for (size_t i = 0; h[i]; i++) host[i] = (char)tolower((unsigned char)h[i]);
    host[strlen(h)] = 0;
    *port = pt ? strtol(pt, NULL, 10) : 0;
    rc = 0;
  }
  curl_free(s);
  curl_free(h);
  curl_free(pt);
  curl_url_cleanup(u);
  return rc;
}

/* One entry of allowed_hosts: "*", "host" (any port) or "host:port". */
static int host_listed(const char *list, const char *host, long port) {
  char item[300];
  for (const char *p = list; *p;) {
    size_t k = strcspn(p, ",");
    snprintf(item, sizeof item, "%.*s", (int)k, p);
    char *a = item, *z = item + strlen(item);
    while (*a == ' ') a++;
    while (z > a && z[-1] == ' ') *--z = 0;
    if (strcmp(a, "*") == 0) return 1;
    char *colon = strrchr(a, ':'), *br = strrchr(a, ']');
    long want = -1;
    if (colon && (!br || colon > br)) {
      want = strtol(colon + 1, NULL, 10);
      *colon = 0;
    }
    if (a[0] == '[' && br) { /* IPv6: compared without brackets on both sides */
      *br = 0;
      a++;
    }
    size_t hl = strlen(host);
    const char *h = host;
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') { /* curl reports "[::1]" */
      h++;
      hl -= 2;
    }
    if (strlen(a) == hl && strncasecmp(a, h, hl) == 0 && (want < 0 || want == port)) return 1;
    p += k;
    if (*p) p++;
  }
  return 0;
}

vd_code vd_url_allowed(vd_ctx *ctx, const char *base, const char *target, vd_err *err) {
  char bs[8], ts[8], bh[256], th[256], wb[600], wt[600];
  long bp, tp;
  vd_url_redact(base, wb, sizeof wb);
  vd_url_redact(target, wt, sizeof wt);
  if (!vd_store_is_remote(base)) return VD_OK; /* a local dataset: its links are local paths */
  if (origin_of(base, bs, bh, sizeof bh, &bp)) /* nothing to compare with: refused, never let through */
    return vd_fail(err, VD_INVALID, "%s: a malformed URL, so %s (which it refers to) is not requested", wb, wt);
  if (origin_of(target, ts, th, sizeof th, &tp))
    return vd_fail(err, VD_UNSUPPORTED, "%s: refers to %s, which is not an http(s) URL on its host", wb, wt);
  if (strcmp(bs, ts) == 0 && strcmp(bh, th) == 0 && bp == tp) return VD_OK;
  if (host_listed(ctx->cfg.allowed_hosts, th, tp)) return VD_OK;
  return vd_fail(err, VD_UNSUPPORTED,
                 "%s: refers to %s, another scheme, host or port (allow it with vdsql_config('allowed_hosts', '%s:%ld'))",
                 wb, wt, th, tp);
}

vd_code vd_url_check(const char *url, vd_err *err) {
  if (!*url) return vd_fail(err, VD_INVALID, "empty URL");
  char where[600];
  vd_url_redact(url, where, sizeof where);
  if (strncasecmp(url, "file://", 7) == 0 && url[7] != '/' && strncasecmp(url + 7, "localhost/", 10) != 0)
    return vd_fail(err, VD_UNSUPPORTED, "%s: file URLs name no host (use file:///path)", where);
  if (vd_backend_of(url)) return VD_OK;
  return vd_fail(err, VD_UNSUPPORTED, "%s: unsupported URL scheme (use a path, file://, http://, https://, s3:// or az://)", where);
}

vd_code vd_fail_max_alloc(vd_err *err, const char *where, int64_t size, int64_t cap) {
  if (size < 0)
    return vd_fail(err, VD_IO, "%s: the object is larger than max_alloc (%lld bytes; see vdsql_config('max_alloc')); "
                   "transfer aborted", where, (long long)cap);
  return vd_fail(err, VD_IO, "%s: the object is %lld bytes, more than max_alloc (%lld bytes; see vdsql_config('max_alloc'))",
                 where, (long long)size, (long long)cap);
}

/* The backends in the scheme table, each once, by stats id. */
static const vd_backend_ops *by_id(vd_backend_id id) {
  for (size_t i = 0; i < sizeof schemes / sizeof *schemes; i++)
    if (schemes[i].ops->id == id) return schemes[i].ops;
  return NULL;
}

vd_code vd_get_many(vd_ctx *ctx, vd_getreq *reqs, int n) {
  vd_getreq **by[VD_BE_COUNT];
  int cnt[VD_BE_COUNT] = {0};
  for (int b = 0; b < VD_BE_COUNT; b++) {
    by[b] = malloc((n ? n : 1) * sizeof **by);
    if (!by[b]) {
      for (int k = 0; k < b; k++) free(by[k]);
      for (int i = 0; i < n; i++) reqs[i].rc = vd_nomem(&reqs[i].err);
      return VD_NOMEM;
    }
  }
  for (int i = 0; i < n; i++) {
    reqs[i].rc = VD_OK;
    vd_err_clear(&reqs[i].err);
    reqs[i].info.size = -1;
    if ((reqs[i].rc = vd_url_check(reqs[i].url, &reqs[i].err))) continue;
    vd_backend_id b = vd_url_backend(reqs[i].url);
    by[b][cnt[b]++] = &reqs[i];
  }
  for (int b = 0; b < VD_BE_COUNT; b++)
    if (cnt[b]) by_id((vd_backend_id)b)->get_many(ctx, by[b], cnt[b]);
  for (int b = 0; b < VD_BE_COUNT; b++) free(by[b]);
  for (int i = 0; i < n; i++)
    if (reqs[i].rc) return reqs[i].rc;
  return VD_OK;
}

vd_code vd_get(vd_ctx *ctx, const char *url, int64_t off, int64_t len, vd_buf *out, vd_objinfo *info,
               vd_err *err) {
  vd_getreq r = {0};
  r.url = url;
  r.off = off;
  r.len = len;
  r.want_info = info != NULL;
  vd_code rc = vd_get_many(ctx, &r, 1);
  if (rc) {
    *err = r.err;
    vd_buf_free(&r.body);
    vd_objinfo_free(&r.info);
    return rc;
  }
  *out = r.body;
  if (info)
    *info = r.info;
  else
    vd_objinfo_free(&r.info);
  return VD_OK;
}

vd_code vd_head(vd_ctx *ctx, const char *url, vd_objinfo *info, vd_err *err) {
  memset(info, 0, sizeof *info);
  info->size = -1;
  if (vd_url_check(url, err)) return err->code;
  return vd_backend_of(url)->head(ctx, url, info, err);
}

/* The one refusal of a write, listing or delete on a backend without it. */
static vd_code refused(const char *url, const char *what, vd_err *err) {
  char where[600];
  vd_url_redact(url, where, sizeof where);
  return vd_fail(err, VD_READONLY, "%s: cannot %s: %s URLs %s", where, what, vd_backend_of(url)->label,
                 strcmp(what, "list") == 0 ? "have no listing" : "are read-only");
}

vd_code vd_put(vd_ctx *ctx, vd_putreq *p, vd_err *err) {
  p->etag[0] = 0;
  if (p->del) return vd_delete(ctx, p->url, err);
  if (vd_url_check(p->url, err) || (p->copy_from && vd_url_check(p->copy_from, err))) return err->code;
  const vd_backend_ops *b = vd_backend_of(p->url);
  if (p->copy_from && vd_backend_of(p->copy_from) != b) {
    char where[600];
    vd_url_redact(p->url, where, sizeof where);
    return vd_fail(err, VD_INVALID, "%s: a copy comes from the same store only", where);
  }
  return b->put ? b->put(ctx, p, err) : refused(p->url, "write", err);
}

vd_code vd_store_make_dirs(const char *url, vd_err *err) {
  if (vd_url_check(url, err)) return err->code;
  if (!(vd_backend_of(url)->caps & VD_CAP_LOCAL)) return VD_OK;
  char *path = vd_url_path(url);
  if (!path) return vd_nomem(err);
  for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
    *s = 0;
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
      vd_code rc = vd_fail(err, VD_IO, "%s: cannot make the directory (%s)", path, strerror(errno));
      free(path);
      return rc;
    }
    *s = '/';
  }
  free(path);
  return VD_OK;
}

vd_code vd_put_many(vd_ctx *ctx, vd_putreq **p, int n, vd_code *rc, vd_err *errs) {
  vd_code first = VD_OK;
  int i = 0;
  while (i < n) { /* runs of puts to one backend: a backend's put_many takes a run at once */
    const vd_backend_ops *b = vd_backend_of(p[i]->url);
    int j = i;
    while (j < n && vd_backend_of(p[j]->url) == b) j++;
    int checked = b != NULL;
    for (int k = i; k < j && checked; k++) checked = vd_url_check(p[k]->url, &errs[k]) == VD_OK;
    if (checked && b->put_many) {
      for (int k = i; k < j; k++) p[k]->etag[0] = 0;
      b->put_many(ctx, p + i, j - i, rc + i, errs + i);
    } else {
      for (int k = i; k < j; k++) rc[k] = vd_put(ctx, p[k], &errs[k]);
    }
    i = j;
  }
  for (i = 0; i < n; i++)
    if (rc[i] && !first) first = rc[i];
  return first;
}

vd_code vd_delete(vd_ctx *ctx, const char *url, vd_err *err) {
  if (vd_url_check(url, err)) return err->code;
  const vd_backend_ops *b = vd_backend_of(url);
  return b->del ? b->del(ctx, url, err) : refused(url, "delete", err);
}

vd_code vd_list(vd_ctx *ctx, const char *url, const char *token, int max, vd_listing *out, vd_err *err) {
  memset(out, 0, sizeof *out);
  if (vd_url_check(url, err)) return err->code;
  if (max <= 0) return vd_fail(err, VD_INVALID, "vd_list: a page holds at least one object");
  const vd_backend_ops *b = vd_backend_of(url);
  vd_code rc = b->list ? b->list(ctx, url, token, max, out, err) : refused(url, "list", err);
  if (rc) vd_listing_free(out);
  return rc;
}

void vd_listing_free(vd_listing *l) {
  for (int i = 0; i < l->n; i++) {
    free(l->ent[i].key);
    vd_objinfo_free(&l->ent[i].info);
  }
  free(l->ent);
  free(l->next);
  memset(l, 0, sizeof *l);
}

vd_code vd_fetch_docs(vd_ctx *ctx, const char *const *urls, int n, vd_blob **out, vd_err *err) {
  return vd_fetch_docs_opt(ctx, urls, n, out, 1, err);
}

/* Both forms of fetching many documents: with rcs, each one's own outcome (rcs[i],
 * errs[i]) and what was fetched kept; without, all-or-nothing. */
static vd_code fetch_docs(vd_ctx *ctx, const char *const *urls, int n, vd_blob **out, int cache, vd_code *rcs,
                          vd_err *errs, vd_err *err) {
  if (rcs)
    for (int i = 0; i < n; i++) rcs[i] = VD_OK;
  vd_getreq *reqs = calloc(n ? n : 1, sizeof *reqs);
  int *slot = malloc((n ? n : 1) * sizeof *slot);
  if (!reqs || !slot) {
    free(reqs);
    free(slot);
    return vd_nomem(err);
  }
  int nreq = 0;
  for (int i = 0; i < n; i++) {
    out[i] = vd_cache_get(ctx->cache, urls[i], ctx->cfg.cache_ttl);
    if (out[i]) {
      ctx->stats[vd_url_backend(urls[i])].cache_hits++;
      continue;
    }
    reqs[nreq].url = urls[i];
    reqs[nreq].len = -1;
    slot[nreq++] = i;
  }
  if (nreq) vd_get_many(ctx, reqs, nreq); /* each request carries its own outcome */
  vd_code rc = VD_OK;
  for (int k = 0; k < nreq; k++) {
    if (reqs[k].rc == VD_OK) {
      vd_blob *b = vd_blob_from_buf(&reqs[k].body);
      if (!b) {
        if (!rc) rc = vd_nomem(err);
      } else {
        out[slot[k]] = b;
        if (cache && ctx->cfg.cache_ttl > 0) vd_cache_put(ctx->cache, urls[slot[k]], b, ctx->cfg.cache_size);
      }
    } else if (rcs) {
      rcs[slot[k]] = reqs[k].rc;
      errs[slot[k]] = reqs[k].err;
    } else if (!rc) {
      rc = reqs[k].rc;
      *err = reqs[k].err;
    }
    vd_buf_free(&reqs[k].body);
    vd_objinfo_free(&reqs[k].info);
  }
  if (rc && !rcs)
    for (int i = 0; i < n; i++) {
      vd_blob_unref(out[i]);
      out[i] = NULL;
    }
  free(reqs);
  free(slot);
  return rc;
}

vd_code vd_fetch_docs_opt(vd_ctx *ctx, const char *const *urls, int n, vd_blob **out, int cache, vd_err *err) {
  return fetch_docs(ctx, urls, n, out, cache, NULL, NULL, err);
}

vd_code vd_fetch_docs_each(vd_ctx *ctx, const char *const *urls, int n, vd_blob **out, vd_code *rcs, vd_err *errs,
                           vd_err *err) {
  return fetch_docs(ctx, urls, n, out, 1, rcs, errs, err);
}

vd_code vd_fetch_doc(vd_ctx *ctx, const char *url, vd_blob **out, vd_err *err) {
  return vd_fetch_docs(ctx, &url, 1, out, err);
}

vd_blob *vd_cache_lookup(vd_ctx *ctx, const char *url, const char *key) {
  vd_blob *b = vd_cache_get(ctx->cache, key, ctx->cfg.cache_ttl);
  if (b) ctx->stats[vd_url_backend(url)].cache_hits++;
  return b;
}

void vd_cache_store(vd_ctx *ctx, const char *key, vd_blob *b) {
  if (ctx->cfg.cache_ttl > 0) vd_cache_put(ctx->cache, key, b, ctx->cfg.cache_size);
}

vd_code vd_fetch_range(vd_ctx *ctx, const char *url, int64_t off, int64_t len, const char *key, vd_blob **out,
                       vd_err *err) {
  if ((*out = vd_cache_lookup(ctx, url, key))) return VD_OK;
  vd_buf b = {0};
  vd_code rc = vd_get(ctx, url, off, len, &b, NULL, err);
  if (rc) return rc;
  if (!(*out = vd_blob_from_buf(&b))) {
    vd_buf_free(&b);
    return vd_nomem(err);
  }
  vd_cache_store(ctx, key, *out);
  return VD_OK;
}

void vd_store_invalidate(vd_ctx *ctx, const char *url) { vd_cache_drop(ctx->cache, url); }

void vd_store_config_changed(vd_ctx *ctx) {
  /* curl handles read the settings when a transfer is set up; nothing cached to reset */
  (void)ctx;
}

void vd_store_shutdown(vd_ctx *ctx) {
  if (ctx->http) vd_http_free(ctx->http);
  ctx->http = NULL;
}
