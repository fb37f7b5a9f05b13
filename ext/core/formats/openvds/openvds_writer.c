/* The chunk writer of one layer (spec sections 4, 5, 7, 9) over the commit protocol of
 * openvds_commit.h: a chunk's object goes to the transaction's staging folder as its
 * row arrives; COMMIT puts the staged objects in place, then the pages, then
 * LayerStatus, in OpenVDS's order, all or nothing.
 *
 * Uploads keep the pipe full: each row's object is pushed on the transaction's upload
 * queue (vd_putq) as it is made, and over the http transport max_parallel PUTs stay in
 * flight while rows keep coming, each finished one replaced at once; the writer never
 * waits for the slowest of a batch. Memory is the queue's window (2 x max_parallel
 * objects, at most QUEUE_BYTES beyond the first), not the transaction. A chunk is
 * recorded as staged when its PUT has succeeded, so that ROLLBACK deletes exactly what
 * was uploaded. The first upload that fails stops the queue (nothing more is sent); the
 * statement that finds it fails naming the object's URL, and so does COMMIT, before
 * anything is in place. A chunk written again while its first PUT is still on its way
 * waits for it: two PUTs of one key in flight could land in either order.
 *
 * Savepoints (SQL's SAVEPOINT / ROLLBACK TO, PostgreSQL's subtransactions and exception
 * blocks, SQLite's statement savepoints): while one is open every put appends to an
 * undo log the chunk's staged-list entry before it (or its absence); ROLLBACK TO settles
 * the uploads in flight, then restores those entries in reverse, so that the plan is
 * exactly what it was at the savepoint. That works only because nothing an outer level
 * still needs is ever overwritten or deleted before the transaction ends: a chunk put
 * again gets a new staged name (<chunk>.<v>), the versions it supersedes are deleted in
 * one batch after COMMIT or ROLLBACK, and an object put at a chunk's key by a put that
 * was undone is taken back under the commit record like any other (clean_keys). */
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/store.h"
#include "util/strmap.h"
#include "openvds_commit.h"
#include "openvds_pages.h"
#include "openvds_write.h"

#define QUEUE_BYTES (64 << 20)

/* A chunk whose object is on its way (pushed, not yet finished). */
typedef struct pending {
  int64_t chunk;
  size_t bytes;
  unsigned char raw[8];
  int conflict;
  int direct; /* put at the chunk's key create-only, staged only if something is there */
  int v;      /* the staged name's version (vds_plan_chunk.v) */
} pending;

/* One put while a savepoint is open: the chunk's entry in st before it (had: there was
 * one), what ROLLBACK TO restores. */
typedef struct undo {
  int64_t chunk;
  int had;
  vds_plan_chunk before;
} undo;

/* A staged object this transaction made (every version, superseded ones included). */
typedef struct version {
  int64_t chunk;
  int v;
} version;

struct vds_writer {
  vd_ctx *ctx;
  char *url, *layer;
  vds_dataset *ds;    /* as opened; reopened after a commit (stale), for the page directory */
  const vds_layer *l;
  vds_pages *pages;   /* reads of committed entries (INSERT's check) */
  int stale;
  char tx[17];
  vd_putq *up;        /* this transaction's uploads (opened at its first object) */
  pending *fly;       /* what is on the queue, at most its window */
  int nfly, cfly;
  vds_plan_chunk *st; /* chunks of this transaction whose object is staged (or constant) */
  int nst, cst;
  vd_strmap at;       /* chunk (decimal) -> its place in st: O(1) per row however many */
  undo *log;          /* puts since the outermost open savepoint */
  int nlog, clog;
  int *marks;         /* savepoint n began at log length marks[n] (0 .. nmarks - 1) */
  int nmarks, cmarks;
  version *made;      /* every staged object of the transaction: what its end deletes */
  int nmade, cmade;
  int nver;           /* the last version number given */
  vd_strmap gone;     /* chunks a ROLLBACK TO took out of st (1: their key may hold ours) */
  vds_plan_chunk *back; /* those whose key may hold an object of this transaction */
  int nback, cback;
  int64_t t0;     /* when its first object was put (seconds since the epoch) */
  int keys;       /* an object of this transaction went (or may have gone) to a chunk's key */
  int dirs;       /* the layer's and the staging's directories are made (local datasets) */
  vd_code failed; /* an upload failed: commit refuses (first error kept) */
  vd_err ferr;
};

