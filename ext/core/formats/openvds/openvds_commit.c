/* The commit protocol of OpenVDS layer writes (openvds_commit.h says how it works and
 * why; docs/openvds.md tells users): taking the commit record (openvds_record.c), carrying
 * a plan out fenced by it, settling writes whose answers were lost, and finishing a dead
 * writer's plan. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/store.h"
#include "openvds_record.h"
#include "openvds_objects.h"
#include "openvds_pages.h"
#include "openvds_write.h"

#define BATCH 256 /* copies and deletes sent at once (the lease is renewed between batches) */

/* Test hook, like the LINDI writer's crash points: VDSQL_PAUSEPOINT=<step> stops this
 * process (SIGSTOP) when its commit reaches that step after the commit point (copy,
 * pages, status, delete, release), so a test can resume it after another writer took its
 * commit over: what a GC pause, a frozen VM or SIGSTOP does at a random moment. */
static void pausepoint(const char *step) {
  const char *s = getenv("VDSQL_PAUSEPOINT");
  if (s && strcmp(s, step) == 0) raise(SIGSTOP);
}

static void nap(int tries) {
  int ms = 5 << (tries < 7 ? tries : 7); /* 5 ms .. 640 ms */
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

static double elapsed(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* ---- holding the record ---- */

/* A writer at work under the record: the record as it last wrote it, when it renewed
 * the lease, and whether it has found the record taken over. */
typedef struct held {
  vd_ctx *ctx;
  const char *rurl;
  record *r;
  int64_t last;
  int lost; /* another writer holds the record now: this one publishes nothing more */
} held;

static vd_code lost_lease(const char *rurl, vd_err *err) {
  char where[600];
  vd_url_redact(rurl, where, sizeof where);
  return vd_fail(err, VD_BUSY, "%s: this commit ran past its lease (commit_lease) and another writer is finishing it",
                 where);
}

/* Whether this writer still holds the record, read now: VD_OK, with the etag the record
 * has now (a write of ours whose answer was lost changed it); else h->lost and VD_BUSY.
 * A record taken over is never this writer's again, so whatever was read before a VD_OK
 * here was read while this writer held the record, and nobody else wrote it since but
 * a program that ignores the record. */
static vd_code hold(held *h, vd_err *err) {
  record now;
  vd_code rc = rec_read(h->ctx, h->rurl, &now, err);
  if (!rc && rec_whose(&now, h->r->tx) == REC_MINE) {
    snprintf(h->r->etag, sizeof h->r->etag, "%s", now.etag);
  } else if (!rc) {
    h->lost = 1;
    rc = lost_lease(h->rurl, err);
  }
  rec_free(&now);
  return rc;
}

static vd_code fence(void *arg, vd_err *err) { return hold(arg, err); }

/* Renews the lease (If-Match) once a third of it has passed. A renewal refused or left
 * unanswered may have landed (its answer lost): the record read again tells whether
 * this writer still holds it (and the next call renews again). */
static vd_code renew(held *h, vd_err *err) {
  if (rec_now_ms() - h->last < (int64_t)(h->ctx->cfg.commit_lease * 1000 / 3)) return VD_OK;
  vd_code rc = rec_write(h->ctx, h->rurl, h->r, err);
  if (rc == VD_PRECONDITION || rc == VD_IO) return hold(h, err);
  if (!rc) h->last = rec_now_ms();
  return rc;
}

/* Sets the record free again (If-Match the commit we wrote): the next generation. A
 * release refused or left unanswered may have landed: the record read again tells. Still
 * this writer's: once more. Moved on (free, or another transaction's): this transaction
 * is done, by this writer or by one that took it over. Taken over: that writer frees it. */
static vd_code release(held *h, vd_err *err) {
  record *r = h->r;
  r->commit = 0;
  r->gen++;
  vd_code rc = rec_write(h->ctx, h->rurl, r, err);
  for (int tries = 0; (rc == VD_PRECONDITION || rc == VD_IO) && tries < 3; tries++) {
    record now;
    vd_err e2;
    if (rec_read(h->ctx, h->rurl, &now, &e2)) break; /* the first error stands */
    int w = rec_whose(&now, r->tx);
    if (w == REC_MINE) {
      snprintf(r->etag, sizeof r->etag, "%s", now.etag);
      rc = rec_write(h->ctx, h->rurl, r, err);
    } else if (w == REC_OTHER) {
      rc = VD_OK;
    } else {
      h->lost = 1;
      rc = lost_lease(h->rurl, err);
    }
    rec_free(&now);
  }
  return rc;
}

/* This writer's transaction passed its commit point, and another writer holds the
 * record for it (it took the commit over when this one's lease ran out) and finishes it.
 * Done once the record has moved on from the transaction; waits at most lock_timeout. */
static vd_code wait_done(vd_ctx *ctx, const char *rurl, const char *tx, vd_err *err) {
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int tries = 0;; tries++) {
    record now;
    vd_code rc = rec_read(ctx, rurl, &now, err);
    int w = rc ? REC_OTHER : rec_whose(&now, tx);
    rec_free(&now);
    if (rc) return rc;
    if (w == REC_OTHER) return VD_OK;
    if (elapsed(&t0) >= ctx->cfg.lock_timeout) return lost_lease(rurl, err);
    nap(tries);
  }
}

/* ---- carrying a plan out ---- */

void fresh_close(fresh *f) {
  vds_pages_close(f->pages);
  vds_layers_free(f->ds.layers, f->ds.nlayers);
  vds_layout_free(&f->ds.layout);
  free(f->ds.url);
  memset(f, 0, sizeof *f);
}

vd_code fresh_open(vd_ctx *ctx, const char *url, const char *layer, fresh *f, vd_err *err) {
  memset(f, 0, sizeof *f);
  char *lu = vd_url_join(url, "VolumeDataLayout"), *su = vd_url_join(url, "LayerStatus");
  vd_blob *layout = NULL, *status = NULL;
  vd_buf b = {0};
  vd_objinfo info = {0};
  char lw[600], sw[600];
  vd_code rc = VD_OK;
  if (!lu || !su || !(f->ds.url = strdup(url))) rc = vd_nomem(err);
  if (!rc) {
    vd_url_redact(lu, lw, sizeof lw);
    vd_url_redact(su, sw, sizeof sw);
    rc = vd_fetch_doc(ctx, lu, &layout, err); /* the layout never changes once written */
  }
  if (!rc) rc = vd_get(ctx, su, 0, -1, &b, &info, err);
  if (!rc && !(status = vd_blob_new(b.data ? (const void *)b.data : "", b.len))) rc = vd_nomem(err);
  if (!rc) rc = vds_parse_docs(layout, status, lw, sw, &f->ds, err);
  if (!rc) rc = vds_find_layer(&f->ds, layer, &f->l, err);
  if (!rc) rc = vds_pages_open(ctx, &f->ds, f->l, &f->pages, err);
  if (!rc) rc = vds_pages_set_status(f->pages, b.data ? (const void *)b.data : "", b.len, info.etag, err);
  if (!rc) vd_store_invalidate(ctx, su); /* readers of this connection see what is written next */
  vd_blob_unref(layout);
  vd_blob_unref(status);
  vd_buf_free(&b);
  vd_objinfo_free(&info);
  free(lu);
  free(su);
  if (rc) fresh_close(f);
  return rc;
}

static int is_data(const unsigned char *raw) {
  vds_entry e;
  vds_entry_decode(raw, 8, &e);
  return e.status == VDS_S_DATA;
}

/* Whether chunk x has a staged object: its data, or the empty object of a constant that
 * replaces data (a record parsed from the store says only "zero"). */
static int has_stage(const vds_plan_chunk *x) { return (x->bytes && !x->direct) || x->zero || x->zero_staged; }

/* Puts every chunk of the plan in place: its staged object (data, or the empty object a
 * constant replacing data gets) copied to its key. Only staged objects are put, so every
 * copy is fenced: whoever finishes a transaction deletes its staging before it frees the
 * record, and a writer that lost its lease then finds its sources gone. With recover, a
 * staged object already gone is fine when the chunk's object carries the planned hash
 * (the copy was done), and otherwise the chunk is left out (*lost[i] = 1): its entry is
 * not changed, so entry and object still agree. */
static vd_code put_in_place(held *h, const char *url, const char *layer, int recover, int *lost, vd_err *err) {
  vd_ctx *ctx = h->ctx;
  record *r = h->r;
  vd_code rc = VD_OK;
  for (int at = 0; at < r->n && !rc; at += BATCH) {
    int m = r->n - at < BATCH ? r->n - at : BATCH, k = 0;
    vd_putreq *rq = calloc(m, sizeof *rq), **pp = calloc(m, sizeof *pp);
    vd_code *rcs = calloc(m, sizeof *rcs);
    vd_err *errs = calloc(m, sizeof *errs);
    int *idx = calloc(m, sizeof *idx);
    if (!rq || !pp || !rcs || !errs || !idx) rc = vd_nomem(err);
    for (int i = 0; i < m && !rc; i++) {
      const vds_plan_chunk *x = &r->chunks[at + i];
      if (x->skipped || !has_stage(x)) continue;
      char *dst = vds_chunk_key_url(url, layer, x->chunk), *src = vds_stage_url(url, layer, r->tx, x->chunk, x->v);
      if (!dst || !src) {
        free(dst);
        free(src);
        rc = vd_nomem(err);
        break;
      }
      rq[k].url = dst;
      rq[k].copy_from = src;
      pp[k] = &rq[k];
      idx[k++] = at + i;
    }
    if (!rc && k) vd_put_many(ctx, pp, k, rcs, errs);
    for (int j = 0; j < k && !rc; j++) {
      if (!rcs[j]) continue;
      if (recover && rcs[j] == VD_NOTFOUND) { /* done before, or lost */
        vd_objinfo info = {0};
        vd_err e2;
        uint64_t hh = 0;
        vds_entry e;
        vds_entry_decode(r->chunks[idx[j]].raw, 8, &e);
        const char *m2 = vd_head(ctx, rq[j].url, &info, &e2) ? NULL : vd_objinfo_meta(&info, "vdschunkmetadata");
        if (!(m2 && vds_meta_decode(m2, strlen(m2), 8, &hh, NULL) == 0 && hh == e.hash)) lost[idx[j]] = 1;
        vd_objinfo_free(&info);
        continue;
      }
      rc = vd_fail(err, rcs[j], "%s", errs[j].msg);
      /* a staged object gone under this writer's own commit: taken over and finished? */
      if (rcs[j] == VD_NOTFOUND && !recover) {
        vd_err e2;
        if (hold(h, &e2) && h->lost) {
          *err = e2;
          rc = VD_BUSY;
        }
      }
    }
    for (int j = 0; j < k; j++) {
      free((char *)rq[j].url);
      free((char *)rq[j].copy_from);
    }
    free(rq), free(pp), free(rcs), free(errs), free(idx);
    if (!rc) rc = renew(h, err);
  }
  return rc;
}

/* Deletes the staged objects of a plan (and, on files, the transaction's folder): the
 * first failure other than an object already gone, or VD_OK. */
static vd_code stage_delete(vd_ctx *ctx, const char *url, const char *layer, const char *tx,
                            const vds_plan_chunk *plan, int n, vd_err *err) {
  /* the store batches deletes (S3: 1000 a request, Azure: 256); slices of 8000 keep its
   * per-object answers (about 1 KiB each) to 8 MiB however many chunks were staged */
  enum { SLICE = 8000 };
  vd_code rc = VD_OK;
  for (int at = 0; at < n; at += SLICE) {
    int m = n - at < SLICE ? n - at : SLICE, k = 0;
    vd_delreq *d = calloc(m, sizeof *d);
    if (!d) {
      if (!rc) rc = vd_nomem(err);
      continue;
    }
    for (int i = 0; i < m; i++) {
      if (!has_stage(&plan[at + i])) continue;
      if (!(d[k].url = vds_stage_url(url, layer, tx, plan[at + i].chunk, plan[at + i].v))) {
        if (!rc) rc = vd_nomem(err);
        break;
      }
      k++;
    }
    if (k) vd_delete_many(ctx, d, k);
    for (int j = 0; j < k; j++) {
      if (d[j].rc && d[j].rc != VD_NOTFOUND && !rc) rc = vd_fail(err, d[j].rc, "%s", d[j].err.msg);
      free((char *)d[j].url);
    }
    free(d);
  }
  char name[400];
  snprintf(name, sizeof name, ".vdsql/%s/%s", layer, tx);
  char *dir = vd_url_join(url, name);
  if (dir) vd_store_remove_dir(dir); /* local files: the transaction's empty folder */
  free(dir);
  return rc;
}

void vds_stage_delete(vd_ctx *ctx, const char *url, const char *layer, const char *tx, const vds_plan_chunk *plan,
                      int n) {
  vd_err e;
  stage_delete(ctx, url, layer, tx, plan, n, &e);
}

/* Everything after the commit point, in order, each step repeatable and fenced (a writer
 * that finds the record taken over stops, h->lost): objects in place, pages, LayerStatus
 * (only when it is still the one the plan was made against: else the counts are in it
 * already), staging gone (all of it: the copies' fence), the record free. */
static vd_code carry_out(held *h, const char *url, const char *layer, fresh *planned, vd_err *err) {
  /* planned: the writer's own plan, its entries set in pages read under the record
   * (nobody else writes them now); else a dead writer's, set on the pages as they are */
  vd_ctx *ctx = h->ctx;
  record *r = h->r;
  int recover = planned == NULL;
  int *lost = calloc(r->n + 1, sizeof *lost);
  fresh own = {0}, *fp = planned ? planned : &own;
  vd_code rc = lost ? VD_OK : vd_nomem(err);
  pausepoint("copy");
  if (!rc) rc = put_in_place(h, url, layer, recover, lost, err);
  if (!rc && recover) rc = fresh_open(ctx, url, layer, &own, err);
  for (int i = 0; i < r->n && !rc && recover; i++)
    if (!r->chunks[i].skipped && !lost[i]) rc = vds_pages_set(own.pages, r->chunks[i].chunk, r->chunks[i].raw,
                                                              r->chunks[i].bytes, err);
  if (!rc) {
    vds_pages_set_fence(fp->pages, fence, h);
    rc = renew(h, err);
  }
  if (!rc) {
    pausepoint("pages"); /* after the renewal: what stops a stale writer here is the fence */
    rc = vds_pages_write_pages(fp->pages, err);
  }
  if (!rc) rc = renew(h, err);
  if (!rc && strcmp(vds_pages_status_etag(fp->pages), r->status_etag) == 0) {
    pausepoint("status");
    int64_t *pages = malloc((r->ndir + 1) * sizeof *pages), *names = malloc((r->ndir + 1) * sizeof *names);
    if (!pages || !names) rc = vd_nomem(err);
    for (int i = 0; i < r->ndir && !rc; i++) pages[i] = r->dir[2 * i], names[i] = r->dir[2 * i + 1];
    if (!rc && (r->ndir || r->counts.valid || r->counts.serialized || r->counts.uncompressed))
      rc = vds_pages_write_status(fp->pages, &r->counts, 0, pages, names, r->ndir, err);
    free(pages);
    free(names);
  }
  if (fp->pages) vds_pages_set_fence(fp->pages, NULL, NULL);
  fresh_close(&own);
  free(lost);
  if (!rc) {
    pausepoint("delete");
    rc = stage_delete(ctx, url, layer, r->tx, r->chunks, r->n, err);
  }
  if (!rc) {
    pausepoint("release");
    rc = release(h, err);
  }
  return rc;
}

/* ---- taking the record ---- */

/* Reads the record until it is free (or absent), finishing a dead writer's commit on
 * the way; waits for a live one at most lock_timeout. r: the free record, etag kept. */
static vd_code wait_free(vd_ctx *ctx, const char *url, const char *layer, const char *rurl, record *r, int wait,
                         vd_err *err) {
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int tries = 0;; tries++) {
    vd_code rc = rec_read(ctx, rurl, r, err);
    if (rc || !r->present || !r->commit) return rc;
    if (!rec_live(r)) { /* take it over (If-Match: one taker wins), then finish it */
      held h = {ctx, rurl, r, rec_now_ms(), 0};
      rc = rec_write(ctx, rurl, r, err);
      if (!rc) rc = r->repair ? release(&h, err) : carry_out(&h, url, layer, NULL, err);
      rec_free(r);
      if (rc && rc != VD_PRECONDITION && !h.lost) return rc;
      continue; /* taken by another (or this one's answer lost): read again */
    }
    if (!wait) return VD_OK;
    if (elapsed(&t0) >= ctx->cfg.lock_timeout) {
      char where[600];
      vd_url_redact(rurl, where, sizeof where);
      rec_free(r);
      return vd_fail(err, VD_BUSY, "%s: another writer is committing to layer %s (waited %g s; see "
                     "vdsql_config('lock_timeout'))", where, layer, ctx->cfg.lock_timeout);
    }
    rec_free(r);
    nap(tries);
  }
}

