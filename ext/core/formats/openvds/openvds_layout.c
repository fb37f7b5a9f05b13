/* VolumeDataLayout parsing (spec section 2) and the names of formats and methods. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "openvds.h"

static const char *const format_names[] = {"1Bit", "U8", "U16", "R32", "U32", "R64", "U64"};
static const int format_bytes[] = {0, 1, 2, 4, 4, 8, 8};

const char *vds_format_name(int f) { return f >= 0 && f <= VDS_F_U64 ? format_names[f] : "?"; }
int vds_format_bytes(int f) { return f >= 0 && f <= VDS_F_U64 ? format_bytes[f] : 0; }

int vds_method_from_name(const char *s) {
  static const struct { const char *n; int m; } t[] = {
      {"None", VDS_M_NONE}, {"Wavelet", VDS_M_WAVELET}, {"RLE", VDS_M_RLE}, {"Zip", VDS_M_ZIP},
      {"WaveletNormalizeBlock", VDS_M_WAVELET_NB},
      {"WaveletNormalizeBlockExperimental", VDS_M_WAVELET_NB},
      {"WaveletLossless", VDS_M_WAVELET_LOSSLESS},
      {"WaveletNormalizeBlockLossless", VDS_M_WAVELET_NB_LOSSLESS},
      {"WaveletNormalizeBlockExperimentalLossless", VDS_M_WAVELET_NB_LOSSLESS}};
  for (size_t i = 0; i < sizeof t / sizeof *t; i++)
    if (strcmp(s, t[i].n) == 0) return t[i].m;
  return VDS_M_UNKNOWN;
}

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

/* "Prefix_<n>" -> n, or -1. */
static long suffix_num(const char *s, const char *prefix) {
  size_t k = strlen(prefix);
  if (strncmp(s, prefix, k) != 0 || !s[k]) return -1;
  char *end;
  long v = strtol(s + k, &end, 10);
  return *end ? -1 : v;
}

static vd_code parse_descriptor(const cJSON *ld, const char *where, vds_layout *l, vd_err *err) {
  const char *ctx = "layoutDescriptor", *s;
  int64_t v;
  if (!cJSON_IsObject(ld)) return vd_fail(err, VD_INVALID, "%s: \"layoutDescriptor\" is missing or not an object", where);
  if (vd_json_str(ld, "brickSize", where, ctx, &s, err)) return err->code;
  long b = suffix_num(s, "BrickSize_");
  int log2 = 0;
  while (b > 1 && log2 < 13 && (1L << log2) < b) log2++; /* b may be LONG_MAX: stop past 4096 */
  if (b < 32 || b > 4096 || (1L << log2) != b)
    return vd_fail(err, VD_INVALID, "%s: unknown brickSize \"%s\"", where, s);
  l->brick_log2 = log2;
  int64_t neg, pos;
  if (vd_json_int(ld, "negativeMargin", where, ctx, &neg, err) || vd_json_int(ld, "positiveMargin", where, ctx, &pos, err))
    return err->code;
  if (neg < 0 || pos < 0 || neg >= b / 2 || pos >= b / 2) /* checked before narrowing to int */
    return vd_fail(err, VD_INVALID, "%s: margins %lld/%lld must be >= 0 and below half the brick (%ld)", where,
                   (long long)neg, (long long)pos, b);
  l->neg = (int)neg;
  l->pos = (int)pos;
  v = 4;
  if (vd_json_opt_int(ld, "brickSize2DMultiplier", where, ctx, &v, err)) return err->code;
  if (v < 1 || v > 4096 * 4 / b) /* b divides 16384; v * b could overflow */
    return vd_fail(err, VD_INVALID, "%s: brickSize2DMultiplier %lld out of range", where, (long long)v);
  l->mult2d = (int)v;
  s = "LODLevels_None";
  if (vd_json_opt_str(ld, "lodLevels", where, ctx, &s, err)) return err->code;
  long lod = strcmp(s, "LODLevels_None") == 0 ? 0 : suffix_num(s, "LODLevels_");
  if (lod < 0 || lod > 12) return vd_fail(err, VD_INVALID, "%s: unknown lodLevels \"%s\"", where, s);
  l->lod_levels = (int)lod;
  if (vd_json_opt_bool(ld, "create2DLODs", where, ctx, &l->create_2d_lods, err) ||
      vd_json_opt_bool(ld, "forceFullResolutionDimension", where, ctx, &l->force_full_res, err))
    return err->code;
  v = -1;
  if (vd_json_opt_int(ld, "fullResolutionDimension", where, ctx, &v, err)) return err->code;
  if (l->force_full_res && (v < 0 || v >= VDS_MAXDIM))
    return vd_fail(err, VD_INVALID, "%s: fullResolutionDimension %lld is not a dimension", where, (long long)v);
  l->full_res_dim = l->force_full_res ? (int)v : -1;
  return VD_OK;
}

