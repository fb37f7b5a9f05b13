/* ustar header codec (see tar.h). Hand-written because libarchive's streaming writer
 * cannot patch headers in place inside an existing archive, which lindi's trash and
 * vdsql's commit protocol need; parsing follows POSIX ustar and GNU's base-256 sizes. */
#include "tar.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int64_t tar_padded(int64_t size) { return size / TAR_BLOCK * TAR_BLOCK + (size % TAR_BLOCK ? TAR_BLOCK : 0); }

vd_code tar_corrupt(vd_err *err, const char *where, int64_t at, const char *fmt, ...) {
  char what[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return vd_fail(err, VD_INVALID, "%s: corrupt tar header at byte %lld: %s", where, (long long)at, what);
}

vd_code tar_next(const char *where, int64_t at, const tar_header *h, int64_t *next, vd_err *err) {
  if (h->size < 0 || h->size > TAR_MAX_SIZE)
    return tar_corrupt(err, where, at, "member size %lld is out of range", (long long)h->size);
  int64_t padded = tar_padded(h->size);
  if (at < 0 || at > INT64_MAX - 2 * TAR_BLOCK || padded > INT64_MAX - 2 * TAR_BLOCK - at) /* room for the next header */
    return tar_corrupt(err, where, at, "member size %lld runs past the largest possible offset", (long long)h->size);
  *next = at + TAR_BLOCK + padded;
  return VD_OK;
}

static unsigned checksum(const unsigned char b[TAR_BLOCK]) {
  unsigned sum = 8 * ' '; /* the checksum field counts as spaces */
  for (int i = 0; i < 148; i++) sum += b[i];
  for (int i = 156; i < TAR_BLOCK; i++) sum += b[i];
  return sum;
}

/* Old v7 and HP-UX writers summed signed chars; GNU tar, libarchive and tarfile accept
 * either sum. */
static int signed_checksum(const unsigned char b[TAR_BLOCK]) {
  int sum = 8 * ' ';
  for (int i = 0; i < 148; i++) sum += (signed char)b[i];
  for (int i = 156; i < TAR_BLOCK; i++) sum += (signed char)b[i];
  return sum;
}

/* A numeric field as GNU tar's from_header reads it (see tar.h), or GNU base-256. */
static int64_t number(const unsigned char *p, int n, int *ok) {
  if (p[0] & 0x80) {
    int64_t v = p[0] & 0x3f;
    if (p[0] & 0x40) { *ok = 0; return 0; } /* negative */
    for (int i = 1; i < n; i++) {
      if (v > (INT64_MAX >> 8)) { *ok = 0; return 0; }
      v = (v << 8) | p[i];
    }
    return v;
  }
  int i = p[0] == 0; /* a buggy writer's overflow of the field before */
  while (i < n && (p[i] == ' ' || (p[i] >= '\t' && p[i] <= '\r'))) i++;
  int64_t v = 0;
  for (; i < n && p[i] >= '0' && p[i] <= '7'; i++) {
    if (v > (INT64_MAX >> 3)) { *ok = 0; return 0; }
    v = v * 8 + (p[i] - '0');
  }
  if (i < n && p[i] != 0 && p[i] != ' ' && !(p[i] >= '\t' && p[i] <= '\r')) *ok = 0;
  return v;
}

int tar_parse(const unsigned char b[TAR_BLOCK], tar_header *h) {
  int zero = 1;
  for (int i = 0; i < TAR_BLOCK && zero; i++) zero = b[i] == 0;
  if (zero) return 1;
  memset(h, 0, sizeof *h);
  int ok = 1, okm = 1, okt = 1, okc = 1, okr = 1;
  h->size = number(b + 124, 12, &ok);
  h->mode = number(b + 100, 8, &okm);
  h->mtime = number(b + 136, 12, &okt);
  int64_t stored = number(b + 148, 8, &okc);
  h->checksum_ok = okc && ((unsigned)stored == checksum(b) || stored == signed_checksum(b));
  h->type = b[156] ? (char)b[156] : '0';
  char name[101], prefix[156];
  memcpy(name, b, 100);
  name[100] = 0;
  memcpy(h->link, b + 157, 100);
  h->link[100] = 0;
  prefix[0] = 0;
  /* GNU's own magic ("ustar  \0") keeps atime, ctime and the sparse map where POSIX has
   * the prefix */
  if (h->type == 'S') {
    h->gnu_realsize = number(b + 483, 12, &okr);
    h->gnu_extended = b[482] != 0;
  } else if (memcmp(b + 257, "ustar", 6) == 0) {
    memcpy(prefix, b + 345, 155);
    prefix[155] = 0;
  }
  if (prefix[0])
    snprintf(h->name, sizeof h->name, "%s/%s", prefix, name);
  else
    snprintf(h->name, sizeof h->name, "%s", name);
  return ok && okr ? 0 : -1;
}

int tar_sparse_ext_more(const unsigned char b[TAR_BLOCK]) { return b[504] != 0; }

static void octal(unsigned char *p, int width, int64_t v) { /* width digits then NUL */
  char tmp[32];
  snprintf(tmp, sizeof tmp, "%0*llo", width, (long long)v);
  memcpy(p, tmp, width);
  p[width] = 0;
}

static void seal(unsigned char b[TAR_BLOCK]) {
  char tmp[8];
  snprintf(tmp, sizeof tmp, "%06o", checksum(b) & 0777777);
  memcpy(b + 148, tmp, 6);
  b[154] = 0;
  b[155] = ' ';
}

/* Splits name into (prefix, name) for ustar: name part <= 100, prefix <= 155. */
static int split(const char *name, size_t len, size_t *cut) {
  if (len <= 100) { *cut = 0; return 0; }
  for (size_t i = len - 1; i > 0; i--)
    if (name[i] == '/' && i <= 155 && len - i - 1 <= 100 && len - i - 1 > 0) {
      *cut = i;
      return 0;
    }
  return -1;
}

vd_code tar_check_name(const char *name, size_t len, vd_err *err) {
  if (len == 0) return vd_fail(err, VD_INVALID, "member name is empty");
  if (len > 255) return vd_fail(err, VD_INVALID, "member name is %zu bytes (at most 255)", len);
  if (memchr(name, 0, len)) return vd_fail(err, VD_INVALID, "member name contains a NUL byte");
  if (name[0] == '/') return vd_fail(err, VD_INVALID, "member name \"%.*s\" is absolute", (int)len, name);
  for (size_t i = 0; i < len;) { /* path components: no "..", no empty or "." component */
    size_t j = i;
    while (j < len && name[j] != '/') j++;
    if ((j - i == 2 && name[i] == '.' && name[i + 1] == '.') || j == i || (j - i == 1 && name[i] == '.'))
      return vd_fail(err, VD_INVALID, "member name \"%.*s\" has an empty, \".\" or \"..\" component", (int)len, name);
    i = j + 1;
  }
  for (size_t i = 0; i < len;) { /* UTF-8, so the index stays valid JSON text for lindi */
    unsigned char c = (unsigned char)name[i];
    int n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (!n || i + n > len) return vd_fail(err, VD_INVALID, "member name is not valid UTF-8");
    unsigned cp = n == 1 ? c : c & (0xff >> (n + 1));
    for (int k = 1; k < n; k++) {
      if (((unsigned char)name[i + k] & 0xc0) != 0x80) return vd_fail(err, VD_INVALID, "member name is not valid UTF-8");
      cp = cp << 6 | ((unsigned char)name[i + k] & 0x3f);
    }
    /* overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8;
     * a surrogate would become a "\ud800" escape that JSON readers refuse */
    static const unsigned min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || (cp >= 0xd800 && cp < 0xe000) || cp > 0x10ffff)
      return vd_fail(err, VD_INVALID, "member name is not valid UTF-8");
    if (c < 0x20 || c == 0x7f) return vd_fail(err, VD_INVALID, "member name contains a control character");
    i += n;
  }
  size_t cut;
  if (split(name, len, &cut))
    return vd_fail(err, VD_INVALID, "member name \"%.40s...\" cannot be split into ustar prefix (155) and name (100)",
                   name);
  return VD_OK;
}

