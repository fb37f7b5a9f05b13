/* Fuzzes the LINDI entry and index parsers: the first 1024 bytes are a .tar_entry.json,
 * the rest a .tar_index.json. Properties:
 *   - the streaming reader fed the index in random-sized pieces (sizes drawn from the
 *     input's own bytes) gives what the whole text gives: the same code, the same error
 *     message (byte offset included), the same entries and the same text length;
 *   - an index it accepts, cJSON accepts too, with the same entries (the DOM reading the
 *     reader replaced, kept here as the oracle; inputs with \u0000 are left out: cJSON
 *     cuts a key or name there);
 *   - an index that parses is formatted the way vdsql writes it and parses back to the
 *     same entries. */
#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "formats/lindi/lindi.h"
#include "formats/tar/tar.h"

typedef struct pieces {
  const uint8_t *p;
  size_t n;
  uint32_t rng;
} pieces;

static vd_code more(void *ctx, const unsigned char **p, size_t *n, vd_err *err) {
  pieces *s = ctx;
  s->rng = s->rng * 1103515245u + 12345u;
  unsigned r = s->rng >> 16;
  size_t k = r % 4 == 0 ? 1 : r % 4 == 1 ? r % 7 + 1 : r % 4 == 2 ? r % 61 + 1 : r % 1500 + 1;
  if (k > s->n) k = s->n;
  *p = s->p, *n = k;
  s->p += k, s->n -= k;
  return VD_OK;
}

static int same(const lindi_index *a, const lindi_index *b) {
  if (a->n != b->n) return 0;
  for (int i = 0; i < a->n; i++)
    if (strcmp(a->files[i].name, b->files[i].name) || a->files[i].o != b->files[i].o ||
        a->files[i].d != b->files[i].d || a->files[i].s != b->files[i].s)
      return 0;
  return 1;
}

static int cjson_int(const cJSON *o, const char *k, int64_t *v) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!cJSON_IsNumber(it)) return -1;
  double d = it->valuedouble;
  if (!isfinite(d) || d != floor(d) || fabs(d) > 9.0e15) return -1;
  *v = (int64_t)d;
  return 0;
}

/* The entries as the cJSON reading took them; 0 when it refused the index. */
static int oracle(const char *text, size_t len, const lindi_index *ix) {
  cJSON *doc = cJSON_ParseWithLengthOpts(text, len, NULL, 0);
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(doc, "files"), *f;
  int ok = cJSON_IsArray(files), i = 0;
  if (!ok) files = NULL;
  cJSON_ArrayForEach(f, files) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(f, "n");
    int64_t o, d, s;
    if (!ok || i >= ix->n || !cJSON_IsString(n) || cjson_int(f, "o", &o) || cjson_int(f, "d", &d) ||
        cjson_int(f, "s", &s) || strcmp(n->valuestring, ix->files[i].name) || o != ix->files[i].o ||
        d != ix->files[i].d || s != ix->files[i].s)
      ok = 0;
    i++;
  }
  cJSON_Delete(doc);
  return doc && ok && i == ix->n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vd_err err;
  int64_t o = 1536, d = 2048, s = 8192;
  size_t e = size < LINDI_ENTRY_SIZE ? size : LINDI_ENTRY_SIZE;
  lindi_parse_entry((const char *)data, e, "entry", &o, &d, &s, &err);
  if (size <= LINDI_ENTRY_SIZE) return 0;
  const char *text = (const char *)data + LINDI_ENTRY_SIZE;
  size_t len = size - LINDI_ENTRY_SIZE;
  lindi_index ix = {0};
  ix.io = o, ix.id = d, ix.is = s;
  int64_t tl = -1;
  vd_code rc = lindi_read_index(more, &(pieces){(const uint8_t *)text, len, (uint32_t)len}, (int64_t)len, "index",
                                &ix, &tl, &err);
  /* the same text in other pieces and whole */
  vd_err err2;
  lindi_index ix2 = {0};
  ix2.io = o, ix2.id = d, ix2.is = s;
  int64_t tl2 = -1;
  vd_code rc2 = lindi_read_index(more, &(pieces){(const uint8_t *)text, len, data[0] * 7919u + (uint32_t)size},
                                 (int64_t)len, "index", &ix2, &tl2, &err2);
  if (rc != rc2 || (rc && strcmp(err.msg, err2.msg)) || (!rc && (tl != tl2 || !same(&ix, &ix2)))) __builtin_trap();
  lindi_index_free(&ix2);
  ix2.io = o, ix2.id = d, ix2.is = s;
  rc2 = lindi_parse_index(text, len, "index", &ix2, &err2);
  if (rc != rc2 || (rc && strcmp(err.msg, err2.msg)) || (!rc && !same(&ix, &ix2))) __builtin_trap();
  lindi_index_free(&ix2);
  if (!rc && !memmem(text, len, "\\u0000", 6) && !oracle(text, len, &ix)) __builtin_trap();
  /* packing keeps every entry and lookups */
  if (!rc) {
    lindi_index ix3 = {0};
    ix3.io = o, ix3.id = d, ix3.is = s;
    if (lindi_parse_index(text, len, "index", &ix3, &err2) != VD_OK) __builtin_trap();
    vd_blob *b = lindi_index_pack(&ix3);
    if (!b || !same(&ix, &ix3)) __builtin_trap();
    lindi_index ix4 = {0};
    lindi_index_borrow(&ix4, b);
    for (int i = 0; i < ix.n; i++)
      if (lindi_find(&ix4, ix.files[i].name) != &ix4.files[i]) __builtin_trap();
    lindi_index_free(&ix4);
    lindi_index_free(&ix3);
    vd_blob_unref(b);
  }
  /* the round trip holds for indexes whose names the writer could store */
  int valid = rc == VD_OK;
  if (valid) {
    for (int i = 0; i < ix.n && valid; i++)
      valid = tar_check_name(ix.files[i].name, strlen(ix.files[i].name), &err) == VD_OK ||
              strcmp(ix.files[i].name, LINDI_ENTRY_NAME) == 0 || strcmp(ix.files[i].name, LINDI_INDEX_NAME) == 0;
  }
  if (valid && ix.n) {
    vd_buf out = {0};
    if (lindi_format_index(ix.files, ix.n, &out, &err) != VD_OK) __builtin_trap();
    lindi_index back = {0};
    back.io = o, back.id = d, back.is = s;
    if (lindi_parse_index((const char *)out.data, out.len, "again", &back, &err) != VD_OK || !same(&back, &ix))
      __builtin_trap();
    lindi_index_free(&back);
    vd_buf_free(&out);
  }
  lindi_index_free(&ix);
  return 0;
}