static vd_code parse_axes(const cJSON *arr, const char *where, vds_layout *l, vd_err *err) {
  if (!cJSON_IsArray(arr)) return vd_fail(err, VD_INVALID, "%s: \"axisDescriptors\" is missing or not an array", where);
  int n = cJSON_GetArraySize(arr);
  if (n < 1 || n > VDS_MAXDIM)
    return vd_fail(err, VD_INVALID, "%s: %d axisDescriptors (dimensionality must be 1 to 6)", where, n);
  l->dims = n;
  for (int d = 0; d < VDS_MAXDIM; d++) l->axes[d].samples = 1;
  int d = 0;
  const cJSON *a;
  cJSON_ArrayForEach(a, arr) {
    char ctx[48];
    snprintf(ctx, sizeof ctx, "axisDescriptors[%d]", d);
    vds_axis *ax = &l->axes[d];
    const char *name = "", *unit = "";
    if (!cJSON_IsObject(a)) return vd_fail(err, VD_INVALID, "%s: %s is not an object", where, ctx);
    if (vd_json_int(a, "numSamples", where, ctx, &ax->samples, err) ||
        vd_json_opt_str(a, "name", where, ctx, &name, err) ||
        vd_json_opt_str(a, "unit", where, ctx, &unit, err) ||
        vd_json_opt_num(a, "coordinateMin", where, ctx, &ax->cmin, err) ||
        vd_json_opt_num(a, "coordinateMax", where, ctx, &ax->cmax, err))
      return err->code;
    if (ax->samples < 1 || ax->samples > 100000000)
      return vd_fail(err, VD_INVALID, "%s: %s: numSamples %lld out of range", where, ctx, (long long)ax->samples);
    if (!(ax->name = strdup(name)) || !(ax->unit = strdup(unit))) return vd_nomem(err);
    d++;
  }
  return VD_OK;
}

static vd_code parse_channel(const cJSON *c, int idx, const char *where, vds_channel *ch, vd_err *err) {
  char ctx[48];
  snprintf(ctx, sizeof ctx, "channelDescriptors[%d]", idx);
  if (!cJSON_IsObject(c)) return vd_fail(err, VD_INVALID, "%s: %s is not an object", where, ctx);
  const char *fmt, *comp = "Components_1", *map = "Direct", *name = "", *unit = "";
  int64_t mv = 1;
  ch->scale = 1;
  if (vd_json_str(c, "format", where, ctx, &fmt, err) ||
      vd_json_opt_str(c, "components", where, ctx, &comp, err) ||
      vd_json_opt_str(c, "channelMapping", where, ctx, &map, err) ||
      vd_json_opt_str(c, "name", where, ctx, &name, err) ||
      vd_json_opt_str(c, "unit", where, ctx, &unit, err) ||
      vd_json_opt_int(c, "mappedValues", where, ctx, &mv, err) ||
      vd_json_opt_bool(c, "discrete", where, ctx, &ch->discrete, err) ||
      vd_json_opt_bool(c, "renderable", where, ctx, &ch->renderable, err) ||
      vd_json_opt_bool(c, "allowLossyCompression", where, ctx, &ch->lossy, err) ||
      vd_json_opt_bool(c, "useNoValue", where, ctx, &ch->use_no_value, err) ||
      vd_json_opt_num(c, "noValue", where, ctx, &ch->no_value, err) ||
      vd_json_opt_num(c, "integerScale", where, ctx, &ch->scale, err) ||
      vd_json_opt_num(c, "integerOffset", where, ctx, &ch->offset, err))
    return err->code;
  ch->format = -1;
  for (int f = 0; f <= VDS_F_U64; f++) {
    char full[32];
    snprintf(full, sizeof full, "Format_%s", format_names[f]);
    if (strcmp(fmt, full) == 0) ch->format = f;
  }
  if (ch->format < 0) return vd_fail(err, VD_INVALID, "%s: %s: unknown format \"%s\"", where, ctx, fmt);
  long k = suffix_num(comp, "Components_");
  if (k < 0) k = suffix_num(comp, "Component_"); /* the spec text's spelling */
  if (k != 1 && k != 2 && k != 4)
    return vd_fail(err, VD_INVALID, "%s: %s: unknown components \"%s\"", where, ctx, comp);
  ch->components = (int)k;
  if (strcmp(map, "Direct") == 0)
    ch->per_trace = 0;
  else if (strcmp(map, "PerTrace") == 0)
    ch->per_trace = 1;
  else
    return vd_fail(err, VD_INVALID, "%s: %s: unknown channelMapping \"%s\"", where, ctx, map);
  if (ch->per_trace && (mv < 1 || mv > 4096))
    return vd_fail(err, VD_INVALID, "%s: %s: mappedValues %lld out of range", where, ctx, (long long)mv);
  ch->mapped_values = (int)mv;
  const cJSON *vr = cJSON_GetObjectItemCaseSensitive(c, "valueRange");
  if (vr) {
    if (!cJSON_IsArray(vr) || cJSON_GetArraySize(vr) != 2 || !cJSON_IsNumber(cJSON_GetArrayItem(vr, 0)) ||
        !cJSON_IsNumber(cJSON_GetArrayItem(vr, 1)))
      return vd_fail(err, VD_INVALID, "%s: %s: \"valueRange\" must be [min, max]", where, ctx);
    ch->vmin = cJSON_GetArrayItem(vr, 0)->valuedouble;
    ch->vmax = cJSON_GetArrayItem(vr, 1)->valuedouble;
  }
  if (!(ch->name = strdup(name)) || !(ch->unit = strdup(unit))) return vd_nomem(err);
  return VD_OK;
}