static void put_name(unsigned char b[TAR_BLOCK], const char *name, size_t len, size_t cut) {
  memset(b, 0, 100);
  memset(b + 345, 0, 155);
  if (cut) {
    memcpy(b + 345, name, cut);
    memcpy(b, name + cut + 1, len - cut - 1);
  } else {
    memcpy(b, name, len);
  }
}

vd_code tar_format(unsigned char b[TAR_BLOCK], const char *name, int64_t size, vd_err *err) {
  size_t len = strlen(name), cut = 0;
  if (tar_check_name(name, len, err)) return err->code;
  if (size < 0 || size > 077777777777LL) return vd_fail(err, VD_INVALID, "member of %lld bytes is too large for ustar", (long long)size);
  split(name, len, &cut);
  memset(b, 0, TAR_BLOCK);
  put_name(b, name, len, cut);
  memcpy(b + 100, "0000644", 8);
  memcpy(b + 108, "0000000", 8);
  memcpy(b + 116, "0000000", 8);
  octal(b + 124, 11, size);
  memcpy(b + 136, "00000000000", 12);
  b[156] = '0';
  memcpy(b + 257, "ustar", 6);
  memcpy(b + 263, "00", 2);
  seal(b);
  return VD_OK;
}

vd_code tar_rename(unsigned char b[TAR_BLOCK], const char *name, vd_err *err) {
  size_t len = strlen(name), cut = 0;
  if (len > 255 || split(name, len, &cut)) return vd_fail(err, VD_INVALID, "trash name \"%s\" does not fit a header", name);
  put_name(b, name, len, cut);
  seal(b);
  return VD_OK;
}

const char *tar_type_name(char t) {
  switch (t) {
    case '0': return "file";
    case '1': return "hardlink";
    case '2': return "symlink";
    case '3': return "chardev";
    case '4': return "blockdev";
    case '5': return "dir";
    case '6': return "fifo";
    case '7': return "contiguous";
    case 'x': case 'X': return "pax";
    case 'S': return "sparse";
    case 'V': return "volume_label";
    case 'A': return "solaris_acl";
    case 'g': return "pax_global";
    case 'L': return "gnu_longname";
    case 'K': return "gnu_longlink";
    default: return "other";
  }
}
