/* The commit record of OpenVDS layer writes (openvds_record.h): its JSON, who holds it,
 * whether that writer still lives, and its reads and conditional writes. The protocol
 * that uses it is openvds_commit.c. */
#include <cJSON.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"
#include "openvds_record.h"
#include "openvds_write.h"

/* ---- who holds a record, and whether that writer still lives ---- */


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

/* Transactions of this process whose commit is running now: a record of our own
 * process is alive only when its transaction is one of them (a commit that failed past
 * its commit point left it behind, and it must be finished like a dead writer's). */
static pthread_mutex_t running_mu = PTHREAD_MUTEX_INITIALIZER;
static char running[64][17];

void rec_running(const char *tx, int on) {
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

int64_t rec_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the record ---- */


void rec_free(record *r) {
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
int rec_live(const record *r) {
  owner m;
  me(&m);
  if (m.pidns[0] && strcmp(r->who.host, m.host) == 0 && strcmp(r->who.boot, m.boot) == 0 &&
      strcmp(r->who.pidns, m.pidns) == 0) {
    if (r->who.pid == m.pid && r->who.start == m.start) return is_running(r->tx);
    return r->who.start && proc_start(r->who.pid) == r->who.start;
  }
  return rec_now_ms() < r->expires;
}

/* Where a record stands for the transaction tx: held by this process for it, held for
 * it by another writer (which took the commit over and finishes it), or anything else
 * (free, absent, another transaction's commit). */
int rec_whose(const record *r, const char *tx) {
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
    cJSON_AddItemToObject(o, "expires", num(rec_now_ms() + (int64_t)(lease * 1000)));
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
      if (x->direct) cJSON_AddItemToArray(p, cJSON_CreateString("direct")); /* its object is in place already */
      else if (x->v > 0) cJSON_AddItemToArray(p, num(x->v)); /* its staged object's version (<chunk>.<v>) */
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
      const cJSON *h = cJSON_GetArrayItem(it, 1), *d = cJSON_GetArrayItem(it, 3);
      int size = cJSON_GetArraySize(it), direct = size == 4 && cJSON_IsString(d);
      int64_t v = 0;
      /* the 4th element: "direct" (a data object at its key), or the staged object's
       * version v >= 1 (records of earlier versions have neither) */
      if ((size != 3 && size != 4) || !cJSON_IsString(h) || unhex8(h->valuestring, x->raw) ||
          as_int(cJSON_GetArrayItem(it, 0), &x->chunk) || as_int(cJSON_GetArrayItem(it, 2), &x->bytes) ||
          x->chunk < 0 || x->bytes < -1 ||
          (direct && !(strcmp(d->valuestring, "direct") == 0 && x->bytes > 0)) ||
          (size == 4 && !direct && (as_int(d, &v) || v < 1 || v > 2147483647)))
        rc = bad_record(where, "a chunks item is no [chunk, entry, bytes], [chunk, entry, bytes, \"direct\"] or "
                        "[chunk, entry, bytes, version]", err);
      else {
        x->direct = direct;
        x->v = (int)v;
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
  rec_free(&r);
  return rc;
}

char *rec_url(const char *url, const char *layer) {
  char name[400];
  snprintf(name, sizeof name, ".vdsql/%s/commit", layer);
  return vd_url_join(url, name);
}

char *vds_stage_url(const char *url, const char *layer, const char *tx, int64_t chunk, int v) {
  char name[400];
  if (v > 0) snprintf(name, sizeof name, ".vdsql/%s/%s/%" PRId64 ".%d", layer, tx, chunk, v);
  else snprintf(name, sizeof name, ".vdsql/%s/%s/%" PRId64, layer, tx, chunk);
  return vd_url_join(url, name);
}

vd_code vds_new_tx(char tx[17], vd_err *err) {
  unsigned char b[8];
  if (RAND_bytes(b, sizeof b) != 1) return vd_fail(err, VD_ERROR, "OpenSSL RAND_bytes failed");
  hex8(b, tx);
  return VD_OK;
}

/* The record as it is now (never from the cache); r->present 0 when there is none. */
vd_code rec_read(vd_ctx *ctx, const char *rurl, record *r, vd_err *err) {
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
vd_code rec_write(vd_ctx *ctx, const char *rurl, record *r, vd_err *err) {
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

