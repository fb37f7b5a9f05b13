/* The chunk writer of one layer (spec sections 4, 5, 7, 9) over the commit protocol of
 * openvds_commit.h: a chunk's object goes to the transaction's staging folder as its
 * row arrives; COMMIT puts the staged objects in place, then the pages, then
 * LayerStatus, in OpenVDS's order, all or nothing.
 *
 * Uploads are batched: objects are built as rows arrive and queued; a batch goes out
 * through vd_put_many (max_parallel PUTs in flight on the http transport) when it holds
 * BATCH_OBJECTS objects or BATCH_BYTES bytes, and at commit. Batching as rows arrive
 * (rather than all at commit) bounds memory for large inserts; batching at all (rather
 * than one PUT per row) is what makes a 1,000-row INSERT cost about 1000 / max_parallel
 * round trips instead of 1,000. An upload failure fails the transaction at commit,
 * before anything is in place. A chunk queued twice keeps only its last data (two PUTs
 * of one key in flight could land in either order). */
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/strmap.h"
#include "openvds_commit.h"
#include "openvds_pages.h"
#include "openvds_write.h"

#define BATCH_OBJECTS 256
#define BATCH_BYTES (64 << 20)

typedef struct pending {
  int64_t chunk;
  char *url;          /* the staging object; NULL: a constant chunk, no object */
  vd_buf body;
  char meta[40];      /* vdschunkmetadata */
  unsigned char raw[8];
  int conflict;
} pending;