const vds_dataset *vds_writer_dataset(const vds_writer *w) { return w->ds; }

static vd_code reopen(vds_writer *w, vd_err *err) {
  vds_pages_close(w->pages);
  vds_close(w->ds);
  w->pages = NULL;
  w->ds = NULL;
  w->l = NULL;
  vd_code rc = vds_open(w->ctx, w->url, &w->ds, err);
  if (!rc) rc = vds_find_layer(w->ds, w->layer, &w->l, err);
  if (!rc && w->l->has_pages) rc = vds_pages_open(w->ctx, w->ds, w->l, &w->pages, err);
  if (!rc) w->stale = 0;
  return rc;
}

vd_code vds_writer_open(vd_ctx *ctx, const char *url, const char *layer, vds_writer **out, vd_err *err) {
  *out = NULL;
  vds_writer *w = calloc(1, sizeof *w);
  if (!w) return vd_nomem(err);
  w->ctx = ctx;
  vd_code rc = !(w->url = strdup(url)) || !(w->layer = strdup(layer)) ? vd_nomem(err) : vds_new_tx(w->tx, err);
  /* a commit a dead writer left half done is finished before anything is read */
  if (!rc && vd_store_can_write(url)) rc = vds_commit_recover(ctx, url, layer, err);
  if (!rc) rc = reopen(w, err);
  if (rc) {
    vds_writer_close(w);
    return rc;
  }
  *out = w;
  return VD_OK;
}

void vds_writer_close(vds_writer *w) {
  if (!w) return;
  vds_writer_rollback(w);
  free(w->fly);
  free(w->st);
  free(w->log);
  free(w->marks);
  free(w->made);
  free(w->back);
  vd_strmap_free(&w->at);
  vd_strmap_free(&w->gone);
  vds_pages_close(w->pages);
  vds_close(w->ds);
  free(w->url);
  free(w->layer);
  free(w);
}

/* A random hash that is none of the special values (section 4), from OpenSSL. */
static vd_code random_hash(uint64_t *h, vd_err *err) {
  for (;;) {
    unsigned char b[8];
    if (RAND_bytes(b, sizeof b) != 1) return vd_fail(err, VD_ERROR, "OpenSSL RAND_bytes failed");
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
    if (v != 0 && v != UINT64_MAX && (v >> 32) != 0x01010101u) {
      *h = v;
      return VD_OK;
    }
  }
}

/* The constant hash of a chunk whose units are all equal (section 4), or 0 when the
 * chunk is not constant or its constant would not read back bit for bit (R64, U32,
 * U64 values a float cannot hold; U8/U16 values the scale cannot reproduce): such a
 * chunk is stored as data. The check is vds_fill itself, what every read does. */
static uint64_t constant_hash(const vds_channel *ch, const vds_shape *s, const unsigned char *raw, size_t n) {
  if (!n) return 0;
  if (ch->format == VDS_F_1BIT) {
    for (size_t i = 1; i < n; i++)
      if (raw[i] != raw[0]) return 0;
    if (raw[0] != 0 && raw[0] != 0xff) return 0;
    float f = raw[0] ? 1.0f : 0.0f;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return 0x0101010100000000ull | bits;
  }
  size_t u = (size_t)vds_format_bytes(ch->format);
  for (size_t i = u; i < n; i += u)
    if (memcmp(raw + i, raw, u) != 0) return 0;
  double v = 0;
  switch (ch->format) {
    case VDS_F_U8: v = raw[0]; break;
    case VDS_F_U16: { uint16_t x; memcpy(&x, raw, 2); v = x; break; }
    case VDS_F_R32: { float x; memcpy(&x, raw, 4); v = x; break; }
    case VDS_F_U32: { uint32_t x; memcpy(&x, raw, 4); v = x; break; }
    case VDS_F_R64: { double x; memcpy(&x, raw, 8); v = x; break; }
    case VDS_F_U64: { uint64_t x; memcpy(&x, raw, 8); v = (double)x; break; }
  }
  int quant = ch->format == VDS_F_U8 || ch->format == VDS_F_U16;
  uint64_t h;
  int status;
  float f = 0;
  if (quant && ch->use_no_value && v == (ch->format == VDS_F_U8 ? 255.0 : 65535.0)) {
    h = UINT64_MAX, status = VDS_S_NOVALUE;
  } else if (!quant && ch->use_no_value && v == ch->no_value) {
    h = UINT64_MAX, status = VDS_S_NOVALUE;
  } else {
    f = quant ? (float)(ch->offset + ch->scale * v) : (float)v;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    h = 0x0101010100000000ull | bits, status = VDS_S_CONSTANT;
  }
  vds_shape one = {{1, 1, 1}, ch->format, 1};
  vd_buf back = {0};
  vd_err e;
  int same = vds_fill(ch, &one, status, f, &back, &e) == VD_OK && back.len == u && memcmp(back.data, raw, u) == 0;
  vd_buf_free(&back);
  return same ? h : 0;
}

