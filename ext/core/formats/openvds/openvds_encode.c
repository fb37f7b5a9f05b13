/* Chunk object encoder (spec section 9), the inverse of vds_decode: the 24-byte
 * DataBlockDescriptor, then the raw samples (None), one zlib stream (Zip, zlib's
 * compress() as OpenVDS calls it) or RLE runs. zlib is used for Zip; the RLE format is
 * OpenVDS's own (no library writes it), so its encoder is here. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "openvds_write.h"

#define MAX_RUN 16384

static void put32(unsigned char *p, int64_t v) {
  uint32_t u = (uint32_t)v;
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(u >> (8 * i));
}

/* One run header (and its payload): bits 0-5 low bits of run-1, bit 6 literal, bit 7
 * a second byte with the rest. */
static int emit(vd_buf *o, int literal, size_t run, const unsigned char *p, size_t bytes) {
  size_t r = run - 1;
  unsigned char h[2] = {(unsigned char)((r & 0x3f) | (literal ? 0x40 : 0) | (r >= 64 ? 0x80 : 0)),
                        (unsigned char)(r >> 6)};
  return vd_buf_append(o, h, r >= 64 ? 2 : 1) || vd_buf_append(o, p, bytes);
}

static int literal(vd_buf *o, const unsigned char *raw, size_t from, size_t to, size_t u) {
  while (from < to) {
    size_t n = to - from < MAX_RUN ? to - from : MAX_RUN;
    if (emit(o, 1, n, raw + from * u, n * u)) return -1;
    from += n;
  }
  return 0;
}

/* Repeat runs for units repeated at least twice (three times for byte units), literal
 * runs between them, as OpenVDS's encoder breaks them. */
static int rle(vd_buf *o, const unsigned char *raw, size_t n, size_t u) {
  size_t units = n / u, minrep = u == 1 ? 3 : 2, lit = 0, i = 0;
  unsigned char hdr[12];
  size_t at = o->len;
  if (vd_buf_append(o, hdr, 12)) return -1; /* filled in at the end */
  while (i < units) {
    size_t r = 1;
    while (i + r < units && memcmp(raw + (i + r) * u, raw + i * u, u) == 0) r++;
    if (r >= minrep) {
      if (literal(o, raw, lit, i, u)) return -1;
      for (size_t left = r; left;) {
        size_t k = left < MAX_RUN ? left : MAX_RUN;
        if (emit(o, 0, k, raw + i * u, u)) return -1;
        left -= k;
      }
      lit = i + r;
    }
    i += r;
  }
  if (literal(o, raw, lit, units, u)) return -1;
  put32(o->data + at, (int64_t)(o->len - at));
  put32(o->data + at + 4, (int64_t)n);
  put32(o->data + at + 8, (int64_t)u);
  return 0;
}

vd_code vds_encode(int method, int dims, const vds_shape *s, const unsigned char *raw, size_t n, vd_buf *out,
                   vd_err *err) {
  unsigned char d[24];
  put32(d, dims);
  for (int i = 0; i < 3; i++) put32(d + 4 + 4 * i, s->size[i]);
  put32(d + 16, s->format);
  put32(d + 20, s->components);
  out->len = 0;
  if (vd_buf_append(out, d, 24)) return vd_nomem(err);
  if (method == VDS_M_NONE) {
    if (vd_buf_append(out, raw, n)) return vd_nomem(err);
  } else if (method == VDS_M_ZIP) {
    uLongf z = compressBound((uLong)n);
    if (vd_buf_reserve(out, z)) return vd_nomem(err);
    int zr = compress(out->data + 24, &z, raw, (uLong)n);
    if (zr != Z_OK) return vd_fail(err, VD_ERROR, "zlib compress failed (status %d)", zr);
    out->len = 24 + z;
  } else if (method == VDS_M_RLE) {
    int u = vds_format_bytes(s->format);
    if (rle(out, raw, n, u ? (size_t)u : 1)) return vd_nomem(err);
    if (out->len - 24 > 0x7fffffff) return vd_fail(err, VD_INVALID, "RLE payload over 2 GiB");
  } else {
    return vd_fail(err, VD_UNSUPPORTED, "vdsql writes None, RLE and Zip chunks only");
  }
  return VD_OK;
}
