/* vds_chunks(url, layer): one row per chunk of a layer, read from its chunk-metadata
 * pages, and its hidden column data (the decoded samples, read only when named).
 * As a named table (CREATE VIRTUAL TABLE t USING vds_chunks(url, layer)) it also takes
 * INSERT INTO t(chunk, data): formats/openvds/openvds_writer.c uploads the chunk objects and,
 * at COMMIT, writes the pages and LayerStatus; SELECT shows what is committed. Constraints on chunk, page, i<d>, min<d> and max<d> are turned into a chunk
 * range, a box of chunk positions or a list of chunks before any page is read, so
 * only the pages holding candidate chunks are fetched (several at once over http). A
 * LIMIT the front end leaves to the scan (VD_OP_LIMIT) stops the fetching ahead at the
 * page holding the last row it takes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/openvds/openvds_commit.h"
#include "formats/openvds/openvds_pages.h"
#include "formats/openvds/openvds_write.h"
#include "vds_cursor.h"

enum { C_CHUNK, C_PAGE, C_STATUS, C_HASH, C_CONST, C_OBJSIZE, C_LEVELS, C_DIM0, C_KEY = C_DIM0 + 3 * VDS_MAXDIM, C_URL, C_LAYER, C_DATA };
/* data comes after the arguments: SQLite binds table-valued function arguments to the
 * hidden columns in order. In an INSERT's row (arguments left out) it is at R_DATA. */
#define R_DATA (C_KEY + 1)

#define PUSH VD_COL_PUSH
#define DIM(d) {"i" #d, VD_INT, PUSH}, {"min" #d, VD_INT, PUSH}, {"max" #d, VD_INT, PUSH}
static const vd_colspec cols[] = {
    {"chunk", VD_INT, PUSH | VD_COL_NOTNULL},   {"page", VD_INT, PUSH},        {"status", VD_TEXT, 0},
    {"hash", VD_INT, 0},       {"constant_value", VD_REAL, 0}, {"object_size", VD_INT, 0},
    {"adaptive_levels", VD_BLOB, 0}, DIM(0), DIM(1), DIM(2), DIM(3), DIM(4), DIM(5),
    {"key", VD_TEXT, 0},       VDS_URL_ARG, VDS_LAYER_ARG,    {"data", VD_BLOB, VD_COL_HIDDEN | VD_COL_NOTNULL}};

typedef struct {
  vds_cur b;
  int64_t lo, hi;                          /* chunk range */
  int64_t blo[VDS_MAXDIM], bhi[VDS_MAXDIM]; /* box of chunk positions */
  int boxed;                               /* box narrower than the grid */
  int64_t *list;                           /* IN list, sorted, unique */
  int nlist, li;
  int64_t chunk;                           /* current row, -1 at eof */
  int64_t idx[VDS_MAXDIM];
  int64_t idx_of;                          /* the chunk idx[] is for, -1 if none */
  int64_t entry_of;                        /* the chunk e is for, -1 if none */
  vds_pages *pages;                        /* the layer's pages, read as a scan */
  vds_entry e;
  int has_entry;
  char key[300];
  vd_buf data;                             /* the data column's samples */
} chunks_cur;

static const char *status_name[] = {"unwritten", "data", "constant", "novalue"};
static const size_t status_len[] = {9, 4, 8, 7}; /* no strlen per row */

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Narrows [*lo, *hi] (integers) by "x op v" for a numeric v. */
static void narrow(vd_op op, double v, int64_t *lo, int64_t *hi) {
  if (isnan(v)) return;
  double f = floor(v), c = ceil(v);
  if (f < -9e18 || c > 9e18) return;
  switch (op) {
    case VD_OP_EQ:
      if (f != v) { *lo = 1; *hi = 0; return; }
      if ((int64_t)f > *lo) *lo = (int64_t)f;
      if ((int64_t)f < *hi) *hi = (int64_t)f;
      break;
    case VD_OP_LT: if ((int64_t)c - 1 < *hi) *hi = (int64_t)c - 1; break;
    case VD_OP_LE: if ((int64_t)f < *hi) *hi = (int64_t)f; break;
    case VD_OP_GT: if ((int64_t)f + 1 > *lo) *lo = (int64_t)f + 1; break;
    case VD_OP_GE: if ((int64_t)c > *lo) *lo = (int64_t)c; break;
    default: break;
  }
}

