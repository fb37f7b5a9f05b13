/* vds_datasets(url): every OpenVDS dataset under a prefix, found by listing it (a key
 * named VolumeDataLayout marks one: the dataset is the prefix before it), with its
 * layout and LayerStatus fetched in parallel and parsed as vds_open parses them, so the
 * counts agree with vds_axes and vds_layers and a join on d.dataset finds both documents
 * in the cache. One dataset that cannot be read gives a row with its error, not the
 * query's: a catalog crawl should not stop at the first bad dataset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/openvds/openvds.h"
#include "store/store.h"
#include "vd_catalog.h"

enum { C_DATASET, C_DIMS, C_SAMPLES, C_S0, C_LAYERS = C_S0 + VDS_MAXDIM, C_ERROR, C_URL };

#define PAGE_MAX 5000 /* keys per listing page asked for (S3 gives at most 1000) */
#define BATCH 256     /* datasets whose documents are fetched together */
static const char LAYOUT[] = "VolumeDataLayout";

static const vd_colspec cols[] = {
    {"dataset", VD_TEXT, 0},  {"dimensionality", VD_INT, 0}, {"samples", VD_TEXT, 0},
    {"samples0", VD_INT, 0},  {"samples1", VD_INT, 0},       {"samples2", VD_INT, 0},
    {"samples3", VD_INT, 0},  {"samples4", VD_INT, 0},       {"samples5", VD_INT, 0},
    {"layer_count", VD_INT, 0}, {"error", VD_TEXT, 0},       {"url", VD_TEXT, VD_COL_ARG}};

typedef struct ds_row {
  char *dataset, *error;
  int dims, nlayers;
  int64_t samples[VDS_MAXDIM];
  char text[VDS_MAXDIM * 21];
} ds_row;

typedef struct ds_cur {
  ds_row *rows;
  int n, row;
} ds_cur;

static void close_(void *cur) {
  ds_cur *c = cur;
  if (!c) return;
  for (int i = 0; i < c->n; i++) free(c->rows[i].dataset), free(c->rows[i].error);
  free(c->rows);
  free(c);
}

/* A layout key: "VolumeDataLayout" as a whole name (the listing's keys are relative). */
static int is_layout(const char *key) {
  size_t n = strlen(key), l = sizeof LAYOUT - 1;
  return n >= l && strcmp(key + n - l, LAYOUT) == 0 && (n == l || key[n - l - 1] == '/');
}

/* The dataset of a layout key: dir (url's directory, its ?query kept) joined with the
 * key's prefix before "/VolumeDataLayout", the way vds_open joins names onto it. */
static char *dataset_url(const char *dir, const char *key) {
  size_t plen = strlen(key) - (sizeof LAYOUT - 1);
  if (plen) plen--; /* the '/' */
  char *p = strndup(key, plen);
  if (!p) return NULL;
  char *u = !plen ? strdup(*dir ? dir : ".") : !*dir ? strdup(p) : vd_url_join(dir, p);
  free(p);
  return u;
}

/* Does the key have a "." or ".." segment (or an empty one)? As a URL it would name
 * another object: HTTP clients and servers resolve such segments (RFC 3986 5.2.4), and a
 * file path does too; so its dataset is reported, never opened. */
static int unaddressable(const char *key) {
  for (const char *s = key;;) {
    size_t n = strcspn(s, "/");
    if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) return 1;
    if (!s[n]) return 0;
    s += n + 1;
  }
}

/* Every layout key under url, as dataset URLs, in listing (key byte) order. */
static vd_code find(vd_ctx *ctx, const char *url, const char *dir, ds_cur *c, vd_err *err) {
  vd_listing l = {0};
  char *token = NULL;
  int cap = 0;
  vd_code rc;
  do {
    rc = vd_list(ctx, url, token, PAGE_MAX, &l, err);
    free(token);
    token = NULL;
    for (int i = 0; !rc && i < l.n; i++) {
      if (!is_layout(l.ent[i].key)) continue;
      if (c->n == cap) {
        cap = cap ? 2 * cap : 16;
        ds_row *r = realloc(c->rows, (size_t)cap * sizeof *r);
        if (!r) {
          rc = vd_nomem(err);
          break;
        }
        c->rows = r;
      }
      memset(&c->rows[c->n], 0, sizeof *c->rows);
      ds_row *r = &c->rows[c->n];
      if (!(r->dataset = dataset_url(dir, l.ent[i].key))) {
        rc = vd_nomem(err);
        break;
      }
      c->n++;
      char where[600], msg[800];
      vd_url_redact(r->dataset, where, sizeof where);
      snprintf(msg, sizeof msg, "%s: the key has a '.', '..' or empty segment, which a URL cannot name (it would "
               "read other objects); not opened", where);
      if (unaddressable(l.ent[i].key) && !(r->error = strdup(msg))) rc = vd_nomem(err);
    }
    if (!rc) token = l.next, l.next = NULL;
    vd_listing_free(&l);
  } while (!rc && token);
  free(token);
  return rc;
}

