/* vd_putq (see store.h): uploads that keep the pipe full. A writer pushes puts one at a
 * time as it makes them; over the http transport max_parallel of them are in flight on
 * a vd_http_async, and the moment one finishes the oldest waiting one is started, before
 * control goes back to the writer, so the link never idles while puts are queued (a
 * batch of puts would wait for its slowest before the next batch could start). The
 * queue holds a bounded window of puts, not the writer's whole transaction. Local files
 * are put when pushed: a file system has no round trip to hide. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "store.h"

enum { FREE, WAITING, SENT };

typedef struct pslot {
  int state;
  int64_t tag, seq; /* seq: the order pushed, which is the order started */
  char *url;
  char *fallback; /* where the body goes when url exists already (url is put create-only) */
  int fell;       /* it went there */
  vd_buf body;
  vd_kv *meta;
  int nmeta;
  vd_putreq put;
  vd_getreq req;
} pslot;

typedef struct done {
  int64_t tag;
  int fell;
  vd_code rc;
  vd_err err;
} done;

struct vd_putq {
  vd_ctx *ctx;
  int window, parallel;
  size_t max_bytes, bytes; /* bytes: of the bodies held */
  pslot *s;
  int held, sent;          /* slots in use; of them started */
  int64_t seq;
  done *d;                 /* finished and not yet taken, in the order they finished */
  int dhead, nd, cd;
  vd_http_async *http;
  int stopped;
  vd_code failed;          /* the first failure: nothing more starts */
  vd_err ferr;
};

vd_code vd_putq_open(vd_ctx *ctx, int window, size_t max_bytes, vd_putq **out, vd_err *err) {
  *out = NULL;
  if (window < 1) window = 1;
  vd_putq *q = calloc(1, sizeof *q);
  if (!q || !(q->s = calloc(window, sizeof *q->s))) {
    free(q);
    return vd_nomem(err);
  }
  q->ctx = ctx;
  q->window = window;
  q->parallel = ctx->cfg.max_parallel < 1 ? 1 : ctx->cfg.max_parallel < window ? ctx->cfg.max_parallel : window;
  q->max_bytes = max_bytes;
  *out = q;
  return VD_OK;
}

static void slot_clear(pslot *s) {
  free(s->url);
  free(s->fallback);
  vd_buf_free(&s->body);
  for (int i = 0; i < s->nmeta; i++) {
    free(s->meta[i].key);
    free(s->meta[i].value);
  }
  free(s->meta);
  vd_buf_free(&s->req.body);
  vd_objinfo_free(&s->req.info);
  memset(s, 0, sizeof *s);
}

/* Hands a finished put back (the first failure stops the queue). */
static void record(vd_putq *q, int64_t tag, int fell, vd_code rc, const vd_err *err) {
  if (rc && !q->failed) {
    q->failed = rc;
    q->ferr = *err;
  }
  if (q->dhead == q->nd) q->dhead = q->nd = 0;
  if (q->nd == q->cd) {
    int cap = q->cd ? 2 * q->cd : 16;
    done *d = realloc(q->d, cap * sizeof *d);
    if (!d) { /* the record is lost: the queue fails rather than forget a put */
      if (!q->failed) q->failed = vd_nomem(&q->ferr);
      return;
    }
    q->d = d, q->cd = cap;
  }
  done *e = &q->d[q->nd++];
  e->tag = tag;
  e->fell = fell;
  e->rc = rc;
  if (rc) e->err = *err;
  else vd_err_clear(&e->err);
}

static void finish(vd_putq *q, pslot *s, vd_code rc, const vd_err *err) {
  record(q, s->tag, s->fell, rc, err);
  q->held--;
  q->bytes -= s->body.len;
  if (s->state == SENT) q->sent--;
  slot_clear(s);
}

/* After a failure or a stop: what has not started is handed back, never sent. */
static void drop_waiting(vd_putq *q, const char *why) {
  for (int i = 0; i < q->window; i++)
    if (q->s[i].state == WAITING) {
      char where[600];
      vd_err e;
      vd_url_redact(q->s[i].url, where, sizeof where);
      vd_fail(&e, VD_INTERRUPTED, "%s: not sent: %s", where, why);
      finish(q, &q->s[i], VD_INTERRUPTED, &e);
    }
}

