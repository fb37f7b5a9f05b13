/* The VTKHDF check (docs/check.md, section VTKHDF): what vtkhdf_partitions and
 * vtkhdf_sources already learn from the file's metadata, as problem rows. Everything is
 * read by the HDF5 helper process (libhdf5 never parses an untrusted file here): one
 * vhp_open with the partition rows, the sources and the geometry arrays' lengths, so the
 * check costs what those relations cost, and no byte of the big arrays.
 *   1. each partition row whose sub-file is missing, broken or disallowed; each one whose
 *      slices run past Points, Types, Offsets or Connectivity (`short`);
 *   2. each source (external link, virtual-dataset mapping) that is not ok and whose file
 *      no row of 1 named already: a dangling link, a short or absent mapped dataset;
 *   3. each leaf's geometry array longer than its counts reach (`mismatch`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_format.h"
#include "formats/vtkhdf/vtkhdf.h"
#include "formats/vtkhdf/vtkhdf_helper.h"
#include "store/store.h"

typedef struct {
  vh_doc doc;
  vhp_rows rows;
  int phase, src, leaf, arr;
  int64_t items;
  const char **named; /* source files a partition row reported (pooled: the doc's) */
  int nnamed, capnamed;
  int64_t (*reach)[1 + 2 * VH_NTOPO]; /* per geom: the furthest end any slice reaches */
  char pbuf[64], ibuf[48], dbuf[1200];
  int queued; /* rows of the current partition still to give (its slices) */
  int qk;
} hvc;

/* The verdict of a source that is not ok, from vtkhdf_sources' status and what the HDF5
 * helper found wrong (vh5_fault): a mapped dataset with fewer values than mapped is
 * short, an absent dataset or object missing, any other broken file malformed. A
 * disallowed sub-file (another host, a name that makes no URL) is the main file's
 * reference at fault, never requested: malformed. */
static int verdict_of(const char *status, const vh_source *s) {
  if (!strcmp(status, "missing_source")) return VC_MISSING;
  if (!strcmp(status, "disallowed_source")) return VC_MALFORMED;
  if (s && s->fault == VH5_FAULT_SHORT) return VC_SHORT;
  if (s && s->fault == VH5_FAULT_ABSENT) return VC_MISSING;
  return VC_MALFORMED;
}

static int broken(const char *status) {
  return status && (!strcmp(status, "missing_source") || !strcmp(status, "bad_source") ||
                    !strcmp(status, "disallowed_source"));
}

/* The first source that is not ok in file f, preferring Points' (the file of a partition
 * is the file of its Points) */
static const vh_source *source_of(const hvc *r, const char *f) {
  const vh_source *best = NULL;
  for (int i = 0; i < r->doc.nsources; i++) {
    const vh_source *s = &r->doc.sources[i];
    if (!broken(s->status) || !s->resolved || strcmp(s->resolved, f)) continue;
    size_t n = strlen(s->object);
    if (n >= 7 && !strcmp(s->object + n - 7, "/Points")) return s;
    if (!best || (s->problem && !best->problem)) best = s;
  }
  return best;
}

static int named(const hvc *r, const char *f) {
  for (int i = 0; i < r->nnamed; i++)
    if (r->named[i] == f || !strcmp(r->named[i], f)) return 1;
  return 0;
}

static const char *part_of(const char *block) { return block && *block ? block : NULL; }

static vd_code open_(vd_ctx *ctx, const char *url, void **state, vc_unopened *how, vd_err *err) {
  (void)how;
  hvc *r = calloc(1, sizeof *r);
  if (!r) return vd_nomem(err);
  *state = r;
  r->doc.file = -1;
  r->rows.doc = &r->doc;
  vd_code rc = vhp_open(ctx, url, VH_PARTS | VH_SOURCES | VH_GEOM, &r->doc, &r->rows, err);
  if (!rc && r->doc.ngeoms && !(r->reach = calloc((size_t)r->doc.ngeoms, sizeof *r->reach))) rc = vd_nomem(err);
  if (rc) vh_err_redact(err);
  return rc;
}

static vh_geom *geom_of(hvc *r, const char *block, int64_t (**reach)[1 + 2 * VH_NTOPO]) {
  for (int i = 0; i < r->doc.ngeoms; i++)
    if (r->doc.geoms[i].block == block || !strcmp(r->doc.geoms[i].block, block)) {
      *reach = &r->reach[i];
      return &r->doc.geoms[i];
    }
  return NULL;
}

