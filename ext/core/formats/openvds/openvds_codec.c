/* Chunk object codec (spec section 9): the 24-byte DataBlockDescriptor, the None,
 * RLE and Zip payloads, and filling chunks that have no object. Every length read
 * from an object is checked before use: objects come from outside. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "openvds.h"

static int32_t le32(const unsigned char *p) {
  return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

size_t vds_shape_bytes(const vds_shape *s) {
  if (s->format == VDS_F_1BIT) return (size_t)((s->size[0] + 7) / 8) * s->size[1] * s->size[2];
  return (size_t)s->size[0] * s->size[1] * s->size[2] * vds_format_bytes(s->format) * s->components;
}

static vd_code rle_decode(const unsigned char *p, size_t n, size_t want, const char *where, unsigned char *out,
                          vd_err *err) {
  if (n < 12) return vd_fail(err, VD_INVALID, "%s: RLE payload shorter than its 12-byte header", where);
  int32_t csize = le32(p), osize = le32(p + 4), unit = le32(p + 8);
  if (unit != 1 && unit != 2 && unit != 4 && unit != 8)
    return vd_fail(err, VD_INVALID, "%s: RLE unit size %d (1, 2, 4 or 8)", where, unit);
  if (osize < 0 || (size_t)osize != want)
    return vd_fail(err, VD_INVALID, "%s: RLE original size %d, expected %zu", where, osize, want);
  if (csize < 12 || (size_t)csize > n)
    return vd_fail(err, VD_INVALID, "%s: RLE compressed size %d does not fit the %zu-byte payload", where, csize, n);
  if (want % (size_t)unit) return vd_fail(err, VD_INVALID, "%s: RLE size %zu not a multiple of unit %d", where, want, unit);
  size_t in = 12, o = 0, end = (size_t)csize;
  while (o < want) {
    if (in >= end) return vd_fail(err, VD_INVALID, "%s: RLE runs end after %zu of %zu bytes", where, o, want);
    unsigned b0 = p[in++];
    size_t run = (b0 & 0x3f);
    if (b0 & 0x80) {
      if (in >= end) return vd_fail(err, VD_INVALID, "%s: RLE run header truncated", where);
      run |= (size_t)p[in++] << 6;
    }
    run += 1;
    size_t bytes = run * (size_t)unit;
    if (bytes > want - o) return vd_fail(err, VD_INVALID, "%s: RLE run overflows the chunk", where);
    if (b0 & 0x40) { /* literal */
      if (bytes > end - in) return vd_fail(err, VD_INVALID, "%s: RLE literal run truncated", where);
      memcpy(out + o, p + in, bytes);
      in += bytes;
    } else {
      if ((size_t)unit > end - in) return vd_fail(err, VD_INVALID, "%s: RLE repeat run truncated", where);
      for (size_t k = 0; k < run; k++) memcpy(out + o + k * unit, p + in, (size_t)unit);
      in += (size_t)unit;
    }
    o += bytes;
  }
  return VD_OK;
}

vd_code vds_decode(int method, const unsigned char *obj, size_t n, const vds_shape *expect, const char *where,
                   vd_buf *out, vds_shape *got, vd_err *err) {
  if (method == VDS_M_WAVELET || method == VDS_M_WAVELET_NB || method == VDS_M_WAVELET_LOSSLESS ||
      method == VDS_M_WAVELET_NB_LOSSLESS)
    return vd_fail(err, VD_UNSUPPORTED, "%s: wavelet decoding is not supported (only None, RLE and Zip chunks)",
                   where);
  if (method != VDS_M_NONE && method != VDS_M_RLE && method != VDS_M_ZIP)
    return vd_fail(err, VD_UNSUPPORTED, "%s: unknown compression method", where);
  if (n < 24) return vd_fail(err, VD_INVALID, "%s: %zu bytes, shorter than the 24-byte chunk header", where, n);
  int32_t dim = le32(obj), sx = le32(obj + 4), sy = le32(obj + 8), sz = le32(obj + 12), fmt = le32(obj + 16),
          comp = le32(obj + 20);
  if (dim < 1 || dim > 3) return vd_fail(err, VD_INVALID, "%s: invalid chunk header (dimensionality %d)", where, dim);
  if (dim < 2) sy = 1;
  if (dim < 3) sz = 1;
  if (sx < 1 || sy < 1 || sz < 1 || sx > 65536 || sy > 65536 || sz > 65536 || (int64_t)sx * sy * sz > (1 << 28))
    return vd_fail(err, VD_INVALID, "%s: invalid chunk header (size %dx%dx%d)", where, sx, sy, sz);
  if (fmt < 0 || fmt > VDS_F_U64 || (comp != 1 && comp != 2 && comp != 4))
    return vd_fail(err, VD_INVALID, "%s: invalid chunk header (format %d, components %d)", where, fmt, comp);
  vds_shape s = {{sx, sy, sz}, fmt, comp};
  if (got) *got = s;
  if (expect) {
    if (s.size[0] != expect->size[0] || s.size[1] != expect->size[1] || s.size[2] != expect->size[2])
      return vd_fail(err, VD_INVALID, "%s: chunk header says %dx%dx%d voxels, the layout gives %lldx%lldx%lld", where,
                     sx, sy, sz, (long long)expect->size[0], (long long)expect->size[1], (long long)expect->size[2]);
    if (fmt != expect->format || comp != expect->components)
      return vd_fail(err, VD_INVALID, "%s: chunk stored as %s x%d, the channel is %s x%d (conversion not supported)",
                     where, vds_format_name(fmt), comp, vds_format_name(expect->format), expect->components);
  }
  size_t want = vds_shape_bytes(&s);
  const unsigned char *pay = obj + 24;
  size_t plen = n - 24;
  out->len = 0;
  if (method == VDS_M_NONE && plen != want) /* before allocating what the header claims */
    return vd_fail(err, VD_INVALID, "%s: uncompressed chunk has %zu payload bytes, expected %zu", where, plen, want);
  if (vd_buf_reserve(out, want ? want : 1)) return vd_nomem(err);
  if (method == VDS_M_NONE) {
    if (plen != want)
      return vd_fail(err, VD_INVALID, "%s: uncompressed chunk has %zu payload bytes, expected %zu", where, plen, want);
    memcpy(out->data, pay, want);
  } else if (method == VDS_M_RLE) {
    if (rle_decode(pay, plen, want, where, out->data, err)) return err->code;
  } else {
    uLongf dlen = (uLongf)want;
    int zr = uncompress(out->data, &dlen, pay, (uLong)plen);
    if (zr != Z_OK) return vd_fail(err, VD_INVALID, "%s: zlib uncompress failed (status %d)", where, zr);
    if (dlen != want)
      return vd_fail(err, VD_INVALID, "%s: zlib stream holds %lu bytes, expected %zu", where, (unsigned long)dlen, want);
  }
  out->len = want;
  return VD_OK;
}