/* Applies one filter; IN on a range-like column narrows to the list's hull. */
static void narrow_filter(const vd_filter *f, int64_t *lo, int64_t *hi) {
  if (f->op == VD_OP_IN) {
    double mn = INFINITY, mx = -INFINITY;
    for (int k = 0; k < f->nvals; k++) {
      double v;
      if (f->vals[k].type == VD_TEXT || f->vals[k].type == VD_BLOB) return; /* compared as text: no pushdown */
      if (vd_value_as_real(&f->vals[k], &v) == 0) {
        if (v < mn) mn = v;
        if (v > mx) mx = v;
      }
    }
    if (mn > mx) { *lo = 1; *hi = 0; return; }
    narrow(VD_OP_GE, mn, lo, hi);
    narrow(VD_OP_LE, mx, lo, hi);
    return;
  }
  double v;
  if (f->nvals == 1 && f->vals[0].type != VD_TEXT && vd_value_as_real(&f->vals[0], &v) == 0) narrow(f->op, v, lo, hi);
}

/* Positions along d whose valid min (which=1) or max (which=2) lies in [vlo, vhi]:
 * both are increasing in the position, so two binary searches find the range. */
static void box_from_samples(const vds_geom *g, int d, int which, int64_t vlo, int64_t vhi, int64_t *ilo,
                             int64_t *ihi) {
  int64_t a = 0, b = g->chunks[d];
  while (a < b) { /* first i with f(i) >= vlo */
    int64_t m = a + (b - a) / 2, mn, mx;
    vds_chunk_valid(g, d, m, &mn, &mx);
    if ((which == 1 ? mn : mx) >= vlo) b = m; else a = m + 1;
  }
  int64_t first = a;
  a = 0, b = g->chunks[d];
  while (a < b) { /* first i with f(i) > vhi */
    int64_t m = a + (b - a) / 2, mn, mx;
    vds_chunk_valid(g, d, m, &mn, &mx);
    if ((which == 1 ? mn : mx) > vhi) b = m; else a = m + 1;
  }
  if (first > *ilo) *ilo = first;
  if (a - 1 < *ihi) *ihi = a - 1;
}

static int64_t linear(const vds_geom *g, const int64_t idx[VDS_MAXDIM]) {
  int64_t c = 0;
  for (int d = VDS_MAXDIM - 1; d >= 0; d--) c = c * g->chunks[d] + idx[d];
  return c;
}

/* Smallest chunk >= c inside the box, or -1. */
static int64_t next_in_box(const chunks_cur *k, int64_t c) {
  const vds_geom *g = &k->b.layer->geom;
  if (c < 0) c = 0;
  if (c >= g->total) return -1;
  if (!k->boxed) return c;
  int64_t idx[VDS_MAXDIM];
  vds_chunk_index(g, c, idx);
  for (int d = VDS_MAXDIM - 1; d >= 0; d--) {
    if (idx[d] < k->blo[d]) {
      idx[d] = k->blo[d];
      for (int e = d - 1; e >= 0; e--) idx[e] = k->blo[e];
      return linear(g, idx);
    }
    if (idx[d] > k->bhi[d]) { /* carry into the next more significant dimension */
      int e = d + 1;
      while (e < VDS_MAXDIM && idx[e] + 1 > k->bhi[e]) e++;
      if (e == VDS_MAXDIM) return -1;
      idx[e]++;
      for (int z = e - 1; z >= 0; z--) idx[z] = k->blo[z];
      return linear(g, idx);
    }
  }
  return c;
}

static int in_box(const chunks_cur *k, int64_t c) {
  if (!k->boxed) return 1;
  int64_t idx[VDS_MAXDIM];
  vds_chunk_index(&k->b.layer->geom, c, idx);
  for (int d = 0; d < VDS_MAXDIM; d++)
    if (idx[d] < k->blo[d] || idx[d] > k->bhi[d]) return 0;
  return 1;
}

/* The first page from q on holding a chunk the cursor visits (in its range, its box
 * and its list), or -1. */
