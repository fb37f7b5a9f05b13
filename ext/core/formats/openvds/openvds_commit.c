/* The commit protocol of OpenVDS layer writes (openvds_commit.h says how it works and
 * why; docs/openvds.md tells users). This file: the commit record (its JSON, who holds
 * it, whether that writer is alive), taking it, carrying a plan out, and finishing a
 * dead writer's plan. */
#include <cJSON.h>
#include <inttypes.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"
#include "openvds_commit.h"
#include "openvds_objects.h"
#include "openvds_pages.h"
#include "openvds_write.h"

#define BATCH 256 /* copies and deletes sent at once (the lease is renewed between batches) */

/* ---- who holds a record, and whether that writer still lives ---- */

typedef struct owner {
  char host[128], boot[48];
  char pidns[48];           /* the PID namespace the pid is a number of ("pid:[inode]") */
  long pid;
  unsigned long long start; /* the process's start time in clock ticks since boot (/proc) */
} owner;

static void read_line(const char *path, char *out, size_t n) {
  out[0] = 0;
  FILE *f = fopen(path, "re");
  if (!f) return;
  if (fgets(out, (int)n, f)) out[strcspn(out, "\n")] = 0;
  fclose(f);
}

/* Field 22 of /proc/<pid>/stat: with the pid it names one process for good (a pid is
 * reused, a pid and its start time are not); 0 when there is no such process. */
static unsigned long long proc_start(long pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  read_line(path, buf, sizeof buf);
  const char *p = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
  if (!p) return 0;
  int field = 2;
  for (; *p && field < 22; p++)
    if (*p == ' ') field++;
  return field == 22 ? strtoull(p, NULL, 10) : 0;
}

static void me(owner *o) {
  memset(o, 0, sizeof *o);
  if (gethostname(o->host, sizeof o->host - 1) != 0) snprintf(o->host, sizeof o->host, "?");
  read_line("/proc/sys/kernel/random/boot_id", o->boot, sizeof o->boot);
  ssize_t k = readlink("/proc/self/ns/pid", o->pidns, sizeof o->pidns - 1);
  o->pidns[k > 0 ? k : 0] = 0;
  o->pid = (long)getpid();
  o->start = proc_start(o->pid);
}

static int same_owner(const owner *a, const owner *b) {
  return strcmp(a->host, b->host) == 0 && strcmp(a->boot, b->boot) == 0 && strcmp(a->pidns, b->pidns) == 0 &&
         a->pid == b->pid && a->start == b->start;
}

/* Test hook, like the LINDI writer's crash points: VDSQL_PAUSEPOINT=<step> stops this
 * process (SIGSTOP) when its commit reaches that step after the commit point (copy,
 * pages, status, delete, release), so a test can resume it after another writer took its
 * commit over: what a GC pause, a frozen VM or SIGSTOP does at a random moment. */
static void pausepoint(const char *step) {
  const char *s = getenv("VDSQL_PAUSEPOINT");
  if (s && strcmp(s, step) == 0) raise(SIGSTOP);
}

/* Transactions of this process whose commit is running now: a record of our own
 * process is alive only when its transaction is one of them (a commit that failed past
 * its commit point left it behind, and it must be finished like a dead writer's). */
static pthread_mutex_t running_mu = PTHREAD_MUTEX_INITIALIZER;
static char running[64][17];

static void set_running(const char *tx, int on) {
  pthread_mutex_lock(&running_mu);
  for (int i = 0; i < 64; i++) {
    if (on && !running[i][0]) {
      snprintf(running[i], sizeof running[i], "%s", tx);
      break;
    }
    if (!on && strcmp(running[i], tx) == 0) {
      running[i][0] = 0;
      break;
    }
  }
  pthread_mutex_unlock(&running_mu);
}