/* The chunk's place in the staged list, or -1. */
static int staged_at(const vds_writer *w, int64_t chunk) {
  char key[24];
  snprintf(key, sizeof key, "%lld", (long long)chunk);
  return vd_strmap_get(&w->at, key);
}

/* What a ROLLBACK TO left of a chunk it took out of st: -1 nothing, 0 out, 1 out with an
 * object of ours maybe at its key. */
static int gone_at(const vds_writer *w, int64_t chunk) {
  char key[24];
  snprintf(key, sizeof key, "%lld", (long long)chunk);
  return vd_strmap_get(&w->gone, key);
}

/* *arr (of *cap items of size bytes) holding at least need items, or NULL. */
static void *grow(void *arr, int *cap, size_t size, int need) {
  void **a = arr;
  if (need <= *cap) return *a;
  int c = *cap ? 2 * *cap : 64;
  while (c < need) c *= 2;
  void *n = realloc(*a, (size_t)c * size);
  if (!n) return NULL;
  *a = n, *cap = c;
  return n;
}

/* Records a chunk as staged (a later put of the same chunk replaces it): its object,
 * p->bytes long, is in the staging folder (none when 0: a constant chunk), or at its key
 * when p->direct and the create-only put was not refused (fell: it was, and went to the
 * staging folder). Either way an object this transaction put at the key earlier, or may
 * have (a refusal can answer a retry whose first attempt landed), is remembered
 * (at_key): a ROLLBACK takes it back. */
static vd_code add_staged(vds_writer *w, const pending *p, int fell, vd_err *err) {
  int i = staged_at(w, p->chunk), key = p->direct && fell;
  if (i >= 0) key |= w->st[i].at_key || w->st[i].direct;
  else { /* a put that a ROLLBACK TO undid may have left our object at the key: this
          * entry takes it back (clean_keys), not the list of undone ones */
    char ck[24];
    int g = gone_at(w, p->chunk);
    snprintf(ck, sizeof ck, "%lld", (long long)p->chunk);
    if (g > 0) {
      key = 1;
      w->back[g - 1].chunk = -1;
      if (vd_strmap_put(&w->gone, ck, 0)) return vd_nomem(err);
    }
  }
  if (p->bytes && (!p->direct || fell)) { /* staged: deleted when the transaction ends */
    if (!grow(&w->made, &w->cmade, sizeof *w->made, w->nmade + 1)) return vd_nomem(err);
    w->made[w->nmade++] = (version){p->chunk, p->v};
  }
  if (i < 0) {
    if (w->nst == w->cst) {
      int cap = w->cst ? 2 * w->cst : 64;
      vds_plan_chunk *n = realloc(w->st, cap * sizeof *n);
      if (!n) return vd_nomem(err);
      w->st = n, w->cst = cap;
    }
    char key[24];
    snprintf(key, sizeof key, "%lld", (long long)p->chunk);
    if (vd_strmap_put(&w->at, key, w->nst)) return vd_nomem(err);
    i = w->nst++;
  }
  vds_plan_chunk *x = &w->st[i];
  memset(x, 0, sizeof *x);
  x->chunk = p->chunk;
  memcpy(x->raw, p->raw, 8);
  x->bytes = (int64_t)p->bytes;
  x->mode = p->conflict;
  x->direct = p->direct && !fell;
  x->at_key = key;
  x->v = p->v;
  w->keys |= x->direct || x->at_key;
  return VD_OK;
}