/* Starts the oldest waiting puts while fewer than parallel are in flight. After a stop
 * only fallbacks wait (vd_putq_stop dropped the rest): each finishes a put that was in
 * flight, which the caller waits for (left waiting, vd_putq_wait would spin forever). */
static void start_waiting(vd_putq *q) {
  while (!q->failed && q->sent < q->parallel) {
    pslot *s = NULL;
    for (int i = 0; i < q->window; i++)
      if (q->s[i].state == WAITING && (!s || q->s[i].seq < s->seq)) s = &q->s[i];
    if (!s) break;
    vd_err e;
    vd_code rc = vd_http_async_put(q->http, &s->req, &s->put, vd_backend_of(s->url)->hook, &e);
    if (rc) {
      finish(q, s, rc, &e);
    } else {
      s->state = SENT;
      q->sent++;
    }
  }
  if (q->failed) drop_waiting(q, "an earlier put failed");
}

/* A create-only put refused because its url exists: the same body goes to the fallback
 * instead (0 when the slot has none). */
static int fall_back(pslot *s) {
  if (!s->fallback || s->fell) return 0;
  free(s->url);
  s->url = s->fallback;
  s->fallback = NULL;
  s->fell = 1;
  vd_buf_free(&s->req.body);
  vd_objinfo_free(&s->req.info);
  memset(&s->req, 0, sizeof s->req);
  s->put.url = s->url;
  s->put.if_none_match = 0;
  s->put.etag[0] = 0;
  s->state = WAITING;
  return 1;
}

/* Settles one finished put (waiting for one with block) and starts what may start;
 * *got: whether one was settled. */
static vd_code settle(vd_putq *q, int block, int *got, vd_err *err) {
  *got = 0;
  if (!q->http) return VD_OK;
  vd_getreq *r;
  vd_code rc = vd_http_async_next(q->http, block, &r, err);
  if (rc) return rc;
  if (!r) {
    if (block && q->sent) return vd_fail(err, VD_IO, "internal error: a put was lost"); /* cannot happen */
    return VD_OK;
  }
  for (int i = 0; i < q->window; i++)
    if (q->s[i].state == SENT && &q->s[i].req == r) {
      if (r->rc == VD_PRECONDITION && fall_back(&q->s[i])) { /* waits again, first in line (its seq) */
        q->sent--;
        break;
      }
      finish(q, &q->s[i], r->rc, &r->err);
      break;
    }
  *got = 1;
  start_waiting(q);
  return VD_OK;
}

/* The front end asked to stop: the puts in flight are abandoned (whether they landed is
 * unknown), the queue fails with why. */
static void abandon(vd_putq *q, const vd_err *why) {
  vd_http_async_free(q->http); /* first: its requests point into the slots */
  q->http = NULL;
  if (!q->failed) {
    q->failed = why->code;
    q->ferr = *why;
  }
  for (int i = 0; i < q->window; i++)
    if (q->s[i].state != FREE) finish(q, &q->s[i], why->code, why);
}

static vd_code failure(const vd_putq *q, vd_err *err) { return vd_fail(err, q->failed, "%s", q->ferr.msg); }

static vd_code copy_meta(pslot *s, const vd_kv *meta, int n) {
  if (!n) return VD_OK;
  if (!(s->meta = calloc(n, sizeof *s->meta))) return VD_NOMEM;
  s->nmeta = n;
  for (int i = 0; i < n; i++)
    if (!(s->meta[i].key = strdup(meta[i].key)) || !(s->meta[i].value = strdup(meta[i].value))) return VD_NOMEM;
  return VD_OK;
}

/* Waits until the queue has room for a put of len bytes (a finished one's successor
 * starts as it finishes). */
static vd_code make_room(vd_putq *q, vd_err *err) {
  while (!q->failed && (q->held >= q->window || (q->held && q->bytes >= q->max_bytes))) {
    int got;
    vd_code rc = settle(q, 1, &got, err);
    if (rc) {
      abandon(q, err);
      return rc;
    }
  }
  return q->failed ? failure(q, err) : VD_OK;
}

