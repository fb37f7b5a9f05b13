/* http(s) backend on libcurl's multi interface: range GETs and HEADs, many in flight
 * on one thread over reused keep-alive connections, retries with exponential backoff
 * on 5xx/429/408 and transport faults, protocols pinned to http and https.
 *
 * Answers are not trusted. Every response's headers are checked when they end, before
 * any body byte is kept: a 206 must carry a Content-Range for exactly the range asked
 * for (shorter only at the end of the object) with a consistent total and length; a
 * 200 to a range request (a server that ignores Range) may carry at most
 * http_max_excess bytes beyond the bytes asked for, and only the wanted slice is
 * kept; a whole-object GET may hold at most max_alloc bytes. The write callback
 * enforces the same limits on the bytes as they arrive and aborts the transfer the
 * moment one is passed, so a hostile body is never buffered. Bytes a server sends past
 * its Content-Length never reach the callback: curl drops what came with the body, and
 * what comes later makes the next answer on that connection unreadable, which is
 * retried on a new connection (see retryable). Content-Range and
 * Content-Length are parsed here by hand: curl checks neither against the request.
 *
 * Redirects are followed here, not by curl: each Location is checked against the
 * original URL with vd_url_allowed (same scheme, host and port, or allowed_hosts), at
 * most MAX_HOPS of them, and every hop is a counted request.
 *
 * Messages name URLs only through vd_url_redact; curl's own error text is cleaned of
 * URLs and dropped when it holds any piece of a URL's userinfo or query. */
#include <curl/curl.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "backend.h"
#include "cache.h"

#define MAX_HOPS 5
#define ERR_BODY_MAX (64 << 10) /* bytes of an error or redirect body read (and dropped) */
#define ERR_KEEP 4096           /* ... of which kept for a hook to find the service's error code in */

struct vd_http {
  CURLM *multi;
};

/* Why the write callback stops at x->limit. */
typedef enum { LIM_NONE, LIM_ALLOC, LIM_EXCESS, LIM_RANGE } lim_why;

struct driver;

typedef struct xfer {
  vd_ctx *ctx;
  struct driver *drv;  /* the driver that started it */
  vd_getreq *req;
  CURL *h;
  int head;            /* HEAD instead of GET */
  int attempt;
  int hops;            /* redirects followed */
  char *cur;           /* URL of the current hop (malloc'd), NULL: req->url */
  double not_before;   /* backoff: do not start before this time */
  double deadline;     /* request_deadline: no try runs past it, none starts after it (0: not started) */
  int cut;             /* this try's timeout was what was left of the deadline, not http_timeout */
  long status;
  /* the current response's headers */
  int hdr_done;        /* its header block ended (and was checked) */
  int64_t clen;        /* Content-Length, -1 none */
  int clen_bad;        /* unparsable or conflicting Content-Length */
  int have_cr, cr_bad; /* Content-Range present / unparsable */
  int64_t cr_a, cr_b, cr_t; /* bytes a-b/t; t = -1 for '*' */
  int64_t cr_unsat;    /* a 416's Content-Range total ("bytes", a star, "/t"), -1 none */
  int64_t cr_at_end;   /* t of "bytes t-(t-1)/t" (Azurite's 206 for a range that starts at the end), -1 none */
  vd_objinfo hinfo;
  /* the body */
  int discard;         /* error or redirect body: counted, dropped */
  int64_t received;    /* body bytes received by this attempt */
  int64_t skip, keep;  /* bytes dropped before the slice, bytes of the slice (-1 all) */
  int64_t limit;       /* body bytes accepted, -1 unlimited */
  lim_why why;
  int stop_ok;         /* we ended the transfer on purpose: what we have is complete */
  int finished;        /* done for good: req->rc says how */
  vd_code frc;         /* a fault found in a callback (aborts the transfer) */
  int fretry;          /* ... and it may go away on a retry */
  vd_err ferr;
  char errbuf[CURL_ERROR_SIZE];
  const vd_http_hook *hook; /* a backend on this transport (S3, Azure): maps and signs */
  struct curl_slist *hdrs;  /* headers the hook set (live until the next attempt) */
  char ebody[ERR_KEEP + 1]; /* the start of an error answer, for the hook's error code */
  size_t elen;
  char ecode[80];           /* the hook's error_header in the answer ("" none) */
  const char *method;       /* PUT or DELETE (vd_http_send); NULL: GET, or HEAD with head */
  vd_putreq *put;           /* a PUT's body and conditions */
  size_t upoff;             /* body bytes handed to curl by this attempt */
  int copy_pending;         /* Azure's Copy Blob answered x-ms-copy-status: pending */
  char rhdr[64];            /* the hook's reroute_header in the answer ("" none) */
  int rerouted;             /* the hook sent this request again once (S3: another region) */
  struct curl_slist *conn_to; /* connect_to's entries (live until the next attempt) */
} xfer;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static vd_http *get_http(vd_ctx *ctx, vd_err *err) {
  if (ctx->http) return ctx->http;
  static int global_done;
  if (!global_done) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      vd_fail(err, VD_IO, "libcurl initialisation failed");
      return NULL;
    }
    global_done = 1;
  }
  vd_http *h = calloc(1, sizeof *h);
  if (!h || !(h->multi = curl_multi_init())) {
    free(h);
    vd_nomem(err);
    return NULL;
  }
  ctx->http = h;
  return h;
}

void vd_http_free(vd_http *h) {
  if (!h) return;
  curl_multi_cleanup(h->multi);
  free(h);
}

/* The request named in messages: "original" or "original (redirected to current)",
 * both redacted. */
static void where(const xfer *x, char *out, size_t n) {
  char a[512], b[512];
  vd_url_redact(x->req->url, a, sizeof a);
  if (!x->cur) {
    snprintf(out, n, "%s", a);
    return;
  }
  vd_url_redact(x->cur, b, sizeof b);
  snprintf(out, n, "%s (redirected to %s)", a, b);
}

/* The range asked for, as "bytes=a-b" in messages. */
static void asked(const vd_getreq *r, char *out, size_t n) {
  if (r->len < 0)
    snprintf(out, n, "bytes %lld- (to the end)", (long long)r->off);
  else
    snprintf(out, n, "bytes %lld-%lld", (long long)r->off, (long long)(r->off + r->len - 1));
}

static void cr_text(const xfer *x, char *out, size_t n) {
  if (x->cr_t < 0)
    snprintf(out, n, "bytes %lld-%lld/*", (long long)x->cr_a, (long long)x->cr_b);
  else
    snprintf(out, n, "bytes %lld-%lld/%lld", (long long)x->cr_a, (long long)x->cr_b, (long long)x->cr_t);
}

/* Records a fault found in a callback; the callback then returns a value that makes
 * curl abort the transfer. */