static int flying(const vds_writer *w, int64_t chunk) {
  for (int i = 0; i < w->nfly; i++)
    if (w->fly[i].chunk == chunk) return i;
  return -1;
}

int vds_writer_entry(const vds_writer *w, int64_t chunk, unsigned char raw[8]) {
  int i = flying(w, chunk); /* the newer: a put waits for the chunk's earlier upload */
  if (i >= 0) {
    memcpy(raw, w->fly[i].raw, 8);
    return 1;
  }
  if ((i = staged_at(w, chunk)) < 0) return 0;
  memcpy(raw, w->st[i].raw, 8);
  return 1;
}

/* Takes the finished uploads off the queue: staged when it succeeded, the first
 * failure kept (commit refuses). */
static vd_code harvest(vds_writer *w, vd_err *err) {
  int64_t tag;
  int fell;
  vd_code rc, first = VD_OK;
  vd_err e;
  while (w->up && vd_putq_take(w->up, &tag, &fell, &rc, &e)) {
    int i = flying(w, tag);
    if (i < 0) continue; /* cannot happen */
    pending p = w->fly[i];
    w->fly[i] = w->fly[--w->nfly];
    if (!rc && (rc = add_staged(w, &p, fell, &e)) == VD_OK) continue;
    if (!w->failed) {
      w->failed = rc;
      w->ferr = e;
    }
    if (!first) first = rc;
  }
  if (first) *err = w->ferr;
  return first ? w->failed : VD_OK;
}

/* Every upload of the transaction finished (in flight ones waited for) and harvested. */
static vd_code settle_uploads(vds_writer *w, vd_err *err) {
  if (!w->up) return w->failed ? vd_fail(err, w->failed, "%s", w->ferr.msg) : VD_OK;
  vd_err e;
  vd_code rc = vd_putq_wait(w->up, -1, &e);
  if (rc && !w->failed) {
    w->failed = rc;
    w->ferr = e;
  }
  harvest(w, &e);
  return w->failed ? vd_fail(err, w->failed, "%s", w->ferr.msg) : VD_OK;
}

/* Queues the object of p (its body moved in) for the staging folder (url), or for the
 * chunk's key (key, create-only, the staging folder if something is there). */
static vd_code upload(vds_writer *w, const pending *p, const char *url, const char *key, vd_buf *body,
                      const char *meta, vd_err *err) {
  vd_code rc;
  if (!w->up && (rc = vd_putq_open(w->ctx, 2 * w->ctx->cfg.max_parallel, QUEUE_BYTES, &w->up, err))) return rc;
  if (w->nfly == w->cfly) {
    int cap = w->cfly ? 2 * w->cfly : 32;
    pending *f = realloc(w->fly, cap * sizeof *f);
    if (!f) return vd_nomem(err);
    w->fly = f, w->cfly = cap;
  }
  w->fly[w->nfly++] = *p;
  /* vdsqltx: an object at its key that no entry names yet is this transaction's, not one
   * whose entry OpenVDS lost (vds_audit, vds_repair) */
  vd_kv kv[2] = {{"vdschunkmetadata", (char *)meta}, {"vdsqltx", w->tx}};
  vd_err e;
  if (key) vd_putq_push_create(w->up, key, url, body, kv, 2, p->chunk, &e); /* its failure comes back by harvest */
  else vd_putq_push(w->up, url, body, kv, 1, p->chunk, &e);
  return harvest(w, err);
}

/* VD_CONSTRAINT when chunk is written already, committed or earlier in this
 * transaction (a plain INSERT or OR IGNORE of it). */
static vd_code check_new(vds_writer *w, int64_t chunk, const char *base, vd_err *err) {
  int mine = staged_at(w, chunk) >= 0 || flying(w, chunk) >= 0;
  vds_entry e = {0};
  vd_code rc;
  if (!mine && (rc = vds_pages_entry(w->pages, chunk, &e, NULL, err))) return rc;
  if (mine || e.status != VDS_S_UNWRITTEN)
    return vd_fail(err, VD_CONSTRAINT, "%s: chunk %lld of layer %s is written already%s (INSERT OR REPLACE "
                   "overwrites it, INSERT OR IGNORE keeps it)", base, (long long)chunk, w->l->name,
                   mine ? " in this transaction" : "");
  return VD_OK;
}

