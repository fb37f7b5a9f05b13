/* Azure Blob Batch (POST ?restype=container&comp=batch): the multipart/mixed body of
 * DELETE subrequests, and the reading of the multipart answer, one subresponse per
 * Content-ID (../shared/spec/object-stores.md). Pure, so the answer's reader is fuzzed
 * (tests/fuzz/fuzz_azbatch.c). The answer is a server's: every length is bounded by the
 * body, nothing is trusted to be in order or present. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure_batch.h"
#include "azure_xml.h"

int vd_az_batch_part(vd_buf *out, const char *boundary, int id, const char *target, const char *const *hdrs,
                     int nh) {
  char head[256];
  int n = snprintf(head, sizeof head,
                   "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: %d\r\n\r\n"
                   "DELETE ",
                   boundary, id);
  if (n < 0 || (size_t)n >= sizeof head || vd_buf_append(out, head, (size_t)n) ||
      vd_buf_append(out, target, strlen(target)) || vd_buf_append(out, " HTTP/1.1\r\n", 11))
    return -1;
  for (int i = 0; i < nh; i++)
    if (vd_buf_append(out, hdrs[i], strlen(hdrs[i])) || vd_buf_append(out, "\r\n", 2)) return -1;
  return vd_buf_append(out, "\r\n", 2);
}

int vd_az_batch_end(vd_buf *out, const char *boundary) {
  return vd_buf_append(out, "--", 2) || vd_buf_append(out, boundary, strlen(boundary)) ||
         vd_buf_append(out, "--\r\n", 4);
}

/* The line at p (up to CRLF or LF, not past e): its length; *next after its end. */
static size_t line_at(const char *p, const char *e, const char **next) {
  const char *nl = memchr(p, '\n', (size_t)(e - p));
  const char *end = nl ? nl : e;
  *next = nl ? nl + 1 : e;
  if (end > p && end[-1] == '\r') end--;
  return (size_t)(end - p);
}

/* A header line "name: value": the value (trimmed) when the name matches. */
static int header(const char *l, size_t n, const char *name, const char **v, size_t *vn) {
  size_t k = strlen(name);
  if (n <= k || strncasecmp(l, name, k) != 0 || l[k] != ':') return 0;
  const char *a = l + k + 1, *z = l + n;
  while (a < z && (*a == ' ' || *a == '\t')) a++;
  while (z > a && (z[-1] == ' ' || z[-1] == '\t')) z--;
  *v = a;
  *vn = (size_t)(z - a);
  return 1;
}

/* A whole non-negative decimal number below 10^9 in [p, p + n); -1 otherwise. */
static long number(const char *p, size_t n) {
  if (!n || n > 9) return -1;
  long v = 0;
  for (size_t i = 0; i < n; i++) {
    if (p[i] < '0' || p[i] > '9') return -1;
    v = v * 10 + (p[i] - '0');
  }
  return v;
}

/* One subresponse, part [p, e): its Content-ID (-1 none), status and error code. 0 when
 * it holds an HTTP status line after its own headers. */
static int read_part(const char *p, const char *e, long *id, long *status, char code[64]) {
  const char *v, *l;
  size_t vn, n;
  *id = -1;
  *status = 0;
  code[0] = 0;
  do { /* the part's own headers, up to a blank line */
    if (p >= e) return -1;
    l = p;
    n = line_at(p, e, &p);
    if (header(l, n, "Content-ID", &v, &vn)) *id = number(v, vn);
  } while (n);
  l = p;
  n = line_at(p, e, &p); /* HTTP/1.1 202 Accepted */
  if (n < 12 || strncmp(l, "HTTP/", 5) != 0) return -1;
  const char *sp = memchr(l, ' ', n);
  if (!sp || l + n - sp < 4 || (*status = number(sp + 1, 3)) < 100) return -1;
  while (p < e) { /* its headers: the error code is all that is wanted */
    l = p;
    n = line_at(p, e, &p);
    if (!n) break;
    if (header(l, n, "x-ms-error-code", &v, &vn)) {
      size_t o = 0; /* letters and digits only: nothing else a server chose reaches a message */
      for (size_t i = 0; i < vn && o < 63; i++)
        if ((v[i] >= 'A' && v[i] <= 'Z') || (v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9')) code[o++] = v[i];
      code[o] = 0;
    }
  }
  return 0;
}

/* Where the next delimiter line "--boundary" starts in [p, e) (at the start of a line),
 * NULL when there is none. */
static const char *next_delim(const char *p, const char *e, const char *b, size_t bn) {
  for (const char *q = p; q + 2 + bn <= e; q++) {
    q = memchr(q, '-', (size_t)(e - q));
    if (!q || q + 2 + bn > e) return NULL;
    if (q[1] == '-' && memcmp(q + 2, b, bn) == 0 && (q == p || q[-1] == '\n')) return q;
  }
  return NULL;
}

vd_code vd_az_parse_batch(const char *body, size_t len, int n, const char *const *where, vd_code *rc,
                          vd_err *errs) {
  const char *e = body + len, *p = body;
  while (p < e && (*p == '\r' || *p == '\n' || *p == ' ')) p++;
  const char *l = p;
  size_t bn = line_at(p, e, &p); /* the first line is the delimiter: "--" and the boundary */
  int *seen = calloc(n ? (size_t)n : 1, sizeof *seen);
  long all_status = 0; /* a subresponse without a Content-ID: the batch as a whole refused */
  char all_code[64] = "";
  if (!seen) {
    for (int i = 0; i < n; i++) rc[i] = vd_nomem(&errs[i]);
    return VD_NOMEM;
  }
  int ok = bn > 2 && bn <= 72 && l[0] == '-' && l[1] == '-';
  const char *b = l + 2;
  bn -= 2;
  while (ok && p < e) {
    const char *d = next_delim(p, e, b, bn);
    if (!d) break;
    long id, status;
    char code[64];
    if (read_part(p, d, &id, &status, code) == 0) {
      int gone = status == 202 || status == 200 || (status == 404 && strcmp(code, "BlobNotFound") == 0);
      if (id >= 0 && id < n && !seen[id]) {
        seen[id] = 1;
        rc[id] = gone ? VD_OK : vd_az_fail(&errs[id], where[id], status, code);
        if (!gone && rc[id] == VD_NOTFOUND) rc[id] = VD_IO; /* another 404 (a missing container) is a fault */
      } else if (id < 0 && status >= 400 && !all_status) {
        all_status = status;
        snprintf(all_code, sizeof all_code, "%s", code);
      }
    }
    if (d + 2 + bn + 2 <= e && d[2 + bn] == '-' && d[3 + bn] == '-') break; /* the closing delimiter */
    line_at(d, e, &p);
  }
  for (int i = 0; i < n; i++) {
    if (seen[i]) continue;
    if (!ok)
      rc[i] = vd_fail(&errs[i], VD_IO, "%s: the Blob Batch answer is not multipart (no delimiter line first)", where[i]);
    else if (all_status) {
      rc[i] = vd_az_fail(&errs[i], where[i], all_status, all_code);
      if (rc[i] == VD_NOTFOUND) rc[i] = VD_IO;
      vd_err_suffix(&errs[i], " (the whole batch)");
    } else
      rc[i] = vd_fail(&errs[i], VD_IO, "%s: the Blob Batch answer does not mention it (no subresponse of its Content-ID)",
                      where[i]);
  }
  free(seen);
  return ok ? VD_OK : VD_IO;
}