static void fault(xfer *x, vd_code rc, int retry, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void fault(xfer *x, vd_code rc, int retry, const char *fmt, ...) {
  char w[1100], msg[800];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  where(x, w, sizeof w);
  vd_fail(&x->ferr, rc, "%s: %s", w, msg);
  x->frc = rc;
  x->fretry = retry;
}

static void too_big(xfer *x, int64_t size) {
  char w[1100];
  where(x, w, sizeof w);
  x->frc = vd_fail_max_alloc(&x->ferr, w, size, x->ctx->cfg.max_alloc);
  x->fretry = 0;
}

/* A whole non-negative decimal number and nothing else, below 2^62; -1 otherwise. */
static int64_t decimal(const char *p, const char *end) {
  if (p >= end) return -1;
  int64_t v = 0;
  for (; p < end; p++) {
    if (*p < '0' || *p > '9' || v > ((int64_t)1 << 58)) return -1;
    v = v * 10 + (*p - '0');
  }
  return v;
}

/* "bytes a-b/t" or "bytes a-b/" followed by a star; 0 when it parses. */
static int parse_range(const char *v, size_t n, int64_t *a, int64_t *b, int64_t *t) {
  const char *end = v + n;
  if (n < 6 || strncasecmp(v, "bytes ", 6) != 0) return -1;
  const char *p = v + 6;
  while (p < end && *p == ' ') p++;
  const char *dash = memchr(p, '-', (size_t)(end - p)), *slash = memchr(p, '/', (size_t)(end - p));
  if (!dash || !slash || slash < dash) return -1;
  *a = decimal(p, dash);
  *b = decimal(dash + 1, slash);
  *t = (end - slash == 2 && slash[1] == '*') ? -1 : decimal(slash + 1, end);
  if (*a < 0 || *b < 0 || *b < *a || (*t < 0 && !(end - slash == 2 && slash[1] == '*'))) return -1;
  return 0;
}

/* "bytes t-(t-1)/t": what Azurite answers (206, no body) to a range that starts at the
 * end of a blob, where HTTP servers and Azure itself answer 416. */
static int64_t at_end_range(const char *v, size_t n) {
  const char *end = v + n;
  if (n < 6 || strncasecmp(v, "bytes ", 6) != 0) return -1;
  const char *p = v + 6, *dash = memchr(p, '-', (size_t)(end - p)), *slash = memchr(p, '/', (size_t)(end - p));
  if (!dash || !slash || slash < dash) return -1;
  int64_t a = decimal(p, dash), b = decimal(dash + 1, slash), t = decimal(slash + 1, end);
  return a > 0 && t == a && b == a - 1 ? t : -1;
}

/* The header block of a final response ended: check it against the request and set
 * how the body is taken. 0 to go on, -1 to abort (x->frc says why). */
static int headers_done(xfer *x) {
  vd_ctx *ctx = x->ctx;
  vd_getreq *r = x->req;
  long st = x->status;
  char want[96], got[96];
  if (st < 200) return 0; /* 1xx: the real answer follows */
  x->hdr_done = 1;
  if (x->clen_bad) {
    fault(x, VD_IO, 0, "HTTP %ld with an invalid or conflicting Content-Length", st);
    return -1;
  }
  if (x->head) {
    if (x->clen >= 0) x->hinfo.size = x->clen;
    return 0;
  }
  int post = x->method && strcmp(x->method, "POST") == 0; /* a batch: its answer says what was done */
  if (x->method && !post) { /* the answer to a PUT or DELETE: nothing in it is wanted but an error's code */
    x->discard = 1;
    return 0;
  }
  if (post && st >= 200 && st < 300) st = 200; /* Azure answers a batch 202: a whole document all the same */
  if (st != 200 && st != 206) { /* errors and redirects: the body is not wanted */
    x->discard = 1;
    return 0;
  }
  int ranged = r->off > 0 || r->len >= 0;
  int64_t cap = ctx->cfg.max_alloc, excess = ctx->cfg.http_max_excess;
  asked(r, want, sizeof want);
  if (st == 200 && !ranged) { /* a whole object */
    x->skip = 0;
    x->keep = -1;
    x->limit = cap;
    x->why = LIM_ALLOC;
    x->hinfo.size = x->clen;
    if (x->clen > cap) {
      too_big(x, x->clen);
      return -1;
    }
    /* room for the promised body, but no more than a few MiB on the server's word alone */
    int64_t room = x->clen < ((int64_t)8 << 20) ? x->clen : ((int64_t)8 << 20);
    if (room > 0 && vd_buf_reserve(&r->body, (size_t)room)) {
      fault(x, VD_NOMEM, 0, "out of memory for %lld bytes", (long long)room);
      return -1;
    }
    return 0;
  }
  if (st == 200) { /* the server ignored Range: keep the slice, accept a bounded excess */
    int64_t asked_n = r->len >= 0 ? r->len : cap;
    x->skip = r->off;
    x->keep = r->len;
    x->limit = asked_n + excess;
    x->why = LIM_EXCESS;
    x->hinfo.size = x->clen;
    int64_t end = r->len >= 0 ? r->off + r->len : -1; /* where the slice is complete */
    if (x->clen >= 0 && end > x->clen) end = x->clen;
    if (x->clen > x->limit && (end < 0 || end > x->limit)) {
      fault(x, VD_IO, 0,
            "HTTP 200 ignores the Range (%s) and sends the whole object (%lld bytes): more than http_max_excess "
            "(%lld) bytes beyond the %lld asked for (see vdsql_config('http_max_excess'))",
            want, (long long)x->clen, (long long)excess, (long long)asked_n);
      return -1;
    }
    return 0;
  }
  /* 206 */
  if (!x->have_cr) {
    fault(x, VD_IO, 0, "HTTP 206 without a Content-Range header (asked for %s)", want);
    return -1;
  }
  if (x->cr_bad && x->cr_at_end >= 0 && x->cr_at_end == r->off) { /* nothing there: what a 416 says */
    fault(x, VD_INVALID, 0, "HTTP 206 with an empty Content-Range at the end of the object (%lld bytes): nothing there "
          "(asked for %s)", (long long)x->cr_at_end, want);
    return -1;
  }
  if (x->cr_bad) {
    fault(x, VD_IO, 0, "HTTP 206 with a malformed Content-Range header (asked for %s)", want);
    return -1;
  }
  cr_text(x, got, sizeof got);
  if (x->cr_t >= 0 && x->cr_b >= x->cr_t) {
    fault(x, VD_IO, 0, "HTTP 206 with Content-Range %s: the range ends past the object's total", got);
    return -1;
  }
  if (x->cr_a != r->off) {
    fault(x, VD_IO, 0, "HTTP 206 answers %s, asked for %s (another start)", got, want);
    return -1;
  }
  int64_t e = r->len >= 0 ? r->off + r->len - 1 : (x->cr_t >= 0 ? x->cr_t - 1 : -1);
  if (x->cr_b > e && e >= 0) {
    fault(x, VD_IO, 0, "HTTP 206 answers %s, asked for %s (more than asked)", got, want);
    return -1;
  }
  if (x->cr_b < e || e < 0) {
    int at_end = x->cr_t >= 0 && x->cr_b == x->cr_t - 1;
    if (!at_end) {
      fault(x, VD_IO, 0, "short read: HTTP 206 answers %s, asked for %s, and the object does not end there", got,
            want);
      return -1;
    }
  }
  int64_t promised = x->cr_b - x->cr_a + 1;
  if (x->clen >= 0 && x->clen != promised) {
    fault(x, VD_IO, 0, "HTTP 206 with Content-Length %lld for Content-Range %s (%lld bytes)", (long long)x->clen, got,
          (long long)promised);
    return -1;
  }
  if (!ranged && promised > cap) {
    too_big(x, promised);
    return -1;
  }
  x->skip = 0;
  x->keep = promised;
  x->limit = promised;
  x->why = LIM_RANGE;
  x->hinfo.size = x->cr_t;
  return 0;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud) {
  xfer *x = ud;
  vd_getreq *r = x->req;
  size_t len = sz * n;
  int64_t from = x->received; /* body offset of p[0] */
  x->received += (int64_t)len;
  if (x->discard) {
    if (x->hook && x->elen < ERR_KEEP) {
      size_t k = len < ERR_KEEP - x->elen ? len : ERR_KEEP - x->elen;
      memcpy(x->ebody + x->elen, p, k);
      x->elen += k;
      x->ebody[x->elen] = 0;
    }
    if (x->received <= ERR_BODY_MAX) return len;
    x->stop_ok = 1; /* enough of an error page: the status says it all */
    return 0;
  }
  if (!x->hdr_done) { /* cannot happen: curl ends the headers first */
    fault(x, VD_IO, 0, "body before the end of the headers");
    return 0;
  }
  if (x->clen >= 0 && x->received > x->clen) {
    fault(x, VD_IO, 0, "the body is longer than its Content-Length (%lld bytes); transfer aborted",
          (long long)x->clen);
    return 0;
  }
  /* the part of p inside the slice [skip, skip + keep) */
  int64_t a = from > x->skip ? from : x->skip, b = x->received;
  if (x->keep >= 0 && b > x->skip + x->keep) b = x->skip + x->keep;
  if (b > a && vd_buf_append(&r->body, p + (a - from), (size_t)(b - a))) {
    fault(x, VD_NOMEM, 0, "out of memory after %zu bytes", r->body.len);
    return 0;
  }
  int complete = x->keep >= 0 && (int64_t)r->body.len >= x->keep;
  if (complete && x->why == LIM_EXCESS) {
    if (x->clen < 0 || x->received < x->clen) x->stop_ok = 1; /* the rest is not wanted */
    return x->stop_ok ? 0 : len;
  }
  if (x->limit >= 0 && x->received > x->limit) {
    char got[96], want[96];
    switch (x->why) {
      case LIM_ALLOC: too_big(x, -1); break;
      case LIM_EXCESS:
        asked(r, want, sizeof want);
        fault(x, VD_IO, 0,
              "HTTP 200 ignores the Range (%s) and sends the whole object: more than http_max_excess (%lld) bytes "
              "beyond the %lld asked for; transfer aborted (see vdsql_config('http_max_excess'))",
              want, (long long)x->ctx->cfg.http_max_excess, (long long)(r->len >= 0 ? r->len : x->ctx->cfg.max_alloc));
        break;
      default:
        cr_text(x, got, sizeof got);
        fault(x, VD_IO, 0, "the body is longer than the %lld bytes its Content-Range (%s) promised; transfer aborted",
              (long long)x->limit, got);
    }
    return 0;
  }
  return len;
}

static int starts(const char *line, size_t n, const char *prefix, size_t *plen) {
  size_t k = strlen(prefix);
  if (n < k || strncasecmp(line, prefix, k) != 0) return 0;
  *plen = k;
  return 1;
}

static size_t on_header(char *line, size_t sz, size_t n, void *ud) {
  xfer *x = ud;
  size_t len = sz * n, k;
  while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n')) len--;
  if (starts(line, len, "HTTP/", &k)) { /* a new response (1xx, then the answer): start over */
    vd_objinfo_free(&x->hinfo);
    memset(&x->hinfo, 0, sizeof x->hinfo);
    x->hinfo.size = -1;
    x->hdr_done = 0;
    x->clen = -1;
    x->clen_bad = x->have_cr = x->cr_bad = 0;
    x->cr_unsat = -1;
    x->cr_at_end = -1;
    x->ecode[0] = 0;
    x->rhdr[0] = 0;
    x->copy_pending = 0;
    const char *sp = memchr(line, ' ', len);
    x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
    return sz * n;
  }
  if (x->hdr_done) return sz * n; /* trailers of a chunked body: not headers of the answer */
  if (len == 0) return headers_done(x) ? 0 : sz * n;
  const char *colon = memchr(line, ':', len);
  if (!colon) return sz * n;
  size_t nl = (size_t)(colon - line);
  const char *v = colon + 1, *end = line + len;
  while (v < end && (*v == ' ' || *v == '\t')) v++;
  while (end > v && (end[-1] == ' ' || end[-1] == '\t')) end--;
  size_t vl = (size_t)(end - v);
  if (nl == 14 && strncasecmp(line, "content-length", 14) == 0) {
    int64_t c = decimal(v, end);
    if (c < 0 || (x->clen >= 0 && x->clen != c)) x->clen_bad = 1;
    x->clen = c;
  } else if (nl == 13 && strncasecmp(line, "content-range", 13) == 0) {
    int64_t a, b, t;
    if (!x->have_cr && vl > 8 && !strncasecmp(v, "bytes */", 8)) x->cr_unsat = decimal(v + 8, v + vl);
    if (x->have_cr || parse_range(v, vl, &a, &b, &t)) {
      x->cr_bad = 1;
      if (!x->have_cr) x->cr_at_end = at_end_range(v, vl);
    }
    else {
      x->cr_a = a;
      x->cr_b = b;
      x->cr_t = t;
    }
    x->have_cr = 1;
  } else if (x->hook && x->hook->error_header && nl == strlen(x->hook->error_header) &&
             strncasecmp(line, x->hook->error_header, nl) == 0) {
    snprintf(x->ecode, sizeof x->ecode, "%.*s", (int)vl, v);
  } else if (x->hook && x->hook->reroute_header && nl == strlen(x->hook->reroute_header) &&
             strncasecmp(line, x->hook->reroute_header, nl) == 0) {
    /* too long for the field: cut, so the hook refuses it as no region */
    snprintf(x->rhdr, sizeof x->rhdr, "%.*s", (int)vl, v);
  } else if (nl == 16 && strncasecmp(line, "x-ms-copy-status", 16) == 0) {
    x->copy_pending = vl == 7 && strncasecmp(v, "pending", 7) == 0;
  } else if (nl == 4 && strncasecmp(line, "etag", 4) == 0) {
    snprintf(x->hinfo.etag, sizeof x->hinfo.etag, "%.*s", (int)vl, v);
  } else if (starts(line, nl, "x-amz-meta-", &k) || starts(line, nl, "x-ms-meta-", &k) ||
             starts(line, nl, "x-goog-meta-", &k)) {
    vd_objinfo_add_meta(&x->hinfo, line + k, nl - k, v, vl);
  }
  return sz * n;
}

/* CURLE_UNSUPPORTED_PROTOCOL can only come from an answer that is no HTTP at all (schemes
 * are checked and redirects followed here): what a server left on a kept-alive
 * connection past an earlier answer's Content-Length. curl closes that connection; a
 * retry gets a fresh one. */
static int retryable(CURLcode cc, long status) {
  if (cc == CURLE_OK) return status >= 500 || status == 429 || status == 408;
  return cc == CURLE_UNSUPPORTED_PROTOCOL || cc == CURLE_OPERATION_TIMEDOUT || cc == CURLE_COULDNT_CONNECT || cc == CURLE_GOT_NOTHING ||
         cc == CURLE_RECV_ERROR || cc == CURLE_SEND_ERROR || cc == CURLE_PARTIAL_FILE;
}

const char *vd_http_reason(long s) {
  switch (s) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 412: return "Precondition Failed";
    case 416: return "Range Not Satisfiable";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

static int hex(int c) { return isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10); }

/* Does text hold s (length n), as is or percent-decoded? Pieces under 3 bytes are
 * not looked for (they would match everywhere and hide nothing). */
static int holds(const char *text, const char *s, size_t n) {
  if (n < 3) return 0;
  char raw[512], dec[512];
  if (n >= sizeof raw) n = sizeof raw - 1;
  memcpy(raw, s, n);
  raw[n] = 0;
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (raw[i] == '%' && isxdigit((unsigned char)raw[i + 1]) && isxdigit((unsigned char)raw[i + 2])) {
      dec[o++] = (char)(hex((unsigned char)raw[i + 1]) * 16 + hex((unsigned char)raw[i + 2]));
      i += 2;
    } else {
      dec[o++] = raw[i] == '+' ? ' ' : raw[i];
    }
  }
  dec[o] = 0;
  return strcasestr(text, raw) || (o >= 3 && strcasestr(text, dec));
}