static vd_code parse_metadata(const cJSON *arr, const char *where, vds_layout *l, vd_err *err) {
  if (!arr) return VD_OK;
  if (!cJSON_IsArray(arr)) return vd_fail(err, VD_INVALID, "%s: \"metadata\" is not an array", where);
  int n = cJSON_GetArraySize(arr), i = 0;
  l->meta = calloc(n ? n : 1, sizeof *l->meta);
  if (!l->meta) return vd_nomem(err);
  const cJSON *m;
  cJSON_ArrayForEach(m, arr) {
    char ctx[48];
    snprintf(ctx, sizeof ctx, "metadata[%d]", i);
    const char *cat = "", *name, *type;
    if (!cJSON_IsObject(m)) return vd_fail(err, VD_INVALID, "%s: %s is not an object", where, ctx);
    if (vd_json_opt_str(m, "category", where, ctx, &cat, err) || vd_json_str(m, "name", where, ctx, &name, err) ||
        vd_json_str(m, "type", where, ctx, &type, err))
      return err->code;
    vds_metadata_item *it = &l->meta[l->nmeta++];
    it->value = cJSON_GetObjectItemCaseSensitive(m, "value");
    if (!(it->category = dup_or_empty(cat)) || !(it->name = strdup(name)) || !(it->type = strdup(type)))
      return vd_nomem(err);
    i++;
  }
  return VD_OK;
}

vd_code vds_parse_layout(const char *json, size_t len, const char *where, vds_layout *l, vd_err *err) {
  memset(l, 0, sizeof *l);
  cJSON *doc;
  if (vd_json_parse(json, len, where, &doc, err)) return err->code;
  l->doc = doc;
  if (!cJSON_IsObject(doc)) {
    vd_fail(err, VD_INVALID, "%s: the document is not a JSON object", where);
    goto fail;
  }
  if (parse_descriptor(cJSON_GetObjectItemCaseSensitive(doc, "layoutDescriptor"), where, l, err) ||
      parse_axes(cJSON_GetObjectItemCaseSensitive(doc, "axisDescriptors"), where, l, err))
    goto fail;
  const cJSON *chs = cJSON_GetObjectItemCaseSensitive(doc, "channelDescriptors");
  if (!cJSON_IsArray(chs) || cJSON_GetArraySize(chs) < 1) {
    vd_fail(err, VD_INVALID, "%s: \"channelDescriptors\" is missing or empty", where);
    goto fail;
  }
  int n = cJSON_GetArraySize(chs), i = 0;
  if (!(l->channels = calloc(n, sizeof *l->channels))) {
    vd_nomem(err);
    goto fail;
  }
  const cJSON *c;
  cJSON_ArrayForEach(c, chs) {
    l->nchannels = i + 1;
    if (parse_channel(c, i, where, &l->channels[i], err)) goto fail;
    i++;
  }
  if (l->channels[0].per_trace) {
    vd_fail(err, VD_INVALID, "%s: the primary channel must be Direct", where);
    goto fail;
  }
  if (l->full_res_dim >= l->dims) {
    vd_fail(err, VD_INVALID, "%s: fullResolutionDimension %d is not a dimension", where, l->full_res_dim);
    goto fail;
  }
  if (parse_metadata(cJSON_GetObjectItemCaseSensitive(doc, "metadata"), where, l, err)) goto fail;
  return VD_OK;
fail:
  vds_layout_free(l);
  return err->code;
}

void vds_layout_free(vds_layout *l) {
  for (int d = 0; d < VDS_MAXDIM; d++) {
    free(l->axes[d].name);
    free(l->axes[d].unit);
  }
  for (int c = 0; c < l->nchannels; c++) {
    free(l->channels[c].name);
    free(l->channels[c].unit);
  }
  free(l->channels);
  for (int m = 0; m < l->nmeta; m++) {
    free(l->meta[m].category);
    free(l->meta[m].name);
    free(l->meta[m].type);
  }
  free(l->meta);
  cJSON_Delete(l->doc);
  memset(l, 0, sizeof *l);
}
