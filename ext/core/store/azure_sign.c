/* Azure Shared Key signing (see azure_sign.h): the string-to-sign built from the request,
 * HMAC-SHA256 with OpenSSL, base64. Nothing here shows the key or the signature in an
 * error. */
#include "azure_sign.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/base64.h"
#include "vd_buf.h"
#include "store.h"

void vd_az_date(time_t t, char out[32]) {
  /* strftime's %a and %b follow the locale; the service wants the English names */
  static const char *const wd[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char *const mo[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  struct tm tm;
  gmtime_r(&t, &tm);
  snprintf(out, 32, "%s, %02d %s %04d %02d:%02d:%02d GMT", wd[tm.tm_wday % 7], tm.tm_mday, mo[tm.tm_mon % 12],
           tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* The standard headers in the order of their slots in the string-to-sign. */
static const char *const slots[] = {"Content-Encoding", "Content-Language", "Content-Length", "Content-MD5",
                                    "Content-Type",     "Date",             "If-Modified-Since", "If-Match",
                                    "If-None-Match",    "If-Unmodified-Since", "Range"};
#define NSLOTS (sizeof slots / sizeof *slots)

typedef struct {
  char *name, *value; /* name lower-cased for x-ms-*, value trimmed */
} pair;

static int cmp_pair(const void *a, const void *b) {
  const pair *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : strcmp(x->value, y->value);
}

static void free_pairs(pair *p, int n) {
  for (int i = 0; i < n; i++) {
    free(p[i].name);
    free(p[i].value);
  }
  free(p);
}

/* The service compares decoded query names and values; a '%' not followed by two hex
 * digits stays as it is (the service does the same rather than fail). */
static char *pct_decode(const char *p, size_t n, int lower) {
  char *o = malloc(n + 1);
  if (!o) return NULL;
  vd_pct_decode(o, p, n);
  if (lower)
    for (char *c = o; *c; c++)
      if (*c >= 'A' && *c <= 'Z') *c += 32;
  return o;
}

vd_code vd_az_string_to_sign(const char *account, const char *verb, const char *url, const char *const *headers,
                             int nheaders, char **sts, vd_err *err) {
  *sts = NULL;
  const char *slot[NSLOTS] = {0};
  size_t slotl[NSLOTS] = {0};
  pair *xms = NULL, *qp = NULL;
  int nx = 0, nq = 0, have_xms_date = 0;
  vd_buf b = {0};
  vd_code rc = VD_OK;

  xms = calloc((size_t)nheaders + 1, sizeof *xms);
  if (!xms) return vd_nomem(err);
  for (int i = 0; i < nheaders; i++) {
    const char *h = headers[i], *colon = strchr(h, ':');
    if (!colon || colon == h) {
      rc = vd_fail(err, VD_INVALID, "Azure signing: a header without a name and ':'");
      goto out;
    }
    size_t nl = (size_t)(colon - h);
    while (nl && (h[nl - 1] == ' ' || h[nl - 1] == '\t')) nl--;
    const char *v = colon + 1, *ve = v + strlen(v);
    if (strpbrk(v, "\r\n")) {
      rc = vd_fail(err, VD_INVALID, "Azure signing: header %.*s has a line break in its value", (int)(nl > 64 ? 64 : nl), h);
      goto out;
    }
    while (*v == ' ' || *v == '\t') v++;
    while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
    if (v == ve) continue; /* "Name:" removes the header in libcurl: not sent, not signed */
    if (nl > 5 && strncasecmp(h, "x-ms-", 5) == 0) {
      xms[nx].name = strndup(h, nl);
      xms[nx].value = strndup(v, (size_t)(ve - v));
      if (!xms[nx].name || !xms[nx].value) {
        nx++;
        rc = vd_nomem(err);
        goto out;
      }
      for (char *c = xms[nx].name; *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c += 32;
      for (int k = 0; k < nx; k++)
        if (strcmp(xms[k].name, xms[nx].name) == 0) {
          rc = vd_fail(err, VD_INVALID, "Azure signing: header %s given twice", xms[nx].name);
          nx++;
          goto out;
        }
      if (strcmp(xms[nx].name, "x-ms-date") == 0) have_xms_date = 1;
      nx++;
      continue;
    }
    for (size_t s = 0; s < NSLOTS; s++)
      if (strlen(slots[s]) == nl && strncasecmp(slots[s], h, nl) == 0) {
        if (slot[s]) {
          rc = vd_fail(err, VD_INVALID, "Azure signing: header %s given twice", slots[s]);
          goto out;
        }
        slot[s] = v;
        slotl[s] = (size_t)(ve - v);
      }
    /* any other header (Accept, Expect, User-Agent, Authorization) is not signed */
  }
  /* Content-Length is the empty string when 0 (version 2015-02-21 and later) */
  if (slot[2] && slotl[2] == 1 && slot[2][0] == '0') slotl[2] = 0;
  /* Date is signed empty when x-ms-date is sent: the service uses x-ms-date then */
  if (have_xms_date) slotl[5] = 0;
  qsort(xms, (size_t)nx, sizeof *xms, cmp_pair);

  /* canonicalized resource: "/" account, then the URL's path as sent (still encoded) */
  const char *p = strstr(url, "://");
  p = p ? p + 3 : url;
  const char *path = p + strcspn(p, "/?#"), *q = strchr(path, '?');
  size_t pathl = q ? (size_t)(q - path) : strcspn(path, "#");
  if (vd_buf_append(&b, verb, strlen(verb))) goto nomem;
  for (size_t s = 0; s < NSLOTS; s++)
    if (vd_buf_append(&b, "\n", 1) || vd_buf_append(&b, slot[s] ? slot[s] : "", slot[s] ? slotl[s] : 0)) goto nomem;
  for (int i = 0; i < nx; i++)
    if (vd_buf_append(&b, "\n", 1) || vd_buf_append(&b, xms[i].name, strlen(xms[i].name)) || vd_buf_append(&b, ":", 1) ||
        vd_buf_append(&b, xms[i].value, strlen(xms[i].value)))
      goto nomem;
  if (vd_buf_append(&b, "\n/", 2) || vd_buf_append(&b, account, strlen(account)) ||
      (pathl ? vd_buf_append(&b, path, pathl) : vd_buf_append(&b, "/", 1)))
    goto nomem;

  /* query parameters: decoded, names lower-cased, sorted by name; the values of a name
   * given more than once sorted and joined with ',' */
  if (q) {
    const char *qe = q + 1 + strcspn(q + 1, "#");
    size_t cap = 1;
    for (const char *c = q + 1; c < qe; c++) cap += *c == '&';
    qp = calloc(cap, sizeof *qp);
    if (!qp) goto nomem;
    for (const char *c = q + 1; c < qe;) {
      const char *amp = memchr(c, '&', (size_t)(qe - c)), *pe = amp ? amp : qe;
      if (pe > c) {
        const char *eq = memchr(c, '=', (size_t)(pe - c));
        qp[nq].name = pct_decode(c, (size_t)((eq ? eq : pe) - c), 1);
        qp[nq].value = eq ? pct_decode(eq + 1, (size_t)(pe - eq - 1), 0) : strdup("");
        nq++;
        if (!qp[nq - 1].name || !qp[nq - 1].value) goto nomem;
      }
      c = pe + 1;
    }
    qsort(qp, (size_t)nq, sizeof *qp, cmp_pair);
    for (int i = 0; i < nq; i++) {
      if (i && strcmp(qp[i].name, qp[i - 1].name) == 0) {
        if (vd_buf_append(&b, ",", 1)) goto nomem;
      } else if (vd_buf_append(&b, "\n", 1) || vd_buf_append(&b, qp[i].name, strlen(qp[i].name)) ||
                 vd_buf_append(&b, ":", 1)) {
        goto nomem;
      }
      if (vd_buf_append(&b, qp[i].value, strlen(qp[i].value))) goto nomem;
    }
  }
  if (vd_buf_append(&b, "", 1)) goto nomem;
  *sts = (char *)b.data;
  b.data = NULL;
  goto out;
nomem:
  rc = vd_nomem(err);
out:
  vd_buf_free(&b);
  free_pairs(xms, nx);
  free_pairs(qp, nq);
  return rc;
}

vd_code vd_az_sign(const char *account, const unsigned char *key, size_t keylen, const char *verb, const char *url,
                   const char *const *headers, int nheaders, char **auth, vd_err *err) {
  *auth = NULL;
  if (!keylen) return vd_fail(err, VD_INVALID, "Azure signing: no account key");
  char *sts;
  vd_code rc = vd_az_string_to_sign(account, verb, url, headers, nheaders, &sts, err);
  if (rc) return rc;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int macl = 0;
  if (!HMAC(EVP_sha256(), key, (int)keylen, (const unsigned char *)sts, strlen(sts), mac, &macl)) {
    free(sts);
    return vd_fail(err, VD_ERROR, "Azure signing: OpenSSL's HMAC-SHA256 failed");
  }
  free(sts);
  char *sig = vd_base64_encode(mac, macl);
  OPENSSL_cleanse(mac, sizeof mac);
  if (!sig) return vd_nomem(err);
  size_t n = strlen("SharedKey ") + strlen(account) + 1 + strlen(sig) + 1;
  *auth = malloc(n);
  if (*auth) snprintf(*auth, n, "SharedKey %s:%s", account, sig);
  free(sig);
  return *auth ? VD_OK : vd_nomem(err);
}
