/* vd_ahead (see store.h): whole objects fetched ahead in a bounded window, taken in the
 * order pushed. Over http the requests run on a vd_http_async, so they are answered
 * while the caller works on earlier objects; local files are read when taken (a read
 * ahead would only hold memory sooner). */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cache.h"
#include "store.h"

typedef struct slot {
  char *url;
  vd_blob *blob; /* a cached copy, found when pushed */
  int http;      /* started on the async set */
  vd_getreq req;
} slot;

struct vd_ahead {
  vd_ctx *ctx;
  int window, cache;
  slot *ring;
  int head, n;
  vd_http_async *http;
};

vd_code vd_ahead_open(vd_ctx *ctx, int window, int cache, vd_ahead **out, vd_err *err) {
  vd_ahead *a = calloc(1, sizeof *a);
  if (window < 1) window = 1;
  if (!a || !(a->ring = calloc(window, sizeof *a->ring))) {
    free(a);
    *out = NULL;
    return vd_nomem(err);
  }
  a->ctx = ctx;
  a->window = window;
  a->cache = cache;
  *out = a;
  return VD_OK;
}

int vd_ahead_room(const vd_ahead *a) { return a->window - a->n; }

int vd_ahead_pending(const vd_ahead *a) { return a->n; }

static void slot_clear(slot *s) {
  free(s->url);
  vd_blob_unref(s->blob);
  vd_buf_free(&s->req.body);
  vd_objinfo_free(&s->req.info);
  memset(s, 0, sizeof *s);
}

vd_code vd_ahead_push(vd_ahead *a, const char *url, vd_err *err) { return vd_ahead_push_range(a, url, 0, -1, err); }

vd_code vd_ahead_push_range(vd_ahead *a, const char *url, int64_t off, int64_t len, vd_err *err) {
  if (a->n == a->window) return vd_fail(err, VD_INVALID, "internal error: fetch-ahead window full");
  vd_code rc = vd_url_check(url, err);
  if (rc) return rc;
  slot *s = &a->ring[(a->head + a->n) % a->window];
  memset(s, 0, sizeof *s);
  if (!(s->url = strdup(url))) return vd_nomem(err);
  s->req.url = s->url;
  s->req.off = off;
  s->req.len = len;
  vd_ctx *ctx = a->ctx;
  if (len < 0 && (s->blob = vd_cache_get(ctx->cache, url, ctx->cfg.cache_ttl))) { /* the cache holds whole objects */
    ctx->stats[vd_url_backend(url)].cache_hits++;
  } else if (vd_store_on_http(url)) {
    if (!a->http && (rc = vd_http_async_new(ctx, &a->http, err))) {
      slot_clear(s);
      return rc;
    }
    if ((rc = vd_http_async_start(a->http, &s->req, vd_backend_of(s->req.url)->hook, err))) {
      slot_clear(s);
      return rc;
    }
    s->http = 1;
  }
  a->n++;
  return VD_OK;
}

vd_code vd_ahead_take(vd_ahead *a, vd_blob **out, vd_err *err) {
  *out = NULL;
  if (!a->n) return vd_fail(err, VD_INVALID, "internal error: nothing fetched ahead");
  slot *s = &a->ring[a->head];
  a->head = (a->head + 1) % a->window;
  a->n--;
  vd_code rc = VD_OK;
  if (s->blob) {
    *out = vd_blob_ref(s->blob);
  } else {
    if (s->http)
      vd_http_async_wait(a->http, &s->req);
    else
      vd_get_many(a->ctx, &s->req, 1);
    if ((rc = s->req.rc)) {
      *err = s->req.err;
    } else if (!(*out = vd_blob_from_buf(&s->req.body))) {
      rc = vd_nomem(err);
    } else if (a->cache && s->req.len < 0 && a->ctx->cfg.cache_ttl > 0) {
      vd_cache_put(a->ctx->cache, s->url, *out, a->ctx->cfg.cache_size);
    }
  }
  slot_clear(s);
  return rc;
}

void vd_ahead_close(vd_ahead *a) {
  if (!a) return;
  vd_http_async_free(a->http); /* first: it points into the slots */
  for (int i = 0; i < a->n; i++) slot_clear(&a->ring[(a->head + i) % a->window]);
  free(a->ring);
  free(a);
}
