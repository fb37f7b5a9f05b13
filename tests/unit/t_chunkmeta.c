/* vdschunkmetadata values (spec section 5) and adaptive level prefixes (section 4),
 * with the spec's own examples. */
#include <string.h>

#include "formats/openvds/openvds_objects.h"
#include "tap.h"

static void meta(void) {
  uint64_t h = 0;
  unsigned char lv[16];
  ok(vds_meta_decode("AACAPwEBAQE=", 12, 8, &h, lv) == 0 && h == 0x010101013f800000ull,
     "AACAPwEBAQE= is the constant 1.0 hash");
  ok(vds_meta_decode("//////////8=", 12, 8, &h, NULL) == 0 && h == 0xffffffffffffffffull, "//////////8= is NoValue");
  ok(vds_meta_decode("AAAAAAAAAAA=", 12, 8, &h, NULL) == -1, "hash 0 (unknown) is no usable metadata");
  ok(vds_meta_decode("AACAPwEBAQE", 11, 8, &h, NULL) == -1, "unpadded base64 is refused");
  ok(vds_meta_decode("not base64!!", 12, 8, &h, NULL) == -1, "not base64 is refused");
  ok(vds_meta_decode("AACAPwEBAQE=", 12, 28, &h, NULL) == -1, "8 bytes for a 28-byte layer are refused");
  /* 24 bytes: hash 0x0807060504030201, levels 200, 180, then zeros */
  const char *w = "AQIDBAUGBwjItAAAAAAAAAAAAAAAAAAA";
  ok(vds_meta_decode(w, strlen(w), 28, &h, lv) == 0 && h == 0x0807060504030201ull && lv[0] == 200 && lv[1] == 180 &&
         lv[2] == 0,
     "24 bytes for a wavelet layer: hash then the 16 level bytes");
  ok(vds_meta_decode(w, strlen(w), 8, &h, NULL) == -1, "24 bytes for an 8-byte layer are refused");
}

static void levels(void) {
  unsigned char lv[16] = {200, 180};
  ok(vds_level_bytes(72264, lv, -1) == 72264, "level -1: the whole object");
  ok(vds_level_bytes(72264, lv, 0) == 56677, "spec example: level 0 needs 56677 bytes");
  ok(vds_level_bytes(72264, lv, 1) == 40007, "spec example: level 1 needs 40007 bytes");
  ok(vds_level_bytes(72264, lv, 2) == -1, "a zero byte ends the levels");
  ok(vds_level_bytes(72264, lv, 16) == -1 && vds_level_bytes(72264, lv, -2) == -1, "levels outside -1..15");
  unsigned char full[16];
  memset(full, 255, sizeof full);
  ok(vds_level_bytes(0xffffffffu, full, 15) == 0xffffffffll, "255 everywhere keeps the whole 4 GiB object");
}

int main(void) {
  meta();
  levels();
  return done_testing();
}
