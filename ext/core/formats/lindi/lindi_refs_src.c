/* The text lindi_refs streams (lindi_refs_stream.h): an archive's lindi.json member or a
 * .lindi.json, read in ranges; where it ends inside lindi's padding, found by probing
 * (lrs_text_end); and, over http, the text read ahead in parallel ranges up to where
 * the probes have seen text.
 *
 * Why read ahead only that far: a byte asked for past the end is padding read for
 * nothing, so without knowing where the end is what is in flight must stay a small part
 * of what was read (the stream's 1/25), and a scan costs about as many round trips as
 * requests (125 for 80 MB). Each round of probes shows text up to some offset, and the
 * pieces up to there go out at once, several in flight, while the next rounds narrow the
 * end down: a slow link then costs about a download, and nothing past the end is read.
 * Local files keep the stream's own reads (a round trip costs nothing there). */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "lindi.h"
#include "lindi_refs_stream.h"

/* --- the end of the text: probes ------------------------------------------------ */

#define PROBE 256             /* bytes per probe: a run of spaces this long is padding */
#define PROBES 15             /* per round: the interval shrinks 16-fold (4 rounds for 512 MiB) */
#define SETTLED ((int64_t)16 << 10)
#define ROUNDS 24

static int is_ws(unsigned char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* Why probes and not a read back from the end: lindi pads lindi.json with spaces up to 4
 * (and, rewritten in place, more) times its text, so the end is anywhere in the member
 * and the padding is most of it. Each round probes PROBES points spread over [lo, hi),
 * where the end is known to lie (until it is within `settled` bytes): a probe holding
 * text moves lo past its last non-space, one of only spaces (at or past lo) moves hi down
 * to it; the first round also probes
 * the source's last bytes (a text without padding ends there). A run of PROBE spaces
 * inside the text can make hi too low: the stream reads on past it (it never relies on
 * hi), so that costs requests, never a wrong row. */
vd_code lrs_text_end(lrs_probe_fn probe, lrs_progress_fn progress, void *ud, int64_t lo, int64_t size, int64_t plen,
                     int64_t settled, int64_t *hi_out, vd_err *err) {
  int64_t hi = size;
  if (lo < 0) lo = 0;
  vd_buf out[PROBES + 1];
  memset(out, 0, sizeof out);
  vd_code rc = VD_OK;
  for (int round = 0; !rc && hi - lo > settled && round < ROUNDS; round++) {
    int64_t off[PROBES + 1], step = (hi - lo) / (PROBES + 1);
    int n = 0;
    for (int i = 1; i <= PROBES; i++) off[n++] = lo + step * i;
    if (round == 0) off[n++] = size - plen > lo ? size - plen : lo;
    for (int i = 0; i < n; i++) out[i].len = 0;
    if ((rc = probe(ud, off, n, plen, out, err))) break;
    int64_t nlo = lo, nhi = hi;
    for (int i = 0; i < n; i++) {
      size_t k = out[i].len;
      while (k && is_ws(out[i].data[k - 1])) k--;
      if (k && off[i] + (int64_t)k > nlo) nlo = off[i] + (int64_t)k;
    }
    for (int i = 0; i < n; i++) {
      size_t k = out[i].len;
      while (k && is_ws(out[i].data[k - 1])) k--;
      if (!k && off[i] >= nlo && off[i] < nhi) nhi = off[i];
    }
    if (nhi < nlo) nhi = nlo;
    if (nlo == lo && nhi == hi) break; /* cannot happen with step > 0; a bound all the same */
    lo = nlo, hi = nhi;
    if (progress && (rc = progress(ud, lo, err))) break;
  }
  for (int i = 0; i <= PROBES; i++) vd_buf_free(&out[i]);
  *hi_out = rc ? -1 : hi;
  return rc;
}

/* --- the source ------------------------------------------------------------------ */

#define AHEAD 16                       /* pieces in flight at most (max_parallel fewer) */
#define PIECE_MIN ((int64_t)256 << 10)
#define PIECE_MAX ((int64_t)4 << 20)
#define INFLIGHT ((int64_t)16 << 20)   /* bytes in flight at most */
#define SEARCHING 0                    /* pieces in flight at most while the end is searched */
#define PROBE_MIN ((int64_t)2 << 20)   /* less member than this left: not probed for the read ahead */

typedef struct src {
  vd_ctx *ctx;
  char *url;
  vd_blob *prefix;   /* the archive's first bytes, already read (cached) to find the index */
  int64_t d, size;   /* where the text starts in the object; its bound (-1: not known yet) */
  int64_t end;       /* lrs_text_end's answer (-1: not asked yet) */
  int http;
  /* read ahead (http): pieces [take, next) in flight up to end, at most nahead of them */
  int planned;       /* 0 not yet, 1 reading ahead, -1 not */
  vd_ahead *ahead;
  int64_t take, next, piece_max, known;
  int nahead;        /* pieces in flight at most */
  int64_t lens[AHEAD]; /* each piece's length, in the order pushed */
  unsigned npushed, ntaken;
} src;

static vd_code src_probe(void *ud, const int64_t *off, int n, int64_t len, vd_buf *out, vd_err *err) {
  src *r = ud;
  vd_getreq q[PROBES + 1];
  int slot[PROBES + 1], m = 0;
  memset(q, 0, sizeof q);
  for (int i = 0; i < n && i <= PROBES; i++) {
    int64_t l = r->size >= 0 && len > r->size - off[i] ? r->size - off[i] : len, abs = r->d + off[i];
    if (l <= 0) continue;
    if (abs + l <= (int64_t)r->prefix->len) { /* no request for what the prefix holds */
      if (vd_buf_append(&out[i], r->prefix->data + abs, (size_t)l)) return vd_nomem(err);
      continue;
    }
    q[m].url = r->url, q[m].off = abs, q[m].len = l;
    slot[m++] = i;
  }
  vd_code rc = m ? vd_get_many(r->ctx, q, m) : VD_OK; /* in parallel over http */
  int told = 0;
  for (int k = 0; k < m; k++) {
    if (q[k].rc && !told) *err = q[k].err, told = 1; /* the first failure, as vd_get_many returns */
    if (!rc && vd_buf_append(&out[slot[k]], q[k].body.data, q[k].body.len)) rc = vd_nomem(err);
    vd_buf_free(&q[k].body);
    vd_objinfo_free(&q[k].info);
  }
  return rc;
}

/* Pieces may be asked for up to the end, or while it is searched, up to where the
 * probes have seen text. Full width at once, not a ramp from a small first piece: what
 * is known to be text is split over the free places (each piece PIECE_MIN at least,
 * piece_max at most), so that it comes in one round rather than one round per doubling. */
static vd_code push_pieces(src *r, vd_err *err) {
  int64_t lim = r->end >= 0 ? r->end : r->known;
  /* while the end is searched, the probes' rounds need the connections (16 probes,
   * max_parallel 16): a piece beside them would make a probe wait for a connection and
   * stretch the round, so SEARCHING pieces at most are in flight then */
  int room;
  while (r->next < lim && (room = r->end >= 0 ? vd_ahead_room(r->ahead)
                                              : SEARCHING - vd_ahead_pending(r->ahead)) > 0) {
    int64_t piece = (lim - r->next + room - 1) / room;
    if (piece < PIECE_MIN) piece = PIECE_MIN;
    if (piece > r->piece_max) piece = r->piece_max;
    int64_t l = lim - r->next < piece ? lim - r->next : piece;
    vd_code rc = vd_ahead_push_range(r->ahead, r->url, r->d + r->next, l, err);
    if (rc) return rc;
    r->next += l;
    r->lens[r->npushed++ % AHEAD] = l;
  }
  return VD_OK;
}

static vd_code src_progress(void *ud, int64_t lo, vd_err *err) {
  src *r = ud;
  if (lo > r->known) r->known = lo;
  return push_pieces(r, err);
}

/* Over http: the end searched for from off (the stream's next read) and the text read
 * ahead in pieces meanwhile, up to what the probes have seen, then up to the end. Up to
 * max_parallel pieces (AHEAD at most) are in flight and held, INFLIGHT bytes in all and
 * within max_alloc. A query that stops early (LIMIT) has only asked for the text known
 * when it stopped: the first read past the prefix starts all this. */
static vd_code plan(src *r, int64_t off, vd_err *err) {
  r->planned = -1;
  r->nahead = r->ctx->cfg.max_parallel < AHEAD ? r->ctx->cfg.max_parallel : AHEAD;
  if (r->nahead < 1) r->nahead = 1;
  int64_t cap = r->ctx->cfg.max_alloc / (r->nahead + 2), fair = INFLIGHT / r->nahead;
  vd_code rc = vd_ahead_open(r->ctx, r->nahead, 0, &r->ahead, err);
  if (rc) return rc;
  r->planned = 1;
  if (off < (int64_t)r->prefix->len - r->d) off = (int64_t)r->prefix->len - r->d; /* held already */
  r->take = r->next = r->known = off;
  if (cap > fair) cap = fair;
  r->piece_max = PIECE_MAX < cap ? PIECE_MAX : cap > 1 ? cap : 1;
  if ((rc = lrs_text_end(src_probe, src_progress, r, off, r->size, PROBE, SETTLED, &r->end, err))) return rc;
  return push_pieces(r, err);
}

static vd_code src_end(void *ud, int64_t lo, int64_t *hi, vd_err *err) {
  src *r = ud;
  *hi = -1;
  if (r->size < 0) { /* the JSON form before its first range: its size asked for */
    vd_objinfo info;
    vd_code rc = vd_head(r->ctx, r->url, &info, err);
    if (rc) return rc;
    r->size = info.size >= 0 ? info.size - r->d : -1;
    vd_objinfo_free(&info);
    if (r->size < 0) return VD_OK;
  }
  if (r->end < 0) {
    vd_code rc = r->http && !r->planned ? plan(r, lo, err)
                                        : lrs_text_end(src_probe, NULL, r, lo, r->size, PROBE, SETTLED, &r->end, err);
    if (rc) return rc;
  }
  *hi = r->end;
  return VD_OK;
}

static vd_code src_read(void *ud, int64_t off, int64_t len, vd_buf *out, int *eof, vd_err *err) {
  src *r = ud;
  /* each read is a round of the stream's scan: a text of tens of MiB takes seconds, so a
   * cancel is asked for between rounds */
  vd_code irc = vd_ctx_check_interrupt(r->ctx, err);
  if (irc) return irc;
  if (r->size >= 0 && len > r->size - off) len = r->size - off;
  int64_t abs = r->d + off;
  if (len > 0 && abs < (int64_t)r->prefix->len) { /* no request for what the prefix holds */
    int64_t n = (int64_t)r->prefix->len - abs < len ? (int64_t)r->prefix->len - abs : len;
    if (vd_buf_append(out, r->prefix->data + abs, (size_t)n)) return vd_nomem(err);
    off += n, abs += n, len -= n;
  }
  vd_code rc;
  if (len > 0 && r->http && !r->planned && r->size >= 0 && r->size - off >= PROBE_MIN && (rc = plan(r, off, err)))
    return rc;
  if (len > 0 && r->planned == 1 && off == r->take && vd_ahead_pending(r->ahead)) {
    /* the oldest piece in flight starts here: all of it, and the next one asked for */
    vd_blob *b = NULL;
    int64_t asked = r->lens[r->ntaken++ % AHEAD];
    if ((rc = vd_ahead_take(r->ahead, &b, err))) return rc;
    int bad = vd_buf_append(out, b->data, b->len);
    off += (int64_t)b->len;
    r->take += (int64_t)b->len;
    if ((int64_t)b->len < asked) *eof = 1, r->planned = -1; /* the object ended early */
    vd_blob_unref(b);
    if (bad) return vd_nomem(err);
    if (r->planned == 1 && (rc = push_pieces(r, err))) return rc;
    len = 0;
  }
  if (len > 0) { /* past the end found (spaces inside the text fooled the probes), or no plan */
    vd_buf part = {0};
    vd_objinfo info;
    memset(&info, 0, sizeof info);
    info.size = -1;
    rc = vd_get(r->ctx, r->url, abs, len, &part, r->size < 0 ? &info : NULL, err);
    if (rc) return rc;
    if (r->size < 0) { /* the JSON form: the file's size came with the first range */
      if (info.size >= 0) r->size = info.size - r->d;
      vd_objinfo_free(&info);
    }
    int bad = vd_buf_append(out, part.data, part.len);
    off += (int64_t)part.len;
    if ((int64_t)part.len < len) *eof = 1;
    vd_buf_free(&part);
    if (bad) return vd_nomem(err);
    if (r->planned == 1 && r->take == r->next && r->take == abs - r->d) /* nothing was ahead: nor is now */
      r->take = r->next = off;
  }
  if (r->size >= 0 && off >= r->size) *eof = 1;
  return VD_OK;
}

static void src_free(void *ud) {
  src *r = ud;
  if (!r) return;
  vd_ahead_close(r->ahead);
  vd_blob_unref(r->prefix);
  free(r->url);
  free(r);
}

vd_code lrs_open_url(lrs *s, vd_ctx *ctx, const char *url, const lindi_file *member, const char *where,
                     vd_err *err) {
  lrs_init(s, NULL, NULL, where, ctx->cfg.max_alloc);
  src *r = calloc(1, sizeof *r);
  if (!r || !(r->url = strdup(url))) {
    free(r);
    return vd_nomem(err);
  }
  r->ctx = ctx;
  r->end = -1;
  r->http = vd_store_on_http(url);
  vd_code rc = lindi_prefix(ctx, url, &r->prefix, err);
  if (rc) {
    src_free(r);
    return rc;
  }
  if (member) {
    r->d = member->d;
    r->size = member->s;
  } else {
    r->size = (int64_t)r->prefix->len < ctx->cfg.lindi_prefix ? (int64_t)r->prefix->len : -1; /* whole file */
    /* over http the prefix's answer said the size: the end is probed at the first read
     * past the prefix, with no range read first to learn it */
    if (r->size < 0 && r->http) r->size = lindi_size(ctx, url);
  }
  s->read = src_read;
  s->end = src_end;
  s->ud = r;
  s->ud_free = src_free;
  return VD_OK;
}
