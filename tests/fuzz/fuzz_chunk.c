/* libFuzzer target: the chunk codec, vds_decode. The first input byte picks the
 * compression method (mostly None, RLE or Zip, sometimes Wavelet or an unknown one);
 * the rest is the chunk object (24-byte DataBlockDescriptor + payload). It is decoded
 * with no expected shape and again against a small expected one (8x8x8 R32 x1); when
 * both succeed they must agree. Objects whose header declares more than 1<<22 voxels
 * are skipped so that the fuzzer does not spend its time allocating huge buffers
 * (vds_decode itself accepts up to 1<<28). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/openvds/openvds.h"

static int32_t rd32(const uint8_t *p) {
  return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  static const int methods[] = {VDS_M_WAVELET, VDS_M_WAVELET_NB, VDS_M_WAVELET_LOSSLESS, VDS_M_UNKNOWN, 42};
  uint8_t sel = data[0];
  int method = sel % 32 < 10 ? VDS_M_NONE
               : sel % 32 < 20 ? VDS_M_RLE
               : sel % 32 < 30 ? VDS_M_ZIP
                               : methods[(sel / 32) % (sizeof methods / sizeof *methods)];
  data++;
  size--;
  if (size >= 24) {
    int32_t dim = rd32(data), sx = rd32(data + 4), sy = rd32(data + 8), sz = rd32(data + 12);
    if (dim < 2) sy = 1;
    if (dim < 3) sz = 1;
    if (sx > 0 && sy > 0 && sz > 0 && sx <= 65536 && sy <= 65536 && sz <= 65536 &&
        (int64_t)sx * sy * sz > ((int64_t)1 << 22))
      return 0;
  }
  /* an exact-size copy so ASan catches reads past the object */
  unsigned char *obj = malloc(size ? size : 1);
  if (!obj) return 0;
  if (size) memcpy(obj, data, size);

  vd_buf a = {0}, b = {0};
  vds_shape got, got2;
  vd_err err;
  vd_code ra = vds_decode(method, obj, size, NULL, "fuzz/chunk", &a, &got, &err);
  if (ra == VD_OK && a.len != vds_shape_bytes(&got)) abort();
  const vds_shape small = {{8, 8, 8}, VDS_F_R32, 1};
  vd_code rb = vds_decode(method, obj, size, &small, "fuzz/chunk", &b, &got2, &err);
  if (rb == VD_OK) {
    if (ra != VD_OK || b.len != vds_shape_bytes(&small) || memcmp(&got2, &small, sizeof small) != 0 ||
        memcmp(a.data, b.data, b.len) != 0)
      abort();
  }
  vd_buf_free(&a);
  vd_buf_free(&b);
  free(obj);
  return 0;
}
