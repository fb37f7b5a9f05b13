/* Python-style JSON output (see pyjson.h). cJSON's own printer uses tabs and keeps
 * insertion order, so lindi's layout needs this small writer. */
#include "pyjson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../formats/lindi.h"

static int cmp(const void *a, const void *b) {
  return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

static void indent(vd_buf *o, int level) {
  vd_buf_append(o, "\n", 1);
  for (int i = 0; i < level; i++) vd_buf_append(o, "  ", 2);
}

static int emit(const cJSON *v, vd_buf *o, int level) {
  char tmp[64];
  if (cJSON_IsNull(v) || cJSON_IsInvalid(v)) {
    vd_buf_append(o, "null", 4);
  } else if (cJSON_IsTrue(v)) {
    vd_buf_append(o, "true", 4);
  } else if (cJSON_IsFalse(v)) {
    vd_buf_append(o, "false", 5);
  } else if (cJSON_IsNumber(v)) {
    double d = v->valuedouble;
    if (d == floor(d) && fabs(d) < 9.0e15)
      snprintf(tmp, sizeof tmp, "%lld", (long long)d);
    else if (isfinite(d))
      snprintf(tmp, sizeof tmp, "%.17g", d);
    else
      snprintf(tmp, sizeof tmp, "%s", isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
    vd_buf_append(o, tmp, strlen(tmp));
  } else if (cJSON_IsString(v)) {
    lindi_json_string(o, v->valuestring);
  } else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
    int obj = cJSON_IsObject(v), n = cJSON_GetArraySize(v), i = 0;
    if (!n) {
      vd_buf_append(o, obj ? "{}" : "[]", 2);
      return 0;
    }
    const cJSON **items = malloc(n * sizeof *items), *c;
    if (!items) return -1;
    cJSON_ArrayForEach(c, v) items[i++] = c;
    if (obj) qsort(items, n, sizeof *items, cmp);
    vd_buf_append(o, obj ? "{" : "[", 1);
    for (i = 0; i < n; i++) {
      if (i) vd_buf_append(o, ",", 1);
      indent(o, level + 1);
      if (obj) {
        lindi_json_string(o, items[i]->string);
        vd_buf_append(o, ": ", 2);
      }
      if (emit(items[i], o, level + 1)) {
        free(items);
        return -1;
      }
    }
    free(items);
    indent(o, level);
    vd_buf_append(o, obj ? "}" : "]", 1);
  }
  return 0;
}

int vd_pyjson(const cJSON *v, vd_buf *out) {
  out->len = 0;
  if (emit(v, out, 0)) return -1;
  return out->data ? 0 : -1;
}
