/* vdsql_datasets(prefix): every dataset of any format under a prefix or folder, with its
 * format, size and why it cannot be recognised (docs/check.md). One walk of the folders,
 * as vds_datasets walks them: the url is listed with the delimiter '/', each sub-folder
 * is first asked for its VolumeDataLayout (siblings in parallel); where it answers, the
 * folder is an OpenVDS dataset (never listed, never walked into); where not, it is listed
 * and walked the same way. The files met on the way are datasets by their names
 * (*.lindi.tar, *.lindi.json, *.vtkhdf, *.hdf), and their first bytes, fetched in
 * parallel with one range GET each, must say so: tar's ustar magic, a JSON object's
 * '{', HDF5's signature. So it costs the listing pages of the folders that are no
 * dataset, one GET per sub-folder and one per file. An OpenVDS dataset's layout must
 * parse (it stays in the document cache for vdsql_check). Rows come in the walk's order:
 * a folder's files, then its sub-folders, each in byte order. What cannot be recognised
 * is a row with its error, never the query's: a catalog crawl goes on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/openvds/openvds.h"
#include "store/store.h"
#include "vd_catalog.h"
#include "walk_names.h"

enum { C_URL, C_FORMAT, C_SIZE, C_ERROR, C_ARG };
enum { F_OPENVDS, F_LINDI_TAR, F_LINDI_JSON, F_VTKHDF };
static const char *fmt_name[] = {"openvds", "lindi", "lindi", "vtkhdf"};

#define PAGE_MAX 5000 /* entries per listing page asked for (S3 gives at most 1000) */
#define BATCH 256     /* requests made together */
#define PROBE 512     /* the first bytes of a file: a tar header holds its magic at 257 */
static const char LAYOUT[] = "VolumeDataLayout";
static const unsigned char HDF5_SIG[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

/* the dataset's column is url, so that vdsql_check(d.url) reads as it says; the
 * argument is the prefix walked */
static const vd_colspec cols[] = {{"url", VD_TEXT, 0},   {"format", VD_TEXT, 0},      {"size", VD_INT, 0},
                                  {"error", VD_TEXT, 0}, {"prefix", VD_TEXT, VD_COL_ARG}};

typedef struct row {
  char *url, *error;
  int fmt;
  int64_t size; /* -1: not known */
} row;

typedef struct cur {
  vd_ctx *ctx;
  char *dir; /* the url's directory: names found are relative to it */
  row *rows;
  int n, cap, at;
} cur;

static void close_(void *p) {
  cur *c = p;
  if (!c) return;
  for (int i = 0; i < c->n; i++) free(c->rows[i].url), free(c->rows[i].error);
  free(c->rows);
  free(c->dir);
  free(c);
}

static int ends(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

static int file_format(const char *key) {
  if (ends(key, ".lindi.tar")) return F_LINDI_TAR;
  if (ends(key, ".lindi.json")) return F_LINDI_JSON;
  if (ends(key, ".vtkhdf") || ends(key, ".hdf")) return F_VTKHDF;
  return -1;
}

/* A new row for rel (relative to dir; an OpenVDS dataset's folder without its '/'). */
static vd_code add(cur *c, const char *rel, int fmt, int64_t size, vd_err *err) {
  if (c->n == c->cap) {
    int nc = c->cap ? 2 * c->cap : 64;
    row *r = realloc(c->rows, (size_t)nc * sizeof *r);
    if (!r) return vd_nomem(err);
    c->rows = r;
    c->cap = nc;
  }
  row *r = &c->rows[c->n];
  memset(r, 0, sizeof *r);
  r->fmt = fmt;
  r->size = size;
  if (!(r->url = vd_walk_at(c->dir, rel))) return vd_nomem(err);
  c->n++;
  if (!*rel || !vd_walk_unaddressable(rel)) return VD_OK; /* "": the prefix itself */
  return (r->error = vd_walk_unaddressable_error(r->url)) ? VD_OK : vd_nomem(err);
}

static vd_code walk(cur *c, const char *rel, const char *url, vd_err *err);

/* Asks the sub-folders subs[0..n) of one folder for their VolumeDataLayout, BATCH at a
 * time: a dataset where it answers, else walked into, in order. */
static vd_code probe(cur *c, char **subs, int n, vd_err *err) {
  vd_code rc = VD_OK;
  for (int i0 = 0; !rc && i0 < n; i0 += BATCH) {
    int m = n - i0 < BATCH ? n - i0 : BATCH, k = 0;
    const char *urls[BATCH];
    int idx[BATCH];
    vd_blob *lay[BATCH] = {0};
    vd_code rcs[BATCH];
    vd_err *errs = calloc(BATCH, sizeof *errs);
    if (!errs) return vd_nomem(err);
    for (int i = 0; !rc && i < m; i++) {
      char *key = malloc(strlen(subs[i0 + i]) + sizeof LAYOUT);
      if (!key) {
        rc = vd_nomem(err);
        break;
      }
      sprintf(key, "%s%s", subs[i0 + i], LAYOUT);
      if (!vd_walk_unaddressable(key)) {
        if (!(urls[k] = vd_walk_at(c->dir, key))) rc = vd_nomem(err);
        else idx[k++] = i;
      }
      free(key);
    }
    if (!rc && k) rc = vd_fetch_docs_each(c->ctx, urls, k, lay, rcs, errs, err);
    for (int i = 0, j = 0; !rc && i < m; i++) {
      const char *s = subs[i0 + i];
      int found = j < k && idx[j] == i && lay[j];
      if (j < k && idx[j] == i) j++;
      if (found) {
        size_t l = strlen(s);
        char *name = strndup(s, l ? l - 1 : 0);
        rc = name ? add(c, name, F_OPENVDS, -1, err) : vd_nomem(err);
        free(name);
      } else {
        char *u = vd_walk_at(c->dir, s);
        rc = u ? walk(c, s, u, err) : vd_nomem(err);
        free(u);
      }
    }
    for (int j = 0; j < k; j++) free((char *)urls[j]), vd_blob_unref(lay[j]);
    free(errs);
  }
  return rc;
}

/* Lists the folder rel (NULL: the url itself) page by page: its files of a dataset's
 * name become rows; a VolumeDataLayout makes the folder itself an OpenVDS dataset;
 * else its sub-folders are probed and walked. */
static vd_code walk(cur *c, const char *rel, const char *url, vd_err *err) {
  char **subs = NULL, *token = NULL;
  int nsubs = 0, cap = 0, layout = 0, first = c->n;
  vd_listing l = {0};
  vd_code rc;
  do {
    rc = vd_list_with(c->ctx, url, token, PAGE_MAX, VD_LIST_FOLDER | VD_LIST_NO_META, &l, err);
    free(token);
    token = NULL;
    for (int i = 0; !rc && i < l.n; i++) {
      const char *key = l.ent[i].key; /* relative to the folder listed (the url's: to dir) */
      if (strcmp(key, LAYOUT) == 0) layout = 1;
      int f = file_format(key);
      if (f < 0 || layout) continue;
      char *name = malloc((rel ? strlen(rel) : 0) + strlen(key) + 1);
      if (!name) {
        rc = vd_nomem(err);
        break;
      }
      sprintf(name, "%s%s", rel ? rel : "", key);
      rc = add(c, name, f, l.ent[i].info.size, err);
      free(name);
    }
    for (int i = 0; !rc && !layout && i < l.nprefixes; i++) {
      if (nsubs == cap) {
        cap = cap ? 2 * cap : 16;
        char **s = realloc(subs, (size_t)cap * sizeof *s);
        if (!s) {
          rc = vd_nomem(err);
          break;
        }
        subs = s;
      }
      char *sub = malloc((rel ? strlen(rel) : 0) + strlen(l.prefixes[i]) + 1);
      if (!sub) {
        rc = vd_nomem(err);
        break;
      }
      sprintf(sub, "%s%s", rel ? rel : "", l.prefixes[i]);
      subs[nsubs++] = sub;
    }
    if (!rc) token = l.next, l.next = NULL;
    vd_listing_free(&l);
  } while (!rc && token && !layout);
  free(token);
  if (!rc && layout) { /* the url itself, or a folder whose probe failed: its files are its own */
    for (int i = first; i < c->n; i++) free(c->rows[i].url), free(c->rows[i].error);
    c->n = first;
    size_t n = rel ? strlen(rel) : 0;
    char *name = strndup(rel ? rel : "", n ? n - 1 : 0);
    rc = name ? add(c, name, F_OPENVDS, -1, err) : vd_nomem(err);
    free(name);
  } else if (!rc) {
    rc = probe(c, subs, nsubs, err);
  }
  for (int i = 0; i < nsubs; i++) free(subs[i]);
  free(subs);
  return rc;
}

static vd_code fail_row(row *r, const char *fmt, const char *what) {
  char where[600], msg[900];
  vd_url_redact(r->url, where, sizeof where);
  snprintf(msg, sizeof msg, fmt, where, what);
  return (r->error = strdup(msg)) ? VD_OK : VD_NOMEM;
}

/* Does the file's start say what its name does? */
static vd_code judge(row *r, const unsigned char *p, size_t n) {
  if (r->fmt == F_LINDI_TAR) {
    if (n < 263 || memcmp(p + 257, "ustar", 5) != 0)
      return fail_row(r, "%s: not a tar archive: %s", n < 263 ? "shorter than a tar header" : "no ustar magic at byte 257");
    return VD_OK;
  }
  if (r->fmt == F_LINDI_JSON) {
    size_t i = 0;
    while (i < n && strchr(" \t\r\n", p[i])) i++;
    if (i == n || p[i] != '{')
      return fail_row(r, "%s: not LINDI's JSON form: %s", i == n ? "no JSON value in its first bytes" : "it does not start "
                      "with a JSON object ('{')");
    return VD_OK;
  }
  if (n < sizeof HDF5_SIG || memcmp(p, HDF5_SIG, sizeof HDF5_SIG) != 0)
    return fail_row(r, "%s: not an HDF5 file: %s", "no HDF5 signature at byte 0");
  return VD_OK;
}

/* The files' first bytes and the OpenVDS datasets' layouts (cached already where a probe
 * found them), BATCH in flight at a time. */
static vd_code recognise(cur *c, vd_err *err) {
  vd_code rc = VD_OK;
  for (int i0 = 0; !rc && i0 < c->n; i0 += BATCH) {
    int m = c->n - i0 < BATCH ? c->n - i0 : BATCH, nf = 0, nd = 0;
    vd_getreq req[BATCH];
    int fi[BATCH], di[BATCH];
    char *durl[BATCH];
    vd_blob *docs[BATCH] = {0};
    vd_code drc[BATCH];
    vd_err *derr = calloc(BATCH, sizeof *derr);
    if (!derr) return vd_nomem(err);
    memset(req, 0, sizeof req);
    for (int i = i0; !rc && i < i0 + m; i++) {
      row *r = &c->rows[i];
      if (r->error) continue;
      if (r->fmt != F_OPENVDS) {
        req[nf] = (vd_getreq){.url = r->url, .off = 0, .len = PROBE};
        fi[nf++] = i;
      } else if (!(durl[nd] = vd_url_join(r->url, LAYOUT))) {
        rc = vd_nomem(err);
      } else {
        di[nd++] = i;
      }
    }
    if (!rc && nf) vd_get_many(c->ctx, req, nf); /* each request carries its own outcome */
    if (!rc && nd) rc = vd_fetch_docs_each(c->ctx, (const char *const *)durl, nd, docs, drc, derr, err);
    for (int k = 0; !rc && k < nf; k++) {
      row *r = &c->rows[fi[k]];
      if (req[k].rc == VD_NOMEM || req[k].rc == VD_INTERRUPTED) {
        *err = req[k].err;
        rc = req[k].rc;
      } else if (req[k].rc) {
        rc = (r->error = strdup(req[k].err.msg)) ? VD_OK : vd_nomem(err);
      } else if (judge(r, (const unsigned char *)req[k].body.data, req[k].body.len)) {
        rc = vd_nomem(err);
      }
    }
    for (int k = 0; !rc && k < nd; k++) {
      row *r = &c->rows[di[k]];
      vd_err e = derr[k];
      vd_code x = drc[k];
      if (!x) {
        char where[600];
        vds_layout lay = {0};
        vd_url_redact(durl[k], where, sizeof where);
        x = vds_parse_layout((const char *)docs[k]->data, docs[k]->len, where, &lay, &e);
        vds_layout_free(&lay);
      } else {
        vds_not_dataset(r->url, x, &e);
      }
      if (x == VD_NOMEM) rc = vd_nomem(err);
      else if (x && !(r->error = strdup(e.msg))) rc = vd_nomem(err);
    }
    for (int k = 0; k < nf; k++) vd_buf_free(&req[k].body), vd_objinfo_free(&req[k].info);
    for (int k = 0; k < nd; k++) free(durl[k]), vd_blob_unref(docs[k]);
    free(derr);
  }
  return rc;
}

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  cur *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  *out = c;
  c->ctx = ctx;
  if (na < 1 || a[0].type == VD_NULL) return VD_OK;
  char *url = vd_value_strdup(&a[0]);
  vd_code rc = VD_OK;
  if (!url)
    rc = vd_fail(err, VD_INVALID, "vdsql_datasets: the url must be text, not a %s", a[0].type == VD_BLOB ? "blob" : "number");
  else if (!(c->dir = vd_url_list_dir(url)))
    rc = vd_nomem(err);
  if (!rc) rc = walk(c, NULL, url, err);
  if (!rc) rc = recognise(c, err);
  free(url);
  if (rc) {
    close_(c);
    *out = NULL;
  }
  return rc;
}

static vd_code next(void *p, vd_err *err) {
  (void)err;
  ((cur *)p)->at++;
  return VD_OK;
}

static int eof(void *p) { return ((cur *)p)->at >= ((cur *)p)->n; }

static int64_t rowid(void *p) { return ((cur *)p)->at; }

static vd_code column(void *p, int col, vd_value *v, vd_err *err) {
  (void)err;
  const row *r = &((cur *)p)->rows[((cur *)p)->at];
  switch (col) {
    case C_URL: *v = vd_text(r->url); break;
    case C_FORMAT: *v = vd_text(fmt_name[r->fmt]); break;
    case C_SIZE: *v = r->size >= 0 ? vd_int(r->size) : vd_null(); break;
    default: *v = r->error ? vd_text(r->error) : vd_null(); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_vdsql_datasets = {
    .name = "vdsql_datasets",
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
    .doc = "every dataset of any format under a prefix or folder (OpenVDS folders, *.lindi.tar, *.lindi.json, *.vtkhdf, "
        "*.hdf), found in one walk and recognised by their first bytes: its URL, format, size and the error that keeps it "
        "from being recognised"};
