/* Opening a dataset: VolumeDataLayout and LayerStatus fetched together through the
 * document cache, parsed, and layers looked up by name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "openvds.h"

/* bad (may be NULL): 1 when the layout did not parse, 2 when LayerStatus did not */
static vd_code parse_docs(const vd_blob *layout, const vd_blob *status, const char *lwhere, const char *swhere,
                          vds_dataset *ds, int *bad, vd_err *err) {
  vd_code rc = vds_parse_layout((const char *)layout->data, layout->len, lwhere, &ds->layout, err);
  if (rc && bad) *bad = 1;
  if (!rc &&
      (rc = vds_parse_status((const char *)status->data, status->len, swhere, &ds->layout, &ds->nlayers, &ds->layers,
                             err)) && bad)
    *bad = 2;
  return rc;
}

vd_code vds_parse_docs(const vd_blob *layout, const vd_blob *status, const char *lwhere, const char *swhere,
                       vds_dataset *ds, vd_err *err) {
  return parse_docs(layout, status, lwhere, swhere, ds, NULL, err);
}

vd_code vds_not_dataset(const char *url, vd_code rc, vd_err *err) {
  if (rc == VD_NOTFOUND) { /* say what the folder is not, not only which file is missing */
    char base[600];
    vd_url_redact(url, base, sizeof base);
    vd_err_prefix(err, "%s: not an OpenVDS dataset", base);
  }
  return rc;
}

vd_code vds_open(vd_ctx *ctx, const char *url, vds_dataset **out, vd_err *err) {
  return vds_open_which(ctx, url, out, NULL, err);
}

vd_code vds_open_which(vd_ctx *ctx, const char *url, vds_dataset **out, int *bad_doc, vd_err *err) {
  *out = NULL;
  if (bad_doc) *bad_doc = 0;
  if (!*url) return vd_fail(err, VD_INVALID, "empty dataset URL");
  vds_dataset *ds = calloc(1, sizeof *ds);
  char *urls[2] = {vd_url_join(url, "VolumeDataLayout"), vd_url_join(url, "LayerStatus")};
  vd_blob *docs[2] = {NULL, NULL};
  char where[2][600];
  vd_code rc;
  if (!ds || !urls[0] || !urls[1] || !(ds->url = strdup(url))) {
    rc = vd_nomem(err);
    goto fail;
  }
  vd_url_redact(urls[0], where[0], sizeof where[0]);
  vd_url_redact(urls[1], where[1], sizeof where[1]);
  if ((rc = vd_fetch_docs(ctx, (const char *const *)urls, 2, docs, err))) {
    vds_not_dataset(url, rc, err);
    goto fail;
  }
  if ((rc = parse_docs(docs[0], docs[1], where[0], where[1], ds, bad_doc, err))) goto fail;
  vd_blob_unref(docs[0]);
  vd_blob_unref(docs[1]);
  free(urls[0]);
  free(urls[1]);
  *out = ds;
  return VD_OK;
fail:
  vd_blob_unref(docs[0]);
  vd_blob_unref(docs[1]);
  free(urls[0]);
  free(urls[1]);
  vds_close(ds);
  return rc;
}

/* For a planner: the dataset from the documents the cache holds fresh, never a request
 * (NULL when either is not there or does not parse). A peek counts no cache hit. */
vds_dataset *vds_peek(vd_ctx *ctx, const char *url) {
  if (!url || !*url) return NULL;
  char *urls[2] = {vd_url_join(url, "VolumeDataLayout"), vd_url_join(url, "LayerStatus")};
  vd_blob *docs[2] = {NULL, NULL};
  vds_dataset *ds = calloc(1, sizeof *ds);
  vd_err err;
  vd_err_clear(&err);
  int ok = ds && urls[0] && urls[1] && (docs[0] = vd_cache_peek(ctx, urls[0])) &&
           (docs[1] = vd_cache_peek(ctx, urls[1])) && (ds->url = strdup(url)) &&
           vds_parse_docs(docs[0], docs[1], "VolumeDataLayout", "LayerStatus", ds, &err) == VD_OK;
  vd_blob_unref(docs[0]);
  vd_blob_unref(docs[1]);
  free(urls[0]);
  free(urls[1]);
  if (!ok) {
    vds_close(ds);
    ds = NULL;
  }
  return ds;
}

void vds_close(vds_dataset *ds) {
  if (!ds) return;
  vds_layers_free(ds->layers, ds->nlayers);
  vds_layout_free(&ds->layout);
  free(ds->url);
  free(ds);
}

vd_code vds_find_layer(const vds_dataset *ds, const char *name, const vds_layer **out, vd_err *err) {
  for (int i = 0; i < ds->nlayers; i++)
    if (strcmp(ds->layers[i].name, name) == 0) {
      *out = &ds->layers[i];
      return VD_OK;
    }
  char list[400] = "";
  for (int i = 0; i < ds->nlayers && strlen(list) < sizeof list - 80; i++) {
    strcat(list, i ? ", " : "");
    strncat(list, ds->layers[i].name, 64);
  }
  char where[600];
  vd_url_redact(ds->url, where, sizeof where);
  return vd_fail(err, VD_NOTFOUND, "%s: no layer \"%s\" in LayerStatus (layers: %s)", where, name,
                 ds->nlayers ? list : "none");
}

int64_t vds_page_stored(const vds_layer *l, int64_t page) {
  return l->page_dir ? l->page_dir[page] : page;
}

char *vds_page_key(const vds_layer *l, int64_t page) {
  int64_t n = vds_page_stored(l, page);
  if (n < 0) return NULL;
  char *k = malloc(strlen(l->name) + 40);
  if (k) sprintf(k, "%s/ChunkMetadata/%lld", l->name, (long long)n);
  return k;
}

char *vds_chunk_key_url(const char *url, const char *layer, int64_t chunk) {
  char name[300];
  snprintf(name, sizeof name, "%s/%lld", layer, (long long)chunk);
  return vd_url_join(url, name);
}