vd_code vds_writer_put(vds_writer *w, int64_t chunk, const void *data, size_t len, int conflict, vd_err *err) {
  vd_code rc;
  if (w->stale && (rc = reopen(w, err))) return rc;
  const vds_layer *l = w->l;
  const vds_channel *ch = &w->ds->layout.channels[l->channel];
  char base[600];
  vd_url_redact(w->ds->url, base, sizeof base);
  if (!vd_store_can_write(w->ds->url)) { /* the store's one refusal (it sends nothing) */
    vd_putreq r = {.url = w->ds->url};
    return vd_put(w->ctx, &r, err);
  }
  if (l->method != VDS_M_NONE && l->method != VDS_M_RLE && l->method != VDS_M_ZIP)
    return vd_fail(err, VD_UNSUPPORTED, "%s: layer %s is %s-compressed: vdsql writes None, RLE and Zip layers only",
                   base, l->name, l->compression);
  if (!l->has_pages || l->entry_size != 8)
    return vd_fail(err, VD_UNSUPPORTED, "%s: layer %s has no 8-byte chunk-metadata pages to record chunks in", base,
                   l->name);
  if (chunk < 0 || chunk >= l->chunk_count)
    return vd_fail(err, VD_INVALID, "%s: layer %s has chunks 0 to %lld, not %lld", base, l->name,
                   (long long)l->chunk_count - 1, (long long)chunk);
  int64_t idx[VDS_MAXDIM];
  vds_shape s = {.format = ch->format, .components = ch->components};
  vds_chunk_index(&l->geom, chunk, idx);
  vds_chunk_size(&l->geom, idx, s.size);
  size_t want = vds_shape_bytes(&s);
  if (len != want)
    return vd_fail(err, VD_INVALID,
                   "%s: chunk %lld of layer %s takes %zu bytes (%lld x %lld x %lld %s x%d samples, margins included), "
                   "not %zu", base, (long long)chunk, l->name, want, (long long)s.size[0], (long long)s.size[1],
                   (long long)s.size[2], vds_format_name(s.format), s.components, len);
  if (w->failed) return vd_fail(err, w->failed, "%s", w->ferr.msg);
  if (conflict != VDS_ON_REPLACE && (rc = check_new(w, chunk, base, err))) return rc;
  if (!w->dirs) {
    char name[300], *u;
    for (int i = 0; i < 3; i++) {
      snprintf(name, sizeof name, i == 0 ? "%s/0" : i == 1 ? "%s/ChunkMetadata/0" : ".vdsql/%s/%s/0", l->name, w->tx);
      if (!(u = vd_url_join(w->ds->url, name))) return vd_nomem(err);
      vd_code r = vd_store_make_dirs(u, err);
      free(u);
      if (r) return r;
    }
    w->dirs = 1;
  }
  /* an upload of this chunk still on its way finishes first (two PUTs of one key in
   * flight could land in either order) */
  if (w->up && vd_putq_busy(w->up, chunk)) {
    vd_code r1 = vd_putq_wait(w->up, chunk, err);
    if ((rc = harvest(w, err)) || (rc = r1)) return rc;
  }
  /* a chunk that no committed entry names (check_new said so) goes straight to its key:
   * nobody reads it there until a page names it. Not for OR REPLACE: another writer
   * could commit the chunk before this one, its copy replacing this object, which this
   * transaction would then still have to publish. */
  pending p = {.chunk = chunk, .conflict = conflict, .direct = conflict != VDS_ON_REPLACE};
  /* a chunk's first put takes the plain staged name; any later one (also after a ROLLBACK
   * TO took the first back: its object is still there until the transaction ends) a new
   * version, so that no staged object a savepoint may return to is ever overwritten */
  int here = staged_at(w, chunk);
  if (here >= 0 || gone_at(w, chunk) >= 0) p.v = ++w->nver;
  /* the undo log, only while a savepoint is open (a transaction without one keeps none);
   * an earlier put of the chunk has finished (waited for above), so st says what it did */
  if (w->nmarks) {
    if (!grow(&w->log, &w->clog, sizeof *w->log, w->nlog + 1)) return vd_nomem(err);
    undo *u = &w->log[w->nlog];
    memset(u, 0, sizeof *u);
    u->chunk = chunk;
    if ((u->had = here >= 0)) u->before = w->st[here];
  }
  char *url = NULL, *key = NULL, meta[40];
  vd_buf body = {0};
  uint64_t hash = constant_hash(ch, &s, data, len);
  if (!hash) { /* data: an object with a random hash, staged */
    if ((rc = random_hash(&hash, err))) return rc;
    if (!(url = vds_stage_url(w->ds->url, l->name, w->tx, chunk, p.v))) return vd_nomem(err);
    if (p.direct && !(key = vds_chunk_key_url(w->ds->url, l->name, chunk))) {
      free(url);
      return vd_nomem(err);
    }
    if ((rc = vds_encode(l->method, l->geom.ngroup < 2 ? 2 : l->geom.ngroup, &s, data, len, &body, err))) goto out;
    p.bytes = body.len;
  }
  vds_entry_encode(p.raw, 8, hash, 0, NULL);
  if ((rc = vds_meta_encode(p.raw, 8, meta, sizeof meta, err))) goto out;
  if (w->nmarks) w->nlog++; /* from here on the transaction may have changed, whatever comes back */
  if (!w->t0) w->t0 = (int64_t)time(NULL);
  if (url) {
    rc = upload(w, &p, url, key, &body, meta, err);
  } else {
    /* a constant chunk has no object; one staged earlier in this transaction stays
     * until the transaction ends (a savepoint may return to it), then goes with the
     * other superseded versions */
    p.direct = 0;
    rc = add_staged(w, &p, 0, err);
  }
out:
  free(url);
  free(key);
  vd_buf_free(&body);
  return rc;
}