vd_code vds_commit_recover(vd_ctx *ctx, const char *url, const char *layer, vd_err *err) {
  char *rurl = rec_url(url, layer);
  if (!rurl) return vd_nomem(err);
  record r;
  vd_code rc = wait_free(ctx, url, layer, rurl, &r, 0, err);
  rec_free(&r);
  free(rurl);
  return rc;
}

/* Where a write of the record that takes it (the commit point, or vds_repair's hold)
 * stands when it was refused (412) or left unanswered: it may have landed with its
 * answer lost, the retry then refused. The record read again tells, with its
 * generation (gen: that of the free record the write replaced); where it cannot, the
 * staging does: whoever finishes a transaction deletes its staging before freeing the
 * record, so a staged object still there means it never committed. */
enum { POINT_NOT, POINT_MINE, POINT_TAKEN, POINT_DONE, POINT_UNKNOWN };

static int staged_probe(vd_ctx *ctx, const char *url, const char *layer, const char *tx, const vds_plan_chunk *plan,
                        int n) {
  for (int i = 0; i < n; i++) {
    if (!has_stage(&plan[i])) continue;
    char *su = vds_stage_url(url, layer, tx, plan[i].chunk, plan[i].v);
    vd_objinfo info = {0};
    vd_err e;
    vd_code rc = su ? vd_head(ctx, su, &info, &e) : VD_NOMEM;
    free(su);
    vd_objinfo_free(&info);
    return rc == VD_OK ? POINT_NOT : rc == VD_NOTFOUND ? POINT_DONE : POINT_UNKNOWN;
  }
  return POINT_UNKNOWN;
}

