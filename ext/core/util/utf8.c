/* Strict UTF-8 checks (see utf8.h). No library of the project's (cJSON, OpenSSL, zlib)
 * exposes a validator, and this is the one rule of RFC 3629, section 4. */
#include "utf8.h"

int vd_utf8_seq(const unsigned char *p, size_t n, unsigned *cp) {
  if (!n) return 0;
  unsigned c = p[0];
  int len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
  if (!len || (size_t)len > n) return 0;
  unsigned v = len == 1 ? c : c & (0xffu >> (len + 1));
  for (int k = 1; k < len; k++) {
    if ((p[k] & 0xc0) != 0x80) return 0;
    v = v << 6 | (p[k] & 0x3f);
  }
  static const unsigned min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < min_cp[len] || (v >= 0xd800 && v < 0xe000) || v > 0x10ffff) return 0;
  *cp = v;
  return len;
}

int vd_utf8_valid(const void *p, size_t n) {
  const unsigned char *s = p;
  unsigned cp;
  for (size_t i = 0; i < n;) {
    if (s[i] < 0x80) { /* the common case, without the call */
      i++;
      continue;
    }
    int k = vd_utf8_seq(s + i, n - i, &cp);
    if (!k) return 0;
    i += (size_t)k;
  }
  return 1;
}

size_t vd_utf8_put(unsigned char *o, unsigned cp) {
  if (cp < 0x80) {
    o[0] = (unsigned char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (unsigned char)(0xc0 | cp >> 6), o[1] = (unsigned char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (unsigned char)(0xe0 | cp >> 12), o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
    o[2] = (unsigned char)(0x80 | (cp & 0x3f));
    return 3;
  }
  o[0] = (unsigned char)(0xf0 | cp >> 18), o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
  o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f)), o[3] = (unsigned char)(0x80 | (cp & 0x3f));
  return 4;
}