static int64_t next_wanted_page(void *arg, int64_t q) {
  const chunks_cur *k = arg;
  int64_t ps = k->b.layer->page_size, c = q * ps;
  if (c < k->lo) c = k->lo;
  if (k->list) {
    int a = 0, b = k->nlist;
    while (a < b) { /* first list entry >= c */
      int m = a + (b - a) / 2;
      if (k->list[m] < c) a = m + 1; else b = m;
    }
    for (; a < k->nlist && k->list[a] <= k->hi; a++)
      if (in_box(k, k->list[a])) return k->list[a] / ps;
    return -1;
  }
  c = next_in_box(k, c);
  return c < 0 || c > k->hi ? -1 : c / ps;
}

/* Positions the cursor's chunk grid index on the current chunk. */
static vd_code load_position(chunks_cur *k, vd_err *err) {
  const vds_layer *l = k->b.layer;
  if (k->idx_of >= 0 && k->chunk == k->idx_of + 1) { /* next chunk: step with carry */
    for (int d = 0; d < VDS_MAXDIM; d++) {
      if (++k->idx[d] < l->geom.chunks[d]) break;
      k->idx[d] = 0;
    }
  } else {
    vds_chunk_index(&l->geom, k->chunk, k->idx);
  }
  k->idx_of = k->chunk;
  k->has_entry = 0;
  k->entry_of = -1;
  return VD_OK;
}

/* The page entry of the current chunk, read only when a column needs it, so queries
 * on positions alone (i<d>, min<d>, max<d>, key) read no page at all. */
static vd_code ensure_entry(chunks_cur *k, vd_err *err) {
  const vds_layer *l = k->b.layer;
  if (k->entry_of == k->chunk || !l->has_pages) return VD_OK;
  vd_code rc = vds_pages_entry(k->pages, k->chunk, &k->e, NULL, err);
  if (rc) return rc;
  k->has_entry = 1;
  k->entry_of = k->chunk;
  return VD_OK;
}

static vd_code advance(chunks_cur *k, int64_t from, vd_err *err) {
  int64_t c = -1;
  if (k->list) {
    while (k->li < k->nlist) {
      int64_t x = k->list[k->li++];
      if (x >= from && x >= k->lo && x <= k->hi && in_box(k, x)) {
        c = x;
        break;
      }
    }
  } else {
    c = from < k->lo ? k->lo : from;
    c = next_in_box(k, c);
    if (c > k->hi) c = -1;
  }
  k->chunk = c;
  if (c < 0) return VD_OK;
  return load_position(k, err);
}

/* The page holding the n-th chunk the scan visits (n >= 1), or -1 when the scan has
 * fewer: walks the chunks as advance does, at most n of them, which the rows taken cost
 * anyway. */