/* A new transaction: nothing queued or staged, a new staging folder. */
static void reset(vds_writer *w) {
  vd_putq_close(w->up);
  w->up = NULL;
  w->nfly = 0;
  w->nst = 0;
  vd_strmap_free(&w->at);
  memset(&w->at, 0, sizeof w->at);
  w->failed = VD_OK;
  w->nlog = w->nmarks = w->nmade = w->nver = w->nback = 0;
  vd_strmap_free(&w->gone);
  memset(&w->gone, 0, sizeof w->gone);
  w->t0 = 0;
  w->keys = 0;
  w->dirs = 0;
  vd_err e;
  if (vds_new_tx(w->tx, &e)) w->tx[0] = 0; /* RAND_bytes failing: the next put says so */
}

/* Takes back what this transaction put at chunk keys: after a ROLLBACK or a failed
 * commit every such object (all), after a commit those it did not publish (a chunk
 * skipped, or made a constant). Errors are ignored: what is left is never adopted, and
 * vds_repair deletes it once older than stage_ttl. */
static void clean_keys(vds_writer *w, int all) {
  if (!w->keys) return;
  vds_plan_chunk *c = malloc(((size_t)w->nst + w->nback + 1) * sizeof *c);
  int n = 0;
  for (int i = 0; c && i < w->nst; i++) {
    const vds_plan_chunk *x = &w->st[i];
    if ((x->direct || x->at_key) && (all || x->skipped || (!x->direct && !x->bytes && !x->zero))) c[n++] = *x;
  }
  for (int i = 0; c && i < w->nback; i++) /* put by puts a ROLLBACK TO undid: never published */
    if (w->back[i].chunk >= 0) c[n++] = w->back[i];
  vd_err e;
  if (c) vds_direct_clean(w->ctx, w->url, w->layer, w->tx, c, n, &e);
  free(c);
}

/* An object put at its key long ago may have been taken for a killed writer's by
 * vds_repair (it deletes them once older than stage_ttl): a transaction open for half
 * of that checks its direct objects are still there before its commit point (HEADs),
 * rather than publish an entry without its object. */