static int is_running(const char *tx) {
  int yes = 0;
  pthread_mutex_lock(&running_mu);
  for (int i = 0; i < 64 && !yes; i++) yes = running[i][0] && strcmp(running[i], tx) == 0;
  pthread_mutex_unlock(&running_mu);
  return yes;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the record ---- */

typedef struct record {
  int present, commit;  /* a record exists; it holds a commit (else it is free) */
  char etag[128];
  char tx[17];
  int64_t gen, expires;
  owner who;
  char status_etag[128];
  vds_counts counts;
  int64_t *dir; /* pairs: page, stored name */
  int ndir;
  vds_plan_chunk *chunks;
  int n;
  int repair;   /* held by vds_repair (no plan) */
} record;

static void record_free(record *r) {
  free(r->dir);
  free(r->chunks);
  memset(r, 0, sizeof *r);
}

/* Whether the writer holding r may still be at work. Its pid says so only when it is a
 * pid of this PID namespace on this boot of this host: containers with the host's network
 * share its name and boot id but number their processes apart, and a pid read in the
 * wrong namespace names another process or none (a live writer taken for dead). Anyone
 * else (another machine, another namespace, a record that does not name its namespace)
 * is alive while its lease runs. */
static int live(const record *r) {
  owner m;
  me(&m);
  if (m.pidns[0] && strcmp(r->who.host, m.host) == 0 && strcmp(r->who.boot, m.boot) == 0 &&
      strcmp(r->who.pidns, m.pidns) == 0) {
    if (r->who.pid == m.pid && r->who.start == m.start) return is_running(r->tx);
    return r->who.start && proc_start(r->who.pid) == r->who.start;
  }
  return now_ms() < r->expires;
}

/* Where a record stands for the transaction tx: held by this process for it, held for
 * it by another writer (which took the commit over and finishes it), or anything else
 * (free, absent, another transaction's commit). */
enum { REC_MINE, REC_TAKEN, REC_OTHER };
static int whose(const record *r, const char *tx) {
  if (!r->present || !r->commit || strcmp(r->tx, tx) != 0) return REC_OTHER;
  owner m;
  me(&m);
  return same_owner(&r->who, &m) ? REC_MINE : REC_TAKEN;
}

static void hex8(const unsigned char *b, char *out) {
  for (int i = 0; i < 8; i++) sprintf(out + 2 * i, "%02x", b[i]);
}

static int unhex8(const char *s, unsigned char *b) {
  if (!s || strlen(s) != 16) return -1;
  for (int i = 0; i < 8; i++) {
    unsigned v;
    if (sscanf(s + 2 * i, "%2x", &v) != 1) return -1;
    b[i] = (unsigned char)v;
  }
  return 0;
}

static cJSON *num(int64_t v) { return cJSON_CreateNumber((double)v); }

/* The record's text: a free one names the last transaction and a generation, so that
 * no two free records have the same bytes (S3's etag is their MD5). */
static char *record_text(const record *r, double lease) {
  cJSON *o = cJSON_CreateObject(), *w = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "format", "vdsql-openvds-commit-1");
  cJSON_AddStringToObject(o, "state", r->commit ? "commit" : "free");
  cJSON_AddItemToObject(o, "generation", num(r->gen));
  cJSON_AddStringToObject(o, "tx", r->tx);
  if (r->commit) {
    owner m;
    me(&m);
    cJSON_AddStringToObject(w, "host", m.host);
    cJSON_AddStringToObject(w, "boot", m.boot);
    cJSON_AddStringToObject(w, "pidns", m.pidns);
    cJSON_AddItemToObject(w, "pid", num(m.pid));
    cJSON_AddItemToObject(w, "start", num((int64_t)m.start));
    cJSON_AddItemToObject(o, "owner", w);
    w = NULL;
    cJSON_AddItemToObject(o, "expires", num(now_ms() + (int64_t)(lease * 1000)));
    if (r->repair) cJSON_AddTrueToObject(o, "repair");
    cJSON_AddStringToObject(o, "statusEtag", r->status_etag);
    cJSON *c = cJSON_AddArrayToObject(o, "counts");
    cJSON_AddItemToArray(c, num(r->counts.valid));
    cJSON_AddItemToArray(c, num(r->counts.serialized));
    cJSON_AddItemToArray(c, num(r->counts.uncompressed));
    cJSON *d = cJSON_AddArrayToObject(o, "pageDirectory");
    for (int i = 0; i < r->ndir; i++) {
      cJSON *p = cJSON_CreateArray();
      cJSON_AddItemToArray(p, num(r->dir[2 * i]));
      cJSON_AddItemToArray(p, num(r->dir[2 * i + 1]));
      cJSON_AddItemToArray(d, p);
    }
    cJSON *k = cJSON_AddArrayToObject(o, "chunks");
    for (int i = 0; i < r->n; i++) {
      const vds_plan_chunk *x = &r->chunks[i];
      if (x->skipped) continue;
      char h[17];
      hex8(x->raw, h);
      cJSON *p = cJSON_CreateArray();
      cJSON_AddItemToArray(p, num(x->chunk));
      cJSON_AddItemToArray(p, cJSON_CreateString(h));
      cJSON_AddItemToArray(p, num(x->zero ? -1 : x->bytes)); /* -1: an empty object with the hash */
      cJSON_AddItemToArray(k, p);
    }
  }
  cJSON_Delete(w);
  char *s = vds_json_print(o);
  cJSON_Delete(o);
  return s;
}

