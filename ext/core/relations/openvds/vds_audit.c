/* vds_audit(url, layer): one row per chunk that the layer's pages or its objects know,
 * with the page entry, the object's metadata and a verdict (formats/openvds/openvds_audit.c
 * defines them; docs/openvds.md explains each). */
#include <stdlib.h>

#include "formats/openvds/openvds_objects.h"
#include "vds_cursor.h"

static const vd_colspec cols[] = {
    {"chunk", VD_INT, 0},       {"page_status", VD_TEXT, 0}, {"page_hash", VD_INT, 0}, {"object_hash", VD_INT, 0},
    {"object_size", VD_INT, 0}, {"verdict", VD_TEXT, 0},     {"detail", VD_TEXT, 0},   VDS_URL_ARG,
    VDS_LAYER_ARG};

static const char *status_name[] = {"unwritten", "data", "constant", "novalue"};

typedef struct {
  vds_cur *c;
  vds_audit *a;
  vds_audit_row r;
  int eof;
  int a_counts; /* count rows given so far */
} audit_cur;

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  audit_cur *k = calloc(1, sizeof *k);
  if (!k) return vd_nomem(err);
  *out = k;
  k->eof = 1;
  vd_code rc = vds_cur_open(ctx, a, na, 1, &k->c, err);
  if (rc || !k->c->layer) return rc;
  if ((rc = vds_audit_open(ctx, k->c->ds, k->c->layer, "vds_audit", &k->a, err))) return rc;
  return vds_audit_next(k->a, &k->r, &k->eof, err);
}

static vd_code next(void *cur, vd_err *err) {
  audit_cur *k = cur;
  if (k->r.chunk < 0) k->a_counts++;
  return k->eof ? VD_OK : vds_audit_next(k->a, &k->r, &k->eof, err);
}

static int eof(void *cur) { return ((audit_cur *)cur)->eof; }

static int64_t rowid(void *cur) {
  const audit_cur *k = cur; /* count rows come after every chunk */
  return k->r.chunk >= 0 ? k->r.chunk : INT64_MAX - 3 + k->a_counts;
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  (void)err;
  const vds_audit_row *r = &((audit_cur *)cur)->r;
  int paged = r->page_status >= 0, written = paged && r->page_status != VDS_S_UNWRITTEN;
  switch (col) {
    case 0: *v = r->chunk >= 0 ? vd_int(r->chunk) : vd_null(); break;
    case 1: *v = paged ? vd_text(status_name[r->page_status]) : vd_null(); break;
    case 2: *v = written ? vd_int((int64_t)r->page_hash) : vd_null(); break;
    case 3: *v = r->has_object_hash ? vd_int((int64_t)r->object_hash) : vd_null(); break;
    case 4: *v = r->has_object && r->object_size >= 0 ? vd_int(r->object_size) : vd_null(); break;
    case 5: *v = vd_text(vds_verdict_name(r->verdict)); break;
    default: *v = r->detail[0] ? vd_text(r->detail) : vd_null(); break;
  }
  return VD_OK;
}

static void close_(void *cur) {
  audit_cur *k = cur;
  if (!k) return;
  vds_audit_close(k->a);
  vds_cur_close(k->c);
  free(k);
}

/* planners: from the cached documents only (vds_cursor.h) */
static double known(vd_ctx *ctx, const vd_value *args, int nargs) { return vds_cur_known(ctx, args, nargs, VDS_KNOWN_WRITTEN); }

const vd_relation vd_rel_vds_audit = {
    .name = "vds_audit",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 1000, .requests = 2, .rows_per_request = 500, .known = known,
    .order_col = 0,
    .open = open_,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .doc = "a layer's page entries against its chunk objects' metadata, one row per chunk either knows, with a verdict: ok, mismatch, missing_object, missing_metadata, orphan_object, size_mismatch, bad_object (detail says why), and count_mismatch rows (chunk NULL) for LayerStatus counts the pages do not add up to"};