static vd_code check_direct(vds_writer *w, vd_err *err) {
  if (!w->keys || !w->t0 || (double)(time(NULL) - w->t0) < w->ctx->cfg.stage_ttl / 2) return VD_OK;
  vd_getreq *g = calloc((size_t)w->nst + 1, sizeof *g);
  vd_code rc = g ? VD_OK : vd_nomem(err);
  int n = 0;
  for (int i = 0; i < w->nst && !rc; i++) {
    if (!w->st[i].direct) continue;
    if (!(g[n].url = vds_chunk_key_url(w->ds->url, w->l->name, w->st[i].chunk))) rc = vd_nomem(err);
    else g[n++].head = 1;
  }
  if (!rc && n) vd_get_many(w->ctx, g, n); /* in parallel, max_parallel at once */
  for (int k = 0; k < n; k++) {
    const char *t = g[k].rc ? NULL : vd_objinfo_meta(&g[k].info, "vdsqltx");
    if (!rc && g[k].rc && g[k].rc != VD_NOTFOUND) {
      rc = vd_fail(err, g[k].rc, "%s", g[k].err.msg);
    } else if (!rc && !(t && strcmp(t, w->tx) == 0)) {
      char where[600];
      vd_url_redact(g[k].url, where, sizeof where);
      rc = vd_fail(err, VD_BUSY, "%s: the object this transaction put there is gone (vds_repair deletes the objects "
                   "of transactions open longer than stage_ttl, %g s): nothing written", where,
                   w->ctx->cfg.stage_ttl);
    }
    free((char *)g[k].url);
    vd_buf_free(&g[k].body);
    vd_objinfo_free(&g[k].info);
  }
  free(g);
  return rc;
}

/* The staged objects the transaction's end deletes: with plan, those the plan does not
 * publish (versions superseded by a later put of their chunk, or by a ROLLBACK TO; the
 * commit deletes its own), taken while st's map is good (vds_commit sorts st); else every
 * one, and the empty objects of constants the commit staged. One batch for them all
 * (vds_stage_delete); NULL when there is none or no memory (vds_repair deletes them once
 * older than stage_ttl). */
static vds_plan_chunk *ends(const vds_writer *w, int plan, int *n) {
  *n = 0;
  vds_plan_chunk *d = calloc((size_t)w->nmade + w->nst + 1, sizeof *d);
  for (int i = 0; d && i < w->nmade; i++) {
    const version *m = &w->made[i];
    int j = plan ? staged_at(w, m->chunk) : -1;
    if (j >= 0 && w->st[j].v == m->v && w->st[j].bytes && !w->st[j].direct) continue;
    d[*n] = (vds_plan_chunk){.chunk = m->chunk, .v = m->v, .bytes = 1};
    ++*n;
  }
  for (int i = 0; d && !plan && i < w->nst; i++)
    if (w->st[i].zero_staged) d[(*n)++] = (vds_plan_chunk){.chunk = w->st[i].chunk, .v = w->st[i].v, .zero_staged = 1};
  if (d && !*n) {
    free(d);
    d = NULL;
  }
  return d;
}

vd_code vds_writer_commit(vds_writer *w, vd_err *err) {
  vd_code rc = settle_uploads(w, err);
  int recorded = 0, nold = 0;
  if (!rc) rc = check_direct(w, err);
  vds_plan_chunk *old = rc ? NULL : ends(w, 1, &nold);
  if (!rc && w->nst) {
    rc = vds_commit(w->ctx, w->url, w->l->name, w->tx, w->st, w->nst, &recorded, err);
    w->stale = 1;
  }
  if (rc && recorded == 1) /* the staging is the commit's now: it must stay for whoever finishes it */
    vd_err_suffix(err, " (the commit is recorded: the next writer of layer %s or vds_repair finishes it)",
                  w->l->name);
  else if (rc && recorded) /* it may be: the staging stays, vds_repair deletes it later if not */
    vd_err_suffix(err, " (the commit may be recorded: if it is, the next writer of layer %s or vds_repair "
                  "finishes it)", w->l->name);
  if (rc && !recorded) { /* nothing published: every staged object goes */
    free(old);
    old = ends(w, 0, &nold);
  }
  if (old || (rc && !recorded && w->dirs)) vds_stage_delete(w->ctx, w->url, w->l->name, w->tx, old, nold);
  free(old);
  if (!recorded || !rc) clean_keys(w, rc != VD_OK);
  reset(w);
  return rc;
}

void vds_writer_rollback(vds_writer *w) {
  if (w->up) { /* nothing more is sent; what is in flight lands first, so that it is deleted */
    vd_err e;
    vd_putq_stop(w->up);
    settle_uploads(w, &e);
  }
  int n = 0;
  vds_plan_chunk *all = ends(w, 0, &n);
  if (all || w->nst) vds_stage_delete(w->ctx, w->url, w->layer, w->tx, all, n);
  free(all);
  clean_keys(w, 1);
  reset(w);
}

