/* store_objects(url): a store's listing as rows (key, size, etag, last_modified,
 * metadata), a page at a time through the store's continuation tokens. Two hints keep
 * it cheap: a LIMIT makes the page asked for no larger than the rows still wanted, and
 * where the listing carries no user metadata (S3) the parallel HEADs that fetch it are
 * only sent when the statement reads the metadata column; and a listing is told what is
 * not read (a local one then skips the extended attributes, or the stat of each file
 * when only keys are read). */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/store.h"
#include "vd_catalog.h"

enum { C_KEY, C_SIZE, C_ETAG, C_MTIME, C_META, C_URL };

/* Keys asked for per listing page: Azure's maximum; the S3 backend lowers it to 1000,
 * the service's own. */
#define PAGE_MAX 5000

static const vd_colspec cols[] = {{"key", VD_TEXT, 0},           {"size", VD_INT, 0},
                                  {"etag", VD_TEXT, 0},          {"last_modified", VD_TEXT, 0},
                                  {"metadata", VD_TEXT, 0},      {"url", VD_TEXT, VD_COL_ARG}};

typedef struct obj_cur {
  vd_ctx *ctx;
  char *url;
  vd_listing page;
  int i;           /* row within page */
  int64_t row;     /* rows returned before this one */
  int64_t left;    /* rows the front end still takes (INT64_MAX: no LIMIT) */
  int want_meta;   /* the metadata column is read */
  int flags;       /* VD_LIST_NO_META / VD_LIST_KEYS_ONLY: what the statement does not read */
  int done;        /* no page after this one */
  char tbuf[32];
} obj_cur;

/* Fills in the user metadata of every entry of the page that the listing gave none for,
 * with one HEAD each, all in parallel (max_parallel in flight). An object deleted since
 * the listing keeps NULL metadata; any other failure is the query's error. */
static vd_code head_page(obj_cur *c, vd_err *err) {
  vd_listing *l = &c->page;
  int n = 0;
  for (int i = 0; i < l->n; i++) n += !l->ent[i].has_meta;
  if (!n) return VD_OK;
  vd_getreq *r = calloc((size_t)n, sizeof *r);
  int *slot = malloc((size_t)n * sizeof *slot);
  char **urls = calloc((size_t)n, sizeof *urls);
  vd_code rc = VD_OK;
  if (!r || !slot || !urls) rc = vd_nomem(err);
  char *dir = rc ? NULL : vd_url_list_dir(c->url); /* the keys' directory, its ?query kept */
  if (!rc && !dir) rc = vd_nomem(err);
  for (int i = 0, k = 0; !rc && i < l->n; i++) {
    if (l->ent[i].has_meta) continue;
    if (!(urls[k] = vd_url_join(dir, l->ent[i].key))) rc = vd_nomem(err);
    r[k].url = urls[k];
    r[k].head = 1;
    slot[k++] = i;
  }
  if (!rc) vd_get_many(c->ctx, r, n);
  for (int k = 0; k < n && r; k++) {
    if (!rc && r[k].rc == VD_OK) {
      vd_objinfo *dst = &l->ent[slot[k]].info;
      for (int m = 0; m < dst->nmeta; m++) free(dst->meta[m].key), free(dst->meta[m].value);
      free(dst->meta);
      dst->meta = r[k].info.meta, dst->nmeta = r[k].info.nmeta;
      r[k].info.meta = NULL, r[k].info.nmeta = 0;
      l->ent[slot[k]].has_meta = 1;
    } else if (!rc && r[k].rc != VD_NOTFOUND) {
      rc = r[k].rc;
      *err = r[k].err;
    }
    vd_buf_free(&r[k].body);
    vd_objinfo_free(&r[k].info);
  }
  for (int k = 0; urls && k < n; k++) free(urls[k]);
  free(urls);
  free(slot);
  free(r);
  free(dir);
  return rc;
}

/* The next non-empty listing page into c->page (empty at the end; a service may answer
 * an empty page that still has a continuation). */
