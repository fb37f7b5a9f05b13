/* Fuzzes the Python-style JSON writer used for lindi.json: any document cJSON parses
 * is written and must parse back to an equal document. */
#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "util/pyjson.h"

/* Strings must be valid UTF-8 for a faithful round trip (lindi.json is written from
 * values SQLite hands over, which are UTF-8 text or base64). */
static int utf8(const unsigned char *s) {
  while (*s) {
    int n = *s < 0x80 ? 1 : (*s & 0xe0) == 0xc0 ? 2 : (*s & 0xf0) == 0xe0 ? 3 : (*s & 0xf8) == 0xf0 ? 4 : 0;
    if (!n || (n == 2 && *s < 0xc2)) return 0;
    for (int k = 1; k < n; k++)
      if ((s[k] & 0xc0) != 0x80) return 0;
    if (n == 3) {
      unsigned c = (s[0] & 0x0f) << 12 | (s[1] & 0x3f) << 6 | (s[2] & 0x3f);
      if (c < 0x800 || (c >= 0xd800 && c < 0xe000)) return 0;
    }
    if (n == 4) {
      unsigned c = (s[0] & 0x07) << 18 | (s[1] & 0x3f) << 12 | (s[2] & 0x3f) << 6 | (s[3] & 0x3f);
      if (c < 0x10000 || c > 0x10ffff) return 0;
    }
    s += n;
  }
  return 1;
}

static int valid(const cJSON *v) {
  if (v->string && !utf8((const unsigned char *)v->string)) return 0;
  if (cJSON_IsString(v) && !utf8((const unsigned char *)v->valuestring)) return 0;
  if (cJSON_IsNumber(v) && !isfinite(v->valuedouble)) return 0;
  for (const cJSON *c = v->child; c; c = c->next) {
    if (!valid(c)) return 0;
    if (cJSON_IsObject(v)) /* duplicate keys: JSON leaves their meaning open */
      for (const cJSON *d = c->next; d; d = d->next)
        if (strcmp(c->string, d->string) == 0) return 0;
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON *j = cJSON_ParseWithLength((const char *)data, size);
  if (!j) return 0;
  if (!valid(j)) {
    cJSON_Delete(j);
    return 0;
  }
  vd_buf out = {0};
  if (vd_pyjson(j, &out) == 0) {
    cJSON *k = cJSON_ParseWithLength((const char *)out.data, out.len);
    if (!k || !cJSON_Compare(j, k, 1)) __builtin_trap();
    cJSON_Delete(k);
  }
  vd_buf_free(&out);
  cJSON_Delete(j);
  return 0;
}