static int64_t limit_page(const chunks_cur *k, int64_t n) {
  int64_t ps = k->b.layer->page_size, c = -1;
  if (k->list) {
    for (int i = 0; i < k->nlist && n > 0; i++)
      if (k->list[i] >= k->lo && k->list[i] <= k->hi && in_box(k, k->list[i])) c = k->list[i], n--;
  } else if (!k->boxed) {
    if (n > k->hi - k->lo) return -1;
    return (k->lo + n - 1) / ps;
  } else {
    for (int64_t x = next_in_box(k, k->lo); x >= 0 && x <= k->hi && n > 0; x = next_in_box(k, x + 1)) c = x, n--;
  }
  return n > 0 || c < 0 ? -1 : c / ps;
}

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  chunks_cur *k = calloc(1, sizeof *k);
  if (!k) return vd_nomem(err);
  *out = k;
  vds_cur *c;
  vd_code rc = vds_cur_open(ctx, a, na, 1, &c, err);
  if (rc) {
    free(k);
    *out = NULL;
    return rc;
  }
  k->b = *c;
  free(c);
  k->chunk = -1;
  k->idx_of = -1;
  k->entry_of = -1;
  if (!k->b.layer) return VD_OK;
  const vds_layer *l = k->b.layer;
  const vds_geom *g = &l->geom;
  k->lo = 0;
  k->hi = g->total - 1;
  for (int d = 0; d < VDS_MAXDIM; d++) {
    k->blo[d] = 0;
    k->bhi[d] = g->chunks[d] - 1;
  }
  int64_t limit = -1;
  for (int i = 0; i < nf; i++) {
    int col = f[i].col;
    if (f[i].op == VD_OP_LIMIT) {
      if (vd_value_as_int(&f[i].vals[0], &limit)) limit = -1;
    } else if (col == C_CHUNK && f[i].op == VD_OP_IN && !k->list) {
      k->list = malloc((f[i].nvals ? f[i].nvals : 1) * sizeof *k->list);
      if (!k->list) return vd_nomem(err);
      for (int j = 0; j < f[i].nvals; j++) {
        int64_t x;
        const vd_value *val = &f[i].vals[j];
        if (val->type == VD_NULL) continue; /* never equal to anything */
        if ((val->type == VD_INT || val->type == VD_REAL) && vd_value_as_int(val, &x) == 0) {
          k->list[k->nlist++] = x;
        } else if (val->type != VD_REAL) { /* text or blob: let the engine compare, scan everything */
          free(k->list);
          k->list = NULL;
          k->nlist = 0;
          break;
        }
      }
      if (!k->list) continue;
      qsort(k->list, k->nlist, sizeof *k->list, cmp64);
      int u = 0;
      for (int j = 0; j < k->nlist; j++)
        if (!u || k->list[u - 1] != k->list[j]) k->list[u++] = k->list[j];
      k->nlist = u;
    } else if (col == C_CHUNK) {
      narrow_filter(&f[i], &k->lo, &k->hi);
    } else if (col == C_PAGE && l->has_pages) {
      int64_t plo = 0, phi = l->page_count - 1;
      narrow_filter(&f[i], &plo, &phi);
      if (plo > phi) {
        k->lo = 1, k->hi = 0;
      } else {
        if (plo * l->page_size > k->lo) k->lo = plo * l->page_size;
        if ((phi + 1) * l->page_size - 1 < k->hi) k->hi = (phi + 1) * l->page_size - 1;
      }
    } else if (col >= C_DIM0 && col < C_KEY) {
      int d = (col - C_DIM0) / 3, which = (col - C_DIM0) % 3;
      if (which == 0) {
        narrow_filter(&f[i], &k->blo[d], &k->bhi[d]);
      } else {
        int64_t vlo = INT64_MIN / 2, vhi = INT64_MAX / 2;
        narrow_filter(&f[i], &vlo, &vhi);
        if (vlo > vhi)
          k->blo[d] = 1, k->bhi[d] = 0;
        else
          box_from_samples(g, d, which, vlo, vhi, &k->blo[d], &k->bhi[d]);
      }
    }
  }
  for (int d = 0; d < VDS_MAXDIM; d++) {
    if (k->blo[d] > k->bhi[d]) k->lo = 1, k->hi = 0; /* empty box */
    if (k->blo[d] > 0 || k->bhi[d] < g->chunks[d] - 1) k->boxed = 1;
  }
  if (k->lo > k->hi) return VD_OK;
  if (l->has_pages) {
    if ((rc = vds_pages_open(ctx, k->b.ds, l, &k->pages, err))) return rc;
    /* the pages of the range, box or list are fetched ahead; a plain range over many
     * pages bypasses the cache (see openvds_pages.h) */
    vds_pages_scan(k->pages, next_wanted_page, k, k->hi / l->page_size, k->list || k->boxed);
    int64_t stop = limit >= 0 ? limit_page(k, limit > 0 ? limit : 1) : -1;
    if (stop >= 0) vds_pages_scan_stop(k->pages, stop);
  }
  rc = advance(k, k->lo, err);
  return rc;
}

static vd_code next(void *cur, vd_err *err) {
  chunks_cur *k = cur;
  if (k->chunk < 0) return VD_OK;
  return advance(k, k->chunk + 1, err);
}

static int eof(void *cur) { return ((chunks_cur *)cur)->chunk < 0; }

