/* The Python-style JSON writer and its kept literals (util/pyjson.h): strings written
 * as Python's json.dumps writes them (the expected text below is Python's own output),
 * and values that cJSON cannot hold as written (a \u0000, an escape Python would not
 * use, 1.0) written back exactly as read and decoded with their length. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/lindi/lindi.h"
#include "tap.h"
#include "util/pyjson.h"

static int text_is(const vd_buf *b, const char *want) {
  return b->len == strlen(want) && memcmp(b->data, want, b->len) == 0;
}

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

int main(void) {
  vd_buf b = {0};

  /* every ASCII control character, quote, backslash, slash, DEL, and past ASCII: the
   * expected text is json.dumps(s) of Python 3 */
  char s[64];
  size_t n = 0;
  for (int c = 0; c < 32; c++) s[n++] = (char)c;
  memcpy(s + n, " \"\\/~\x7f\xc3\xa9\xe2\x98\x83\xf0\x9f\x98\x80", 15);
  n += 15;
  ok(vd_pyjson_string_n(&b, s, n) == 0 &&
         text_is(&b, "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f"
                     "\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c"
                     "\\u001d\\u001e\\u001f \\\"\\\\/~\\u007f\\u00e9\\u2603\\ud83d\\ude00\""),
     "vd_pyjson_string_n writes what Python's json.dumps writes (NUL, \\b \\t \\n \\f \\r, DEL, a surrogate pair)");
  b.len = 0;
  vd_pyjson_string_n(&b, "\xed\xa0\x80\xff", 4);
  ok(text_is(&b, "\"\\u00ed\\u00a0\\u0080\\u00ff\""), "bytes that are not UTF-8 (an encoded surrogate) never make "
     "a \\ud800 escape JSON readers refuse");

  /* kept literals: only under "refs", only where vd_pyjson would write otherwise */
  const char *text = "\xEF\xBB\xBF{\"refs\": {\"slash\": \"x\\/y\", \"upper\": \"\\u00E9\", \"nul\": \"a\\u0000b\","
                     " \"nums\": [1.0, 1e2, -0, 10, 0.1, 123456789012345678], \"plain\": \"hi\", \"raw\": \"\xc3\xa9\","
                     " \"esc\": \"tab\\there\", \"lit\": \"ab\\\\u0000\", \"two\": \"\\u0000\\u0000\","
                     " \"obj\": {\"deep\": \"q\\u0000\", \"k\": null}, \"t\": true},"
                     " \"other\": \"\\/\", \"n\": 1.0}";
  cJSON *doc = cJSON_Parse(text + 3);
  ok(doc && vd_pyjson_keep(doc, text, strlen(text), "refs", NULL) == 0, "vd_pyjson_keep walks a document (after a BOM)");
  const cJSON *r = get(doc, "refs"), *nums = get(r, "nums");
  ok(cJSON_IsRaw(get(r, "slash")) && cJSON_IsRaw(get(r, "upper")) && cJSON_IsRaw(get(r, "nul")) &&
         cJSON_IsRaw(get(r, "raw")) && cJSON_IsRaw(get(r, "two")) && cJSON_IsRaw(get(get(r, "obj"), "deep")),
     "kept: \\/, \\u00E9 (Python writes \\u00e9), a \\u0000, raw UTF-8, a nested \\u0000");
  ok(cJSON_IsString(get(r, "plain")) && cJSON_IsString(get(r, "esc")) && cJSON_IsString(get(r, "lit")) &&
         cJSON_IsString(get(doc, "other")) && cJSON_IsNumber(get(doc, "n")),
     "not kept: what Python writes the same (\\t, an escaped backslash before u0000), nor anything outside refs");
  ok(cJSON_IsRaw(cJSON_GetArrayItem(nums, 0)) && cJSON_IsRaw(cJSON_GetArrayItem(nums, 1)) &&
         cJSON_IsRaw(cJSON_GetArrayItem(nums, 2)) && cJSON_IsNumber(cJSON_GetArrayItem(nums, 3)) &&
         cJSON_IsNumber(cJSON_GetArrayItem(nums, 4)) && cJSON_IsRaw(cJSON_GetArrayItem(nums, 5)),
     "numbers: 1.0, 1e2, -0 and an integer past 2^53 kept, 10 and 0.1 (written as Python writes them) not");
  double d = 0;
  ok(vd_pyjson_number(cJSON_GetArrayItem(nums, 1), &d) == 0 && d == 100 &&
         vd_pyjson_number(cJSON_GetArrayItem(nums, 3), &d) == 0 && d == 10 && vd_pyjson_number(get(r, "nul"), &d) == 1,
     "vd_pyjson_number reads kept and plain numbers, not strings");

  ok(vd_pyjson_bytes(get(r, "nul"), &b) == 0 && b.len == 3 && memcmp(b.data, "a\0b", 3) == 0,
     "\"a\\u0000b\" is 3 bytes");
  ok(vd_pyjson_bytes(get(r, "two"), &b) == 0 && b.len == 2 && memcmp(b.data, "\0\0", 2) == 0,
     "\"\\u0000\\u0000\" is 2 NUL bytes");
  ok(vd_pyjson_bytes(get(r, "lit"), &b) == 0 && b.len == 8 && memcmp(b.data, "ab\\u0000", 8) == 0,
     "\"ab\\\\u0000\" is an escaped backslash and u0000, no NUL");
  ok(vd_pyjson_bytes(get(r, "upper"), &b) == 0 && b.len == 2 && memcmp(b.data, "\xc3\xa9", 2) == 0 &&
         vd_pyjson_bytes(get(r, "slash"), &b) == 0 && text_is(&b, "x/y"),
     "other kept strings decode as cJSON decodes them");
  ok(vd_pyjson_bytes(get(r, "t"), &b) == 1 && vd_pyjson_bytes(nums, &b) == 1, "vd_pyjson_bytes: no string, 1");

  ok(vd_pyjson(get(r, "obj"), &b) == 0 && text_is(&b, "{\n  \"deep\": \"q\\u0000\",\n  \"k\": null\n}"),
     "vd_pyjson writes kept literals verbatim");
  cJSON *dup = cJSON_Duplicate(doc, 1);
  vd_buf b2 = {0};
  ok(dup && vd_pyjson(doc, &b) == 0 && vd_pyjson(dup, &b2) == 0 && b.len == b2.len &&
         memcmp(b.data, b2.data, b.len) == 0 && strstr((char *)b.data, "\"slash\": \"x\\/y\"") &&
         strstr((char *)b.data, "1.0,\n      1e2,\n      -0,\n      10,\n      0.1,\n      123456789012345678\n") &&
         strstr((char *)b.data, "\"other\": \"/\""),
     "a copy (savepoints) writes the same text, literals as read");
  cJSON_Delete(dup);
  vd_buf_free(&b2);
  cJSON_Delete(doc);

  /* a raw NUL byte inside a string: not JSON, though cJSON takes it */
  static const char rawnul[] = "{\"refs\": {\"a\": \"x\0y\"}}";
  doc = cJSON_ParseWithLength(rawnul, sizeof rawnul - 1);
  size_t at = 0;
  ok(doc && vd_pyjson_keep(doc, rawnul, sizeof rawnul - 1, "refs", &at) == -2 && at == 15,
     "a raw NUL byte in a string is refused, at the string's offset");
  cJSON_Delete(doc);
  /* cJSON reads a bad hex digit as U+0000 and goes on; Python's json refuses it */
  const char *badhex = "{\"refs\": {\"a\": \"x\\u01g0y\", \"b\": \"\\u01f\\\\u0000\"}}";
  doc = cJSON_Parse(badhex);
  ok(doc && vd_pyjson_keep(doc, badhex, strlen(badhex), "refs", &at) == -2 && at == 15,
     "an escape with a bad hex digit (which cJSON takes) is refused");
  cJSON_Delete(doc);

  cJSON *node = vd_pyjson_string_node("a\0b", 3), *plain = vd_pyjson_string_node("ab", 2);
  ok(cJSON_IsRaw(node) && strcmp(node->valuestring, "\"a\\u0000b\"") == 0 && cJSON_IsString(plain) &&
         strcmp(plain->valuestring, "ab") == 0 && vd_pyjson_bytes(node, &b) == 0 && b.len == 3 &&
         memcmp(b.data, "a\0b", 3) == 0,
     "vd_pyjson_string_node: bytes with a NUL become a literal that decodes back to them");
  cJSON_Delete(node);
  cJSON_Delete(plain);

  /* lindi's form of a document round-trips exactly: Python's json.dumps(indent=2,
   * sort_keys=True) of {"refs": {"a": "\0", "b": [1.5, 2]}, "version": 1} */
  const char *py = "{\n  \"refs\": {\n    \"a\": \"\\u0000\",\n    \"b\": [\n      1.5,\n      2\n    ]\n  },\n"
                   "  \"version\": 1\n}";
  doc = cJSON_Parse(py);
  ok(doc && vd_pyjson_keep(doc, py, strlen(py), "refs", NULL) == 0 && vd_pyjson(doc, &b) == 0 && text_is(&b, py),
     "a lindi.json as Python writes it is written back byte for byte");
  cJSON_Delete(doc);
  vd_buf_free(&b);
  /* floats as Python writes them: the expected text is json.dumps(v) of Python 3.11 */
  static const struct {
    double v;
    const char *py;
  } fl[] = {{0.1, "0.1"}, {-0.1, "-0.1"}, {0.5, "0.5"}, {2.5e-5, "2.5e-05"}, {1e-5, "1e-05"},
            {0.0001, "0.0001"}, {0.00012345, "0.00012345"}, {1e16, "1e+16"}, {1.5e16, "1.5e+16"},
            {9.5e15, "9500000000000000.0"}, {123456.789, "123456.789"}, {1.0 / 3, "0.3333333333333333"},
            {2.0 / 3, "0.6666666666666666"}, {1e300, "1e+300"}, {-1e-300, "-1e-300"}, {5e-324, "5e-324"},
            {1.7976931348623157e308, "1.7976931348623157e+308"}, {0.1 + 0.2, "0.30000000000000004"},
            {1e22, "1e+22"}, {12345678901234567890.0, "1.2345678901234567e+19"}, {3.14159, "3.14159"},
            {-2.5, "-2.5"}, {9007199254740993.0, "9007199254740992.0"}, {1e-7, "1e-07"},
            {1.234e-10, "1.234e-10"}, {4.35, "4.35"}, {0.001, "0.001"}, {123456789012.5, "123456789012.5"}};
  int fl_ok = 1;
  for (size_t i = 0; i < sizeof fl / sizeof *fl; i++) {
    cJSON *num = cJSON_CreateNumber(fl[i].v);
    int good = num && vd_pyjson(num, &b) == 0 && text_is(&b, fl[i].py);
    if (!good) diag("%s: got %.*s", fl[i].py, (int)b.len, b.data ? (char *)b.data : "");
    fl_ok &= good;
    cJSON_Delete(num);
  }
  ok(fl_ok, "non-integers written as Python's json.dumps writes them (shortest round trip, its exponent rules)");
  /* every finite double: the text reads back as the same double, and one digit fewer
   * never does (the shortest form), over 200,000 random bit patterns */
  unsigned long long x = 88172645463325252ull;
  int rt_ok = 1, shortest_ok = 1;
  for (int i = 0; i < 200000 && rt_ok && shortest_ok; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    double v;
    memcpy(&v, &x, sizeof v);
    if (!isfinite(v) || v == floor(v)) continue;
    cJSON *num = cJSON_CreateNumber(v);
    if (!num || vd_pyjson(num, &b)) rt_ok = 0;
    cJSON_Delete(num);
    if (!rt_ok) break;
    char txt[64];
    snprintf(txt, sizeof txt, "%.*s", (int)b.len, (char *)b.data);
    if (strtod(txt, NULL) != v) {
      diag("%s does not read back as %.17g", txt, v);
      rt_ok = 0;
    }
    int digits = 0;
    for (const char *c = txt; *c && *c != 'e'; c++) digits += *c >= '0' && *c <= '9';
    for (const char *c = txt; *c == '0' || *c == '-' || *c == '.'; c++) digits -= *c == '0';
    char fewer[64];
    if (digits > 1) {
      snprintf(fewer, sizeof fewer, "%.*e", digits - 2, v);
      if (strtod(fewer, NULL) == v) {
        diag("%s: %s is shorter", txt, fewer);
        shortest_ok = 0;
      }
    }
  }
  ok(rt_ok && shortest_ok, "200,000 random doubles: each written reads back exactly, and no shorter form does");
  vd_buf_free(&b);
  return done_testing();
}