/* Does text hold a piece of url's userinfo, query or fragment? */
static int holds_secret(const char *text, const char *url) {
  const char *auth = strstr(url, "://");
  if (!auth) return 0;
  auth += 3;
  const char *p = auth;
  while (*p && !strchr("/?#", *p)) p++;
  const char *at = NULL;
  for (const char *q = auth; q < p; q++)
    if (*q == '@') at = q;
  if (at) {
    if (holds(text, auth, (size_t)(at - auth))) return 1;
    const char *colon = memchr(auth, ':', (size_t)(at - auth));
    if (colon && (holds(text, auth, (size_t)(colon - auth)) || holds(text, colon + 1, (size_t)(at - colon - 1))))
      return 1;
  }
  const char *q = p + strcspn(p, "?#");
  if (!*q) return 0;
  if (holds(text, q + 1, strlen(q + 1))) return 1;
  for (const char *s = q + 1; *s;) { /* each name=value, and each value */
    size_t k = strcspn(s, "&;#");
    const char *eq = memchr(s, '=', k);
    if (holds(text, s, k) || (eq && holds(text, eq + 1, (size_t)(s + k - eq - 1)))) return 1;
    s += k;
    if (*s) s++;
  }
  return 0;
}

/* curl's error text, safe to show: URLs in it redacted; nothing at all when it holds a
 * piece of a secret of the URLs involved. By hand: the text is free prose (host names,
 * proxy URLs from the environment, IDN conversions...), no parser knows its shape. */