/* A whole number that a double holds exactly (|v| <= 2^53), or -1 (converting anything
 * else to an integer is undefined). */
static int as_int(const cJSON *v, int64_t *out) {
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= -9007199254740992.0 && v->valuedouble <= 9007199254740992.0) ||
      v->valuedouble != (double)(int64_t)v->valuedouble)
    return -1;
  *out = (int64_t)v->valuedouble;
  return 0;
}

static int64_t get_int(const cJSON *o, const char *k) {
  int64_t v = 0;
  return as_int(cJSON_GetObjectItemCaseSensitive(o, k), &v) ? 0 : v;
}

static const char *get_str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : "";
}

static vd_code bad_record(const char *where, const char *what, vd_err *err) {
  return vd_fail(err, VD_INVALID, "%s: not a vdsql commit record (%s); it is vdsql's own: if nothing else wrote it, "
                 "report it", where, what);
}

static vd_code parse_record(const char *text, size_t len, const char *where, record *r, vd_err *err) {
  cJSON *o = cJSON_ParseWithLength(text, len);
  vd_code rc = VD_OK;
  if (!cJSON_IsObject(o) || strcmp(get_str(o, "format"), "vdsql-openvds-commit-1") != 0) {
    cJSON_Delete(o);
    return bad_record(where, "no format vdsql-openvds-commit-1", err);
  }
  r->present = 1;
  r->commit = strcmp(get_str(o, "state"), "commit") == 0;
  r->gen = get_int(o, "generation");
  snprintf(r->tx, sizeof r->tx, "%s", get_str(o, "tx"));
  if (r->commit) {
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "owner");
    snprintf(r->who.host, sizeof r->who.host, "%s", get_str(w, "host"));
    snprintf(r->who.boot, sizeof r->who.boot, "%s", get_str(w, "boot"));
    snprintf(r->who.pidns, sizeof r->who.pidns, "%s", get_str(w, "pidns"));
    r->who.pid = (long)get_int(w, "pid");
    r->who.start = (unsigned long long)get_int(w, "start");
    r->expires = get_int(o, "expires");
    r->repair = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "repair"));
    snprintf(r->status_etag, sizeof r->status_etag, "%s", get_str(o, "statusEtag"));
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "counts");
    if (cJSON_GetArraySize(c) != 3 || as_int(cJSON_GetArrayItem(c, 0), &r->counts.valid) ||
        as_int(cJSON_GetArrayItem(c, 1), &r->counts.serialized) ||
        as_int(cJSON_GetArrayItem(c, 2), &r->counts.uncompressed))
      rc = bad_record(where, "counts is no [valid, serialized, uncompressed]", err);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "pageDirectory"), *k = cJSON_GetObjectItemCaseSensitive(o, "chunks"), *it;
    r->dir = malloc(((size_t)cJSON_GetArraySize(d) + 1) * 2 * sizeof *r->dir);
    r->chunks = calloc((size_t)cJSON_GetArraySize(k) + 1, sizeof *r->chunks);
    if (!rc && (!r->dir || !r->chunks)) rc = vd_nomem(err);
    cJSON_ArrayForEach(it, d) {
      if (rc) break;
      if (cJSON_GetArraySize(it) != 2 || as_int(cJSON_GetArrayItem(it, 0), &r->dir[2 * r->ndir]) ||
          as_int(cJSON_GetArrayItem(it, 1), &r->dir[2 * r->ndir + 1]) || r->dir[2 * r->ndir] < 0)
        rc = bad_record(where, "a pageDirectory item is no [page, name]", err);
      else
        r->ndir++;
    }
    cJSON_ArrayForEach(it, k) {
      if (rc) break;
      vds_plan_chunk *x = &r->chunks[r->n];
      const cJSON *h = cJSON_GetArrayItem(it, 1);
      if (cJSON_GetArraySize(it) != 3 || !cJSON_IsString(h) || unhex8(h->valuestring, x->raw) ||
          as_int(cJSON_GetArrayItem(it, 0), &x->chunk) || as_int(cJSON_GetArrayItem(it, 2), &x->bytes) ||
          x->chunk < 0 || x->bytes < -1)
        rc = bad_record(where, "a chunks item is no [chunk, entry, bytes]", err);
      else {
        if (x->bytes < 0) x->bytes = 0, x->zero = 1;
        r->n++;
      }
    }
  }
  cJSON_Delete(o);
  return rc;
}

