/* The OpenVDS check: the documents (a VolumeDataLayout or LayerStatus that does not parse
 * is the dataset's one row), then layer by layer the audit of formats/openvds/openvds_audit.c,
 * going on past missing and unparsable pages, its findings put in the shared vocabulary
 * (docs/check.md: detail starts with vds_audit's own verdict name). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_format.h"
#include "formats/openvds/openvds.h"
#include "formats/openvds/openvds_objects.h"
#include "store/store.h"

typedef struct {
  vd_ctx *ctx;
  const char *url; /* check_run.c's, outlives the state */
  vds_dataset *ds;
  int li;          /* the layer being audited */
  vds_audit *a;
  int64_t items;
  char item[64];
  char detail[1400];
} ovc;

static vd_code open_(vd_ctx *ctx, const char *url, void **state, vc_unopened *how, vd_err *err) {
  ovc *r = calloc(1, sizeof *r);
  if (!r) return vd_nomem(err);
  *state = r;
  r->ctx = ctx;
  r->url = url;
  int bad = 0;
  vd_code rc = vds_open_which(ctx, url, &r->ds, &bad, err);
  if (rc && bad) *how = (vc_unopened){VC_MALFORMED, bad == 1 ? "VolumeDataLayout" : "LayerStatus"};
  return rc;
}

/* The audit's row a as a problem row of layer l (page and chunk rows alike). */
static void describe(ovc *r, const vds_layer *l, const vds_audit_row *a, vc_row *row) {
  const char *name = vds_verdict_name(a->verdict);
  char obj[700] = "";
  if (a->chunk >= 0) {
    char *u = vds_chunk_key_url(r->url, l->name, a->chunk);
    if (u) vd_url_redact(u, obj, sizeof obj);
    free(u);
    snprintf(r->item, sizeof r->item, "%lld", (long long)a->chunk);
  }
  row->item = r->item;
  switch (a->verdict) {
    case VDS_V_MISMATCH:
      row->verdict = VC_MISMATCH;
      if (a->page_hash == a->object_hash) /* a wavelet entry: its 16 adaptive level bytes differ */
        snprintf(r->detail, sizeof r->detail, "%s: the page entry and the object's metadata agree on the hash %016llx, "
                 "not on the adaptive level bytes (%s)", name, (unsigned long long)a->page_hash, obj);
      else
        snprintf(r->detail, sizeof r->detail, "%s: the page entry's hash %016llx, the object's metadata %016llx (%s)",
                 name, (unsigned long long)a->page_hash, (unsigned long long)a->object_hash, obj);
      return;
    case VDS_V_MISSING_OBJECT:
      row->verdict = VC_MISSING;
      snprintf(r->detail, sizeof r->detail, "%s: %s says data; no object %s", name,
               l->has_pages ? "the page entry" : "a layer without pages", obj);
      return;
    case VDS_V_MISSING_METADATA:
      row->verdict = VC_MISSING;
      snprintf(r->detail, sizeof r->detail, "%s: %s (%lld bytes) has no vdschunkmetadata this layer can decode%s%s", name,
               obj, (long long)a->object_size, a->detail[0] ? ": " : "", a->detail);
      return;
    case VDS_V_ORPHAN:
      row->verdict = VC_ORPHAN;
      snprintf(r->detail, sizeof r->detail, "%s: %s (%lld bytes), its page entry unwritten", name, obj,
               (long long)a->object_size);
      return;
    case VDS_V_SIZE_MISMATCH:
      row->verdict = a->object_size < a->entry_object_size ? VC_SHORT : VC_MISMATCH;
      snprintf(r->detail, sizeof r->detail, "%s: %s holds %lld bytes, its page entry says %lld", name, obj,
               (long long)a->object_size, (long long)a->entry_object_size);
      return;
    case VDS_V_BAD_OBJECT:
      row->verdict = VC_MALFORMED;
      snprintf(r->detail, sizeof r->detail, "%s: %s: %s", name, obj, a->detail);
      return;
    case VDS_V_UNCOMMITTED:
      row->verdict = VC_UNCOMMITTED;
      snprintf(r->detail, sizeof r->detail, "%s: %s: %s", name, obj, a->detail);
      return;
    case VDS_V_COUNT_MISMATCH:
      row->verdict = VC_MISMATCH;
      row->item = "LayerStatus";
      snprintf(r->detail, sizeof r->detail, "%s: %s", name, a->detail);
      return;
    default: /* missing_page, bad_page */
      row->verdict = a->verdict == VDS_V_MISSING_PAGE ? VC_MISSING : VC_MALFORMED;
      snprintf(r->item, sizeof r->item, "ChunkMetadata/%lld", (long long)vds_page_stored(l, a->page));
      snprintf(r->detail, sizeof r->detail, "%s: page %lld: %s", name, (long long)a->page, a->detail);
      return;
  }
}

static vd_code next(void *state, vc_row *row, int *eof, vd_err *err) {
  ovc *r = state;
  while (r->ds && r->li < r->ds->nlayers) {
    const vds_layer *l = &r->ds->layers[r->li];
    vd_code rc;
    if (!r->a) {
      if ((rc = vds_audit_open(r->ctx, r->ds, l, "vdsql_check", &r->a, err))) return rc;
      vds_audit_keep_going(r->a);
    }
    vds_audit_row a;
    int aeof = 0;
    if ((rc = vds_audit_next(r->a, &a, &aeof, err))) return rc;
    if (aeof) {
      vds_audit_close(r->a);
      r->a = NULL;
      r->li++;
      continue;
    }
    if (a.chunk >= 0) r->items++;
    if (a.verdict == VDS_V_OK) continue;
    row->part = l->name;
    describe(r, l, &a, row);
    row->detail = r->detail;
    return VD_OK;
  }
  *eof = 1;
  return VD_OK;
}

static int64_t items(const void *state) { return ((const ovc *)state)->items; }

static void close_(void *state) {
  ovc *r = state;
  if (!r) return;
  vds_audit_close(r->a);
  vds_close(r->ds);
  free(r);
}

const vc_checker vc_openvds = {"openvds", open_, next, items, close_};