struct vds_writer {
  vd_ctx *ctx;
  char *url, *layer;
  vds_dataset *ds;    /* as opened; reopened after a commit (stale), for the page directory */
  const vds_layer *l;
  vds_pages *pages;   /* reads of committed entries (INSERT's check) */
  int stale;
  char tx[17];
  pending *q;
  int nq, cq;
  size_t qbytes;
  vds_plan_chunk *st; /* chunks of this transaction whose object is staged (or constant) */
  int nst, cst;
  vd_strmap at;       /* chunk (decimal) -> its place in st: O(1) per row however many */
  int64_t puts;   /* chunks put in this transaction */
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

static void pending_free(pending *p) {
  free(p->url);
  vd_buf_free(&p->body);
}

static void drop_queue(vds_writer *w) {
  for (int i = 0; i < w->nq; i++) pending_free(&w->q[i]);
  w->nq = 0;
  w->qbytes = 0;
}

void vds_writer_close(vds_writer *w) {
  if (!w) return;
  vds_writer_rollback(w);
  free(w->q);
  free(w->st);
  vd_strmap_free(&w->at);
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

/* Records a chunk as staged (a later put of the same chunk replaces it). */
static vd_code add_staged(vds_writer *w, const pending *p, vd_err *err) {
  int i = staged_at(w, p->chunk);
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
  x->bytes = p->url ? (int64_t)p->body.len : 0;
  x->mode = p->conflict;
  return VD_OK;
}

/* Sends the queued objects to the staging folder (in parallel) and records them. */
static vd_code flush(vds_writer *w, vd_err *err) {
  if (w->failed) return vd_fail(err, w->failed, "%s", w->ferr.msg);
  int n = 0;
  for (int i = 0; i < w->nq; i++) n += w->q[i].url != NULL;
  vd_putreq *reqs = calloc(n ? n : 1, sizeof *reqs);
  vd_putreq **ptr = malloc((n ? n : 1) * sizeof *ptr);
  vd_code *rcs = malloc((n ? n : 1) * sizeof *rcs);
  vd_err *errs = malloc((n ? n : 1) * sizeof *errs);
  vd_kv *kv = malloc((n ? n : 1) * sizeof *kv);
  vd_code rc = VD_OK;
  if (!reqs || !ptr || !rcs || !errs || !kv) {
    rc = vd_nomem(err);
    goto done;
  }
  for (int i = 0, k = 0; i < w->nq; i++) {
    pending *p = &w->q[i];
    if (!p->url) continue;
    kv[k].key = "vdschunkmetadata";
    kv[k].value = p->meta;
    reqs[k] = (vd_putreq){.url = p->url, .body = p->body.data ? (void *)p->body.data : "", .len = p->body.len,
                          .meta = &kv[k], .nmeta = 1};
    ptr[k] = &reqs[k];
    k++;
  }
  if (n && vd_put_many(w->ctx, ptr, n, rcs, errs)) {
    for (int k = 0; k < n; k++)
      if (rcs[k]) {
        rc = vd_fail(err, rcs[k], "%s", errs[k].msg);
        break;
      }
  }
  /* what was uploaded is recorded even when a batch failed, so that ROLLBACK deletes it */
  for (int i = 0, k = 0; i < w->nq; i++) {
    pending *p = &w->q[i];
    int sent = !p->url || (n && !rcs[k]);
    if (p->url) k++;
    vd_code r2 = sent ? add_staged(w, p, err) : VD_OK;
    if (r2 && !rc) rc = r2;
  }
  if (rc) {
    w->failed = rc;
    w->ferr = *err;
  }
done:
  drop_queue(w);
  free(reqs);
  free(ptr);
  free(rcs);
  free(errs);
  free(kv);
  return rc;
}

/* VD_CONSTRAINT when chunk is written already, committed or earlier in this
 * transaction (a plain INSERT or OR IGNORE of it). */
static vd_code check_new(vds_writer *w, int64_t chunk, const char *base, vd_err *err) {
  int mine = staged_at(w, chunk) >= 0;
  for (int i = 0; i < w->nq && !mine; i++) mine = w->q[i].chunk == chunk;
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
  pending p = {.chunk = chunk, .conflict = conflict};
  uint64_t hash = constant_hash(ch, &s, data, len);
  if (!hash) { /* data: an object with a random hash, staged */
    if ((rc = random_hash(&hash, err))) return rc;
    if (!(p.url = vds_stage_url(w->ds->url, l->name, w->tx, chunk))) return vd_nomem(err);
    if ((rc = vds_encode(l->method, l->geom.ngroup < 2 ? 2 : l->geom.ngroup, &s, data, len, &p.body, err))) {
      pending_free(&p);
      return rc;
    }
  }
  vds_entry_encode(p.raw, 8, hash, 0, NULL);
  if ((rc = vds_meta_encode(p.raw, 8, p.meta, sizeof p.meta, err))) {
    pending_free(&p);
    return rc;
  }
  for (int i = 0; i < w->nq; i++) /* queued already: the new data replaces it */
    if (w->q[i].chunk == chunk) {
      w->qbytes -= w->q[i].body.len;
      pending_free(&w->q[i]);
      w->q[i] = w->q[--w->nq];
      break;
    }
  if (w->nq == w->cq) {
    int cap = w->cq ? 2 * w->cq : 64;
    pending *q = realloc(w->q, cap * sizeof *q);
    if (!q) {
      pending_free(&p);
      return vd_nomem(err);
    }
    w->q = q, w->cq = cap;
  }
  w->q[w->nq++] = p;
  w->qbytes += p.body.len;
  w->puts++;
  if (w->nq >= BATCH_OBJECTS || w->qbytes >= BATCH_BYTES) return flush(w, err);
  return VD_OK;
}

/* A new transaction: nothing queued or staged, a new staging folder. */
static void reset(vds_writer *w) {
  drop_queue(w);
  w->nst = 0;
  vd_strmap_free(&w->at);
  memset(&w->at, 0, sizeof w->at);
  w->failed = VD_OK;
  w->puts = 0;
  w->dirs = 0;
  vd_err e;
  if (vds_new_tx(w->tx, &e)) w->tx[0] = 0; /* RAND_bytes failing: the next put says so */
}

vd_code vds_writer_commit(vds_writer *w, vd_err *err) {
  vd_code rc = flush(w, err);
  int recorded = 0;
  if (!rc && w->nst) {
    rc = vds_commit(w->ctx, w->url, w->l->name, w->tx, w->st, w->nst, &recorded, err);
    w->stale = 1;
  }
  if (rc && recorded) /* the staging is the commit's now: it must stay for whoever finishes it */
    vd_err_suffix(err, " (the commit is recorded: the next writer of layer %s or vds_repair finishes it)",
                  w->l->name);
  else if (rc)
    vds_stage_delete(w->ctx, w->url, w->l->name, w->tx, w->st, w->nst);
  reset(w);
  return rc;
}

void vds_writer_rollback(vds_writer *w) {
  drop_queue(w);
  if (w->nst) vds_stage_delete(w->ctx, w->url, w->layer, w->tx, w->st, w->nst);
  reset(w);
}

int64_t vds_writer_count(const vds_writer *w) { return w->puts; }

void vds_writer_poison(vds_writer *w, const vd_err *err) {
  if (w->failed) return;
  w->failed = err->code;
  w->ferr = *err;
}
