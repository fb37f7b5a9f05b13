/* Fuzzes lindi.json as lindi_refs reads it and the writer writes it back: the refs
 * parser (cJSON plus kept literals) never disagrees with cJSON, every string of a
 * document it takes decodes, and what vd_pyjson writes reads back to the same text and
 * the same ref values (a second pass changes nothing). */
#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "formats/lindi/lindi.h"
#include "util/pyjson.h"
#include "util/utf8.h"

/* Every string (kept or not) decodes; no number Python and cJSON would disagree on
 * (NaN, infinities are written as Python writes them, which cJSON does not read) and no
 * duplicate key (JSON leaves its meaning open; sorting may order the copies anew). */
static int check(const cJSON *v, vd_buf *tmp) {
  if (vd_pyjson_is_string(v) && vd_pyjson_bytes(v, tmp) != 0) __builtin_trap();
  if (cJSON_IsNumber(v) && !isfinite(v->valuedouble)) return 0;
  /* keys and strings that are not UTF-8 (no Python-written lindi.json has them) are
   * written with \u00XX escapes: other keys on reading, sorted elsewhere */
  if (v->string && !vd_utf8_valid(v->string, strlen(v->string))) return 0;
  if (cJSON_IsString(v) && !vd_utf8_valid(v->valuestring, strlen(v->valuestring))) return 0;
  for (const cJSON *c = v->child; c; c = c->next) {
    if (!check(c, tmp)) return 0;
    if (cJSON_IsObject(v))
      for (const cJSON *d = c->next; d; d = d->next)
        if (strcmp(c->string, d->string) == 0) return 0;
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vd_err err;
  cJSON *doc = NULL;
  if (lindi_parse_refs((const char *)data, size, "fuzz", &doc, &err) != VD_OK) {
    if (err.code == VD_ERROR) __builtin_trap(); /* the walk lost step with cJSON's parse */
    return 0;
  }
  vd_buf tmp = {0}, t1 = {0}, t2 = {0}, b1 = {0}, b2 = {0};
  if (check(doc, &tmp) && vd_pyjson(doc, &t1) == 0) {
    cJSON *again = NULL;
    if (lindi_parse_refs((const char *)t1.data, t1.len, "again", &again, &err) != VD_OK) __builtin_trap();
    if (vd_pyjson(again, &t2) != 0 || t1.len != t2.len || memcmp(t1.data, t2.data, t1.len) != 0) __builtin_trap();
    const cJSON *r1 = cJSON_GetObjectItemCaseSensitive(doc, "refs"), *r2 = cJSON_GetObjectItemCaseSensitive(again, "refs");
    if (cJSON_IsObject(r1)) {
      for (const cJSON *a = r1->child; a; a = a->next) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(r2, a->string);
        if (!vd_pyjson_is_string(a)) continue;
        if (!b || vd_pyjson_bytes(a, &b1) || vd_pyjson_bytes(b, &b2) || b1.len != b2.len ||
            memcmp(b1.data, b2.data, b1.len) != 0)
          __builtin_trap();
      }
    }
    cJSON_Delete(again);
  }
  vd_buf_free(&tmp);
  vd_buf_free(&t1);
  vd_buf_free(&t2);
  vd_buf_free(&b1);
  vd_buf_free(&b2);
  cJSON_Delete(doc);
  return 0;
}