vd_code vds_commit_record_check(const char *text, size_t len, int *commit, int *n, vd_err *err) {
  record r = {0};
  vd_code rc = parse_record(text, len, "commit record", &r, err);
  *commit = r.commit;
  *n = r.n;
  record_free(&r);
  return rc;
}

static char *record_url(const char *url, const char *layer) {
  char name[400];
  snprintf(name, sizeof name, ".vdsql/%s/commit", layer);
  return vd_url_join(url, name);
}

char *vds_stage_url(const char *url, const char *layer, const char *tx, int64_t chunk) {
  char name[400];
  snprintf(name, sizeof name, ".vdsql/%s/%s/%" PRId64, layer, tx, chunk);
  return vd_url_join(url, name);
}

vd_code vds_new_tx(char tx[17], vd_err *err) {
  unsigned char b[8];
  if (RAND_bytes(b, sizeof b) != 1) return vd_fail(err, VD_ERROR, "OpenSSL RAND_bytes failed");
  hex8(b, tx);
  return VD_OK;
}

/* The record as it is now (never from the cache); r->present 0 when there is none. */
static vd_code read_record(vd_ctx *ctx, const char *rurl, record *r, vd_err *err) {
  memset(r, 0, sizeof *r);
  vd_buf b = {0};
  vd_objinfo info = {0};
  vd_code rc = vd_get(ctx, rurl, 0, -1, &b, &info, err);
  if (rc == VD_NOTFOUND) rc = VD_OK;
  else if (!rc) {
    char where[600];
    vd_url_redact(rurl, where, sizeof where);
    rc = parse_record(b.data ? (const char *)b.data : "", b.len, where, r, err);
    snprintf(r->etag, sizeof r->etag, "%s", info.etag);
  }
  vd_buf_free(&b);
  vd_objinfo_free(&info);
  return rc;
}

/* Writes r over the record read with etag r->etag (create-only when there was none);
 * VD_PRECONDITION when another writer wrote it since. r->etag becomes the new one. */
static vd_code write_record(vd_ctx *ctx, const char *rurl, record *r, vd_err *err) {
  char *text = record_text(r, ctx->cfg.commit_lease);
  if (!text) return vd_nomem(err);
  vd_putreq p = {.url = rurl, .body = text, .len = strlen(text)};
  if (r->present) p.if_match = r->etag;
  else p.if_none_match = 1;
  vd_code rc = vd_put(ctx, &p, err);
  free(text);
  if (!rc) {
    snprintf(r->etag, sizeof r->etag, "%s", p.etag);
    r->present = 1;
  }
  return rc;
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
  vd_code rc = read_record(h->ctx, h->rurl, &now, err);
  if (!rc && whose(&now, h->r->tx) == REC_MINE) {
    snprintf(h->r->etag, sizeof h->r->etag, "%s", now.etag);
  } else if (!rc) {
    h->lost = 1;
    rc = lost_lease(h->rurl, err);
  }
  record_free(&now);
  return rc;
}

static vd_code fence(void *arg, vd_err *err) { return hold(arg, err); }

/* Renews the lease (If-Match) once a third of it has passed. A renewal refused or left
 * unanswered may have landed (its answer lost): the record read again tells whether
 * this writer still holds it (and the next call renews again). */