static void clean_curl_text(const xfer *x, const char *in, char *out, size_t n) {
  out[0] = 0;
  if (!in[0] || holds_secret(in, x->req->url) || (x->cur && holds_secret(in, x->cur))) return;
  size_t o = 0;
  for (const char *p = in; *p && o + 1 < n;) {
    const char *s = strstr(p, "://");
    if (!s) {
      snprintf(out + o, n - o, "%s", p);
      return;
    }
    const char *a = s, *z = s + 3;
    while (a > p && !strchr(" \t'\"(<[,", a[-1])) a--;
    while (*z && !strchr(" \t'\")>],", *z)) z++;
    char tok[1024], red[600];
    snprintf(tok, sizeof tok, "%.*s", (int)(z - a), a);
    vd_url_redact(tok, red, sizeof red);
    int w = snprintf(out + o, n - o, "%.*s%s", (int)(a - p), p, red);
    if (w < 0) return;
    o += (size_t)w;
    if (o >= n) {
      out[n - 1] = 0;
      return;
    }
    p = z;
  }
}

static void reset_response(xfer *x) {
  vd_objinfo_free(&x->hinfo);
  memset(&x->hinfo, 0, sizeof x->hinfo);
  x->hinfo.size = -1;
  x->status = 0;
  x->hdr_done = 0;
  x->clen = -1;
  x->clen_bad = x->have_cr = x->cr_bad = 0;
  x->cr_unsat = -1;
  x->cr_at_end = -1;
  x->discard = 0;
  x->received = 0;
  x->skip = 0;
  x->keep = -1;
  x->limit = -1;
  x->why = LIM_NONE;
  x->stop_ok = 0;
  x->frc = VD_OK;
  x->fretry = 0;
  vd_err_clear(&x->ferr);
  x->errbuf[0] = 0;
  x->elen = 0;
  x->ebody[0] = 0;
  x->ecode[0] = 0;
  x->rhdr[0] = 0;
}

static size_t on_upload(char *buf, size_t sz, size_t n, void *ud) {
  xfer *x = ud;
  size_t room = sz * n, left = x->put->len - x->upoff;
  size_t k = left < room ? left : room;
  memcpy(buf, (const char *)x->put->body + x->upoff, k);
  x->upoff += k;
  return k;
}

/* curl sends a request again itself when a kept-alive connection it reused turns out
 * closed before any answer (a server's idle timeout racing the request): the body is
 * then read again from its start, which needs this. */
static int on_seek(void *ud, curl_off_t off, int origin) {
  xfer *x = ud;
  if (origin != SEEK_SET || off < 0 || (size_t)off > x->put->len) return CURL_SEEKFUNC_CANTSEEK;
  x->upoff = (size_t)off;
  return CURL_SEEKFUNC_OK;
}

/* connect_to's comma-separated entries as curl's list (CURLOPT_CONNECT_TO, which checks
 * their syntax itself); -1 when out of memory (*l then freed). */
static int connect_list(const char *s, struct curl_slist **l) {
  char item[512];
  for (const char *p = s; *p;) {
    size_t k = strcspn(p, ",");
    const char *a = p, *z = p + k;
    while (a < z && *a == ' ') a++;
    while (z > a && z[-1] == ' ') z--;
    p += k + (p[k] == ',');
    if (a == z) continue;
    snprintf(item, sizeof item, "%.*s", (int)(z - a), a);
    struct curl_slist *t = curl_slist_append(*l, item);
    if (!t) {
      curl_slist_free_all(*l);
      *l = NULL;
      return -1;
    }
    *l = t;
  }
  return 0;
}

static vd_code setup(vd_ctx *ctx, xfer *x, vd_err *err) {
  if (!x->h && !(x->h = curl_easy_init())) return vd_nomem(err);
  CURL *h = x->h;
  vd_getreq *r = x->req;
  curl_easy_reset(h);
  r->body.len = 0;
  reset_response(x);
  curl_easy_setopt(h, CURLOPT_URL, x->cur ? x->cur : r->url);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L); /* redirects are checked and followed in finish() */
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  /* every try, retries and redirect hops included, ends by the request's one deadline:
   * a server that never answers holds a query request_deadline, not http_timeout x tries */
  double t = now();
  if (!x->deadline) x->deadline = t + ctx->cfg.request_deadline;
  double left = x->deadline - t, per_try = ctx->cfg.http_timeout;
  x->cut = left < per_try;
  if (x->cut) per_try = left > 0.001 ? left : 0.001;
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(per_try * 1000));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   (long)((ctx->cfg.http_connect_timeout < per_try ? ctx->cfg.http_connect_timeout : per_try) * 1000));
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->errbuf);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "vdsql/0.1");
  curl_easy_setopt(h, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
  curl_easy_setopt(h, CURLOPT_PRIVATE, x);
  if (ctx->cfg.ca_file[0]) curl_easy_setopt(h, CURLOPT_CAINFO, ctx->cfg.ca_file);
  curl_slist_free_all(x->conn_to);
  x->conn_to = NULL;
  if (ctx->cfg.connect_to[0]) { /* a host name reached at another address (tests: AWS's names on loopback) */
    if (connect_list(ctx->cfg.connect_to, &x->conn_to)) return vd_nomem(err);
    curl_easy_setopt(h, CURLOPT_CONNECT_TO, x->conn_to);
  }
  curl_slist_free_all(x->hdrs);
  x->hdrs = NULL;
  char range[64] = "";
  if (!x->method && !x->head && r->len != 0 && (r->off > 0 || r->len > 0)) { /* len 0 (info only): no range to ask for */
    if (r->len < 0)
      snprintf(range, sizeof range, "%lld-", (long long)r->off);
    else
      snprintf(range, sizeof range, "%lld-%lld", (long long)r->off, (long long)(r->off + r->len - 1));
  }
  if (x->hook) { /* the real URL, signing options and headers: after the options above */
    vd_code rc = x->hook->prepare(ctx, h, r->url, x->method ? x->method : x->head ? "HEAD" : "GET",
                                  range[0] ? range : NULL, x->put, &x->hdrs, err);
    if (rc) return rc;
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, x->hdrs);
  }
  if (x->method && (strcmp(x->method, "PUT") == 0 || strcmp(x->method, "POST") == 0)) {
    if (strcmp(x->method, "POST") == 0) curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "POST"); /* a body as a PUT has */
    x->upoff = 0; /* a retry sends the body again from its start */
    curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(h, CURLOPT_READFUNCTION, on_upload);
    curl_easy_setopt(h, CURLOPT_READDATA, x);
    curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, on_seek);
    curl_easy_setopt(h, CURLOPT_SEEKDATA, x);
    curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->put->len);
    /* curl (7.88) adds Expect: 100-continue to a body over 1 KiB and holds the body until
     * a 100 comes or 1 s passes: a round trip per PUT on a real link, and the whole second
     * where a server or proxy does not answer 100. Here the body follows the head at
     * once for every store (Azure's requests also drop the header, store_az.c); a refusal
     * still comes, after the body, which for a chunk costs less than the wait */
    curl_easy_setopt(h, CURLOPT_EXPECT_100_TIMEOUT_MS, 1L);
  } else if (x->method) {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, x->method);
  } else if (x->head) {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (range[0] && !(x->hook && x->hook->range_header)) {
    curl_easy_setopt(h, CURLOPT_RANGE, range);
  }
  return VD_OK;
}

/* The URL of the next hop. Credentials of the original URL go along to its own scheme,
 * host and port only, as curl itself does when it follows: a relative Location keeps
 * them already (curl resolves it against the URL with its userinfo); an absolute one to
 * the same origin gets them back; any other host never sees them. malloc'd. */
