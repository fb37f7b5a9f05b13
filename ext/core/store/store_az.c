/* az://container/blob backend: every request goes through the http transport
 * (store_http.c) with a hook that maps the az:// URL to the blob's URL (azure_auth.h:
 * the account's endpoint or a connection string's BlobEndpoint, container, encoded
 * name, a SAS appended) and signs it with Shared Key (azure_sign.h) over exactly the
 * headers handed to libcurl, so what is signed is what is sent: x-ms-date, x-ms-version,
 * Range (never a suffix range), and for a PUT Content-Length, Content-Type,
 * x-ms-blob-type, x-ms-meta-*, If-Match / If-None-Match. With a SAS (in the URL or the
 * settings) nothing is signed: the query is the credential.
 *
 * Credentials: vdsql_config's azure_* keys, else AZURE_STORAGE_* (azure_auth.h), read
 * when a request is made. The service's error code comes in the x-ms-error-code header
 * (HEAD answers have no body) and is worded once, by vd_az_fail (azure_xml.h).
 *
 * An az:// URL is a URL: its blob name may be percent-encoded (vd_url_join encodes
 * names), so it is decoded once, as for s3://. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include <openssl/rand.h>

#include "azure_auth.h"
#include "azure_batch.h"
#include "azure_sign.h"
#include "azure_xml.h"
#include "backend.h"

#define MAX_RESULTS 5000 /* what one List Blobs page may hold */
#define MAX_HDRS 48

/* Header lines as given to curl and to the signer: one array, so both see the same. */
typedef struct hdrs {
  char *line[MAX_HDRS];
  int n;
} hdrs;

static void hdrs_free(hdrs *h) {
  for (int i = 0; i < h->n; i++) free(h->line[i]);
  h->n = 0;
}