/* A failure that leaves the transaction unable to commit (no memory for the undo
 * bookkeeping): COMMIT refuses, ROLLBACK clears it. */
static void poison(vds_writer *w, vd_code rc, const char *what) {
  if (w->failed) return;
  w->failed = vd_fail(&w->ferr, rc, "%s: layer %s: %s: the transaction cannot commit", w->url, w->layer, what);
}

void vds_writer_savepoint(vds_writer *w, int n) {
  if (n < 0) return;
  if (!grow(&w->marks, &w->cmarks, sizeof *w->marks, n + 1)) {
    poison(w, VD_NOMEM, "out of memory for a savepoint");
    return;
  }
  /* levels below n that were never marked began here too: a front end marks the level
   * where the table joins the transaction (SQLite), or the levels opened since its last
   * write at once (PostgreSQL), and nothing was put in between */
  for (int k = w->nmarks; k < n; k++) w->marks[k] = w->nlog;
  w->marks[n] = w->nlog;
  w->nmarks = n + 1;
}

void vds_writer_release(vds_writer *w, int n) {
  if (n < 0) n = 0;
  if (n < w->nmarks) w->nmarks = n;
  if (!w->nmarks) w->nlog = 0; /* no savepoint left to return to: the log is done */
}

/* The chunk's key may hold an object of this transaction that the plan no longer
 * names (its put was undone): it joins the list clean_keys takes back. */
static vd_code take_back(vds_writer *w, int64_t chunk) {
  char key[24];
  snprintf(key, sizeof key, "%lld", (long long)chunk);
  if (!grow(&w->back, &w->cback, sizeof *w->back, w->nback + 1) || vd_strmap_put(&w->gone, key, w->nback + 1))
    return VD_NOMEM;
  w->back[w->nback++] = (vds_plan_chunk){.chunk = chunk, .at_key = 1};
  w->keys = 1;
  return VD_OK;
}

/* Undoes one logged put: the chunk's entry as it was before it (or none). The object
 * the put made stays where it is until the transaction ends: a staged one is in made,
 * one at the key is taken back. */
static vd_code undo_one(vds_writer *w, const undo *u) {
  int i = staged_at(w, u->chunk);
  int at_key = i >= 0 && (w->st[i].direct || w->st[i].at_key);
  char key[24];
  snprintf(key, sizeof key, "%lld", (long long)u->chunk);
  if (u->had) {
    vds_plan_chunk x = u->before;
    /* the put may have left ours at the key (a refused create-only put); a previous
     * state that is itself the object at that key keeps it */
    if (at_key && !x.direct && !x.at_key) x.at_key = 1, w->keys = 1;
    if (i < 0) { /* cannot happen: st loses entries only here, later ones first */
      if (!grow(&w->st, &w->cst, sizeof *w->st, w->nst + 1) || vd_strmap_put(&w->at, key, w->nst)) return VD_NOMEM;
      i = w->nst++;
    }
    w->st[i] = x;
    return VD_OK;
  }
  if (i >= 0) { /* out of the plan: the last entry takes its place */
    vd_strmap_del(&w->at, key);
    if (i != --w->nst) {
      char k2[24];
      w->st[i] = w->st[w->nst];
      snprintf(k2, sizeof k2, "%lld", (long long)w->st[i].chunk);
      if (vd_strmap_put(&w->at, k2, i)) return VD_NOMEM;
    }
  }
  if (at_key) return take_back(w, u->chunk);
  if (gone_at(w, u->chunk) < 0 && vd_strmap_put(&w->gone, key, 0)) return VD_NOMEM;
  return VD_OK;
}

void vds_writer_rollback_to(vds_writer *w, int n) {
  if (n < 0 || n >= w->nmarks) return; /* no such savepoint: nothing was put since */
  if (w->up) { /* what is in flight lands and is recorded first, so the log's states are st's */
    vd_err e;
    settle_uploads(w, &e);
  }
  for (int k = w->nlog - 1; k >= w->marks[n]; k--)
    if (undo_one(w, &w->log[k])) {
      poison(w, VD_NOMEM, "out of memory taking chunks back to a savepoint");
      break;
    }
  w->nlog = w->marks[n];
  w->nmarks = n + 1;
}
