/* URL helpers every backend shares, at the bottom of the store: the one table of which
 * scheme is which backend and what it can do (which code serves it is store.c's),
 * file:// paths, percent-encoding, redaction for messages, and the allowed_hosts check.
 * They know no backend's code, so every backend can call them. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "backend.h"

/* Length of url's scheme when it has one ("scheme://"), else 0. */
size_t vd_url_scheme_len(const char *url) {
  const char *p = url;
  while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '+')
    p++;
  return p > url && p[0] == ':' && p[1] == '/' && p[2] == '/' ? (size_t)(p - url) : 0;
}

/* The one place where a scheme picks a backend, and what that backend can do. A path
 * (no scheme) is a local file; an unknown scheme is no backend (vd_url_check refuses it
 * before any request). */
static const struct {
  const char *scheme;
  vd_backend_id id;
  unsigned caps;
  const char *label; /* in messages: "<label> URLs are read-only" */
} schemes[] = {
    {"file", VD_BE_FILE, VD_CAP_LOCAL | VD_CAP_WRITE | VD_CAP_LIST, "local file"},
    {"http", VD_BE_HTTP, VD_CAP_QUERY, "http(s)"},
    {"https", VD_BE_HTTP, VD_CAP_QUERY, "http(s)"},
    {"s3", VD_BE_S3, VD_CAP_LIST | VD_CAP_WRITE, "s3"},
    {"az", VD_BE_AZ, VD_CAP_LIST | VD_CAP_WRITE | VD_CAP_QUERY, "az"},
};

static int row_of(const char *url) { /* -1: no backend */
  size_t n = vd_url_scheme_len(url);
  if (!n) return 0; /* a path */
  for (size_t i = 0; i < sizeof schemes / sizeof *schemes; i++)
    if (strlen(schemes[i].scheme) == n && strncasecmp(url, schemes[i].scheme, n) == 0) return (int)i;
  return -1;
}

int vd_url_known(const char *url) { return row_of(url) >= 0; }

unsigned vd_url_caps(const char *url) {
  int r = row_of(url);
  return r < 0 ? 0 : schemes[r].caps;
}

const char *vd_url_label(const char *url) {
  int r = row_of(url);
  return r < 0 ? "unknown" : schemes[r].label;
}

vd_backend_id vd_url_backend(const char *url) {
  int r = row_of(url);
  return r < 0 ? VD_BE_FILE : schemes[r].id; /* unknown schemes are refused before any request */
}

int vd_store_is_local(const char *url) { return (vd_url_caps(url) & VD_CAP_LOCAL) != 0; }
int vd_url_relative(const char *url) { return !vd_url_scheme_len(url) && url[0] != '/'; }

/* "file:NAME", "file:/p": no "//", so not a file URL but a path beginning "file:" */
static int file_without_slashes(const char *url) {
  return !vd_url_scheme_len(url) && strncasecmp(url, "file:", 5) == 0;
}
int vd_store_is_remote(const char *url) { return vd_url_known(url) && !(vd_url_caps(url) & VD_CAP_LOCAL); }
int vd_store_can_write(const char *url) { return (vd_url_caps(url) & VD_CAP_WRITE) != 0; }
int vd_store_on_http(const char *url) { return vd_url_known(url) && vd_url_backend(url) != VD_BE_FILE; }

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

/* Written by hand rather than with curl's URL parser: a URL that reaches an error is
 * often malformed, and it must be redacted all the same. */
void vd_url_redact(const char *url, char *out, size_t n) {
  if (!vd_url_scheme_len(url)) {
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

int vd_url_host_listed(vd_ctx *ctx, const char *target) {
  char ts[8], th[256];
  long tp;
  return !origin_of(target, ts, th, sizeof th, &tp) && host_listed(ctx->cfg.allowed_hosts, th, tp);
}

vd_code vd_url_check(const char *url, vd_err *err) {
  if (!*url) return vd_fail(err, VD_INVALID, "empty URL");
  char where[600];
  vd_url_redact(url, where, sizeof where);
  if (strncasecmp(url, "file://", 7) == 0 && url[7] != '/' && strncasecmp(url + 7, "localhost/", 10) != 0)
    return vd_fail(err, VD_UNSUPPORTED, "%s: file URLs name no host (use file:///path)", where);
  if (file_without_slashes(url))
    return vd_fail(err, VD_UNSUPPORTED, "%s: not a file URL (those begin file://) but a relative path that looks like "
                   "one, refused (use file:///path, or ./ before a file's name)", where);
  if (vd_url_known(url)) return VD_OK;
  return vd_fail(err, VD_UNSUPPORTED, "%s: unsupported URL scheme (use a path, file://, http://, https://, s3:// or az://)", where);
}