static int64_t rowid(void *cur) { return ((chunks_cur *)cur)->chunk; }

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  chunks_cur *k = cur;
  const vds_layer *l = k->b.layer;
  const vds_entry *e = &k->e;
  if (col >= C_DIM0 && col < C_KEY) {
    int d = (col - C_DIM0) / 3, which = (col - C_DIM0) % 3;
    int64_t mn, mx;
    vds_chunk_valid(&l->geom, d, k->idx[d], &mn, &mx);
    *v = vd_int(which == 0 ? k->idx[d] : which == 1 ? mn : mx);
    return VD_OK;
  }
  if (col == C_DATA) {
    vds_shape shape;
    vd_code rc = vds_read_chunk(k->b.ctx, k->b.ds, l, k->chunk, &k->data, &shape, err);
    if (rc) return rc;
    *v = vd_blob_val(k->data.data ? (const void *)k->data.data : "", k->data.len);
    return VD_OK;
  }
  if (col >= C_STATUS && col <= C_LEVELS) {
    vd_code rc = ensure_entry(k, err);
    if (rc) return rc;
  }
  int written = k->has_entry && e->status != VDS_S_UNWRITTEN;
  switch (col) {
    case C_CHUNK: *v = vd_int(k->chunk); break;
    case C_PAGE: *v = l->has_pages ? vd_int(k->chunk / l->page_size) : vd_null(); break;
    case C_STATUS: *v = k->has_entry ? vd_textn(status_name[e->status], status_len[e->status]) : vd_null(); break;
    case C_HASH: *v = k->has_entry ? vd_int((int64_t)e->hash) : vd_null(); break;
    case C_CONST: *v = k->has_entry && e->status == VDS_S_CONSTANT ? vd_real(e->constant) : vd_null(); break;
    case C_OBJSIZE: *v = written && l->entry_size == 28 ? vd_int(e->object_size) : vd_null(); break;
    case C_LEVELS: *v = written && e->levels ? vd_blob_val(e->levels, 16) : vd_null(); break;
    default: { /* "<layer>/<chunk>", without snprintf: a function reads it for every row */
      size_t n = strlen(l->name);
      if (n + 22 > sizeof k->key) {
        snprintf(k->key, sizeof k->key, "%s/%lld", l->name, (long long)k->chunk);
        *v = vd_text(k->key);
        break;
      }
      char digits[21], *d = digits + sizeof digits;
      uint64_t x = (uint64_t)k->chunk; /* chunk >= 0 on a row */
      do *--d = (char)('0' + x % 10); while (x /= 10);
      memcpy(k->key, l->name, n);
      k->key[n] = '/';
      size_t nd = (size_t)(digits + sizeof digits - d);
      memcpy(k->key + n + 1, d, nd);
      k->key[n + 1 + nd] = 0;
      *v = vd_textn(k->key, n + 1 + nd);
      break;
    }
  }
  return VD_OK;
}

static void close_(void *cur) {
  chunks_cur *k = cur;
  if (!k) return;
  vds_pages_close(k->pages);
  vd_buf_free(&k->data);
  free(k->list);
  vds_close(k->b.ds);
  free(k->b.scratch);
  free(k);
}

static double estimate(double rows, const vd_filter *f, int nf) {
  for (int i = 0; i < nf; i++) {
    if (f[i].col == C_CHUNK && f[i].op == VD_OP_EQ) return 1;
    if (f[i].col == C_CHUNK && f[i].op == VD_OP_IN) rows = rows < 10 ? rows : 10;
    else rows /= 4; /* any other pushed constraint narrows the scan */
  }
  return rows < 1 ? 1 : rows;
}

/* The named, writable table. */
typedef struct {
  vds_writer *w;
  char *url, *layer;
} table_t;

static void t_disconnect(void *tab) {
  table_t *t = tab;
  if (!t) return;
  vds_writer_close(t->w);
  free(t->url);
  free(t->layer);
  free(t);
}

static vd_code t_connect(vd_ctx *ctx, const char *const *args, int nargs, void **tab, vd_err *err) {
  if (nargs != 2) return vd_fail(err, VD_INVALID, "vds_chunks takes two arguments: url, layer");
  table_t *t = calloc(1, sizeof *t);
  if (!t || !(t->url = strdup(args[0])) || !(t->layer = strdup(args[1]))) {
    t_disconnect(t);
    return vd_nomem(err);
  }
  vd_code rc = vds_writer_open(ctx, t->url, t->layer, &t->w, err);
  if (rc) {
    t_disconnect(t);
    return rc;
  }
  *tab = t;
  return VD_OK;
}

static vd_code t_open(vd_ctx *ctx, void *tab, void **cur, vd_err *err) {
  table_t *t = tab;
  vd_value a[2] = {vd_text(t->url), vd_text(t->layer)};
  return open_(ctx, a, 2, NULL, 0, cur, err);
}

