/* vds_create (spec sections 1, 3, 7.1-7.2): the layout is checked by the parser and by
 * the rules OpenVDS's Create adds, then VolumeDataLayout is written as given and a
 * LayerStatus listing every layer the layout implies, each with its chunk count,
 * 1024-entry pages and a page directory of -1 (no page written yet). Unlike OpenVDS
 * (which registers layers when a page accessor first opens them), the layers are
 * listed at once so that vds_chunks can write any of them. Both objects are put
 * create-only: an existing dataset is refused, never overwritten. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/store.h"
#include "openvds_write.h"

#define PAGE_SIZE 1024

/* What OpenVDS's Create refuses beyond what a reader needs (section 7.1). */
static vd_code create_rules(const vds_layout *l, const char *where, vd_err *err) {
  if (l->dims < 2) return vd_fail(err, VD_INVALID, "%s: %d axes: OpenVDS datasets have 2 to 6", where, l->dims);
  if (!l->channels[0].renderable) return vd_fail(err, VD_INVALID, "%s: the primary channel must be renderable", where);
  for (int c = 0; c < l->nchannels; c++) {
    const vds_channel *ch = &l->channels[c];
    if (c && !*ch->name) return vd_fail(err, VD_INVALID, "%s: channel %d has no name", where, c);
    if (ch->format == VDS_F_1BIT && ch->use_no_value)
      return vd_fail(err, VD_INVALID, "%s: channel %s: a 1-bit channel cannot use a noValue", where, ch->name);
    for (int d = 0; d < c; d++)
      if (strcmp(l->channels[d].name, ch->name) == 0)
        return vd_fail(err, VD_INVALID, "%s: channel name \"%s\" is used twice", where, ch->name);
  }
  for (int d = 0; d < l->dims; d++)
    if (l->axes[d].samples < 1 || l->axes[d].samples > 1000000)
      return vd_fail(err, VD_INVALID, "%s: axis %d: numSamples %lld (OpenVDS takes 1 to 1000000)", where, d,
                     (long long)l->axes[d].samples);
  return VD_OK;
}

/* compressionTolerance as OpenVDS writes it (section 3): for a lossy-allowed renderable
 * float channel the default 0.01 (as a float) at LOD0 and max(t, 2) * 2^min(lod, 2)
 * above, else 0. */
static double tolerance(const vds_channel *ch, int lod) {
  if (!(ch->lossy && ch->renderable && ch->format == VDS_F_R32)) return 0;
  double t = (double)0.01f;
  if (!lod) return t;
  return (t > 2 ? t : 2) * (double)(1 << (lod < 2 ? lod : 2));
}

/* cJSON prints numbers with 15 digits when that compares equal within an epsilon, so
 * a float like compressionTolerance 0.01f (0.009999999776482582) would drift on every
 * rewrite: non-integers get their shortest exact form, large integers all digits. */
static void exact_numbers(cJSON *n) {
  for (cJSON *c = n->child; c; c = c->next) {
    if (c->child) exact_numbers(c);
    if (!cJSON_IsNumber(c) || !isfinite(c->valuedouble)) continue;
    double v = c->valuedouble;
    char buf[64];
    if (v == floor(v)) {
      if (fabs(v) < 1e15) continue;
      snprintf(buf, sizeof buf, "%.0f", v);
    } else {
      for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
      }
    }
    cJSON *r = cJSON_CreateRaw(buf);
    if (!r || (c->type & cJSON_StringIsConst)) {
      cJSON_Delete(r);
      continue;
    }
    r->string = c->string; /* the member's name moves to the replacement */
    c->string = NULL;
    cJSON_ReplaceItemViaPointer(n, c, r);
    c = r;
  }
}

char *vds_json_print(void *doc) {
  exact_numbers(doc);
  return cJSON_Print(doc);
}

static cJSON *layer_json(const vds_layout *lay, int c, const char *group, int lod, const char *method, vd_err *err) {
  const vds_channel *ch = &lay->channels[c];
  vds_geom g;
  if (vds_geom_init(lay, ch, group, lod, &g, err)) return NULL;
  char name[400];
  snprintf(name, sizeof name, "%s%sLOD%d", c ? ch->name : "", group, lod);
  int64_t pages = (g.total - 1) / PAGE_SIZE + 1;
  cJSON *o = cJSON_CreateObject(), *levels = cJSON_AddArrayToObject(o, "adaptiveLevelSizes");
  for (int i = 0; i < 16; i++) cJSON_AddItemToArray(levels, cJSON_CreateNumber(0));
  /* keys in jsoncpp's (alphabetical) order, as OpenVDS writes them */
  cJSON_AddStringToObject(o, "channelName", ch->name);
  cJSON_AddNumberToObject(o, "chunkCount", (double)g.total);
  cJSON_AddNumberToObject(o, "chunkMetadataByteSize", 8);
  cJSON_AddNumberToObject(o, "chunkMetadataPageSize", PAGE_SIZE);
  cJSON_AddStringToObject(o, "compressionMethod", method);
  cJSON_AddNumberToObject(o, "compressionTolerance", tolerance(ch, lod));
  cJSON_AddStringToObject(o, "dimensionGroup", group);
  cJSON_AddBoolToObject(o, "hasChunkMetadataPages", 1);
  cJSON_AddStringToObject(o, "layerName", name);
  cJSON_AddNumberToObject(o, "lod", lod);
  cJSON *dir = cJSON_AddArrayToObject(o, "pageDirectory");
  for (int64_t p = 0; p < pages; p++) cJSON_AddItemToArray(dir, cJSON_CreateNumber(-1));
  cJSON_AddStringToObject(o, "produceStatus", "Normal");
  cJSON_AddNumberToObject(o, "serializedSize", 0);
  cJSON_AddNumberToObject(o, "uncompressedSize", 0);
  cJSON_AddNumberToObject(o, "validChunkCount", 0);
  return o;
}

