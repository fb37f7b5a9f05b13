/* Fuzzes the ListObjectsV2 reader (vd_s3_parse_list): any bytes (a hostile or broken
 * S3 answer) give a listing or an error, never a crash or a leak; every key of a listing
 * is the part of a key after dir, and a page that says it is truncated has a token. */
#include <stdint.h>
#include <string.h>

#include "store/backend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vd_listing l = {0};
  vd_err err;
  static const char dir[] = "ds/";
  if (vd_s3_parse_list((const char *)data, size, dir, 3, &l, "s3://b/ds/", &err) == VD_OK) {
    for (int i = 0; i < l.n; i++)
      if (!l.ent[i].key) __builtin_trap();
    if (l.next && !l.next[0]) __builtin_trap();
  }
  vd_listing_free(&l);
  return 0;
}