static char *next_hop(const char *orig, const char *loc) {
  CURLU *a = curl_url(), *b = curl_url();
  char *user = NULL, *pass = NULL, *out = NULL, *as = NULL, *ah = NULL, *ap = NULL, *bs = NULL, *bh = NULL,
       *bp = NULL, *bu = NULL;
  if (a && b && curl_url_set(a, CURLUPART_URL, orig, 0) == CURLUE_OK &&
      curl_url_set(b, CURLUPART_URL, loc, 0) == CURLUE_OK &&
      curl_url_get(a, CURLUPART_USER, &user, 0) == CURLUE_OK &&
      curl_url_get(b, CURLUPART_USER, &bu, 0) == CURLUE_NO_USER &&
      curl_url_get(a, CURLUPART_SCHEME, &as, 0) == CURLUE_OK && curl_url_get(b, CURLUPART_SCHEME, &bs, 0) == CURLUE_OK &&
      curl_url_get(a, CURLUPART_HOST, &ah, 0) == CURLUE_OK && curl_url_get(b, CURLUPART_HOST, &bh, 0) == CURLUE_OK &&
      curl_url_get(a, CURLUPART_PORT, &ap, CURLU_DEFAULT_PORT) == CURLUE_OK &&
      curl_url_get(b, CURLUPART_PORT, &bp, CURLU_DEFAULT_PORT) == CURLUE_OK && strcasecmp(as, bs) == 0 &&
      strcasecmp(ah, bh) == 0 && strcmp(ap, bp) == 0) {
    curl_url_set(b, CURLUPART_USER, user, 0);
    if (curl_url_get(a, CURLUPART_PASSWORD, &pass, 0) == CURLUE_OK) curl_url_set(b, CURLUPART_PASSWORD, pass, 0);
    char *u = NULL;
    if (curl_url_get(b, CURLUPART_URL, &u, 0) == CURLUE_OK) out = strdup(u);
    curl_free(u);
  }
  curl_free(user);
  curl_free(pass);
  curl_free(bu);
  curl_free(as);
  curl_free(ah);
  curl_free(ap);
  curl_free(bs);
  curl_free(bh);
  curl_free(bp);
  curl_url_cleanup(a);
  curl_url_cleanup(b);
  return out ? out : strdup(loc);
}

static int is_redirect(long s) { return s == 301 || s == 302 || s == 303 || s == 307 || s == 308; }

/* A finished attempt: 1 = done (ok or failed for good), 0 = go again (a retry after
 * x->not_before, or the next hop of a redirect). */
static int finish(vd_ctx *ctx, xfer *x, CURLcode cc) {
  vd_getreq *r = x->req;
  vd_stats *s = &ctx->stats[x->hook ? x->hook->id : VD_BE_HTTP];
  char url[1100];
  where(x, url, sizeof url);
  long status = 0;
  curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
  x->status = status;
  s->bytes += x->received + (int64_t)(x->put ? x->upoff : 0); /* received, and a PUT's body sent */
  if (x->stop_ok && !x->frc && cc == CURLE_WRITE_ERROR) cc = CURLE_OK; /* we ended it: complete */
  if (!x->frc && cc == CURLE_OK && !x->head && !x->discard && (status == 200 || status == 206)) {
    if (status == 206 && x->received < x->limit && !x->stop_ok) {
      char got[96];
      cr_text(x, got, sizeof got);
      fault(x, VD_IO, 1, "short read: %lld of the %lld bytes its Content-Range (%s) promised", (long long)x->received,
            (long long)x->limit, got);
    }
  }
  int again = x->attempt < ctx->cfg.http_retries;
  double next = now() + ctx->cfg.http_retry_delay_ms / 1000.0 * (double)(1 << x->attempt);
  int transient = x->frc ? x->fretry : retryable(cc, status);
  /* the deadline, not the retries, ended it: no time for another try, or the last try cut short by it */
  int late = transient && (again ? next >= x->deadline : x->cut && cc == CURLE_OPERATION_TIMEDOUT);
  if (transient && again && !late) {
    x->attempt++;
    s->retries++;
    x->not_before = next;
    return 0;
  }
  char tries[160] = "";
  if (late)
    snprintf(tries, sizeof tries, " (%d %s in request_deadline %g s: no time left for another)", x->attempt + 1,
             x->attempt ? "tries" : "try", ctx->cfg.request_deadline);
  else if (x->attempt)
    snprintf(tries, sizeof tries, " after %d retries", x->attempt);
  if (x->frc) {
    r->rc = x->frc;
    r->err = x->ferr;
    if (x->attempt && strlen(r->err.msg) + strlen(tries) < sizeof r->err.msg) strcat(r->err.msg, tries);
    return 1;
  }
  if (cc != CURLE_OK) {
    char detail[CURL_ERROR_SIZE + 64];
    clean_curl_text(x, x->errbuf, detail, sizeof detail);
    r->rc = vd_fail(&r->err, VD_IO, "%s: %s%s%s%s%s", url, curl_easy_strerror(cc), detail[0] ? " (" : "", detail,
                    detail[0] ? ")" : "", tries);
    return 1;
  }
  if (x->hook && x->hook->reroute && !x->rerouted && status >= 300 &&
      x->hook->reroute(ctx, r->url, status, x->rhdr[0] ? x->rhdr : NULL, x->ebody, x->elen)) {
    x->rerouted = 1; /* once: an answer naming yet another region stands */
    x->not_before = 0;
    return 0;
  }
  if (is_redirect(status)) {
    char *loc = NULL;
    curl_easy_getinfo(x->h, CURLINFO_REDIRECT_URL, &loc);
    if (x->hook) { /* a signed request: its hook always rebuilds the service's own URL */
      char to[620] = ""; /* S3's 301 PermanentRedirect names no Location, only an endpoint in its body */
      if (loc && *loc) {
        memcpy(to, " to ", 5);
        vd_url_redact(loc, to + 4, sizeof to - 4);
      }
      r->rc = vd_fail(&r->err, VD_IO, "%s: HTTP %ld redirect%s, not followed (requests of this store are signed "
                      "for its endpoint; set the endpoint the service names)", url, status, to);
      return 1;
    }
    if (!loc || !*loc) {
      r->rc = vd_fail(&r->err, VD_IO, "%s: HTTP %ld redirect without a usable Location", url, status);
      return 1;
    }
    if (x->hops >= MAX_HOPS) {
      char to[600];
      vd_url_redact(loc, to, sizeof to);
      r->rc = vd_fail(&r->err, VD_IO, "%s: more than %d redirects (the last to %s)", url, MAX_HOPS, to);
      return 1;
    }
    if ((r->rc = vd_url_allowed(ctx, r->url, loc, &r->err))) return 1;
    char *next = next_hop(r->url, loc);
    if (!next) {
      r->rc = vd_nomem(&r->err);
      return 1;
    }
    free(x->cur);
    x->cur = next;
    x->hops++;
    x->not_before = 0;
    return 0;
  }
  char code[80] = ""; /* " (SignatureDoesNotMatch)": the service's own word, when it gives one */
  if (x->hook && x->hook->error_code && status >= 300 &&
      x->hook->error_code(x->ecode[0] ? x->ecode : NULL, x->ebody, x->elen, code + 2, sizeof code - 3) == 0) {
    code[0] = ' ';
    code[1] = '(';
    strcat(code, ")");
  }
  /* a range from the start of an empty object: nothing to read, as a read that ends at
   * the end of an object is short (nginx answers 200 and no body; S3 and others 416 with a Content-Range total of 0) */
  int empty = status == 416 && !x->head && !x->method && r->off == 0 && x->cr_unsat == 0;
  if (status >= 400 && !empty) r->status = status; /* a final answer taken as given: a refusal told from a fault */
  if (x->hook && x->hook->answer && status >= 400 && !empty) {
    char bare[64] = ""; /* the code without the transport's " (...)" */
    if (code[0]) snprintf(bare, sizeof bare, "%.*s", (int)(strlen(code) - 3), code + 2);
    const char *m = x->method ? x->method : x->head ? "HEAD" : "GET";
    r->rc = x->hook->answer(&r->err, url, m, status, bare);
    if (r->rc && x->attempt && strlen(r->err.msg) + strlen(tries) < sizeof r->err.msg) strcat(r->err.msg, tries);
    return 1;
  }
  if (status == 404 || status == 410) {
    r->rc = vd_fail(&r->err, VD_NOTFOUND, "%s: HTTP %ld %s%s", url, status, vd_http_reason(status), code);
    return 1;
  }
  if (x->method && status >= 200 && status < 300 && x->copy_pending) {
    /* vdsql copies within one account, which Azure completes at once; a copy left
     * running (another account, a huge blob) is not waited for: said, not assumed done */
    r->rc = vd_fail(&r->err, VD_IO, "%s: the copy was accepted but not finished (x-ms-copy-status: pending)", url);
    return 1;
  }
  if (x->method && status >= 200 && status < 300) { /* a PUT or DELETE done: its etag is the answer */
    r->info = x->hinfo;
    memset(&x->hinfo, 0, sizeof x->hinfo);
    r->rc = VD_OK;
    return 1;
  }
  if (empty) x->hinfo.size = 0;
  if (status != 200 && status != 206 && !empty) {
    r->rc = vd_fail(&r->err, status == 416 ? VD_INVALID : status == 412 ? VD_PRECONDITION : VD_IO, "%s: HTTP %ld %s%s%s", url,
                    status, vd_http_reason(status), code, tries);
    return 1;
  }
  if (!x->head && status == 200 && x->hinfo.size < 0 && !x->stop_ok)
    x->hinfo.size = x->received; /* the whole object arrived: its size is what came */
  if (r->want_info) {
    r->info = x->hinfo;
    memset(&x->hinfo, 0, sizeof x->hinfo);
    curl_off_t ft = -1;
    if (curl_easy_getinfo(x->h, CURLINFO_FILETIME_T, &ft) == CURLE_OK && ft > 0) r->info.mtime = ft;
  }
  r->rc = VD_OK;
  return 1;
}

