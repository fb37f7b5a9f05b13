/* Chunk codec: the real OpenVDS test chunks (shared/fixtures/openvds) must decode
 * RLE and Zip byte-equal to the None file; malformed objects give errors. */
#include <string.h>
#include <zlib.h>

#include "formats/openvds/openvds.h"
#include "tap.h"

static unsigned char *fixture(const char *name, size_t *len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/fixtures/openvds/%s", shared_dir(), name);
  return slurp(path, len);
}

static void real_chunks(void) {
  size_t nn, nr, nz;
  unsigned char *none = fixture("chunk.CompressionMethod_None", &nn);
  unsigned char *rle = fixture("chunk.CompressionMethod_RLE", &nr);
  unsigned char *zip = fixture("chunk.CompressionMethod_Zip", &nz);
  if (!none || !rle || !zip) {
    fixture_missing(9, "real-chunk codec tests (chunk.CompressionMethod_None, _RLE, _Zip)");
    free(none), free(rle), free(zip);
    return;
  }
  vds_shape want = {{100, 100, 100}, VDS_F_R32, 1}, got;
  vd_buf a = {0}, b = {0}, c = {0};
  vd_err err = {0};
  ok(vds_decode(VDS_M_NONE, none, nn, &want, "none", &a, &got, &err) == VD_OK, "None chunk decodes (%s)", err.msg);
  ok(a.len == 4000000 && memcmp(a.data, none + 24, a.len) == 0, "None payload is the raw samples");
  ok(got.size[0] == 100 && got.size[1] == 100 && got.size[2] == 100 && got.format == VDS_F_R32,
     "descriptor 3,100,100,100,R32,1");
  ok(vds_decode(VDS_M_RLE, rle, nr, &want, "rle", &b, NULL, &err) == VD_OK, "RLE chunk decodes (%s)", err.msg);
  ok(b.len == a.len && memcmp(a.data, b.data, a.len) == 0, "RLE decodes byte-equal to None");
  ok(vds_decode(VDS_M_ZIP, zip, nz, &want, "zip", &c, NULL, &err) == VD_OK, "Zip chunk decodes (%s)", err.msg);
  ok(c.len == a.len && memcmp(a.data, c.data, a.len) == 0, "Zip decodes byte-equal to None");
  vds_shape wrong = {{100, 100, 99}, VDS_F_R32, 1};
  ok(vds_decode(VDS_M_NONE, none, nn, &wrong, "none", &a, NULL, &err) == VD_INVALID && strstr(err.msg, "100x100x100"),
     "size mismatch with the layout is reported: %s", err.msg);
  /* truncated RLE: every prefix fails cleanly */
  int clean = 1;
  for (size_t cut = 24; cut < nr; cut += nr / 97 + 1)
    if (vds_decode(VDS_M_RLE, rle, cut, &want, "rle", &b, NULL, &err) == VD_OK) clean = 0;
  ok(clean, "every truncated RLE object is refused");
  vd_buf_free(&a), vd_buf_free(&b), vd_buf_free(&c);
  free(none), free(rle), free(zip);
}

static void other_real_chunks(void) {
  static const struct { const char *name; int x, y, z, fmt; } t[] = {
      {"chunk.U8.CompressionMethod_None", 100, 100, 100, VDS_F_U8},
      {"chunk.U16.CompressionMethod_None", 100, 100, 100, VDS_F_U16},
      {"chunk.1082.CompressionMethod_None", 64, 64, 1, VDS_F_R32},
      {"chunk.1255.CompressionMethod_None", 64, 29, 1, VDS_F_R32},
      {"chunk.Dimensions_012LOD0_19_CompressionMethod_None_no_value", 28, 32, 32, VDS_F_R32}};
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
    size_t n;
    unsigned char *p = fixture(t[i].name, &n);
    if (!p) {
      fixture_missing(1, t[i].name);
      continue;
    }
    vds_shape want = {{t[i].x, t[i].y, t[i].z}, t[i].fmt, 1};
    vd_buf out = {0};
    vd_err err = {0};
    vd_code rc = vds_decode(VDS_M_NONE, p, n, &want, t[i].name, &out, NULL, &err);
    ok(rc == VD_OK && out.len == n - 24, "%s decodes as %dx%dx%d %s (%s)", t[i].name, t[i].x, t[i].y, t[i].z,
       vds_format_name(t[i].fmt), err.msg);
    vd_buf_free(&out);
    free(p);
  }
  size_t n;
  unsigned char *w = fixture("chunk.CompressionMethod_Wavelet", &n);
  if (w) {
    vd_buf out = {0};
    vd_err err = {0};
    ok(vds_decode(VDS_M_WAVELET, w, n, NULL, "w", &out, NULL, &err) == VD_UNSUPPORTED && strstr(err.msg, "wavelet"),
       "wavelet chunk refused: %s", err.msg);
    free(w);
  } else {
    fixture_missing(1, "wavelet refusal (chunk.CompressionMethod_Wavelet)");
  }
}