static vd_code t_insert(void *tab, const vd_value *row, int conflict, int64_t *rid, vd_err *err) {
  table_t *t = tab;
  int64_t chunk;
  for (int c = 0; c < R_DATA; c++)
    if (c != C_CHUNK && row[c].type != VD_NULL)
      return vd_fail(err, VD_CONSTRAINT, "vds_chunks: INSERT takes chunk and data only (%s is derived)", cols[c].name);
  if (row[C_CHUNK].type != VD_INT || vd_value_as_int(&row[C_CHUNK], &chunk))
    return vd_fail(err, VD_CONSTRAINT, "vds_chunks: chunk must be an integer");
  if (row[R_DATA].type != VD_BLOB)
    return vd_fail(err, VD_CONSTRAINT, "vds_chunks: data must be a blob of the chunk's samples");
  *rid = chunk;
  return vds_writer_put(t->w, chunk, row[R_DATA].p, row[R_DATA].n,
                        conflict == VD_CONFLICT_REPLACE ? VDS_ON_REPLACE
                        : conflict == VD_CONFLICT_IGNORE ? VDS_ON_IGNORE : VDS_ON_ABORT, err);
}

/* The chunk just put, for RETURNING: its position, page and key as a scan of that chunk
 * gives them, its entry (status, hash) the transaction's. */
static vd_code t_inserted(vd_ctx *ctx, void *tab, int64_t rid, void **cur, vd_err *err) {
  table_t *t = tab;
  vd_value a[2] = {vd_text(t->url), vd_text(t->layer)}, c = vd_int(rid);
  vd_filter f = {C_CHUNK, VD_OP_EQ, &c, 1};
  unsigned char raw[8];
  vd_code rc = open_(ctx, a, 2, &f, 1, cur, err);
  chunks_cur *k = *cur;
  if (!rc && k && k->chunk == rid && vds_writer_entry(t->w, rid, raw)) {
    vds_entry_decode(raw, 8, &k->e);
    k->has_entry = 1;
    k->entry_of = rid;
  }
  return rc;
}

static vd_code t_remove(void *tab, int64_t rid, vd_err *err) {
  (void)tab, (void)rid;
  return vd_fail(err, VD_UNSUPPORTED, "vds_chunks: DELETE is not supported (OpenVDS has no chunk deletion)");
}

static vd_code t_begin(void *tab, vd_err *err) {
  (void)tab, (void)err;
  return VD_OK;
}
static vd_code t_sync(void *tab, vd_err *err) { return vds_writer_commit(((table_t *)tab)->w, err); }
static void t_commit(void *tab) { (void)tab; }
static void t_rollback(void *tab) { vds_writer_rollback(((table_t *)tab)->w); }
/* Savepoints, also SQLite's of a failed statement: the writer takes back exactly what
 * was put since (openvds_writer.c says how). */
static void t_savepoint(void *tab, int n) { vds_writer_savepoint(((table_t *)tab)->w, n); }
static void t_release(void *tab, int n) { vds_writer_release(((table_t *)tab)->w, n); }
static void t_rollback_to(void *tab, int n) { vds_writer_rollback_to(((table_t *)tab)->w, n); }

static const vd_table_ops ops = {
    .connect = t_connect,
    .disconnect = t_disconnect,
    .open = t_open,
    .insert = t_insert,
    .remove = t_remove,
    .begin = t_begin,
    .sync = t_sync,
    .commit = t_commit,
    .rollback = t_rollback,
    .savepoint = t_savepoint,
    .rollback_to = t_rollback_to,
    .release = t_release,
    .inserted = t_inserted,
    .args = "url, layer"};

/* planners: from the cached documents only (vds_cursor.h) */
static double known(vd_ctx *ctx, const vd_value *args, int nargs) { return vds_cur_known(ctx, args, nargs, VDS_KNOWN_CHUNKS); }

const vd_relation vd_rel_vds_chunks = {
    .name = "vds_chunks",
    VD_COLS(cols),
    .flags = VD_REL_IO | VD_REL_HINTS,
    .rows = 1000, .requests = 2, .rows_per_request = 1024, .known = known,
    .order_col = C_CHUNK,
    .estimate = estimate,
    .open = open_,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .table = &ops,
    .doc = "one row per chunk of a layer, from its pages: status, hash, position and sample range per dimension (constraints on chunk and ranges read only the pages needed), hidden data; as a named table INSERT INTO t(chunk, data) uploads chunks, committed to pages and LayerStatus"};