/* The put in a free slot, waiting (its body moved in). */
static vd_code add_slot(vd_putq *q, const char *url, const char *fallback, vd_buf *body, const vd_kv *meta,
                        int nmeta, int64_t tag, vd_err *err) {
  pslot *s = NULL;
  for (int i = 0; i < q->window && !s; i++)
    if (q->s[i].state == FREE) s = &q->s[i];
  if (!(s->url = strdup(url)) || (fallback && !(s->fallback = strdup(fallback))) || copy_meta(s, meta, nmeta)) {
    slot_clear(s);
    return vd_nomem(err);
  }
  s->body = *body;
  memset(body, 0, sizeof *body);
  s->state = WAITING;
  s->tag = tag;
  s->seq = q->seq++;
  s->put = (vd_putreq){.url = s->url, .body = s->body.data ? (const void *)s->body.data : "", .len = s->body.len,
                       .meta = s->meta, .nmeta = s->nmeta, .if_none_match = fallback != NULL};
  q->held++;
  q->bytes += s->body.len;
  return VD_OK;
}

vd_code vd_putq_push(vd_putq *q, const char *url, vd_buf *body, const vd_kv *meta, int nmeta, int64_t tag,
                     vd_err *err) {
  return vd_putq_push_create(q, url, NULL, body, meta, nmeta, tag, err);
}

vd_code vd_putq_push_create(vd_putq *q, const char *url, const char *fallback, vd_buf *body, const vd_kv *meta,
                         int nmeta, int64_t tag, vd_err *err) {
  vd_code rc = VD_OK;
  int fell = 0;
  vd_err e;
  if (q->failed || q->stopped) {
    char where[600];
    vd_url_redact(url, where, sizeof where);
    rc = vd_fail(&e, VD_INTERRUPTED, "%s: not sent: %s", where,
                 q->failed ? "an earlier put failed" : "the transaction was rolled back");
  } else if (!vd_store_on_http(url) || !vd_store_can_write(url)) { /* put now, in the caller's time */
    vd_putreq p = {.url = url, .body = body->data ? (const void *)body->data : "", .len = body->len,
                   .meta = meta, .nmeta = nmeta, .if_none_match = fallback != NULL};
    rc = vd_put(q->ctx, &p, &e);
    if (rc == VD_PRECONDITION && fallback) {
      p.url = fallback;
      p.if_none_match = 0;
      fell = 1;
      rc = vd_put(q->ctx, &p, &e);
    }
  } else if (!(rc = vd_url_check(url, &e)) && !(rc = q->http ? VD_OK : vd_http_async_new(q->ctx, &q->http, &e)) &&
             !(rc = make_room(q, &e)) && !(rc = add_slot(q, url, fallback, body, meta, nmeta, tag, &e))) {
    start_waiting(q);
    int got = 1;
    vd_code r2 = VD_OK;
    while (got && !q->failed && !(r2 = settle(q, 0, &got, &e))) { /* what finished meanwhile */
    }
    if (r2) abandon(q, &e); /* this put included: handed back by it */
    vd_buf_free(body);
    return q->failed ? failure(q, err) : VD_OK;
  }
  vd_buf_free(body);
  record(q, tag, fell, rc, &e); /* every push is handed back once, this one now */
  return q->failed ? failure(q, err) : VD_OK;
}

int vd_putq_take(vd_putq *q, int64_t *tag, int *fell, vd_code *rc, vd_err *err) {
  if (q->dhead == q->nd) return 0;
  done *e = &q->d[q->dhead++];
  *tag = e->tag;
  if (fell) *fell = e->fell;
  *rc = e->rc;
  *err = e->err;
  return 1;
}

int vd_putq_busy(const vd_putq *q, int64_t tag) {
  for (int i = 0; i < q->window; i++)
    if (q->s[i].state != FREE && q->s[i].tag == tag) return 1;
  return 0;
}

vd_code vd_putq_wait(vd_putq *q, int64_t tag, vd_err *err) {
  while (tag < 0 ? q->held > 0 : vd_putq_busy(q, tag)) {
    int got;
    vd_code rc = settle(q, 1, &got, err);
    if (rc) {
      abandon(q, err);
      return rc;
    }
  }
  return VD_OK;
}

void vd_putq_stop(vd_putq *q) {
  q->stopped = 1;
  drop_waiting(q, "the transaction was rolled back");
}

void vd_putq_close(vd_putq *q) {
  if (!q) return;
  vd_http_async_free(q->http);
  for (int i = 0; i < q->window; i++) slot_clear(&q->s[i]);
  free(q->s);
  free(q->d);
  free(q);
}