/* Slice k of partition p (0 Points, 1 Types, then Offsets and Connectivity per topology):
 * its array's name, length, first row and rows; 0 when there is no such slice */
static int slice(const vh_part *p, const vh_geom *g, int k, const char **name, int64_t *len, int64_t *lo,
                 int64_t *n) {
  static const char *const un[] = {"Points", "Types", "Offsets", "Connectivity"};
  if (k == 0) return *name = un[0], *len = g->points, *lo = p->point_off, *n = p->n_points, 1;
  if (!g->poly) {
    if (k > 3) return 0;
    *name = un[k];
    if (k == 1) *len = g->types, *lo = p->cell_off, *n = p->n_cells;
    if (k == 2) *len = g->offs[0], *lo = p->offsets_off, *n = p->n_cells ? p->n_cells + 1 : 0;
    if (k == 3) *len = g->conn[0], *lo = p->conn_off, *n = p->n_conn;
    return 1;
  }
  if (!p->topo) return 0;
  int t = (k - 1) / 2;
  static char nm[2][VH_NTOPO][32];
  if (!nm[0][0][0])
    for (int i = 0; i < VH_NTOPO; i++) {
      snprintf(nm[0][i], sizeof nm[0][i], "%s/Offsets", vh_topo_names[i]);
      snprintf(nm[1][i], sizeof nm[1][i], "%s/Connectivity", vh_topo_names[i]);
    }
  if ((k - 1) % 2 == 0) {
    *name = nm[0][t], *len = g->offs[t], *lo = p->topo->offs_off[t];
    *n = p->topo->nc[t] ? p->topo->nc[t] + 1 : 0;
  } else {
    *name = nm[1][t], *len = g->conn[t], *lo = p->topo->conn_off[t], *n = p->topo->nci[t];
  }
  return 1;
}

/* The next slice of the current partition row that runs past its array, as a row */
static int slice_row(hvc *r, vc_row *row) {
  const vh_part *p = r->rows.cur;
  int64_t (*reach)[1 + 2 * VH_NTOPO] = NULL;
  const vh_geom *g = p->type ? geom_of(r, p->block, &reach) : NULL;
  if (!g) return 0;
  for (; r->qk < 1 + 2 * VH_NTOPO; r->qk++) {
    const char *name = NULL;
    int64_t len = VH_NULL, lo = VH_NULL, n = VH_NULL;
    if (!slice(p, g, r->qk, &name, &len, &lo, &n) || len == VH_NULL || lo == VH_NULL || n == VH_NULL) continue;
    /* an empty partition's Offsets: VTK's reader reads none, writers store 0 or 1 value
     * (../shared/spec/vtkhdf.md, open uncertainty 1), so the array may reach one past */
    int offs = g->poly ? r->qk > 0 && (r->qk - 1) % 2 == 0 : r->qk == 2;
    int64_t end = lo + (offs && !n ? 1 : n);
    if (end > lo && end > (*reach)[r->qk]) (*reach)[r->qk] = end;
    if (lo + n <= len && lo <= len) continue;
    snprintf(r->dbuf, sizeof r->dbuf, "%s has %lld rows, step %lld partition %lld reads rows %lld..%lld", name,
             (long long)len, (long long)p->step, (long long)p->partition, (long long)lo, (long long)(lo + n - 1));
    row->part = part_of(p->block), row->item = r->ibuf, row->verdict = VC_SHORT, row->detail = r->dbuf;
    r->qk++;
    return 1;
  }
  return 0;
}

/* Phase 1: the partition rows */
static vd_code part_next(hvc *r, vc_row *row, int *got, vd_err *err) {
  for (;;) {
    if (r->queued) {
      if (slice_row(r, row)) return *got = 1, VD_OK;
      r->queued = 0;
    }
    vd_code rc = vhp_rows_next(&r->rows, err);
    if (rc) return rc;
    if (r->rows.eof) return VD_OK;
    const vh_part *p = r->rows.cur;
    r->items++;
    if (p->step != VH_NULL)
      snprintf(r->ibuf, sizeof r->ibuf, "step %lld partition %lld", (long long)p->step, (long long)p->partition);
    if (broken(p->status)) {
      const vh_source *s = p->source_file ? source_of(r, p->source_file) : NULL;
      if (p->source_file && !named(r, p->source_file)) {
        if (r->nnamed == r->capnamed) {
          int nc = r->capnamed ? 2 * r->capnamed : 8;
          const char **x = realloc(r->named, (size_t)nc * sizeof *x);
          if (!x) return vd_nomem(err);
          r->named = x, r->capnamed = nc;
        }
        r->named[r->nnamed++] = p->source_file;
      }
      snprintf(r->dbuf, sizeof r->dbuf, "%s: %s", p->status,
               s && s->problem ? s->problem : p->source_file ? p->source_file : "");
      row->part = part_of(p->block);
      row->item = p->step != VH_NULL ? r->ibuf : NULL;
      row->verdict = verdict_of(p->status, s);
      row->detail = r->dbuf;
      return *got = 1, VD_OK;
    }
    if (p->status && strcmp(p->status, "ok")) continue; /* no counts to set against the arrays */
    r->queued = 1, r->qk = 0;
  }
}

