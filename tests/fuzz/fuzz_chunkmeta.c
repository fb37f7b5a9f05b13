/* libFuzzer target: vds_meta_decode (a chunk object's vdschunkmetadata value, as any
 * store may hand it over) and vds_level_bytes (the 16 adaptive level bytes of a
 * wavelet entry). The first byte picks the entry size (8 or 28) and a level; the rest
 * is the text. What decodes must be base64 of exactly the entry's form with a non-zero
 * hash, and re-encode to the same bytes; level prefixes never grow. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/openvds/openvds_objects.h"
#include "util/base64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  int es = data[0] & 1 ? 28 : 8, level = (int)(data[0] >> 1) % 19 - 2;
  const char *text = (const char *)data + 1;
  size_t n = size - 1;
  uint64_t h = 0;
  unsigned char lv[16];
  memset(lv, 0xAA, sizeof lv);
  if (vds_meta_decode(text, n, es, &h, lv) == 0) {
    if (!h) abort();
    unsigned char want[24];
    for (int i = 0; i < 8; i++) want[i] = (unsigned char)(h >> (8 * i));
    memcpy(want + 8, lv, 16);
    unsigned char *back;
    size_t blen;
    if (vd_base64_decode(text, n, &back, &blen) != 0) abort();
    if (blen != (es == 28 ? 24u : 8u) || memcmp(back, want, blen) != 0) abort();
    free(back);
    if (es == 8)
      for (int i = 0; i < 16; i++)
        if (lv[i]) abort();
  }
  /* levels from the input bytes themselves: each level's prefix is at most the previous */
  unsigned char l2[16] = {0};
  memcpy(l2, data + 1, n < 16 ? n : 16);
  uint32_t osize = n >= 20 ? (uint32_t)data[17] | (uint32_t)data[18] << 8 | (uint32_t)data[19] << 16 |
                                 (uint32_t)data[20] << 24
                           : 72264;
  int64_t prev = vds_level_bytes(osize, l2, -1);
  if (prev != (int64_t)osize) abort();
  for (int k = 0; k < 16; k++) {
    int64_t b = vds_level_bytes(osize, l2, k);
    if (b < 0) {
      if (l2[k]) abort(); /* only a zero byte ends the levels */
      break;
    }
    if (b > prev) abort();
    prev = b;
  }
  if (level < -1 || level > 15) {
    if (vds_level_bytes(osize, l2, level) != -1) abort();
  }
  return 0;
}
