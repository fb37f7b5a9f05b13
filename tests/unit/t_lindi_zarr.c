/* lindi_zarr.c: a Zarr v2 .zarray read as the Zarr v2 spec defines it: the chunk grid
 * rounds up (edge chunks are whole), keys join decimal indices with the
 * dimension_separator, "0" is a 0-d array's one chunk; item sizes as numpy's typestr
 * gives them ("<U5": 5 UCS-4 characters, 20 bytes; "<M8[ns]": 8); a chunk is raw only
 * when compressor is null and filters are null or empty. */
#include <string.h>

#include "formats/lindi/lindi_zarr.h"
#include "tap.h"

static int parse(const char *text, lindi_zarray *z, char *why) {
  return lindi_zarray_parse(text, strlen(text), z, why, 200);
}

static int64_t bytes_of(const char *dtype) {
  char t[300], why[200];
  lindi_zarray z;
  snprintf(t, sizeof t, "{\"shape\": [4], \"chunks\": [2], \"dtype\": \"%s\", \"compressor\": null}", dtype);
  return parse(t, &z, why) ? -2 : lindi_zarray_chunk_bytes(&z);
}

int main(void) {
  lindi_zarray z;
  char why[200];
  ok(bytes_of("<f8") == 16 && bytes_of("|u1") == 2 && bytes_of("<c16") == 32 && bytes_of("|S10") == 20,
     "chunk bytes: 2 elements of <f8, |u1, <c16, |S10");
  ok(bytes_of("<U5") == 40 && bytes_of("<M8[ns]") == 16, "<U5 is 20 bytes an element, <M8[ns] 8");
  ok(bytes_of("|O") == -1 && bytes_of("<x4") == -1, "object and unknown kinds: no chunk size");

  ok(!parse("{\"shape\": [4, 3], \"chunks\": [2, 2], \"dtype\": \"<i4\", \"compressor\": null, \"filters\": [],"
            " \"dimension_separator\": \"/\"}", &z, why) && z.ndim == 2 && z.raw && z.sep == '/',
     "a 2-d raw array with '/' keys parses");
  ok(lindi_zarray_nchunks(&z) == 4 && lindi_zarray_chunk_bytes(&z) == 16, "shape [4, 3] chunks [2, 2]: 4 chunks of 16 bytes");
  ok(lindi_zarray_is_chunk(&z, "1/1") && lindi_zarray_is_chunk(&z, "0/0"), "1/1 and 0/0 are chunks");
  ok(!lindi_zarray_is_chunk(&z, "1.1") && !lindi_zarray_is_chunk(&z, "2/0") && !lindi_zarray_is_chunk(&z, "01/0") &&
     !lindi_zarray_is_chunk(&z, "0/-1") && !lindi_zarray_is_chunk(&z, "0/0/") && !lindi_zarray_is_chunk(&z, "0"),
     "not chunks: another separator, outside the grid, a leading zero, a sign, a trailing separator, too few indices");
  char key[100];
  int64_t idx[2] = {1, 0};
  lindi_zarray_key(&z, idx, key);
  ok(strcmp(key, "1/0") == 0, "the key of (1, 0) is 1/0 (%s)", key);

  ok(!parse("{\"shape\": [], \"chunks\": [], \"dtype\": \"<f4\", \"compressor\": null}", &z, why) &&
     lindi_zarray_nchunks(&z) == 1 && lindi_zarray_is_chunk(&z, "0") && !lindi_zarray_is_chunk(&z, "1") &&
     z.sep == '.',
     "a 0-d array: one chunk, 0; '.' by default");
  lindi_zarray_key(&z, idx, key);
  ok(strcmp(key, "0") == 0, "its key is 0");
  ok(!parse("{\"shape\": [0, 5], \"chunks\": [3, 3], \"dtype\": \"<f4\"}", &z, why) && lindi_zarray_nchunks(&z) == 0 &&
     !z.raw, "an empty array has no chunks; no compressor key is not raw");
  ok(!parse("{\"shape\": [5], \"chunks\": [5], \"dtype\": \"<f4\", \"compressor\": null, \"filters\": [{\"id\": "
            "\"delta\"}]}", &z, why) && !z.raw, "a filter makes it not raw");

  ok(parse("{\"shape\": [", &z, why) && strstr(why, "JSON"), "no JSON: %s", why);
  ok(parse("[1]", &z, why) && strstr(why, "object"), "no object: %s", why);
  ok(parse("{\"shape\": [4], \"chunks\": [2]}", &z, why) && strstr(why, "dtype"), "no dtype: %s", why);
  ok(parse("{\"chunks\": [2], \"dtype\": \"<i4\"}", &z, why) && strstr(why, "shape"), "no shape: %s", why);
  ok(parse("{\"shape\": [4], \"chunks\": [0], \"dtype\": \"<i4\"}", &z, why) && strstr(why, "chunks"),
     "chunks of 0: %s", why);
  ok(parse("{\"shape\": [-1], \"chunks\": [1], \"dtype\": \"<i4\"}", &z, why) && strstr(why, "shape"),
     "a negative shape: %s", why);
  ok(parse("{\"shape\": [4, 4], \"chunks\": [2], \"dtype\": \"<i4\"}", &z, why) && strstr(why, "length"),
     "chunks of another length than shape: %s", why);
  ok(parse("{\"shape\": [4.5], \"chunks\": [2], \"dtype\": \"<i4\"}", &z, why), "a shape that is no integer");
  ok(!parse("{\"shape\": [4000000000000], \"chunks\": [1], \"dtype\": \"<i4\"}", &z, why) &&
     lindi_zarray_nchunks(&z) == 4000000000000LL, "4e12 chunks counted without overflow");
  return done_testing();
}