/* Phase 2: sources no partition row named */
static int source_next(hvc *r, vc_row *row) {
  while (r->src < r->doc.nsources) {
    const vh_source *s = &r->doc.sources[r->src++];
    if (!broken(s->status) || (s->resolved && named(r, s->resolved))) continue;
    snprintf(r->dbuf, sizeof r->dbuf, "%s: %s %s: %s", s->status,
             s->kind && !strcmp(s->kind, "virtual") ? "a mapping from" : "an external link to", s->file ? s->file : "",
             s->problem ? s->problem : "");
    row->part = s->object, row->item = NULL, row->verdict = verdict_of(s->status, s), row->detail = r->dbuf;
    return 1;
  }
  return 0;
}

/* Phase 3: arrays longer than every slice reaches (only for leaves whose partitions were
 * all read: a broken one's rows are unknown) */
static int leaf_next(hvc *r, vc_row *row) {
  for (; r->leaf < r->doc.ngeoms; r->leaf++, r->arr = 0) {
    const vh_geom *g = &r->doc.geoms[r->leaf];
    if (r->nnamed) return 0;
    for (; r->arr < 1 + 2 * VH_NTOPO; r->arr++) {
      int k = r->arr;
      int64_t len = k == 0 ? g->points : !g->poly ? (k == 1 ? g->types : k == 2 ? g->offs[0] : k == 3 ? g->conn[0] : VH_NULL)
                   : (k - 1) % 2 == 0 ? g->offs[(k - 1) / 2] : g->conn[(k - 1) / 2];
      int64_t got = r->reach[r->leaf][k];
      if (len == VH_NULL || len <= got) continue;
      const char *name = k == 0 ? "Points" : !g->poly ? (k == 1 ? "Types" : k == 2 ? "Offsets" : "Connectivity") : NULL;
      if (g->poly && k)
        snprintf(r->pbuf, sizeof r->pbuf, "%s/%s", vh_topo_names[(k - 1) / 2], (k - 1) % 2 ? "Connectivity" : "Offsets");
      snprintf(r->dbuf, sizeof r->dbuf, "%s has %lld entries, the counts reach %lld", name ? name : r->pbuf,
               (long long)len, (long long)got);
      row->part = part_of(g->block), row->item = NULL, row->verdict = VC_MISMATCH, row->detail = r->dbuf;
      r->arr++;
      return 1;
    }
  }
  return 0;
}

static vd_code next(void *state, vc_row *row, int *eof, vd_err *err) {
  hvc *r = state;
  if (r->phase == 0) {
    int got = 0;
    vd_code rc = part_next(r, row, &got, err);
    if (rc && vc_fatal(rc)) return rc;
    if (rc) { /* what the walk met deep in the file (a negative count, the helper dying): a row */
      vh_err_redact(err);
      snprintf(r->dbuf, sizeof r->dbuf, "%s", err->msg);
      vd_err_clear(err);
      r->phase = 3;
      row->verdict = VC_MALFORMED, row->detail = r->dbuf;
      return VD_OK;
    }
    if (got) return VD_OK;
    r->phase = 1;
  }
  if (r->phase == 1) {
    if (source_next(r, row)) return VD_OK;
    r->phase = 2;
  }
  if (r->phase == 2 && leaf_next(r, row)) return VD_OK;
  r->phase = 3;
  *eof = 1;
  return VD_OK;
}

static int64_t items(const void *state) { return ((const hvc *)state)->items; }

static void close_(void *state) {
  hvc *r = state;
  if (!r) return;
  vhp_close(&r->doc, &r->rows);
  free(r->named);
  free(r->reach);
  free(r);
}

const vc_checker vc_vtkhdf = {"vtkhdf", open_, next, items, close_};
