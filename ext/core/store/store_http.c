/* http(s) backend on libcurl's multi interface: range GETs and HEADs, many in flight
 * on one thread over reused keep-alive connections, retries with exponential backoff
 * on 5xx/429/408 and transport faults, protocols pinned to http and https. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "store.h"

struct vd_http {
  CURLM *multi;
};

typedef struct xfer {
  vd_getreq *req;
  CURL *h;
  int head;            /* HEAD instead of GET */
  int attempt;
  double not_before;   /* backoff: do not start before this time */
  long status;
  int64_t range_start; /* from Content-Range, -1 if none */
  vd_objinfo hinfo;    /* headers of the current response */
  char errbuf[CURL_ERROR_SIZE];
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

static size_t on_body(char *p, size_t sz, size_t n, void *ud) {
  xfer *x = ud;
  size_t len = sz * n;
  if (vd_buf_append(&x->req->body, p, len)) return 0; /* out of memory aborts the transfer */
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
  if (starts(line, len, "HTTP/", &k)) { /* a new response (redirect, 100-continue): start over */
    vd_objinfo_free(&x->hinfo);
    memset(&x->hinfo, 0, sizeof x->hinfo);
    x->hinfo.size = -1;
    x->range_start = -1;
    return sz * n;
  }
  const char *colon = memchr(line, ':', len);
  if (!colon) return sz * n;
  size_t nl = (size_t)(colon - line);
  const char *v = colon + 1, *end = line + len;
  while (v < end && (*v == ' ' || *v == '\t')) v++;
  size_t vl = (size_t)(end - v);
  char tmp[256];
  if (nl == 14 && strncasecmp(line, "content-length", 14) == 0 && vl < sizeof tmp) {
    memcpy(tmp, v, vl);
    tmp[vl] = 0;
    if (x->hinfo.size < 0) x->hinfo.size = strtoll(tmp, NULL, 10);
  } else if (nl == 13 && strncasecmp(line, "content-range", 13) == 0 && vl < sizeof tmp) {
    /* bytes a-b/total: the object's size is total, our slice starts at a */
    memcpy(tmp, v, vl);
    tmp[vl] = 0;
    long long a, b, t;
    if (sscanf(tmp, "bytes %lld-%lld/%lld", &a, &b, &t) == 3) {
      x->range_start = a;
      x->hinfo.size = t;
    }
  } else if (nl == 4 && strncasecmp(line, "etag", 4) == 0) {
    snprintf(x->hinfo.etag, sizeof x->hinfo.etag, "%.*s", (int)vl, v);
  } else if (starts(line, nl, "x-amz-meta-", &k) || starts(line, nl, "x-ms-meta-", &k) ||
             starts(line, nl, "x-goog-meta-", &k)) {
    vd_objinfo_add_meta(&x->hinfo, line + k, nl - k, v, vl);
  }
  return sz * n;
}

static int retryable(CURLcode cc, long status) {
  if (cc == CURLE_OK) return status >= 500 || status == 429 || status == 408;
  return cc == CURLE_OPERATION_TIMEDOUT || cc == CURLE_COULDNT_CONNECT || cc == CURLE_GOT_NOTHING ||
         cc == CURLE_RECV_ERROR || cc == CURLE_SEND_ERROR || cc == CURLE_PARTIAL_FILE;
}

static const char *reason(long s) {
  switch (s) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 416: return "Range Not Satisfiable";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

static vd_code setup(vd_ctx *ctx, vd_http *hp, xfer *x, vd_err *err) {
  (void)hp;
  if (!x->h && !(x->h = curl_easy_init())) return vd_nomem(err);
  CURL *h = x->h;
  vd_getreq *r = x->req;
  curl_easy_reset(h);
  r->body.len = 0;
  vd_objinfo_free(&x->hinfo);
  memset(&x->hinfo, 0, sizeof x->hinfo);
  x->hinfo.size = -1;
  x->range_start = -1;
  x->errbuf[0] = 0;
  curl_easy_setopt(h, CURLOPT_URL, r->url);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(ctx->cfg.http_timeout * 1000));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(ctx->cfg.http_connect_timeout * 1000));
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->errbuf);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "vdsql/0.1");
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
  curl_easy_setopt(h, CURLOPT_PRIVATE, x);
  if (ctx->cfg.ca_file[0]) curl_easy_setopt(h, CURLOPT_CAINFO, ctx->cfg.ca_file);
  if (x->head) {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (r->off > 0 || r->len >= 0) {
    char range[64];
    if (r->len < 0)
      snprintf(range, sizeof range, "%lld-", (long long)r->off);
    else if (r->len == 0)
      range[0] = 0;
    else
      snprintf(range, sizeof range, "%lld-%lld", (long long)r->off, (long long)(r->off + r->len - 1));
    if (range[0]) curl_easy_setopt(h, CURLOPT_RANGE, range);
  }
  return VD_OK;
}