static int settle_point(vd_ctx *ctx, const char *url, const char *layer, const char *rurl, record *r, int64_t gen,
                        const vds_plan_chunk *plan, int n) {
  record now;
  vd_err e;
  if (rec_read(ctx, rurl, &now, &e)) return POINT_UNKNOWN;
  int w = rec_whose(&now, r->tx), at;
  if (w == REC_MINE) {
    snprintf(r->etag, sizeof r->etag, "%s", now.etag);
    r->present = 1;
    at = POINT_MINE;
  } else if (w == REC_TAKEN) {
    at = POINT_TAKEN;
  } else if (!now.present) {
    at = POINT_UNKNOWN;
  } else if (now.gen == gen) { /* the generation it would have taken is another's */
    at = POINT_NOT;
  } else if (now.gen == gen + 1 && !now.commit) { /* freed once since: by whom */
    at = strcmp(now.tx, r->tx) == 0 ? POINT_DONE : POINT_NOT;
  } else {
    at = staged_probe(ctx, url, layer, r->tx, plan, n);
  }
  rec_free(&now);
  return at;
}

static int by_chunk(const void *a, const void *b) {
  const vds_plan_chunk *x = a, *y = b;
  return (x->chunk > y->chunk) - (x->chunk < y->chunk);
}

/* Constants replacing data chunks: the empty object with the constant's hash that
 * OpenVDS writes for a constant is staged like any chunk's object and copied into place
 * after the commit point, never put over the chunk's key directly: a direct put is not
 * fenced, and a writer paused past its lease would land it over a later commit's data. */