/* Every layer the layout implies (section 1): the primary group (Dimensions_01 for 2D
 * data, Dimensions_012 above), each channel, LOD0 up to lodLevels for renderable
 * channels (2D groups only with create2DLODs). */
static vd_code status_json(const vds_layout *lay, const char *method, char **out, int *nlayers, vd_err *err) {
  const char *group = lay->dims == 2 ? "Dimensions_01" : "Dimensions_012";
  int lods = lay->dims == 2 && !lay->create_2d_lods ? 1 : lay->lod_levels + 1;
  cJSON *arr = cJSON_CreateArray();
  if (!arr) return vd_nomem(err);
  *nlayers = 0;
  for (int c = 0; c < lay->nchannels; c++)
    for (int lod = 0; lod < (lay->channels[c].renderable ? lods : 1); lod++) {
      cJSON *o = layer_json(lay, c, group, lod, method, err);
      if (!o) {
        cJSON_Delete(arr);
        return err->code ? err->code : vd_nomem(err);
      }
      cJSON_AddItemToArray(arr, o);
      ++*nlayers;
    }
  *out = vds_json_print(arr);
  cJSON_Delete(arr);
  return *out ? VD_OK : vd_nomem(err);
}

vd_code vds_create(vd_ctx *ctx, const char *url, const char *layout_json, size_t len, const char *compression,
                   int *nlayers, vd_err *err) {
  static const char *const methods[] = {"None", "RLE", "Zip"};
  const char *method = NULL;
  for (int i = 0; i < 3; i++)
    if (strcasecmp(compression, methods[i]) == 0) method = methods[i];
  char base[600];
  vd_url_redact(url, base, sizeof base);
  if (!method)
    return vd_fail(err, VD_UNSUPPORTED, "%s: compression \"%s\": vdsql writes None, RLE or Zip (wavelet needs "
                   "OpenVDS's commercial plug-in)", base, compression);
  if (vd_url_check(url, err)) return err->code;
  if (!vd_store_can_write(url)) { /* the store's one refusal, before anything is checked or sent */
    vd_putreq r = {.url = url};
    return vd_put(ctx, &r, err);
  }
  char *lurl = vd_url_join(url, "VolumeDataLayout"), *surl = vd_url_join(url, "LayerStatus"), *status = NULL;
  char where[600];
  vds_layout lay;
  memset(&lay, 0, sizeof lay);
  vd_code rc;
  int parsed = 0;
  if (!lurl || !surl) {
    rc = vd_nomem(err);
    goto done;
  }
  snprintf(where, sizeof where, "vds_create(%s): layout", base);
  if ((rc = vds_parse_layout(layout_json, len, where, &lay, err))) goto done;
  parsed = 1;
  if ((rc = create_rules(&lay, where, err))) goto done;
  if ((rc = status_json(&lay, method, &status, nlayers, err))) goto done;
  if ((rc = vd_store_make_dirs(lurl, err))) goto done;
  /* the layout first, create-only: it claims the URL (OpenVDS's order) */
  vd_putreq r = {.url = lurl, .body = layout_json, .len = len, .if_none_match = 1};
  if ((rc = vd_put(ctx, &r, err))) {
    if (rc == VD_PRECONDITION)
      rc = vd_fail(err, VD_CONSTRAINT, "%s: a dataset exists there already (VolumeDataLayout); nothing written", base);
    goto done;
  }
  vd_putreq s = {.url = surl, .body = status, .len = strlen(status), .if_none_match = 1};
  if ((rc = vd_put(ctx, &s, err))) {
    if (rc == VD_PRECONDITION)
      rc = vd_fail(err, VD_CONSTRAINT, "%s: a LayerStatus exists there already; nothing written", base);
    vd_err e2 = {0};
    vd_delete(ctx, lurl, &e2); /* no half-created dataset: take the layout back */
  }
done:
  if (parsed) vds_layout_free(&lay);
  free(status);
  free(lurl);
  free(surl);
  return rc;
}