/* Fills row r from its two documents (or their fetch errors). */
static vd_code fill(ds_row *r, const char *const urls[2], vd_blob *docs[2], const vd_code rcs[2], vd_err errs[2]) {
  vd_err e = {0};
  vd_code rc = VD_OK;
  for (int k = 0; k < 2 && !rc; k++)
    if (rcs[k]) {
      e = errs[k];
      rc = vds_not_dataset(r->dataset, rcs[k], &e);
    }
  if (!rc && (!docs[0] || !docs[1])) return VD_NOMEM;
  if (!rc) {
    char where[2][600];
    vd_url_redact(urls[0], where[0], sizeof where[0]);
    vd_url_redact(urls[1], where[1], sizeof where[1]);
    vds_dataset ds = {0};
    rc = vds_parse_docs(docs[0], docs[1], where[0], where[1], &ds, &e);
    if (!rc) {
      r->dims = ds.layout.dims;
      r->nlayers = ds.nlayers;
      char *o = r->text;
      for (int d = 0; d < ds.layout.dims && d < VDS_MAXDIM; d++) {
        r->samples[d] = ds.layout.axes[d].samples;
        o += sprintf(o, "%s%lld", d ? "x" : "", (long long)r->samples[d]);
      }
    }
    vds_layers_free(ds.layers, ds.nlayers);
    vds_layout_free(&ds.layout);
  }
  if (rc == VD_NOMEM) return rc;
  if (rc && !(r->error = strdup(e.msg))) return VD_NOMEM;
  return VD_OK;
}

/* Documents of n datasets fetched in one parallel batch (2n requests, max_parallel in
 * flight) and parsed; batches keep the memory held to BATCH datasets' documents. */
static vd_code fetch_batch(vd_ctx *ctx, ds_row *all, int nall, vd_err *err) {
  ds_row **rows = malloc((size_t)(nall ? nall : 1) * sizeof *rows);
  int n = 0;
  if (!rows) return vd_nomem(err);
  for (int i = 0; i < nall; i++)
    if (!all[i].error) rows[n++] = &all[i]; /* an unaddressable one has its error already */
  int n2 = 2 * n;
  char **urls = calloc((size_t)(n2 ? n2 : 1), sizeof *urls);
  vd_blob **docs = calloc((size_t)(n2 ? n2 : 1), sizeof *docs);
  vd_code *rcs = calloc((size_t)(n2 ? n2 : 1), sizeof *rcs);
  vd_err *errs = calloc((size_t)(n2 ? n2 : 1), sizeof *errs);
  vd_code rc = urls && docs && rcs && errs ? VD_OK : vd_nomem(err);
  for (int i = 0; !rc && i < n; i++)
    if (!(urls[2 * i] = vd_url_join(rows[i]->dataset, LAYOUT)) ||
        !(urls[2 * i + 1] = vd_url_join(rows[i]->dataset, "LayerStatus")))
      rc = vd_nomem(err);
  if (!rc) rc = vd_fetch_docs_each(ctx, (const char *const *)urls, n2, docs, rcs, errs, err);
  for (int i = 0; !rc && i < n; i++)
    if (fill(rows[i], (const char *const *)&urls[2 * i], &docs[2 * i], &rcs[2 * i], &errs[2 * i]))
      rc = vd_nomem(err);
  for (int i = 0; i < n2; i++) {
    if (urls) free(urls[i]);
    if (docs) vd_blob_unref(docs[i]);
  }
  free(urls);
  free(docs);
  free(rcs);
  free(errs);
  free(rows);
  return rc;
}

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  ds_cur *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  *out = c;
  if (na < 1 || a[0].type == VD_NULL) return VD_OK;
  char *url = vd_value_strdup(&a[0]);
  if (!url) {
    free(c);
    *out = NULL;
    return vd_fail(err, VD_INVALID, "vds_datasets: the url must be text, not a %s",
                   a[0].type == VD_BLOB ? "blob" : "number");
  }
  char *dir = vd_url_list_dir(url); /* the listing's keys are relative to it */
  vd_code rc = dir ? find(ctx, url, dir, c, err) : vd_nomem(err);
  for (int b = 0; !rc && b < c->n; b += BATCH)
    rc = fetch_batch(ctx, c->rows + b, c->n - b < BATCH ? c->n - b : BATCH, err);
  free(dir);
  free(url);
  if (rc) {
    close_(c);
    *out = NULL;
  }
  return rc;
}

static vd_code next(void *cur, vd_err *err) {
  (void)err;
  ((ds_cur *)cur)->row++;
  return VD_OK;
}

static int eof(void *cur) { return ((ds_cur *)cur)->row >= ((ds_cur *)cur)->n; }

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  (void)err;
  const ds_row *r = &((ds_cur *)cur)->rows[((ds_cur *)cur)->row];
  int ok = !r->error;
  if (col == C_DATASET) *v = vd_text(r->dataset);
  else if (col == C_ERROR) *v = r->error ? vd_text(r->error) : vd_null();
  else if (!ok) *v = vd_null();
  else if (col == C_DIMS) *v = vd_int(r->dims);
  else if (col == C_SAMPLES) *v = vd_text(r->text);
  else if (col == C_LAYERS) *v = vd_int(r->nlayers);
  else if (col >= C_S0 && col < C_S0 + r->dims) *v = vd_int(r->samples[col - C_S0]);
  else *v = vd_null();
  return VD_OK;
}

static int64_t rowid(void *cur) { return ((ds_cur *)cur)->row; }

const vd_relation vd_rel_vds_datasets = {
    .name = "vds_datasets",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .order_col = -1,
    .open = open_,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .doc = "every OpenVDS dataset under a prefix (found by listing it): its URL, dimensionality, samples per axis "
        "and layer count, or the error that keeps it from being read"};
