/* vds_datasets(url): every OpenVDS dataset under a prefix, found by walking its folders.
 * The url itself is listed with the delimiter '/' (S3 delimiter=/, Azure's delimiter, a
 * local directory's own entries). Each sub-folder found is first asked for its
 * VolumeDataLayout, siblings in parallel: where it answers, the folder is a dataset and
 * the document is its first (a dataset costs its two documents, its folder is never
 * listed and the walk does not go into it: its sub-folders are its layers); where it is
 * missing, the folder is listed and its sub-folders are walked the same way, in byte
 * order, so datasets at any depth come in the order of their keys. A folder costs its
 * listing pages plus the one probe that found it is not a dataset. Each dataset's
 * LayerStatus is fetched in parallel, a batch at a time, and both documents are parsed as
 * vds_open parses them, so the counts agree with vds_axes and vds_layers and a join on
 * d.dataset finds both in the cache. Rows stream: memory holds the sub-folder names of
 * the folders on the current path, a window of probed layouts and one batch of
 * datasets, not every dataset found. One dataset that cannot be read gives a row with
 * its error, not the query's: a catalog crawl should not stop at the first bad dataset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/openvds/openvds.h"
#include "store/store.h"
#include "vd_catalog.h"
#include "walk_names.h"

enum { C_DATASET, C_DIMS, C_SAMPLES, C_S0, C_LAYERS = C_S0 + VDS_MAXDIM, C_ERROR, C_URL };

#define PAGE_MAX 5000 /* entries per listing page asked for (S3 gives at most 1000) */
#define BATCH 256     /* datasets whose documents are fetched together */
static const char LAYOUT[] = "VolumeDataLayout";

static const vd_colspec cols[] = {
    {"dataset", VD_TEXT, 0},  {"dimensionality", VD_INT, 0}, {"samples", VD_TEXT, 0},
    {"samples0", VD_INT, 0},  {"samples1", VD_INT, 0},       {"samples2", VD_INT, 0},
    {"samples3", VD_INT, 0},  {"samples4", VD_INT, 0},       {"samples5", VD_INT, 0},
    {"layer_count", VD_INT, 0}, {"error", VD_TEXT, 0},       {"url", VD_TEXT, VD_COL_ARG}};

typedef struct ds_row {
  char *dataset, *error;
  vd_blob *layout; /* its VolumeDataLayout when the probe that found it fetched it */
  int dims, nlayers;
  int64_t samples[VDS_MAXDIM];
  char text[VDS_MAXDIM * 21];
} ds_row;

/* A folder whose sub-folders are being walked: their names relative to the URL's
 * directory, each ending in '/', and the layouts the probes of [i, probed) found (NULL:
 * missing, or any other failure, or a name no URL can address: a listing of the folder
 * tells what it is). */
typedef struct frame {
  char **subs;
  vd_blob **lay;
  int n, i, probed;
} frame;

typedef struct ds_cur {
  vd_ctx *ctx;
  char *url, *dir; /* as given; its directory (names are relative to it), ?query kept */
  frame *st;       /* the walk's stack: the folders on the current path */
  int depth, cap;
  ds_row *rows;    /* the current batch */
  int n, row;
  int64_t rowid;
} ds_cur;

static void rows_free(ds_cur *c) {
  for (int i = 0; i < c->n; i++) free(c->rows[i].dataset), free(c->rows[i].error), vd_blob_unref(c->rows[i].layout);
  c->n = c->row = 0;
}

static void frame_free(frame *f) {
  for (int i = 0; i < f->n; i++) {
    free(f->subs[i]);
    if (f->lay) vd_blob_unref(f->lay[i]);
  }
  free(f->subs);
  free(f->lay);
}

static void close_(void *cur) {
  ds_cur *c = cur;
  if (!c) return;
  rows_free(c);
  free(c->rows);
  for (int i = 0; i < c->depth; i++) frame_free(&c->st[i]);
  free(c->st);
  free(c->dir);
  free(c->url);
  free(c);
}

/* A dataset found at rel (relative to dir, "" or ending in '/'): a new row of the batch,
 * which takes the layout its probe fetched (NULL: none). */
static vd_code add_row(ds_cur *c, const char *rel, vd_blob *layout, vd_err *err) {
  ds_row *r = &c->rows[c->n];
  memset(r, 0, sizeof *r);
  size_t rl = strlen(rel);
  char *p = strndup(rel, rl ? rl - 1 : 0);
  r->dataset = p ? vd_walk_at(c->dir, p) : NULL;
  free(p);
  if (!r->dataset) {
    vd_blob_unref(layout);
    return vd_nomem(err);
  }
  r->layout = layout;
  c->n++;
  char *key = malloc(rl + sizeof LAYOUT);
  if (!key) return vd_nomem(err);
  sprintf(key, "%s%s", rel, LAYOUT);
  int bad = vd_walk_unaddressable(key);
  free(key);
  if (!bad) return VD_OK;
  return (r->error = vd_walk_unaddressable_error(r->dataset)) ? VD_OK : vd_nomem(err);
}