static vd_code stage_zeros(vd_ctx *ctx, const char *url, const char *layer, const char *tx, vds_plan_chunk *plan,
                           int n, vd_err *err) {
  int k = 0;
  for (int i = 0; i < n; i++) k += plan[i].zero && !plan[i].zero_staged;
  if (!k) return VD_OK;
  vd_putreq *rq = calloc(k, sizeof *rq), **pp = calloc(k, sizeof *pp);
  vd_code *rcs = calloc(k, sizeof *rcs);
  vd_err *errs = calloc(k, sizeof *errs);
  vd_kv *kv = calloc(k, sizeof *kv);
  char (*meta)[40] = calloc(k, sizeof *meta);
  int *idx = calloc(k, sizeof *idx), m = 0;
  vd_code rc = rq && pp && rcs && errs && kv && meta && idx ? VD_OK : vd_nomem(err);
  for (int i = 0; i < n && !rc; i++) {
    if (!plan[i].zero || plan[i].zero_staged) continue;
    if ((rc = vds_meta_encode(plan[i].raw, 8, meta[m], sizeof meta[m], err))) break;
    if (!(rq[m].url = vds_stage_url(url, layer, tx, plan[i].chunk, plan[i].v))) {
      rc = vd_nomem(err);
      break;
    }
    kv[m] = (vd_kv){.key = "vdschunkmetadata", .value = meta[m]};
    rq[m].body = "";
    rq[m].meta = &kv[m];
    rq[m].nmeta = 1;
    pp[m] = &rq[m];
    idx[m++] = i;
  }
  if (!rc && m) rc = vd_store_make_dirs(rq[0].url, err);
  if (!rc && m) vd_put_many(ctx, pp, m, rcs, errs);
  for (int j = 0; j < m; j++) {
    if (!rc && rcs[j]) rc = vd_fail(err, rcs[j], "%s", errs[j].msg);
    else if (!rcs[j]) plan[idx[j]].zero_staged = 1;
    free((char *)rq[j].url);
  }
  free(rq), free(pp), free(rcs), free(errs), free(kv), free(meta), free(idx);
  return rc;
}