/* Transfers driven on the context's multi handle (one pool of connections), a turn at
 * a time: the blocking calls below drive theirs to the end; a vd_http_async (for
 * vd_ahead) leaves its own in flight between turns. A turn settles whatever finished,
 * whichever driver started it, on the driver that did. */
typedef struct driver {
  vd_ctx *ctx;
  CURLM *multi;
  int parallel;
  xfer **wait; /* waiting to (re)start */
  int nwait, wcap;
  int active;
} driver;

static void drv_init(driver *d, vd_ctx *ctx, CURLM *multi) {
  memset(d, 0, sizeof *d);
  d->ctx = ctx;
  d->multi = multi;
  d->parallel = ctx->cfg.max_parallel > 0 ? ctx->cfg.max_parallel : 1;
  curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)d->parallel);
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, (long)d->parallel);
}

/* Queues x to start; -1 when out of memory. */
static int drv_add(driver *d, xfer *x) {
  if (d->nwait == d->wcap) {
    int cap = d->wcap ? 2 * d->wcap : 16;
    xfer **w = realloc(d->wait, cap * sizeof *w);
    if (!w) return -1;
    d->wait = w;
    d->wcap = cap;
  }
  x->ctx = d->ctx;
  x->drv = d;
  d->wait[d->nwait++] = x;
  return 0;
}

/* One turn: starts what may start, lets curl work and settles finished transfers
 * (x->finished, or queued again for a retry or the next hop of a redirect). With
 * block, a turn that settled nothing waits for activity (at most until the next
 * retry is due). Returns how many transfers finished for good. */
static int drv_turn(driver *d, int block) {
  vd_ctx *ctx = d->ctx;
  int done = 0, settled = 0;
  double t = now(), wait_until = 0;
  for (int q = 0; q < d->nwait && d->active < d->parallel;) {
    xfer *x = d->wait[q];
    if (x->not_before > t) {
      if (!wait_until || x->not_before < wait_until) wait_until = x->not_before;
      q++;
      continue;
    }
    memmove(d->wait + q, d->wait + q + 1, (--d->nwait - q) * sizeof *d->wait); /* in the order queued */
    vd_code rc = setup(ctx, x, &x->req->err);
    if (rc) {
      x->req->rc = rc;
      x->finished = 1;
      done++;
    } else {
      ctx->stats[x->hook ? x->hook->id : VD_BE_HTTP].requests++; /* every attempt and every redirect hop */
      curl_multi_add_handle(d->multi, x->h);
      d->active++;
    }
  }
  if (!d->active) {
    if (d->nwait && block) { /* everyone is backing off */
      double s = wait_until - now();
      if (ctx->interrupted && s > 0.1) s = 0.1; /* the cancel check runs between turns */
      if (s > 0) {
        struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
        nanosleep(&ts, NULL);
      }
    }
    return done;
  }
  int running = 0;
  curl_multi_perform(d->multi, &running);
  CURLMsg *m;
  int left;
  while ((m = curl_multi_info_read(d->multi, &left))) {
    if (m->msg != CURLMSG_DONE) continue;
    xfer *x = NULL;
    curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
    CURLcode cc = m->data.result;
    curl_multi_remove_handle(d->multi, m->easy_handle);
    driver *o = x->drv;
    o->active--;
    settled++;
    if (finish(ctx, x, cc)) {
      x->finished = 1;
      done += o == d;
    } else if (drv_add(o, x)) {
      x->req->rc = vd_nomem(&x->req->err);
      x->finished = 1;
      done += o == d;
    }
  }
  if (d->active && block && !settled) {
    int ms = ctx->interrupted ? 100 : 1000; /* a cancel is seen within 0.1 s */
    if (d->nwait && wait_until) {
      double w = (wait_until - now()) * 1000;
      ms = w < 0 ? 0 : w < ms ? (int)w : ms;
    }
    curl_multi_poll(d->multi, NULL, 0, ms, NULL);
  }
  return done;
}

/* Takes x out of the driver, wherever it is. */
static void drv_drop(driver *d, xfer *x) {
  for (int q = 0; q < d->nwait; q++)
    if (d->wait[q] == x) {
      memmove(d->wait + q, d->wait + q + 1, (--d->nwait - q) * sizeof *d->wait);
      return;
    }
  if (!x->finished && x->h && curl_multi_remove_handle(d->multi, x->h) == CURLM_OK) d->active--;
}

/* A transfer the front end stopped: finished, its error naming its URL (the message a
 * cancelled query shows beside the front end's own). */
static void interrupted(xfer *x, const vd_err *why) {
  char url[1100];
  where(x, url, sizeof url);
  x->req->rc = vd_fail(&x->req->err, why->code, "%s: %s", url, why->msg);
  x->finished = 1;
}

static void xfer_free(xfer *x) {
  if (x->h) curl_easy_cleanup(x->h);
  x->h = NULL;
  curl_slist_free_all(x->hdrs);
  x->hdrs = NULL;
  curl_slist_free_all(x->conn_to);
  x->conn_to = NULL;
  vd_objinfo_free(&x->hinfo);
  free(x->cur);
  x->cur = NULL;
}

static void run(vd_ctx *ctx, xfer *xs, int n) {
  vd_err err;
  vd_http *hp = get_http(ctx, &err);
  if (!hp) {
    for (int i = 0; i < n; i++) {
      xs[i].req->rc = err.code;
      xs[i].req->err = err;
    }
    return;
  }
  driver d;
  drv_init(&d, ctx, hp->multi);
  for (int i = 0; i < n; i++)
    if (drv_add(&d, &xs[i])) {
      for (int k = 0; k < n; k++) xs[k].req->rc = vd_nomem(&xs[k].req->err);
      free(d.wait);
      return;
    }
  int done = 0;
  while (done < n && (d.active || d.nwait)) {
    if (vd_ctx_check_interrupt(ctx, &err)) { /* abort what is under way, each named */
      for (int i = 0; i < n; i++)
        if (!xs[i].finished) {
          drv_drop(&d, &xs[i]);
          interrupted(&xs[i], &err);
        }
      break;
    }
    done += drv_turn(&d, 1);
  }
  free(d.wait);
}