static vd_code renew(held *h, vd_err *err) {
  if (now_ms() - h->last < (int64_t)(h->ctx->cfg.commit_lease * 1000 / 3)) return VD_OK;
  vd_code rc = write_record(h->ctx, h->rurl, h->r, err);
  if (rc == VD_PRECONDITION || rc == VD_IO) return hold(h, err);
  if (!rc) h->last = now_ms();
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
  vd_code rc = write_record(h->ctx, h->rurl, r, err);
  for (int tries = 0; (rc == VD_PRECONDITION || rc == VD_IO) && tries < 3; tries++) {
    record now;
    vd_err e2;
    if (read_record(h->ctx, h->rurl, &now, &e2)) break; /* the first error stands */
    int w = whose(&now, r->tx);
    if (w == REC_MINE) {
      snprintf(r->etag, sizeof r->etag, "%s", now.etag);
      rc = write_record(h->ctx, h->rurl, r, err);
    } else if (w == REC_OTHER) {
      rc = VD_OK;
    } else {
      h->lost = 1;
      rc = lost_lease(h->rurl, err);
    }
    record_free(&now);
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
    vd_code rc = read_record(ctx, rurl, &now, err);
    int w = rc ? REC_OTHER : whose(&now, tx);
    record_free(&now);
    if (rc) return rc;
    if (w == REC_OTHER) return VD_OK;
    if (elapsed(&t0) >= ctx->cfg.lock_timeout) return lost_lease(rurl, err);
    nap(tries);
  }
}

/* ---- carrying a plan out ---- */

/* LayerStatus read now with its etag, the dataset parsed with it, its layer and a page
 * layer over it. */
typedef struct fresh {
  vds_dataset ds;
  const vds_layer *l;
  vds_pages *pages;
} fresh;
static void fresh_close(fresh *f) {
  vds_pages_close(f->pages);
  vds_layers_free(f->ds.layers, f->ds.nlayers);
  vds_layout_free(&f->ds.layout);
  free(f->ds.url);
  memset(f, 0, sizeof *f);
}

static vd_code fresh_open(vd_ctx *ctx, const char *url, const char *layer, fresh *f, vd_err *err) {
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

static char *chunk_url(const char *url, const char *layer, int64_t chunk) {
  char name[300];
  snprintf(name, sizeof name, "%s/%" PRId64, layer, chunk);
  return vd_url_join(url, name);
}

static int is_data(const unsigned char *raw) {
  vds_entry e;
  vds_entry_decode(raw, 8, &e);
  return e.status == VDS_S_DATA;
}

/* Whether chunk x has a staged object: its data, or the empty object of a constant that
 * replaces data (a record parsed from the store says only "zero"). */
static int has_stage(const vds_plan_chunk *x) { return x->bytes || x->zero || x->zero_staged; }

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
      char *dst = chunk_url(url, layer, x->chunk), *src = vds_stage_url(url, layer, r->tx, x->chunk);
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
  vd_code rc = VD_OK;
  for (int at = 0; at < n; at += BATCH) {
    int m = n - at < BATCH ? n - at : BATCH, k = 0;
    vd_putreq *rq = calloc(m, sizeof *rq), **pp = calloc(m, sizeof *pp);
    vd_code *rcs = calloc(m, sizeof *rcs);
    vd_err *errs = calloc(m, sizeof *errs);
    if (!rq || !pp || !rcs || !errs) {
      if (!rc) rc = vd_nomem(err);
    } else {
      for (int i = 0; i < m; i++) {
        if (!has_stage(&plan[at + i])) continue;
        if (!(rq[k].url = vds_stage_url(url, layer, tx, plan[at + i].chunk))) {
          if (!rc) rc = vd_nomem(err);
          break;
        }
        rq[k].del = 1;
        pp[k] = &rq[k];
        k++;
      }
    }
    if (k) vd_put_many(ctx, pp, k, rcs, errs);
    for (int j = 0; j < k; j++) {
      if (rcs[j] && rcs[j] != VD_NOTFOUND && !rc) rc = vd_fail(err, rcs[j], "%s", errs[j].msg);
      free((char *)rq[j].url);
    }
    free(rq), free(pp), free(rcs), free(errs);
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
    vd_code rc = read_record(ctx, rurl, r, err);
    if (rc || !r->present || !r->commit) return rc;
    if (!live(r)) { /* take it over (If-Match: one taker wins), then finish it */
      held h = {ctx, rurl, r, now_ms(), 0};
      rc = write_record(ctx, rurl, r, err);
      if (!rc) rc = r->repair ? release(&h, err) : carry_out(&h, url, layer, NULL, err);
      record_free(r);
      if (rc && rc != VD_PRECONDITION && !h.lost) return rc;
      continue; /* taken by another (or this one's answer lost): read again */
    }
    if (!wait) return VD_OK;
    if (elapsed(&t0) >= ctx->cfg.lock_timeout) {
      char where[600];
      vd_url_redact(rurl, where, sizeof where);
      record_free(r);
      return vd_fail(err, VD_BUSY, "%s: another writer is committing to layer %s (waited %g s; see "
                     "vdsql_config('lock_timeout'))", where, layer, ctx->cfg.lock_timeout);
    }
    record_free(r);
    nap(tries);
  }
}