static int add(hdrs *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add(hdrs *h, const char *fmt, ...) {
  if (h->n == MAX_HDRS) return -1;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (!s) return -1;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  h->line[h->n++] = s;
  return 0;
}

/* The headers of a request; -1 when out of memory or too many (metadata is bounded
 * before: check_meta). */
static int build_headers(hdrs *h, const char *method, const char *range, const vd_putreq *put, const char *copy_src) {
  char date[32];
  vd_az_date(time(NULL), date);
  if (add(h, "x-ms-date: %s", date) || add(h, "x-ms-version: %s", VD_AZ_VERSION)) return -1;
  if (range && add(h, "Range: bytes=%s", range)) return -1;
  if (put && put->content_type && strcmp(method, "POST") == 0) { /* a batch: the body and its type, signed */
    if (add(h, "Content-Length: %zu", put->len) || add(h, "Content-Type: %s", put->content_type) || add(h, "Expect:"))
      return -1;
  } else if (put && copy_src && strcmp(method, "PUT") == 0) { /* Copy Blob: metadata comes from the source */
    if (add(h, "Content-Length: 0") || add(h, "x-ms-copy-source: %s", copy_src) || add(h, "Expect:")) return -1;
  } else if (put && strcmp(method, "PUT") == 0) {
    /* explicit, so the signed values are the sent ones (curl would add its own
     * Content-Length; Expect: 100-continue is removed, it only costs a round trip) */
    if (add(h, "Content-Length: %zu", put->len) || add(h, "Content-Type: application/octet-stream") ||
        add(h, "x-ms-blob-type: BlockBlob") || add(h, "Expect:"))
      return -1;
    for (int i = 0; i < put->nmeta; i++)
      if (add(h, "x-ms-meta-%s: %s", put->meta[i].key, put->meta[i].value)) return -1;
    if (put->if_match && add(h, "If-Match: %s", put->if_match)) return -1; /* quoted, as HEAD gives it */
    if (put->if_none_match && add(h, "If-None-Match: *")) return -1;
  }
  return 0;
}

/* Does the URL's query hold a SAS signature (a "sig" parameter)? */
static int has_sig(const char *url) {
  const char *q = strchr(url, '?');
  for (const char *p = q; p && *p; p = strchr(p, '&')) {
    p++;
    if (strncmp(p, "sig=", 4) == 0) return 1;
  }
  return 0;
}

static vd_code prepare(vd_ctx *ctx, vd_curl *curl, const char *url, const char *method, const char *range,
                       const vd_putreq *put, vd_curl_slist **out, vd_err *err) {
  char where[600];
  vd_url_redact(url, where, sizeof where);
  vd_az_cred c;
  vd_code rc = vd_az_cred_load(&ctx->cfg, &c, err);
  if (rc) {
    vd_err_prefix(err, "%s", where);
    return rc;
  }
  char *real = NULL, *auth = NULL;
  hdrs h = {0};
  /* an az:// URL, or a List Blobs URL this backend built itself (az_list) */
  if (strncasecmp(url, "az://", 5) == 0)
    rc = vd_az_blob_url(&c, url, 1, &real, err);
  else if (!(real = strdup(url)))
    rc = vd_nomem(err);
  char *src = NULL; /* a copy's source blob, on the same account (Shared Key authorizes it there) */
  if (!rc && put && put->copy_from) rc = vd_az_blob_url(&c, put->copy_from, 1, &src, err);
  if (!rc && build_headers(&h, method, range, put, src)) rc = vd_nomem(err);
  free(src);
  /* Shared Key when there is a key (a connection string with both uses it), unless the
   * URL carries a SAS of its own (the service refuses a request with both); else the
   * SAS already in the URL */
  if (!rc && c.keylen && !has_sig(real)) {
    rc = vd_az_sign(c.account, c.key, c.keylen, method, real, (const char *const *)h.line, h.n, &auth, err);
    if (!rc && add(&h, "Authorization: %s", auth)) rc = vd_nomem(err);
    if (rc && rc != VD_NOMEM) vd_err_prefix(err, "%s", where);
  }
  struct curl_slist *l = NULL;
  for (int i = 0; !rc && i < h.n; i++) {
    struct curl_slist *t = curl_slist_append(l, h.line[i]);
    if (!t) {
      rc = vd_nomem(err);
      break;
    }
    l = t;
  }
  if (!rc) {
    curl_easy_setopt(curl, CURLOPT_URL, real);
    *out = l;
  } else {
    curl_slist_free_all(l);
  }
  if (auth) {
    memset(auth, 0, strlen(auth));
    free(auth);
  }
  hdrs_free(&h);
  free(real);
  vd_az_cred_clear(&c);
  return rc;
}

static int error_code(const char *hdr, const char *body, size_t len, char *out, size_t n) {
  char code[64];
  vd_az_error_code(hdr, body, len, code);
  snprintf(out, n, "%s", code);
  return code[0] ? 0 : -1;
}

/* Deleting a missing blob is no error (backend.h); a missing container is. */
static vd_code answer(vd_err *err, const char *where, const char *method, long status, const char *code) {
  if (status == 404 && strcmp(method, "DELETE") == 0 && strcmp(code, "BlobNotFound") == 0) return VD_OK;
  return vd_az_fail(err, where, status, code);
}

static vd_code check_meta(const vd_putreq *p, const char *where, vd_err *err);
static const vd_http_hook az_hook = {VD_BE_AZ, prepare, 1, "x-ms-error-code", error_code, answer, check_meta};

/* Metadata goes into headers (x-ms-meta-<name>): Azure takes names that are C#
 * identifiers (letters, digits, '_', not starting with a digit) and ASCII values
 * without line breaks (nothing can add a header). */
/* The order of a metadata name's byte among the others where Azurite (and Azure's
 * JavaScript SDK: String.localeCompare) sort the canonical headers: '_' before digits
 * before letters, case ignored; byte order puts digits before '_'. */
static int locale_rank(unsigned char c) {
  if (c == '_') return 0;
  if (c >= '0' && c <= '9') return 1 + (c - '0');
  if (c >= 'A' && c <= 'Z') c += 32;
  return 11 + (c - 'a');
}

static int sign(int v) { return (v > 0) - (v < 0); }

/* Do the two orders of names a and b (lower-cased, as signed) disagree? */
static int orders_differ(const char *a, const char *b) {
  size_t i = 0;
  while (a[i] && b[i] && (a[i] | 32) == (b[i] | 32)) i++;
  if (!a[i] || !b[i]) return 0; /* one is a prefix of the other: shorter first in both */
  unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
  if (x >= 'A' && x <= 'Z') x += 32;
  if (y >= 'A' && y <= 'Z') y += 32;
  return sign((int)x - (int)y) != sign(locale_rank(x) - locale_rank(y));
}

static vd_code check_meta(const vd_putreq *p, const char *where, vd_err *err) {
  if (p->nmeta > MAX_HDRS - 10) return vd_fail(err, VD_INVALID, "%s: more than %d metadata entries", where, MAX_HDRS - 10);
  for (int i = 0; i < p->nmeta; i++) {
    const char *k = p->meta[i].key, *v = p->meta[i].value;
    if (!*k) return vd_fail(err, VD_INVALID, "%s: an empty metadata name", where);
    for (const char *c = k; *c; c++)
      if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9' && c > k) || *c == '_'))
        return vd_fail(err, VD_INVALID, "%s: metadata name '%s': Azure takes letters, digits and '_', not first a digit",
                       where, k);
    for (const char *c = v; *c; c++)
      if (*c < 0x20 || *c > 0x7e)
        return vd_fail(err, VD_INVALID, "%s: metadata '%s': Azure takes printable ASCII values", where, k);
    /* Shared Key signs the headers sorted by name, and signers disagree on where '_'
     * goes (byte order, as the spec's recipe; Azurite: before digits): names whose
     * order depends on it would fail on one service or another */
    for (int j = 0; j < i; j++)
      if (orders_differ(k, p->meta[j].key))
        return vd_fail(err, VD_INVALID,
                       "%s: metadata names '%s' and '%s' sort differently under Azure signers' rules ('_' against a "
                       "digit); rename one", where, p->meta[j].key, k);
  }
  return VD_OK;
}

/* One List Blobs page: the blobs whose names start with the URL's (decoded) name,
 * keys made relative to its part up to the last '/'. */
static vd_code az_list(vd_ctx *ctx, const char *url, const char *token, int max, int flags, vd_listing *out,
                       vd_err *err) {
  char where[600];
  vd_url_redact(url, where, sizeof where);
  vd_az_cred c;
  char *lu = NULL;
  vd_code rc = vd_az_cred_load(&ctx->cfg, &c, err);
  if (rc) {
    vd_err_prefix(err, "%s", where);
    return rc;
  }
  rc = vd_az_list_url(&c, url, 1, flags & VD_LIST_FOLDER, token, max < MAX_RESULTS ? max : MAX_RESULTS, &lu, err);
  vd_az_cred_clear(&c);
  if (rc) return rc;
  /* the prefix as the service stores names (decoded); dir: up to its last '/' */
  const char *k = strstr(url, "://") + 3;
  k += strcspn(k, "/?");
  if (*k == '/') k++;
  size_t kn = strcspn(k, "?");
  char *prefix = malloc(kn + 1);
  if (!prefix) {
    free(lu);
    return vd_nomem(err);
  }
  size_t dlen = vd_pct_decode(prefix, k, kn);
  while (dlen > 0 && prefix[dlen - 1] != '/') dlen--;
  vd_getreq r = {0};
  r.url = lu;
  r.len = -1;
  rc = vd_http_get_listing(ctx, &r, &az_hook, where, err);
  if (!rc) {
    vd_az_list l;
    rc = vd_az_parse_list(where, r.body.data ? (const char *)r.body.data : "", r.body.len, &l, err);
    if (!rc && l.n && !(out->ent = calloc((size_t)l.n, sizeof *out->ent))) rc = vd_nomem(err);
    for (int i = 0; !rc && i < l.n; i++) {
      vd_az_blob *b = &l.blobs[i];
      if (strncmp(b->name, prefix, dlen) != 0) {
        rc = vd_fail(err, VD_IO, "%s: the listing holds a name outside the prefix asked for", where);
        break;
      }
      vd_listent *e = &out->ent[out->n];
      if (!(e->key = strdup(b->name + dlen))) {
        rc = vd_nomem(err);
        break;
      }
      e->info = b->info; /* taken over: etag quoted, metadata names lower-case */
      memset(&b->info, 0, sizeof b->info);
      e->has_meta = 1; /* include=metadata: the listing gives it */
      out->n++;
    }
    for (int i = 0; !rc && i < l.nprefixes; i++) {
      if (strlen(l.prefixes[i]) <= dlen || strncmp(l.prefixes[i], prefix, dlen) != 0) {
        rc = vd_fail(err, VD_IO, "%s: the listing holds a name outside the prefix asked for", where);
        break;
      }
      if (!out->prefixes && !(out->prefixes = calloc((size_t)l.nprefixes, sizeof *out->prefixes))) {
        rc = vd_nomem(err);
        break;
      }
      if (!(out->prefixes[out->nprefixes] = strdup(l.prefixes[i] + dlen))) {
        rc = vd_nomem(err);
        break;
      }
      out->nprefixes++;
    }
    if (!rc) {
      out->next = l.next_marker;
      l.next_marker = NULL;
    }
    vd_az_list_free(&l);
  }
  vd_buf_free(&r.body);
  vd_objinfo_free(&r.info);
  free(prefix);
  free(lu);
  return rc;
}

/* The Blob Batch URL of the container of az_url, with that URL's own query (a SAS) or
 * the settings' SAS: "<container URL>?restype=container&comp=batch[&sas]". */
static vd_code batch_url(const vd_az_cred *c, const char *az_url, char **out, vd_err *err) {
  const char *b = az_url + 5;
  size_t bn = strcspn(b, "/?#");
  const char *q = strchr(b, '?');
  size_t qn = q ? strcspn(q, "#") : 0;
  char *cu = malloc(bn + qn + 8), *real = NULL;
  if (!cu) return vd_nomem(err);
  sprintf(cu, "az://%.*s%.*s", (int)bn, b, (int)qn, q ? q : "");
  vd_code rc = vd_az_blob_url(c, cu, 1, &real, err);
  free(cu);
  if (rc) return rc;
  char *qs = strchr(real, '?');
  size_t n = strlen(real);
  if (!(*out = malloc(n + 40))) {
    free(real);
    return vd_nomem(err);
  }
  if (qs) /* the batch's own parameters first, the SAS after */
    sprintf(*out, "%.*s?restype=container&comp=batch&%s", (int)(qs - real), real, qs + 1);
  else
    sprintf(*out, "%s?restype=container&comp=batch", real);
  free(real);
  return VD_OK;
}

/* One subrequest of a batch: its DELETE, signed as that request alone would be (Shared
 * Key), or carrying the URL's SAS; appended to body as part id. */
static vd_code batch_part(const vd_az_cred *c, const char *real, const char *boundary, int id, vd_buf *body, vd_err *err) {
  char date[32], dh[64];
  vd_az_date(time(NULL), date);
  snprintf(dh, sizeof dh, "x-ms-date: %s", date);
  const char *h[3] = {dh, "Content-Length: 0", NULL};
  char *auth = NULL, *ah = NULL;
  int nh = 2;
  if (c->keylen && !has_sig(real)) {
    vd_code rc = vd_az_sign(c->account, c->key, c->keylen, "DELETE", real, h, nh, &auth, err);
    if (rc) return rc;
    if (!(ah = malloc(strlen(auth) + 16))) {
      free(auth);
      return vd_nomem(err);
    }
    sprintf(ah, "Authorization: %s", auth);
    h[nh++] = ah;
  }
  const char *path = strstr(real, "://");
  path = path ? path + 3 + strcspn(path + 3, "/") : real; /* the request line's target: path and query */
  int bad = vd_az_batch_part(body, boundary, id, path, h, nh);
  if (auth) memset(auth, 0, strlen(auth));
  if (ah) memset(ah, 0, strlen(ah));
  free(auth);
  free(ah);
  return bad ? vd_nomem(err) : VD_OK;
}

/* A Blob Batch answer read for batch b (its Content-IDs are its objects' places). */
static void read_batch(const char *body, size_t len, const vd_batch *b, const char *const *where, void *arg,
                       vd_code *rc, vd_err *errs) {
  (void)arg;
  vd_az_parse_batch(body, len, b->m, where, rc, errs);
}

/* Deletes in Blob Batches of up to VD_AZ_BATCH_MAX blobs of one container (and one SAS),
 * the batches in parallel; a URL naming no blob goes alone. A failed batch fails each of
 * its blobs, each message naming its own. */
static void az_del_many(vd_ctx *ctx, vd_delreq *d, int n) {
  vd_az_cred c;
  vd_err cerr;
  char **real = calloc(n ? (size_t)n : 1, sizeof *real), **burl = calloc(n ? (size_t)n : 1, sizeof *burl),
       **where = calloc(n ? (size_t)n : 1, sizeof *where);
  int *order = malloc((n ? (size_t)n : 1) * sizeof *order), *done = calloc(n ? (size_t)n : 1, sizeof *done);
  vd_batch *bs = calloc(n ? (size_t)n : 1, sizeof *bs);
  int nb = 0, have_c = 0;
  if (!real || !burl || !where || !order || !done || !bs) {
    for (int i = 0; i < n; i++) d[i].rc = vd_nomem(&d[i].err);
    goto out;
  }
  have_c = vd_az_cred_load(&ctx->cfg, &c, &cerr) == VD_OK;
  for (int i = 0; i < n; i++) {
    char w[600];
    vd_url_redact(d[i].url, w, sizeof w);
    d[i].rc = VD_OK;
    if (!(where[i] = strdup(w))) {
      d[i].rc = vd_nomem(&d[i].err);
      done[i] = 1;
    } else if (!have_c) {
      d[i].err = cerr;
      d[i].rc = vd_err_prefix(&d[i].err, "%s", w);
      done[i] = 1;
    } else {
      const char *k = d[i].url + 5 + strcspn(d[i].url + 5, "/?#");
      if (*k != '/' || !k[1] || k[1] == '?' || k[1] == '#') /* no blob named: alone, as vd_delete words it */
        done[i] = 2;
      else if ((d[i].rc = vd_az_blob_url(&c, d[i].url, 1, &real[i], &d[i].err)) ||
               (d[i].rc = batch_url(&c, d[i].url, &burl[i], &d[i].err)))
        done[i] = 1;
    }
  }
  for (int g = 0; g < n; g++) { /* each container's blobs, cut into batches */
    if (done[g]) continue;
    int m = 0;
    for (int i = g; i < n; i++)
      if (!done[i] && strcmp(burl[i], burl[g]) == 0) {
        order[m++] = i;
        done[i] = 3;
      }
    for (int at = 0; at < m; at += VD_AZ_BATCH_MAX) {
      vd_batch *t = &bs[nb];
      t->m = m - at < VD_AZ_BATCH_MAX ? m - at : VD_AZ_BATCH_MAX;
      unsigned char rnd[12];
      char boundary[40];
      vd_err e;
      vd_code rc = RAND_bytes(rnd, sizeof rnd) == 1 ? VD_OK : vd_fail(&e, VD_IO, "no random bytes for a batch boundary");
      strcpy(boundary, "batch_");
      for (int j = 0; j < (int)sizeof rnd; j++) sprintf(boundary + 6 + 2 * j, "%02x", rnd[j]);
      if (!rc && !(t->idx = malloc((size_t)t->m * sizeof *t->idx))) rc = vd_nomem(&e);
      for (int j = 0; !rc && j < t->m; j++)
        rc = batch_part(&c, real[t->idx[j] = order[at + j]], boundary, j, &t->body, &e);
      if (!rc && vd_az_batch_end(&t->body, boundary)) rc = vd_nomem(&e);
      if (rc) {
        for (int j = at; j < at + t->m; j++) {
          d[order[j]].err = e;
          d[order[j]].rc = vd_err_prefix(&d[order[j]].err, "%s", where[order[j]]);
        }
        free(t->idx);
        vd_buf_free(&t->body);
        memset(t, 0, sizeof *t);
        continue;
      }
      snprintf(t->type, sizeof t->type, "multipart/mixed; boundary=%s", boundary);
      t->put.url = burl[order[at]];
      t->put.body = t->body.data;
      t->put.len = t->body.len;
      t->put.content_type = t->type;
      nb++;
    }
  }
  vd_http_send_batches(ctx, bs, nb, &az_hook, read_batch, NULL, d, where);
  for (int i = 0; i < n; i++) /* the URLs no batch could carry */
    if (done && done[i] == 2) d[i].rc = vd_http_del(ctx, d[i].url, &az_hook, &d[i].err);
out:
  for (int k = 0; bs && k < n; k++) {
    free(bs[k].idx);
    vd_buf_free(&bs[k].body);
  }
  for (int i = 0; i < n; i++) {
    if (real) free(real[i]);
    if (burl) free(burl[i]);
    if (where) free(where[i]);
  }
  if (have_c) vd_az_cred_clear(&c);
  free(real), free(burl), free(where), free(order), free(done), free(bs);
}

VD_HTTP_BACKEND(az, &az_hook)
const vd_backend_ops vd_az_ops = {.id = VD_BE_AZ,
                                  .get_many = az_get_many,
                                  .head = az_head,
                                  .put = az_put,
                                  .list = az_list,
                                  .del = az_del,
                                  .hook = &az_hook,
                                  .put_many = az_put_many,
                                  .del_many = az_del_many};