vd_code vd_http_get_many(vd_ctx *ctx, vd_getreq **reqs, int n, const vd_http_hook *hook) {
  xfer *xs = calloc(n ? n : 1, sizeof *xs);
  if (!xs) {
    for (int i = 0; i < n; i++) reqs[i]->rc = vd_nomem(&reqs[i]->err);
    return VD_NOMEM;
  }
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (reqs[i]->len == 0 && !reqs[i]->want_info && !reqs[i]->head) { /* nothing to read: no request */
      reqs[i]->rc = VD_OK;
      reqs[i]->body.len = 0;
      continue;
    }
    xs[m].hook = hook;
    if (reqs[i]->head) {
      reqs[i]->want_info = 1;
      xs[m].head = 1;
    }
    xs[m++].req = reqs[i];
  }
  if (m) run(ctx, xs, m);
  vd_code first = VD_OK;
  for (int i = 0; i < m; i++) xfer_free(&xs[i]);
  for (int i = 0; i < n; i++)
    if (reqs[i]->rc && !first) first = reqs[i]->rc;
  free(xs);
  return first;
}

vd_code vd_http_head(vd_ctx *ctx, const char *url, vd_objinfo *info, const vd_http_hook *hook, vd_err *err) {
  vd_getreq r = {0};
  r.url = url;
  r.len = -1;
  r.want_info = 1;
  xfer x = {0};
  x.req = &r;
  x.hook = hook;
  x.head = 1;
  run(ctx, &x, 1);
  xfer_free(&x);
  vd_buf_free(&r.body);
  if (r.rc) {
    *err = r.err;
    return r.rc;
  }
  *info = r.info;
  return VD_OK;
}

vd_code vd_http_send(vd_ctx *ctx, const char *method, const char *url, vd_putreq *put, const vd_http_hook *hook,
                     vd_err *err) {
  vd_getreq r = {0};
  r.url = url;
  r.len = -1;
  xfer x = {0};
  x.req = &r;
  x.hook = hook;
  x.method = method;
  x.put = put;
  if (!x.hook) return vd_fail(err, VD_UNSUPPORTED, "internal error: %s without a backend hook", method);
  run(ctx, &x, 1);
  xfer_free(&x);
  vd_buf_free(&r.body);
  if (r.rc) {
    *err = r.err;
    vd_objinfo_free(&r.info);
    return r.rc;
  }
  if (put) snprintf(put->etag, sizeof put->etag, "%s", r.info.etag);
  vd_objinfo_free(&r.info);
  return VD_OK;
}

/* x carries p: a DELETE, or a PUT of its body. */
static void xfer_put(xfer *x, vd_putreq *p) {
  x->method = p->del ? "DELETE" : "PUT";
  x->put = p->del ? NULL : p;
}

void vd_http_put_many(vd_ctx *ctx, vd_putreq **puts, int n, const vd_http_hook *hook, vd_code *rc, vd_err *errs) {
  vd_getreq *rs = calloc(n ? n : 1, sizeof *rs);
  xfer *xs = calloc(n ? n : 1, sizeof *xs);
  if (!rs || !xs) {
    for (int i = 0; i < n; i++) rc[i] = vd_nomem(&errs[i]);
    free(rs);
    free(xs);
    return;
  }
  for (int i = 0; i < n; i++) {
    rs[i].url = puts[i]->url;
    rs[i].len = -1;
    xs[i].req = &rs[i];
    xs[i].hook = hook;
    xfer_put(&xs[i], puts[i]);
  }
  run(ctx, xs, n);
  for (int i = 0; i < n; i++) {
    xfer_free(&xs[i]);
    vd_buf_free(&rs[i].body);
    rc[i] = rs[i].rc;
    errs[i] = rs[i].err;
    if (!rc[i]) snprintf(puts[i]->etag, sizeof puts[i]->etag, "%s", rs[i].info.etag);
    vd_objinfo_free(&rs[i].info);
  }
  free(rs);
  free(xs);
}

void vd_http_post_many(vd_ctx *ctx, vd_putreq **p, vd_getreq *ans, int n, const vd_http_hook *hook) {
  xfer *xs = calloc(n ? n : 1, sizeof *xs);
  for (int i = 0; i < n; i++) {
    memset(&ans[i], 0, sizeof ans[i]);
    ans[i].url = p[i]->url;
    ans[i].len = -1;
    if (!xs) ans[i].rc = vd_nomem(&ans[i].err);
  }
  if (!xs) return;
  for (int i = 0; i < n; i++) {
    xs[i].req = &ans[i];
    xs[i].hook = hook;
    xs[i].method = "POST";
    xs[i].put = p[i];
  }
  run(ctx, xs, n);
  for (int i = 0; i < n; i++) {
    xfer_free(&xs[i]);
    vd_objinfo_free(&ans[i].info);
  }
  free(xs);
}

void vd_http_send_batches(vd_ctx *ctx, vd_batch *bs, int nb, const vd_http_hook *hook, vd_batch_read read, void *arg,
                          vd_delreq *d, char *const *where) {
  vd_putreq **pp = malloc((nb ? (size_t)nb : 1) * sizeof *pp);
  vd_getreq *ans = calloc(nb ? (size_t)nb : 1, sizeof *ans);
  for (int k = 0; k < nb && pp; k++) pp[k] = &bs[k].put;
  if (pp && ans && nb) vd_http_post_many(ctx, pp, ans, nb, hook);
  for (int k = 0; k < nb; k++) {
    vd_batch *t = &bs[k];
    const char **ws = malloc((size_t)t->m * sizeof *ws);
    vd_code *rcs = malloc((size_t)t->m * sizeof *rcs);
    vd_err *es = malloc((size_t)t->m * sizeof *es);
    int all = pp && ans && ws && rcs && es;
    for (int j = 0; j < t->m; j++) {
      vd_delreq *o = &d[t->idx[j]];
      if (!all) o->rc = vd_nomem(&o->err);
      else if (ans[k].rc) o->rc = vd_fail(&o->err, ans[k].rc, "%s: not deleted: %s", where[t->idx[j]], ans[k].err.msg);
      else ws[j] = where[t->idx[j]];
    }
    if (all && !ans[k].rc) {
      read(ans[k].body.data ? (const char *)ans[k].body.data : "", ans[k].body.len, t, ws, arg, rcs, es);
      for (int j = 0; j < t->m; j++) {
        d[t->idx[j]].rc = rcs[j];
        if (rcs[j]) d[t->idx[j]].err = es[j];
      }
    }
    free(ws), free(rcs), free(es);
    if (ans) vd_buf_free(&ans[k].body);
  }
  free(pp);
  free(ans);
}

/* The hook's refusal of a put, before any request. */
static vd_code check_put(const vd_putreq *p, const vd_http_hook *hook, const char *where, vd_err *err) {
  return hook && hook->check_put ? hook->check_put(p, where, err) : VD_OK;
}

/* What every put (or delete) goes through before its request: the hook's refusal (a
 * delete has no body to refuse) and the cached copy of the object dropped. */
static vd_code put_begin(vd_ctx *ctx, const vd_putreq *p, const vd_http_hook *hook, vd_err *err) {
  char where[600];
  vd_url_redact(p->url, where, sizeof where);
  vd_code rc = p->del ? VD_OK : check_put(p, hook, where, err);
  if (!rc) vd_cache_drop(ctx->cache, p->url);
  return rc;
}

vd_code vd_http_put_one(vd_ctx *ctx, vd_putreq *p, const vd_http_hook *hook, vd_err *err) {
  vd_code rc = put_begin(ctx, p, hook, err);
  return rc ? rc : vd_http_send(ctx, "PUT", p->url, p, hook, err);
}

vd_code vd_http_del(vd_ctx *ctx, const char *url, const vd_http_hook *hook, vd_err *err) {
  vd_cache_drop(ctx->cache, url);
  return vd_http_send(ctx, "DELETE", url, NULL, hook, err);
}