/* Lists the folder rel (NULL: the url itself, its name prefix and all) page by page: a
 * VolumeDataLayout in it makes it a dataset (a row: a probe that missed it may have met a
 * failing server or a layout written since); else its sub-folders go on the stack to be
 * walked. */
static vd_code visit(ds_cur *c, const char *rel, vd_err *err) {
  char *lu = rel ? vd_walk_at(c->dir, rel) : strdup(c->url);
  if (!lu) return vd_nomem(err);
  frame f = {0};
  int cap = 0, layout = 0;
  vd_listing l = {0};
  char *token = NULL;
  vd_code rc;
  do {
    rc = vd_list_with(c->ctx, lu, token, PAGE_MAX, VD_LIST_FOLDER | VD_LIST_KEYS_ONLY, &l, err);
    free(token);
    token = NULL;
    for (int i = 0; !rc && i < l.n; i++)
      if (strcmp(l.ent[i].key, LAYOUT) == 0) layout = 1; /* keys are relative to the folder listed */
    for (int i = 0; !rc && !layout && i < l.nprefixes; i++) {
      if (f.n == cap) {
        cap = cap ? 2 * cap : 16;
        char **s = realloc(f.subs, (size_t)cap * sizeof *s);
        if (!s) {
          rc = vd_nomem(err);
          break;
        }
        f.subs = s;
      }
      /* relative to the folder listed; the url's own listing already to its directory */
      char *sub = malloc((rel ? strlen(rel) : 0) + strlen(l.prefixes[i]) + 1);
      if (!sub) {
        rc = vd_nomem(err);
        break;
      }
      sprintf(sub, "%s%s", rel ? rel : "", l.prefixes[i]);
      f.subs[f.n++] = sub;
    }
    if (!rc) token = l.next, l.next = NULL;
    vd_listing_free(&l);
  } while (!rc && token);
  free(token);
  free(lu);
  if (!rc && layout) rc = add_row(c, rel ? rel : "", NULL, err);
  if (!rc && !layout && f.n && !(f.lay = calloc((size_t)f.n, sizeof *f.lay)))
    rc = vd_nomem(err);
  if (rc || layout || !f.n) {
    frame_free(&f);
    return rc;
  }
  if (c->depth == c->cap) {
    int nc = c->cap ? 2 * c->cap : 8;
    frame *s = realloc(c->st, (size_t)nc * sizeof *s);
    if (!s) {
      frame_free(&f);
      return vd_nomem(err);
    }
    c->st = s;
    c->cap = nc;
  }
  c->st[c->depth++] = f;
  return VD_OK;
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

/* The documents of a batch's datasets not fetched yet (the LayerStatus of each, and the
 * layout of one found by a listing) in one parallel round, max_parallel in flight, and
 * parsed; batches keep the memory held to BATCH datasets' documents. */
static vd_code fetch_batch(vd_ctx *ctx, ds_row *all, int nall, vd_err *err) {
  ds_row **rows = malloc((size_t)(nall ? nall : 1) * sizeof *rows);
  int n = 0;
  if (!rows) return vd_nomem(err);
  for (int i = 0; i < nall; i++)
    if (!all[i].error) rows[n++] = &all[i]; /* an unaddressable one has its error already */
  int n2 = 2 * n, nget = 0;
  char **urls = calloc((size_t)(n2 ? n2 : 1), sizeof *urls);
  vd_blob **docs = calloc((size_t)(n2 ? n2 : 1), sizeof *docs);
  vd_code *rcs = calloc((size_t)(n2 ? n2 : 1), sizeof *rcs);
  vd_err *errs = calloc((size_t)(n2 ? n2 : 1), sizeof *errs);
  const char **get = calloc((size_t)(n2 ? n2 : 1), sizeof *get);
  int *slot = calloc((size_t)(n2 ? n2 : 1), sizeof *slot);
  vd_code rc = urls && docs && rcs && errs && get && slot ? VD_OK : vd_nomem(err);
  for (int i = 0; !rc && i < n; i++) {
    if (!(urls[2 * i] = vd_url_join(rows[i]->dataset, LAYOUT)) ||
        !(urls[2 * i + 1] = vd_url_join(rows[i]->dataset, "LayerStatus"))) {
      rc = vd_nomem(err);
      break;
    }
    if (rows[i]->layout) {
      docs[2 * i] = rows[i]->layout; /* the row's reference passes to docs */
      rows[i]->layout = NULL;
    } else {
      slot[nget] = 2 * i;
      get[nget++] = urls[2 * i];
    }
    slot[nget] = 2 * i + 1;
    get[nget++] = urls[2 * i + 1];
  }
  vd_blob **got = NULL;
  vd_code *grcs = NULL;
  vd_err *gerrs = NULL;
  if (!rc && nget) {
    /* fetched into their own arrays, then put in the slots of docs beside the probed ones */
    got = calloc((size_t)nget, sizeof *got), grcs = calloc((size_t)nget, sizeof *grcs);
    gerrs = calloc((size_t)nget, sizeof *gerrs);
    rc = got && grcs && gerrs ? vd_fetch_docs_each(ctx, get, nget, got, grcs, gerrs, err) : vd_nomem(err);
    for (int k = 0; !rc && k < nget; k++) {
      docs[slot[k]] = got[k];
      rcs[slot[k]] = grcs[k];
      errs[slot[k]] = gerrs[k];
      got[k] = NULL;
    }
    if (got)
      for (int k = 0; k < nget; k++) vd_blob_unref(got[k]);
  }
  for (int i = 0; !rc && i < n; i++)
    if (fill(rows[i], (const char *const *)&urls[2 * i], &docs[2 * i], &rcs[2 * i], &errs[2 * i]))
      rc = vd_nomem(err);
  for (int i = 0; i < n2; i++) {
    if (urls) free(urls[i]);
    if (docs) vd_blob_unref(docs[i]);
  }
  free(got);
  free(grcs);
  free(gerrs);
  free(get);
  free(slot);
  free(urls);
  free(docs);
  free(rcs);
  free(errs);
  free(rows);
  return rc;
}

/* Asks the sub-folders of f from f->i on (a window of at most BATCH, the names a URL can
 * address) for their VolumeDataLayout, in one parallel round. */
static vd_code probe(ds_cur *c, frame *f, vd_err *err) {
  int end = f->n - f->i > BATCH ? f->i + BATCH : f->n, n = 0;
  const char **urls = calloc(BATCH, sizeof *urls);
  int *idx = calloc(BATCH, sizeof *idx);
  vd_err *errs = calloc(BATCH, sizeof *errs);
  vd_code rc = urls && idx && errs ? VD_OK : vd_nomem(err);
  for (int i = f->i; !rc && i < end; i++) {
    char *key = malloc(strlen(f->subs[i]) + sizeof LAYOUT);
    if (!key) {
      rc = vd_nomem(err);
      break;
    }
    sprintf(key, "%s%s", f->subs[i], LAYOUT);
    if (!vd_walk_unaddressable(key) && !(urls[n] = vd_walk_at(c->dir, key))) rc = vd_nomem(err);
    else if (urls[n]) idx[n++] = i;
    free(key);
  }
  vd_blob *lay[BATCH];
  vd_code rcs[BATCH];
  if (!rc && n) rc = vd_fetch_docs_each(c->ctx, urls, n, lay, rcs, errs, err);
  for (int k = 0; !rc && k < n; k++) f->lay[idx[k]] = lay[k]; /* NULL where rcs[k] says why */
  if (!rc) f->probed = end;
  for (int k = 0; urls && k < n; k++) free((char *)urls[k]);
  free(urls);
  free(idx);
  free(errs);
  return rc;
}

/* The next batch of rows: the walk goes on until BATCH datasets are found or it ends,
 * then their documents are fetched together. */
static vd_code fill_batch(ds_cur *c, vd_err *err) {
  rows_free(c);
  vd_code rc = VD_OK;
  while (!rc && c->n < BATCH && c->depth) {
    frame *f = &c->st[c->depth - 1];
    if (f->i == f->n) {
      frame_free(f);
      c->depth--;
      continue;
    }
    if (f->i == f->probed && (rc = probe(c, f, err))) break;
    int i = f->i++;
    char *rel = f->subs[i];
    f->subs[i] = NULL;
    if (f->lay[i]) {
      rc = add_row(c, rel, f->lay[i], err); /* a dataset: its folder is not listed */
      f->lay[i] = NULL;
    } else {
      rc = visit(c, rel, err); /* may grow the stack: f is not used after it */
    }
    free(rel);
  }
  return rc ? rc : fetch_batch(c->ctx, c->rows, c->n, err);
}

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  ds_cur *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  *out = c;
  c->ctx = ctx;
  if (na < 1 || a[0].type == VD_NULL) return VD_OK;
  if (!(c->url = vd_value_strdup(&a[0]))) {
    free(c);
    *out = NULL;
    return vd_fail(err, VD_INVALID, "vds_datasets: the url must be text, not a %s",
                   a[0].type == VD_BLOB ? "blob" : "number");
  }
  vd_code rc = VD_OK;
  if (!(c->dir = vd_url_list_dir(c->url)) || !(c->rows = calloc(BATCH, sizeof *c->rows)))
    rc = vd_nomem(err);
  if (!rc) rc = visit(c, NULL, err);
  if (!rc && !c->n) rc = fill_batch(c, err);
  else if (!rc) rc = fetch_batch(ctx, c->rows, c->n, err); /* the url itself is a dataset */
  if (rc) {
    close_(c);
    *out = NULL;
  }
  return rc;
}

static vd_code next(void *cur, vd_err *err) {
  ds_cur *c = cur;
  c->rowid++;
  if (++c->row < c->n) return VD_OK;
  return fill_batch(c, err);
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

static int64_t rowid(void *cur) { return ((ds_cur *)cur)->rowid; }

const vd_relation vd_rel_vds_datasets = {
    .name = "vds_datasets",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 100, .requests = 1, .rows_per_request = 1,
    .order_col = -1,
    .open = open_,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .doc = "every OpenVDS dataset under a prefix (found by walking its folders, not into a dataset's): its URL, dimensionality, samples per axis "
        "and layer count, or the error that keeps it from being read"};