/* Converting an out-of-range double to an unsigned integer is undefined in C, and a
 * constant or noValue comes from the dataset: clamp to the format's range first. */
static double clamp(double v, double hi) { return !(v > 0) ? 0 : v > hi ? hi : v; }

static void put_sample(unsigned char *p, int format, double v) {
  switch (format) {
    case VDS_F_U8: { uint8_t x = (uint8_t)clamp(v, 255); memcpy(p, &x, 1); break; }
    case VDS_F_U16: { uint16_t x = (uint16_t)clamp(v, 65535); memcpy(p, &x, 2); break; }
    case VDS_F_R32: { float x = (float)v; memcpy(p, &x, 4); break; }
    case VDS_F_U32: { uint32_t x = (uint32_t)clamp(v, 4294967295.0); memcpy(p, &x, 4); break; }
    case VDS_F_R64: { double x = v; memcpy(p, &x, 8); break; }
    case VDS_F_U64: { uint64_t x = (uint64_t)clamp(v, 18446744073709549568.0); memcpy(p, &x, 8); break; }
  }
}

/* U8/U16 store quantized values: v = round((value - offset) / scale), clamped to the
 * buckets, the top one reserved for NoValue when the channel uses it. */
static double quantize(const vds_channel *ch, double value) {
  double top = (ch->format == VDS_F_U8 ? 255.0 : 65535.0) - (ch->use_no_value ? 1 : 0);
  double q = ch->scale != 0 ? (value - ch->offset) / ch->scale : 0;
  q = floor(q + 0.5);
  return q < 0 ? 0 : q > top ? top : q;
}

vd_code vds_fill(const vds_channel *ch, const vds_shape *s, int status, float constant, vd_buf *out, vd_err *err) {
  size_t bytes = vds_shape_bytes(s);
  out->len = 0;
  if (vd_buf_reserve(out, bytes ? bytes : 1)) return vd_nomem(err);
  out->len = bytes;
  int quant = ch->format == VDS_F_U8 || ch->format == VDS_F_U16;
  double v;
  int marker = 0; /* NoValue in a quantized channel is its top bucket */
  if (status == VDS_S_CONSTANT)
    v = constant;
  else if ((status == VDS_S_NOVALUE || status == VDS_S_UNWRITTEN) && ch->use_no_value)
    v = ch->no_value, marker = quant;
  else
    v = 0;
  if (ch->format == VDS_F_1BIT) {
    memset(out->data, v != 0 ? 0xff : 0x00, bytes);
    return VD_OK;
  }
  if (quant) v = marker ? (ch->format == VDS_F_U8 ? 255.0 : 65535.0) : quantize(ch, v);
  size_t es = (size_t)vds_format_bytes(s->format);
  if (bytes == 0) return VD_OK;
  put_sample(out->data, s->format, v);
  /* double the filled prefix until the buffer is full */
  size_t filled = es;
  while (filled < bytes) {
    size_t k = filled < bytes - filled ? filled : bytes - filled;
    memcpy(out->data + filled, out->data, k);
    filled += k;
  }
  return VD_OK;
}