void vd_http_put_many_checked(vd_ctx *ctx, vd_putreq **p, int n, const vd_http_hook *hook, vd_code *rc,
                              vd_err *errs) {
  vd_putreq **ok = malloc((n ? n : 1) * sizeof *ok);
  int *at = malloc((n ? n : 1) * sizeof *at), m = 0;
  if (!ok || !at) {
    for (int i = 0; i < n; i++) rc[i] = vd_nomem(&errs[i]);
    free(ok);
    free(at);
    return;
  }
  for (int i = 0; i < n; i++) { /* what the backend's put refuses is refused here, without a request */
    if ((rc[i] = put_begin(ctx, p[i], hook, &errs[i]))) continue;
    at[m] = i;
    ok[m++] = p[i];
  }
  vd_code *r2 = malloc((m ? m : 1) * sizeof *r2);
  vd_err *e2 = malloc((m ? m : 1) * sizeof *e2);
  if (!r2 || !e2) {
    for (int k = 0; k < m; k++) rc[at[k]] = vd_nomem(&errs[at[k]]);
  } else {
    vd_http_put_many(ctx, ok, m, hook, r2, e2);
    for (int k = 0; k < m; k++) {
      rc[at[k]] = r2[k];
      errs[at[k]] = e2[k];
    }
  }
  free(r2);
  free(e2);
  free(ok);
  free(at);
}

vd_code vd_http_get_listing(vd_ctx *ctx, vd_getreq *r, const vd_http_hook *hook, const char *where, vd_err *err) {
  r->info.size = -1; /* as for any get */
  vd_code rc = vd_http_get_hooked(ctx, r, hook);
  if (!rc) return VD_OK;
  /* name the listed URL, not the request's internal form */
  char tmp[600];
  vd_url_redact(r->url, tmp, sizeof tmp);
  size_t tlen = strlen(tmp);
  const char *rest = strncmp(r->err.msg, tmp, tlen) == 0 ? r->err.msg + tlen : NULL;
  if (rest && rest[0] == ':')
    vd_fail(err, rc, "%s: listing%s", where, rest);
  else
    *err = r->err;
  return rc;
}

vd_code vd_http_get_hooked(vd_ctx *ctx, vd_getreq *r, const vd_http_hook *hook) {
  xfer x = {0};
  x.req = r;
  x.hook = hook;
  run(ctx, &x, 1);
  xfer_free(&x);
  return r->rc;
}

/* Requests left in flight between calls on the context's multi handle, so that they
 * reuse its connections (a point lookup's page goes on the connection that brought the
 * documents); a blocking call made meanwhile (another cursor of the same query) settles
 * those that finish during it. Closing aborts what is still under way. */
struct vd_http_async {
  driver d;
  xfer **xs; /* started, not yet waited for */
  int n, cap;
};

vd_code vd_http_async_new(vd_ctx *ctx, vd_http_async **out, vd_err *err) {
  *out = NULL;
  vd_http *hp = get_http(ctx, err);
  if (!hp) return err->code;
  vd_http_async *a = calloc(1, sizeof *a);
  if (!a) return vd_nomem(err);
  drv_init(&a->d, ctx, hp->multi);
  *out = a;
  return VD_OK;
}

/* Adds a request (put: a PUT or DELETE of it) to the set and sets it on its way. */
static vd_code async_add(vd_http_async *a, vd_getreq *r, vd_putreq *put, const vd_http_hook *hook, vd_err *err) {
  r->rc = VD_OK;
  vd_err_clear(&r->err);
  r->info.size = -1;
  if (a->n == a->cap) {
    int cap = a->cap ? 2 * a->cap : 16;
    xfer **xs = realloc(a->xs, cap * sizeof *xs);
    if (!xs) return vd_nomem(err);
    a->xs = xs;
    a->cap = cap;
  }
  xfer *x = calloc(1, sizeof *x);
  if (!x) return vd_nomem(err);
  x->req = r;
  x->hook = hook;
  if (put) xfer_put(x, put);
  if (drv_add(&a->d, x)) {
    free(x);
    return vd_nomem(err);
  }
  a->xs[a->n++] = x;
  drv_turn(&a->d, 0); /* on its way now, not at the next wait */
  return VD_OK;
}

vd_code vd_http_async_start(vd_http_async *a, vd_getreq *r, const vd_http_hook *hook, vd_err *err) {
  return async_add(a, r, NULL, hook, err);
}

vd_code vd_http_async_put(vd_http_async *a, vd_getreq *r, vd_putreq *p, const vd_http_hook *hook, vd_err *err) {
  if (!hook) {
    char where[600];
    vd_url_redact(p->url, where, sizeof where);
    return vd_fail(err, VD_UNSUPPORTED, "internal error: %s without a backend hook", where);
  }
  vd_code rc = put_begin(a->d.ctx, p, hook, err);
  if (rc) return rc;
  p->etag[0] = 0;
  r->url = p->url;
  r->len = -1;
  return async_add(a, r, p, hook, err);
}

/* Takes the set's i-th request out of it (it is finished). */
static void async_forget(vd_http_async *a, int i) {
  xfer *x = a->xs[i];
  vd_getreq *r = x->req;
  if (x->put && !r->rc) snprintf(x->put->etag, sizeof x->put->etag, "%s", r->info.etag);
  xfer_free(x);
  free(x);
  memmove(a->xs + i, a->xs + i + 1, (a->n - i - 1) * sizeof *a->xs);
  a->n--;
}

vd_code vd_http_async_next(vd_http_async *a, int block, vd_getreq **out, vd_err *err) {
  *out = NULL;
  for (;;) {
    for (int i = 0; i < a->n; i++)
      if (a->xs[i]->finished) {
        *out = a->xs[i]->req;
        async_forget(a, i);
        return VD_OK;
      }
    if (!a->n || !(a->d.active || a->d.nwait)) return VD_OK;
    vd_code rc = vd_ctx_check_interrupt(a->d.ctx, err);
    if (rc) { /* the request waited for named: the first one still under way */
      for (int i = 0; i < a->n; i++)
        if (!a->xs[i]->finished) {
          char url[1100];
          where(a->xs[i], url, sizeof url);
          return vd_err_prefix(err, "%s", url);
        }
      return rc;
    }
    int done = drv_turn(&a->d, block);
    if (!block && !done) return VD_OK;
  }
}

void vd_http_async_wait(vd_http_async *a, vd_getreq *r) {
  int i = 0;
  while (i < a->n && a->xs[i]->req != r) i++;
  if (i == a->n) return; /* not started here: nothing to wait for */
  xfer *x = a->xs[i];
  while (!x->finished && (a->d.active || a->d.nwait)) {
    vd_err e;
    if (vd_ctx_check_interrupt(a->d.ctx, &e)) {
      drv_drop(&a->d, x);
      interrupted(x, &e);
      break;
    }
    drv_turn(&a->d, 1);
  }
  if (!x->finished) r->rc = vd_fail(&r->err, VD_IO, "internal error: a request was lost"); /* cannot happen */
  async_forget(a, i);
}

void vd_http_async_free(vd_http_async *a) {
  if (!a) return;
  for (int i = 0; i < a->n; i++) {
    drv_drop(&a->d, a->xs[i]);
    xfer_free(a->xs[i]);
    free(a->xs[i]);
  }
  free(a->d.wait);
  free(a->xs);
  free(a);
}

/* Read-only: put, list and delete are refused by the store with one wording. */
/* Plain http(s): the transport without a hook, read-only */
static vd_code http_get_many(vd_ctx *ctx, vd_getreq **reqs, int n) { return vd_http_get_many(ctx, reqs, n, NULL); }
static vd_code http_head(vd_ctx *ctx, const char *url, vd_objinfo *info, vd_err *err) {
  return vd_http_head(ctx, url, info, NULL, err);
}
const vd_backend_ops vd_http_ops = {.id = VD_BE_HTTP, .get_many = http_get_many, .head = http_head};
