/* Strict cJSON accessors (see json.h). */
#include "json.h"

#include <math.h>
#include <string.h>

vd_code vd_json_parse(const char *text, size_t len, const char *where, cJSON **out, vd_err *err) {
  const char *end = NULL;
  *out = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!*out) {
    size_t at = end && end >= text ? (size_t)(end - text) : 0;
    if (len == 0) return vd_fail(err, VD_INVALID, "%s: empty document", where);
    return vd_fail(err, VD_INVALID, "%s: malformed JSON near byte %zu of %zu", where, at, len);
  }
  return VD_OK;
}

static vd_code missing(const char *key, const char *where, const char *ctx, vd_err *err) {
  return vd_fail(err, VD_INVALID, "%s: %s has no \"%s\"", where, ctx, key);
}

static vd_code wrong(const char *key, const char *want, const char *where, const char *ctx, vd_err *err) {
  return vd_fail(err, VD_INVALID, "%s: %s: \"%s\" must be %s", where, ctx, key, want);
}

static vd_code get_int(const cJSON *it, const char *key, const char *where, const char *ctx,
                       int64_t *out, vd_err *err) {
  if (!cJSON_IsNumber(it)) return wrong(key, "an integer", where, ctx, err);
  double d = it->valuedouble;
  if (!isfinite(d) || d != floor(d) || fabs(d) > 9.0e15) return wrong(key, "an integer", where, ctx, err);
  *out = (int64_t)d;
  return VD_OK;
}

vd_code vd_json_int(const cJSON *obj, const char *key, const char *where, const char *ctx,
                    int64_t *out, vd_err *err) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it) return missing(key, where, ctx, err);
  return get_int(it, key, where, ctx, out, err);
}

vd_code vd_json_opt_int(const cJSON *obj, const char *key, const char *where, const char *ctx,
                        int64_t *out, vd_err *err) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  return it ? get_int(it, key, where, ctx, out, err) : VD_OK;
}

vd_code vd_json_num(const cJSON *obj, const char *key, const char *where, const char *ctx,
                    double *out, vd_err *err) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it) return missing(key, where, ctx, err);
  if (cJSON_IsNull(it)) { /* jsoncpp writes NaN as null */
    *out = NAN;
    return VD_OK;
  }
  if (!cJSON_IsNumber(it)) return wrong(key, "a number", where, ctx, err);
  *out = it->valuedouble;
  return VD_OK;
}

vd_code vd_json_opt_num(const cJSON *obj, const char *key, const char *where, const char *ctx,
                        double *out, vd_err *err) {
  return cJSON_GetObjectItemCaseSensitive(obj, key) ? vd_json_num(obj, key, where, ctx, out, err) : VD_OK;
}

vd_code vd_json_str(const cJSON *obj, const char *key, const char *where, const char *ctx,
                    const char **out, vd_err *err) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it) return missing(key, where, ctx, err);
  if (!cJSON_IsString(it)) return wrong(key, "a string", where, ctx, err);
  *out = it->valuestring;
  return VD_OK;
}

vd_code vd_json_opt_str(const cJSON *obj, const char *key, const char *where, const char *ctx,
                        const char **out, vd_err *err) {
  return cJSON_GetObjectItemCaseSensitive(obj, key) ? vd_json_str(obj, key, where, ctx, out, err) : VD_OK;
}

vd_code vd_json_opt_bool(const cJSON *obj, const char *key, const char *where, const char *ctx,
                         int *out, vd_err *err) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it) return VD_OK;
  if (!cJSON_IsBool(it)) return wrong(key, "true or false", where, ctx, err);
  *out = cJSON_IsTrue(it);
  return VD_OK;
}