vd_code vds_commit_recover(vd_ctx *ctx, const char *url, const char *layer, vd_err *err) {
  char *rurl = record_url(url, layer);
  if (!rurl) return vd_nomem(err);
  record r;
  vd_code rc = wait_free(ctx, url, layer, rurl, &r, 0, err);
  record_free(&r);
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
    char *su = vds_stage_url(url, layer, tx, plan[i].chunk);
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
  if (read_record(ctx, rurl, &now, &e)) return POINT_UNKNOWN;
  int w = whose(&now, r->tx), at;
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
  record_free(&now);
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
    if (!(rq[m].url = vds_stage_url(url, layer, tx, plan[i].chunk))) {
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
      if (!(g[k].url = chunk_url(url, layer, plan[i].chunk))) rc = vd_nomem(err);
      g[k++].head = 1;
    }
    if (!rc) vd_get_many(ctx, g, k);
    for (int i = 0, j = 0; i < n && j < k; i++) {
      unsigned char old[28];
      if (plan[i].skipped || vds_pages_base_entry(f->pages, plan[i].chunk, old) || !is_data(old)) continue;
      if (!g[j].rc && g[j].info.size >= 0) vds_pages_set_old_bytes(f->pages, plan[i].chunk, g[j].info.size);
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
  char *rurl = record_url(url, layer);
  if (!rurl) return vd_nomem(err);
  vd_code rc = vd_store_make_dirs(rurl, err);
  qsort(plan, n, sizeof *plan, by_chunk);
  set_running(tx, 1);
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
      rc = write_record(ctx, rurl, &r, err); /* the commit point */
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
      record_free(&r);
      rc = VD_OK;
      nap(tries < 4 ? tries : 4);
      continue;
    }
    if (!rc && !done) {
      held h = {ctx, rurl, &r, now_ms(), 0};
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
  set_running(tx, 0);
  record_free(&r);
  free(rurl);
  return rc;
}

vd_code vds_commit_exclusive(vd_ctx *ctx, const char *url, const char *layer, vd_code (*fn)(void *arg, vds_fence_fn fence,
                             void *fence_arg, vd_err *err), void *arg, vd_err *err) {
  char *rurl = record_url(url, layer);
  if (!rurl) return vd_nomem(err);
  char tx[17];
  vd_code rc = vd_store_make_dirs(rurl, err);
  if (!rc) rc = vds_new_tx(tx, err);
  if (rc) {
    free(rurl);
    return rc;
  }
  set_running(tx, 1);
  record r = {0};
  for (int tries = 0;; tries++) {
    if ((rc = wait_free(ctx, url, layer, rurl, &r, 1, err))) break;
    int64_t gen = r.gen;
    snprintf(r.tx, sizeof r.tx, "%s", tx);
    r.commit = r.repair = 1;
    rc = write_record(ctx, rurl, &r, err);
    if (rc == VD_PRECONDITION || rc == VD_IO) {
      int at = settle_point(ctx, url, layer, rurl, &r, gen, NULL, 0);
      if (at == POINT_MINE) rc = VD_OK;
      else if (at != POINT_UNKNOWN) rc = VD_PRECONDITION;
    }
    if (rc == VD_PRECONDITION && tries < 64) {
      record_free(&r);
      continue;
    }
    if (rc) break;
    held h = {ctx, rurl, &r, now_ms(), 0};
    rc = fn(arg, fence, &h, err);
    vd_err e2;
    vd_code rr = h.lost ? VD_OK : release(&h, rc ? &e2 : err);
    if (!rc) rc = rr;
    break;
  }
  set_running(tx, 0);
  record_free(&r);
  free(rurl);
  return rc;
}

vd_code vds_stage_clean(vd_ctx *ctx, const char *url, const char *layer, double age, int64_t *n, vd_err *err) {
  *n = 0;
  char name[400];
  snprintf(name, sizeof name, ".vdsql/%s/", layer);
  char *dir = vd_url_join(url, name), *rurl = record_url(url, layer);
  record r = {0};
  vd_code rc = dir && rurl ? read_record(ctx, rurl, &r, err) : vd_nomem(err);
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
  record_free(&r);
  free(dir);
  free(rurl);
  return rc;
}