/* The plan against the layer as it is: entries set in f's page layer, conflicts of plain
 * INSERTs refused, OR IGNORE chunks written meanwhile skipped, the sizes of replaced
 * data objects learned (HEADs), constants over data staged, the counts and new page
 * names into r. */
static vd_code make_plan(vd_ctx *ctx, const char *url, const char *layer, const char *tx, fresh *f,
                         vds_plan_chunk *plan, int n, record *r, vd_err *err) {
  vd_code rc = VD_OK;
  int64_t conflicts = 0, first[8];
  for (int i = 0; i < n && !rc; i++) {
    plan[i].skipped = plan[i].zero = 0;
    rc = vds_pages_set(f->pages, plan[i].chunk, plan[i].raw, plan[i].bytes, err);
  }
  int nheads = 0;
  for (int i = 0; i < n && !rc; i++) {
    unsigned char old[28];
    vds_plan_chunk *x = &plan[i];
    vds_pages_base_entry(f->pages, x->chunk, old);
    vds_entry e;
    vds_entry_decode(old, 8, &e);
    if (e.status == VDS_S_UNWRITTEN) continue;
    if (x->mode == VDS_ON_ABORT) {
      if (conflicts < 8) first[conflicts] = x->chunk;
      conflicts++;
    } else if (x->mode == VDS_ON_IGNORE) {
      x->skipped = 1;
      rc = vds_pages_set(f->pages, x->chunk, old, 0, err); /* the entry stays as it is */
    } else if (is_data(old)) {
      nheads++;
    }
  }
  if (!rc && conflicts) {
    char list[200] = "";
    for (int i = 0; i < conflicts && i < 8; i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%" PRId64, i ? ", " : "", first[i]);
    char where[600];
    vd_url_redact(url, where, sizeof where);
    return vd_fail(err, VD_CONSTRAINT, "%s: layer %s: %" PRId64 " chunk%s written by another writer during this "
                   "transaction (%s%s); nothing written (INSERT OR REPLACE overwrites, INSERT OR IGNORE keeps them)",
                   where, layer, conflicts, conflicts == 1 ? "" : "s", list, conflicts > 8 ? ", ..." : "");
  }
  if (!rc && nheads) { /* the replaced data objects' sizes: serializedSize takes them off */
    vd_getreq *g = calloc(nheads, sizeof *g);
    int k = 0;
    if (!g) rc = vd_nomem(err);
    for (int i = 0; i < n && !rc; i++) {
      unsigned char old[28];
      if (plan[i].skipped || vds_pages_base_entry(f->pages, plan[i].chunk, old) || !is_data(old)) continue;
      if (!(g[k].url = vds_chunk_key_url(url, layer, plan[i].chunk))) rc = vd_nomem(err);
      g[k++].head = 1;
    }
    if (!rc) vd_get_many(ctx, g, k);
    for (int i = 0, j = 0; i < n && j < k; i++) {
      unsigned char old[28];
      if (plan[i].skipped || vds_pages_base_entry(f->pages, plan[i].chunk, old) || !is_data(old)) continue;
      /* a replaced object whose size is not known would leave serializedSize too large:
       * the plan fails (nothing is written yet) rather than guess; one that is gone
       * counted nothing any more */
      if (!g[j].rc && g[j].info.size >= 0) vds_pages_set_old_bytes(f->pages, plan[i].chunk, g[j].info.size);
      else if (g[j].rc && g[j].rc != VD_NOTFOUND && !rc)
        rc = vd_fail(err, g[j].rc, "%s", g[j].err.msg);
      else if (!g[j].rc && !rc) {
        char where[600];
        vd_url_redact(g[j].url, where, sizeof where);
        rc = vd_fail(err, VD_IO, "%s: the answer to a HEAD gave no size", where);
      }
      /* a constant replacing data: the stale object is overwritten by an empty one */
      if (!plan[i].bytes) plan[i].zero = 1;
      j++;
    }
    for (int j = 0; j < k; j++) {
      free((char *)g[j].url);
      vd_buf_free(&g[j].body);
      vd_objinfo_free(&g[j].info);
    }
    free(g);
  }
  if (!rc) rc = stage_zeros(ctx, url, layer, tx, plan, n, err);
  if (rc) return rc;
  vds_pages_counts(f->pages, &r->counts);
  snprintf(r->status_etag, sizeof r->status_etag, "%s", vds_pages_status_etag(f->pages));
  free(r->dir);
  r->ndir = 0;
  if (!(r->dir = malloc((size_t)(n + 1) * 2 * sizeof *r->dir))) return vd_nomem(err);
  int64_t prev = -1;
  for (int i = 0; i < n; i++) { /* plan is sorted: pages in order */
    int64_t p = plan[i].chunk / f->l->page_size;
    if (p == prev || plan[i].skipped) continue;
    prev = p;
    if (vds_page_stored(f->l, p) < 0) r->dir[2 * r->ndir] = p, r->dir[2 * r->ndir++ + 1] = p;
  }
  return VD_OK;
}

vd_code vds_commit(vd_ctx *ctx, const char *url, const char *layer, const char *tx, vds_plan_chunk *plan, int n,
                   int *recorded, vd_err *err) {
  *recorded = 0;
  char *rurl = rec_url(url, layer);
  if (!rurl) return vd_nomem(err);
  vd_code rc = vd_store_make_dirs(rurl, err);
  qsort(plan, n, sizeof *plan, by_chunk);
  rec_running(tx, 1);
  record r = {0};
  for (int tries = 0; !rc; tries++) {
    fresh f = {0};
    int done = 0;
    rc = wait_free(ctx, url, layer, rurl, &r, 1, err);
    int64_t gen = r.gen;
    if (!rc) rc = fresh_open(ctx, url, layer, &f, err);
    if (!rc) rc = make_plan(ctx, url, layer, tx, &f, plan, n, &r, err);
    if (!rc) {
      snprintf(r.tx, sizeof r.tx, "%s", tx);
      r.commit = 1;
      r.chunks = plan;
      r.n = n;
      rc = rec_write(ctx, rurl, &r, err); /* the commit point */
      r.chunks = NULL;
      if (rc == VD_PRECONDITION || rc == VD_IO) switch (settle_point(ctx, url, layer, rurl, &r, gen, plan, n)) {
          case POINT_NOT: rc = VD_PRECONDITION; break;
          case POINT_MINE: rc = VD_OK; break;
          case POINT_DONE: *recorded = done = 1, rc = VD_OK; break;
          case POINT_TAKEN: *recorded = done = 1, rc = wait_done(ctx, rurl, tx, err); break;
          default: *recorded = 2; /* the first error stands; the staging stays, in case */
        }
    }
    if (rc == VD_PRECONDITION && tries < 64 && !*recorded) { /* another writer committed meanwhile: read it all again */
      fresh_close(&f);
      rec_free(&r);
      rc = VD_OK;
      nap(tries < 4 ? tries : 4);
      continue;
    }
    if (!rc && !done) {
      held h = {ctx, rurl, &r, rec_now_ms(), 0};
      *recorded = 1;
      r.chunks = plan;
      r.n = n;
      rc = carry_out(&h, url, layer, &f, err);
      r.chunks = NULL;
      if (rc && h.lost) rc = wait_done(ctx, rurl, tx, err); /* the writer that took it over finishes it */
    }
    fresh_close(&f);
    break;
  }
  rec_running(tx, 0);
  rec_free(&r);
  free(rurl);
  return rc;
}

vd_code vds_commit_exclusive(vd_ctx *ctx, const char *url, const char *layer, vd_code (*fn)(void *arg, vds_fence_fn fence,
                             void *fence_arg, vd_err *err), void *arg, vd_err *err) {
  char *rurl = rec_url(url, layer);
  if (!rurl) return vd_nomem(err);
  char tx[17];
  vd_code rc = vd_store_make_dirs(rurl, err);
  if (!rc) rc = vds_new_tx(tx, err);
  if (rc) {
    free(rurl);
    return rc;
  }
  rec_running(tx, 1);
  record r = {0};
  for (int tries = 0;; tries++) {
    if ((rc = wait_free(ctx, url, layer, rurl, &r, 1, err))) break;
    int64_t gen = r.gen;
    snprintf(r.tx, sizeof r.tx, "%s", tx);
    r.commit = r.repair = 1;
    rc = rec_write(ctx, rurl, &r, err);
    if (rc == VD_PRECONDITION || rc == VD_IO) {
      int at = settle_point(ctx, url, layer, rurl, &r, gen, NULL, 0);
      if (at == POINT_MINE) rc = VD_OK;
      else if (at != POINT_UNKNOWN) rc = VD_PRECONDITION;
    }
    if (rc == VD_PRECONDITION && tries < 64) {
      rec_free(&r);
      continue;
    }
    if (rc) break;
    held h = {ctx, rurl, &r, rec_now_ms(), 0};
    rc = fn(arg, fence, &h, err);
    vd_err e2;
    vd_code rr = h.lost ? VD_OK : release(&h, rc ? &e2 : err);
    if (!rc) rc = rr;
    break;
  }
  rec_running(tx, 0);
  rec_free(&r);
  free(rurl);
  return rc;
}

vd_code vds_stage_clean(vd_ctx *ctx, const char *url, const char *layer, double age, int64_t *n, vd_err *err) {
  *n = 0;
  char name[400];
  snprintf(name, sizeof name, ".vdsql/%s/", layer);
  char *dir = vd_url_join(url, name), *rurl = rec_url(url, layer);
  record r = {0};
  vd_code rc = dir && rurl ? rec_read(ctx, rurl, &r, err) : vd_nomem(err);
  char *token = NULL;
  int64_t cut = (int64_t)time(NULL) - (int64_t)age;
  while (!rc) {
    vd_listing li;
    if ((rc = vd_list(ctx, dir, token, 1000, &li, err))) {
      if (rc == VD_NOTFOUND) rc = VD_OK; /* no staging folder at all */
      break;
    }
    free(token);
    token = li.next ? strdup(li.next) : NULL;
    for (int i = 0; i < li.n && !rc; i++) {
      /* keys relative to the listed folder's parent: ".../<layer>/<tx>/<chunk>" */
      const char *k = li.ent[i].key, *slash = strrchr(k, '/');
      if (!slash || strcmp(slash + 1, "commit") == 0 || slash - k < 16) continue;
      const char *t = slash - 16; /* the transaction id: 16 hex digits as a whole name */
      if (t > k && t[-1] != '/') continue;
      if (r.commit && strncmp(t, r.tx, 16) == 0) continue; /* the commit under way */
      if (li.ent[i].info.mtime > cut) continue;             /* maybe a transaction still open */
      char *lst = vd_url_list_dir(dir);
      char *obj = lst ? vd_url_join(lst, k) : NULL;
      free(lst);
      if (!obj) rc = vd_nomem(err);
      else if (!(rc = vd_delete(ctx, obj, err))) {
        (*n)++;
        char *slash2 = strrchr(obj, '/');
        if (slash2) *slash2 = 0;
        vd_store_remove_dir(obj); /* local files: the transaction's folder, once empty */
      }
      free(obj);
    }
    vd_listing_free(&li);
    if (!token) break;
  }
  free(token);
  rec_free(&r);
  free(dir);
  free(rurl);
  return rc;
}