static void put32(unsigned char *p, int32_t v) { memcpy(p, &v, 4); }

static void synthetic(void) {
  unsigned char obj[24 + 12 + 16];
  vd_buf out = {0};
  vd_err err = {0};
  vds_shape want = {{4, 1, 1}, VDS_F_R32, 1};
  put32(obj, 1), put32(obj + 4, 4), put32(obj + 8, 7), put32(obj + 12, 9), put32(obj + 16, 3), put32(obj + 20, 1);
  /* RLE: one repeat run of 4 floats 2.5 */
  put32(obj + 24, 12 + 5), put32(obj + 28, 16), put32(obj + 32, 4);
  obj[36] = 3; /* run of 4, repeat */
  float f = 2.5f;
  memcpy(obj + 37, &f, 4);
  ok(vds_decode(VDS_M_RLE, obj, 41, &want, "t", &out, NULL, &err) == VD_OK && out.len == 16 &&
         memcmp(out.data + 12, &f, 4) == 0,
     "1-D RLE repeat run (dimensionality 1 ignores sizeY/sizeZ)");
  obj[36] = 4; /* run of 5 overflows the chunk */
  ok(vds_decode(VDS_M_RLE, obj, 41, &want, "t", &out, NULL, &err) == VD_INVALID, "RLE run overflow: %s", err.msg);
  put32(obj + 32, 3);
  ok(vds_decode(VDS_M_RLE, obj, 41, &want, "t", &out, NULL, &err) == VD_INVALID, "RLE unit 3 refused: %s", err.msg);
  put32(obj, 4);
  ok(vds_decode(VDS_M_NONE, obj, 40, NULL, "t", &out, NULL, &err) == VD_INVALID, "dimensionality 4 refused: %s",
     err.msg);
  ok(vds_decode(VDS_M_NONE, obj, 10, NULL, "t", &out, NULL, &err) == VD_INVALID, "short header refused: %s", err.msg);
  put32(obj, 3), put32(obj + 4, 1 << 20), put32(obj + 8, 1 << 20);
  ok(vds_decode(VDS_M_NONE, obj, 40, NULL, "t", &out, NULL, &err) == VD_INVALID, "absurd size refused: %s", err.msg);
  /* Zip whose stream holds too few bytes */
  unsigned char raw[8] = {0}, z[64];
  uLongf zl = sizeof z;
  compress(z, &zl, raw, sizeof raw);
  unsigned char zobj[24 + 64];
  put32(zobj, 1), put32(zobj + 4, 4), put32(zobj + 8, 1), put32(zobj + 12, 1), put32(zobj + 16, 3), put32(zobj + 20, 1);
  memcpy(zobj + 24, z, zl);
  ok(vds_decode(VDS_M_ZIP, zobj, 24 + zl, &want, "t", &out, NULL, &err) == VD_INVALID, "short zlib stream: %s", err.msg);
  vd_buf_free(&out);
}

static void fills(void) {
  vds_channel u8 = {0}, r32 = {0};
  u8.format = VDS_F_U8, u8.components = 1, u8.scale = 0.5, u8.offset = -10;
  r32.format = VDS_F_R32, r32.components = 1, r32.use_no_value = 1, r32.no_value = -999.25;
  vds_shape s8 = {{3, 2, 1}, VDS_F_U8, 1}, s32 = {{2, 2, 2}, VDS_F_R32, 1};
  vd_buf b = {0};
  vd_err err = {0};
  vds_fill(&u8, &s8, VDS_S_CONSTANT, 1.0f, &b, &err);
  ok(b.len == 6 && b.data[0] == 22 && b.data[5] == 22, "U8 constant 1.0 requantized with scale 0.5 offset -10 -> 22");
  /* (1.3 + 10) / 0.5 = 22.6: the nearest bucket, not the one below (mutant vds_quantize_floor) */
  vds_fill(&u8, &s8, VDS_S_CONSTANT, 1.3f, &b, &err);
  ok(b.len == 6 && b.data[0] == 23 && b.data[5] == 23, "U8 constant 1.3 rounds to the nearest bucket -> 23");
  vds_fill(&u8, &s8, VDS_S_CONSTANT, 1000.0f, &b, &err);
  ok(b.data[3] == 255, "U8 constant clamped to 255");
  vds_fill(&r32, &s32, VDS_S_UNWRITTEN, 0, &b, &err);
  float f;
  memcpy(&f, b.data + 28, 4);
  ok(b.len == 32 && f == -999.25f, "unwritten R32 with NoValue filled with noValue");
  vds_fill(&r32, &s32, VDS_S_CONSTANT, -0.5f, &b, &err);
  memcpy(&f, b.data + 4, 4);
  ok(f == -0.5f, "R32 constant -0.5");
  vd_buf_free(&b);
}

int main(void) {
  real_chunks();
  other_real_chunks();
  synthetic();
  fills();
  return done_testing();
}
