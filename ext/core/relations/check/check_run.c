/* One dataset's health check (check_run.h): the format told by the URL's name, then for
 * OpenVDS the documents and, layer by layer, the audit of formats/openvds/openvds_audit.c
 * going on past missing and unparsable pages, its findings put in the shared vocabulary;
 * for LINDI and VTKHDF (their own checks come later, issue 30), whether the file can be
 * read at all. What the data holds is always a row; only what is no finding of the data
 * (an argument, the store refusing or unreachable, memory, an interrupt) fails. */
#include "check_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/lindi/lindi.h"
#include "formats/openvds/openvds.h"
#include "formats/openvds/openvds_objects.h"
#include "formats/vtkhdf/vtkhdf.h"
#include "store/store.h"

enum { F_OPENVDS, F_LINDI, F_VTKHDF };
static const char *formats[] = {"openvds", "lindi", "vtkhdf"};
static const char *verdicts[] = {"unreadable", "malformed", "missing", "short", "mismatch", "orphan", "uncommitted"};

const char *vc_verdict_name(int v) { return verdicts[v]; }

struct vc_run {
  vd_ctx *ctx;
  char *url;
  int fmt;
  int pending;       /* a row decided at open (unreadable, a document that does not parse) */
  int pverdict;
  const char *pitem;
  vds_dataset *ds;
  int li;            /* the layer being audited */
  vds_audit *a;
  int64_t items;
  char item[64];
  char detail[1400];
};

/* Failures that say nothing of the data: they end the query. VD_IO is the store refusing
 * (401, 403, EACCES) or unreachable after its retries; VD_UNSUPPORTED a scheme or a
 * feature vdsql does not have. */
static int fatal(vd_code rc) {
  return rc == VD_NOMEM || rc == VD_INTERRUPTED || rc == VD_IO || rc == VD_UNSUPPORTED;
}

static int ends(const char *s, size_t n, const char *suffix) {
  size_t k = strlen(suffix);
  return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

/* The format a name says (a ?query or #fragment is not part of it); OpenVDS, a folder,
 * otherwise. */
static int format_of(const char *url) {
  size_t n = strcspn(url, "?#");
  while (n && url[n - 1] == '/') n--;
  if (ends(url, n, ".lindi.tar") || ends(url, n, ".lindi.json")) return F_LINDI;
  if (ends(url, n, ".vtkhdf") || ends(url, n, ".hdf")) return F_VTKHDF;
  return F_OPENVDS;
}

/* A pending row from err (which is cleared). */
static void pend(vc_run *r, int verdict, const char *item, vd_err *err) {
  r->pending = 1;
  r->pverdict = verdict;
  r->pitem = item;
  snprintf(r->detail, sizeof r->detail, "%s", err->msg);
  vd_err_clear(err);
}

/* Can the LINDI file be read at all: its first bytes, and for the tar form its index (the
 * JSON form's refs, and every other LINDI check, come with the LINDI part of issue 30). */
static vd_code open_lindi(vc_run *r, vd_err *err) {
  vd_blob *b = NULL;
  vd_code rc = lindi_prefix(r->ctx, r->url, &b, err);
  if (!rc && !lindi_is_json_form(b->data, b->len)) {
    lindi_index ix = {0};
    rc = lindi_open(r->ctx, r->url, &ix, err);
    lindi_index_free(&ix);
  }
  vd_blob_unref(b);
  return rc;
}

vd_code vc_open(vd_ctx *ctx, const vd_value *url, const char *who, vc_run **out, vd_err *err) {
  *out = NULL;
  if (url->type == VD_NULL) return vd_fail(err, VD_INVALID, "%s: the url is NULL", who);
  if (url->type != VD_TEXT)
    return vd_fail(err, VD_INVALID, "%s: the url must be text, not a %s", who, url->type == VD_BLOB ? "blob" : "number");
  vc_run *r = calloc(1, sizeof *r);
  if (!r || !(r->url = vd_value_strdup(url))) {
    free(r);
    return vd_nomem(err);
  }
  r->ctx = ctx;
  vd_code rc = vd_url_check(r->url, err);
  if (!rc && !*r->url) rc = vd_fail(err, VD_INVALID, "%s: the url is empty", who);
  if (rc) {
    vc_close(r);
    return rc;
  }
  r->fmt = format_of(r->url);
  int bad = 0;
  if (r->fmt == F_OPENVDS) {
    rc = vds_open_which(ctx, r->url, &r->ds, &bad, err);
  } else if (r->fmt == F_LINDI) {
    rc = open_lindi(r, err);
  } else {
    vh_doc doc = {0};
    rc = vh_open(ctx, r->url, 0, &doc, err);
    vh_doc_free(&doc);
  }
  if (rc && fatal(rc)) {
    vc_close(r);
    return rc;
  }
  if (rc) pend(r, bad ? VC_MALFORMED : VC_UNREADABLE, bad == 1 ? "VolumeDataLayout" : bad == 2 ? "LayerStatus" : NULL, err);
  *out = r;
  return VD_OK;
}

/* The audit's row a as a problem row of layer l (page and chunk rows alike). */
static void describe(vc_run *r, const vds_layer *l, const vds_audit_row *a, vc_row *row) {
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

vd_code vc_next(vc_run *r, vc_row *row, int *eof, vd_err *err) {
  memset(row, 0, sizeof *row);
  *eof = 0;
  if (r->pending) {
    r->pending = 0;
    row->verdict = r->pverdict;
    row->item = r->pitem;
    row->detail = r->detail;
    return VD_OK;
  }
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

const char *vc_format(const vc_run *r) { return formats[r->fmt]; }

int64_t vc_items(const vc_run *r) { return r->items; }

void vc_close(vc_run *r) {
  if (!r) return;
  vds_audit_close(r->a);
  vds_close(r->ds);
  free(r->url);
  free(r);
}