/* A finished attempt: 1 = done (ok or failed for good), 0 = try again. */
static int finish(vd_ctx *ctx, xfer *x, CURLcode cc) {
  vd_getreq *r = x->req;
  vd_stats *s = &ctx->stats[VD_BE_HTTP];
  char url[512];
  vd_url_redact(r->url, url, sizeof url);
  long status = 0;
  curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
  x->status = status;
  s->bytes += (int64_t)r->body.len;
  if (retryable(cc, status) && x->attempt < ctx->cfg.http_retries) {
    x->attempt++;
    s->retries++;
    x->not_before = now() + ctx->cfg.http_retry_delay_ms / 1000.0 * (double)(1 << (x->attempt - 1));
    return 0;
  }
  char tries[48] = "";
  if (x->attempt) snprintf(tries, sizeof tries, " after %d retries", x->attempt);
  if (cc != CURLE_OK) {
    r->rc = vd_fail(&r->err, VD_IO, "%s: %s%s%s%s%s", url, curl_easy_strerror(cc),
                    x->errbuf[0] ? " (" : "", x->errbuf, x->errbuf[0] ? ")" : "", tries);
    return 1;
  }
  if (status == 404 || status == 410) {
    r->rc = vd_fail(&r->err, VD_NOTFOUND, "%s: HTTP %ld %s", url, status, reason(status));
    return 1;
  }
  if (status != 200 && status != 206) {
    r->rc = vd_fail(&r->err, status == 416 ? VD_INVALID : VD_IO, "%s: HTTP %ld %s%s", url, status,
                    reason(status), tries);
    return 1;
  }
  if (!x->head && (r->off > 0 || r->len >= 0) && status == 200) {
    /* the server ignored Range and sent everything: keep our slice */
    int64_t total = (int64_t)r->body.len;
    int64_t a = r->off > total ? total : r->off;
    int64_t b = r->len < 0 || a + r->len > total ? total : a + r->len;
    memmove(r->body.data, r->body.data + a, (size_t)(b - a));
    r->body.len = (size_t)(b - a);
    x->hinfo.size = total;
  } else if (!x->head && status == 206 && x->range_start >= 0 && x->range_start != r->off) {
    r->rc = vd_fail(&r->err, VD_IO, "%s: server answered bytes from %lld, asked from %lld", url,
                    (long long)x->range_start, (long long)r->off);
    return 1;
  }
  if (status == 200 && !x->head && x->hinfo.size < 0) x->hinfo.size = (int64_t)r->body.len;
  if (r->want_info) {
    r->info = x->hinfo;
    memset(&x->hinfo, 0, sizeof x->hinfo);
    curl_off_t ft = -1;
    if (curl_easy_getinfo(x->h, CURLINFO_FILETIME_T, &ft) == CURLE_OK && ft > 0) r->info.mtime = ft;
  }
  r->rc = VD_OK;
  return 1;
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
  int parallel = ctx->cfg.http_parallel > 0 ? ctx->cfg.http_parallel : 1;
  curl_multi_setopt(hp->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)parallel);
  curl_multi_setopt(hp->multi, CURLMOPT_MAXCONNECTS, (long)parallel);
  int active = 0, done = 0;
  int *queue = malloc(n * sizeof *queue); /* indices waiting to (re)start */
  int qlen = 0;
  if (!queue) {
    for (int i = 0; i < n; i++) xs[i].req->rc = vd_nomem(&xs[i].req->err);
    return;
  }
  for (int i = 0; i < n; i++) queue[qlen++] = i;
  while (done < n) {
    double t = now(), wait_until = 0;
    for (int q = 0; q < qlen && active < parallel;) {
      xfer *x = &xs[queue[q]];
      if (x->not_before > t) {
        if (!wait_until || x->not_before < wait_until) wait_until = x->not_before;
        q++;
        continue;
      }
      vd_code rc = setup(ctx, hp, x, &x->req->err);
      if (rc) {
        x->req->rc = rc;
        done++;
      } else {
        ctx->stats[VD_BE_HTTP].requests++;
        curl_multi_add_handle(hp->multi, x->h);
        active++;
      }
      queue[q] = queue[--qlen];
    }
    if (!active && qlen) { /* everyone is backing off */
      double d = wait_until - now();
      if (d > 0) {
        struct timespec ts = {(time_t)d, (long)((d - (time_t)d) * 1e9)};
        nanosleep(&ts, NULL);
      }
      continue;
    }
    if (!active) break;
    int running = 0;
    curl_multi_perform(hp->multi, &running);
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(hp->multi, &left))) {
      if (m->msg != CURLMSG_DONE) continue;
      xfer *x = NULL;
      curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
      CURLcode cc = m->data.result;
      curl_multi_remove_handle(hp->multi, m->easy_handle);
      active--;
      if (finish(ctx, x, cc))
        done++;
      else
        queue[qlen++] = (int)(x - xs);
    }
    if (active) {
      int ms = 1000;
      if (qlen && wait_until) {
        double d = (wait_until - now()) * 1000;
        ms = d < 0 ? 0 : d < ms ? (int)d : ms;
      }
      curl_multi_poll(hp->multi, NULL, 0, ms, NULL);
    }
  }
  free(queue);
}

vd_code vd_http_get_many(vd_ctx *ctx, vd_getreq **reqs, int n) {
  xfer *xs = calloc(n, sizeof *xs);
  if (!xs) {
    for (int i = 0; i < n; i++) reqs[i]->rc = vd_nomem(&reqs[i]->err);
    return VD_NOMEM;
  }
  for (int i = 0; i < n; i++) xs[i].req = reqs[i];
  run(ctx, xs, n);
  vd_code first = VD_OK;
  for (int i = 0; i < n; i++) {
    if (xs[i].h) curl_easy_cleanup(xs[i].h);
    vd_objinfo_free(&xs[i].hinfo);
    if (reqs[i]->rc && !first) first = reqs[i]->rc;
  }
  free(xs);
  return first;
}

vd_code vd_http_head(vd_ctx *ctx, const char *url, vd_objinfo *info, vd_err *err) {
  vd_getreq r = {0};
  r.url = url;
  r.len = -1;
  r.want_info = 1;
  xfer x = {0};
  x.req = &r;
  x.head = 1;
  run(ctx, &x, 1);
  if (x.h) curl_easy_cleanup(x.h);
  vd_objinfo_free(&x.hinfo);
  vd_buf_free(&r.body);
  if (r.rc) {
    *err = r.err;
    return r.rc;
  }
  *info = r.info;
  return VD_OK;
}
