/* LayerStatus parsing (spec section 3): one vds_layer per entry, its chunk grid
 * computed from the layout and checked against what the document states. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/strmap.h"
#include "openvds.h"

static int safe_layer_name(const char *s) {
  if (!*s || strlen(s) > 200 || strstr(s, "..")) return 0;
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == '/' || *s == '\\' || *s == '?' || *s == '#') return 0;
  return 1;
}

static vd_code parse_one(const cJSON *o, int idx, const char *where, const vds_layout *lay, vds_layer *l,
                         vd_err *err) {
  char ctx[64];
  snprintf(ctx, sizeof ctx, "LayerStatus[%d]", idx);
  if (!cJSON_IsObject(o)) return vd_fail(err, VD_INVALID, "%s: %s is not an object", where, ctx);
  const char *name, *chan, *group, *produce = "Normal", *comp = "None";
  int64_t lod, v;
  if (vd_json_str(o, "layerName", where, ctx, &name, err)) return err->code;
  snprintf(ctx, sizeof ctx, "layer %.48s", name);
  if (vd_json_str(o, "channelName", where, ctx, &chan, err) ||
      vd_json_str(o, "dimensionGroup", where, ctx, &group, err) || vd_json_int(o, "lod", where, ctx, &lod, err) ||
      vd_json_opt_str(o, "produceStatus", where, ctx, &produce, err) ||
      vd_json_opt_str(o, "compressionMethod", where, ctx, &comp, err) ||
      vd_json_opt_num(o, "compressionTolerance", where, ctx, &l->tolerance, err) ||
      vd_json_opt_bool(o, "hasChunkMetadataPages", where, ctx, &l->has_pages, err))
    return err->code;
  if (!safe_layer_name(name))
    return vd_fail(err, VD_INVALID, "%s: \"%s\" is not a usable layer name", where, name);
  if (!(l->name = strdup(name)) || !(l->channel_name = strdup(chan)) || !(l->dim_group = strdup(group)) ||
      !(l->produce = strdup(produce)) || !(l->compression = strdup(comp)))
    return vd_nomem(err);
  if (lod < 0 || lod > 12) return vd_fail(err, VD_INVALID, "%s: %s: lod %lld out of range (0 to 12)", where, ctx, (long long)lod);
  l->lod = (int)lod;
  l->method = vds_method_from_name(comp);
  l->channel = -1;
  for (int c = 0; c < lay->nchannels; c++)
    if (strcmp(lay->channels[c].name, chan) == 0) l->channel = c;
  if (l->channel < 0)
    return vd_fail(err, VD_INVALID, "%s: %s: channel \"%s\" is not in VolumeDataLayout", where, ctx, chan);
  if (vds_geom_init(lay, &lay->channels[l->channel], group, l->lod, &l->geom, err))
    return vd_err_prefix(err, "%s: %s", where, ctx);
  l->chunk_count = l->geom.total;
  l->valid_chunk_count = l->serialized_size = l->uncompressed_size = -1;
  if (vd_json_opt_int(o, "validChunkCount", where, ctx, &l->valid_chunk_count, err) ||
      vd_json_opt_int(o, "serializedSize", where, ctx, &l->serialized_size, err) ||
      vd_json_opt_int(o, "uncompressedSize", where, ctx, &l->uncompressed_size, err))
    return err->code;
  if (!l->has_pages) return VD_OK;
  v = -1;
  if (vd_json_opt_int(o, "chunkCount", where, ctx, &v, err)) return err->code;
  if (v >= 0 && v != l->chunk_count)
    return vd_fail(err, VD_INVALID, "%s: %s: chunkCount %lld disagrees with %lld computed from VolumeDataLayout",
                   where, ctx, (long long)v, (long long)l->chunk_count);
  if (vd_json_int(o, "chunkMetadataPageSize", where, ctx, &v, err)) return err->code;
  if (v < 1 || v > (1 << 24))
    return vd_fail(err, VD_INVALID, "%s: %s: chunkMetadataPageSize %lld out of range", where, ctx, (long long)v);
  l->page_size = (int)v;
  if (vd_json_int(o, "chunkMetadataByteSize", where, ctx, &v, err)) return err->code;
  if (v != 8 && v != 28)
    return vd_fail(err, VD_INVALID, "%s: %s: unsupported chunkMetadataByteSize %lld (8 or 28)", where, ctx,
                   (long long)v);
  l->entry_size = (int)v;
  l->page_count = (l->chunk_count - 1) / l->page_size + 1;
  const cJSON *dir = cJSON_GetObjectItemCaseSensitive(o, "pageDirectory");
  if (!dir) return VD_OK;
  if (!cJSON_IsArray(dir) || cJSON_GetArraySize(dir) != l->page_count)
    return vd_fail(err, VD_INVALID, "%s: %s: pageDirectory must be an array of %lld entries (one per page)", where,
                   ctx, (long long)l->page_count);
  if (!(l->page_dir = malloc(l->page_count * sizeof *l->page_dir))) return vd_nomem(err);
  int64_t p = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, dir) {
    if (!cJSON_IsNumber(e) || !(e->valuedouble >= -1 && e->valuedouble <= 9e15) || /* range before the cast */
        e->valuedouble != (double)(int64_t)e->valuedouble)
      return vd_fail(err, VD_INVALID, "%s: %s: pageDirectory[%lld] is not a page number or -1", where, ctx,
                     (long long)p);
    l->page_dir[p++] = (int64_t)e->valuedouble;
  }
  return VD_OK;
}

vd_code vds_parse_status(const char *json, size_t len, const char *where, const vds_layout *lay, int *nlayers,
                         vds_layer **layers, vd_err *err) {
  *nlayers = 0;
  *layers = NULL;
  cJSON *doc;
  if (vd_json_parse(json, len, where, &doc, err)) return err->code;
  if (!cJSON_IsArray(doc)) {
    cJSON_Delete(doc);
    return vd_fail(err, VD_INVALID, "%s: the document is not a JSON array of layers", where);
  }
  int n = cJSON_GetArraySize(doc), i = 0;
  vds_layer *ls = calloc(n ? n : 1, sizeof *ls);
  if (!ls) {
    cJSON_Delete(doc);
    return vd_nomem(err);
  }
  const cJSON *o;
  vd_code rc = VD_OK;
  vd_strmap seen = {0}; /* names so far: a duplicate check in O(1) per layer */
  cJSON_ArrayForEach(o, doc) {
    if ((rc = parse_one(o, i, where, lay, &ls[i], err))) {
      i++;
      break;
    }
    if (vd_strmap_get(&seen, ls[i].name) >= 0)
      rc = vd_fail(err, VD_INVALID, "%s: layer %s is listed twice", where, ls[i].name);
    else if (vd_strmap_put(&seen, ls[i].name, i))
      rc = vd_nomem(err);
    i++;
    if (rc) break;
  }
  vd_strmap_free(&seen);
  cJSON_Delete(doc);
  if (rc) {
    vds_layers_free(ls, i);
    return rc;
  }
  *nlayers = n;
  *layers = ls;
  return VD_OK;
}

void vds_layers_free(vds_layer *ls, int n) {
  for (int i = 0; i < n && ls; i++) {
    free(ls[i].name);
    free(ls[i].channel_name);
    free(ls[i].dim_group);
    free(ls[i].produce);
    free(ls[i].compression);
    free(ls[i].page_dir);
  }
  free(ls);
}