static vd_code fetch_page(obj_cur *c, vd_err *err) {
  do {
    char *token = c->page.next;
    c->page.next = NULL;
    vd_listing_free(&c->page);
    c->i = 0;
    int max = c->left < PAGE_MAX ? (int)c->left : PAGE_MAX;
    vd_code rc = vd_list_with(c->ctx, c->url, token, max > 0 ? max : 1, c->flags, &c->page, err);
    free(token);
    if (rc) return rc;
    c->done = c->page.next == NULL;
  } while (!c->page.n && !c->done);
  return c->want_meta ? head_page(c, err) : VD_OK;
}

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  obj_cur *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  c->ctx = ctx;
  c->left = INT64_MAX;
  c->want_meta = 1;
  c->done = 1;
  *out = c;
  for (int i = 0; i < nf; i++) {
    if (f[i].op == VD_OP_LIMIT) c->left = f[i].vals[0].i;
    if (f[i].op == VD_OP_COLS) {
      int64_t used = f[i].vals[0].i;
      c->want_meta = (used >> C_META) & 1;
      int info = (used >> C_SIZE & 1) | (used >> C_ETAG & 1) | (used >> C_MTIME & 1);
      c->flags = (c->want_meta ? 0 : VD_LIST_NO_META) | (c->want_meta || info ? 0 : VD_LIST_KEYS_ONLY);
    }
  }
  if (na < 1 || a[0].type == VD_NULL || c->left <= 0) return VD_OK;
  if (!(c->url = vd_value_strdup(&a[0]))) {
    free(c);
    *out = NULL;
    return vd_fail(err, VD_INVALID, "store_objects: the url must be text, not a %s",
                   a[0].type == VD_BLOB ? "blob" : "number");
  }
  vd_code rc = fetch_page(c, err);
  if (rc) {
    vd_listing_free(&c->page);
    free(c->url);
    free(c);
    *out = NULL;
  }
  return rc;
}

static int eof(void *cur) {
  obj_cur *c = cur;
  return c->i >= c->page.n;
}

static vd_code next(void *cur, vd_err *err) {
  obj_cur *c = cur;
  c->row++;
  if (c->left != INT64_MAX) c->left--;
  if (++c->i < c->page.n) return VD_OK;
  if (c->done || c->left <= 0) return VD_OK; /* eof: i == n */
  return fetch_page(c, err);
}

/* User metadata as a JSON object (cJSON escapes keys and values); "{}" for none. */
static char *meta_json(const vd_objinfo *info) {
  cJSON *o = cJSON_CreateObject();
  for (int m = 0; o && m < info->nmeta; m++)
    if (!cJSON_AddStringToObject(o, info->meta[m].key, info->meta[m].value ? info->meta[m].value : "")) {
      cJSON_Delete(o);
      return NULL;
    }
  char *s = o ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  return s;
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  obj_cur *c = cur;
  const vd_listent *e = &c->page.ent[c->i];
  switch (col) {
    case C_KEY: *v = vd_text(e->key); break;
    case C_SIZE: *v = e->info.size >= 0 ? vd_int(e->info.size) : vd_null(); break;
    case C_ETAG: *v = e->info.etag[0] ? vd_text(e->info.etag) : vd_null(); break;
    case C_MTIME: {
      /* ISO 8601 UTC: sorts and compares as text, and SQLite's date functions take it */
      time_t t = (time_t)e->info.mtime;
      struct tm tm;
      if (!e->info.mtime || !gmtime_r(&t, &tm)) {
        *v = vd_null();
        break;
      }
      strftime(c->tbuf, sizeof c->tbuf, "%Y-%m-%dT%H:%M:%SZ", &tm);
      *v = vd_text(c->tbuf);
      break;
    }
    case C_META: {
      if (!e->has_meta) {
        *v = vd_null();
        break;
      }
      char *s = meta_json(&e->info);
      if (!s) return vd_nomem(err);
      /* cJSON allocates with malloc (its hooks are not changed), so free releases it */
      *v = vd_owned_text(s);
      break;
    }
    default: *v = vd_null(); break;
  }
  return VD_OK;
}

static int64_t rowid(void *cur) { return ((obj_cur *)cur)->row; }

static void close_(void *cur) {
  obj_cur *c = cur;
  if (!c) return;
  vd_listing_free(&c->page);
  free(c->url);
  free(c);
}

const vd_relation vd_rel_store_objects = {
    .name = "store_objects",
    VD_COLS(cols),
    .flags = VD_REL_IO | VD_REL_HINTS,
    .rows = 1000, .requests = 1, .rows_per_request = 1000,
    .order_col = C_KEY,
    .open = open_,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .doc = "the objects under a prefix of any listable store (files, s3://, az://), in key order: key, size, "
        "etag, last_modified, user metadata as JSON; LIMIT sets the listing's page size"};
