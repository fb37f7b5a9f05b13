/* ustar headers read from hostile archives: GNU base-256 sizes up to 2^63 - 1 parse,
 * and tar_next refuses every size whose data (padded, plus the next header) would end
 * past the largest int64 offset, with the one "corrupt tar header at byte N" message.
 * Run under UBSan by scripts/run-tests: any wrap in the arithmetic aborts the test. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/tar/tar.h"
#include "formats/tar/tar_pax.h"
#include "tap.h"

/* Seals a header as a writer would: the unsigned sum, or the signed one of old v7/HP-UX
 * writers (both written here from POSIX's definition, not through tar.c). */
static void seal_sum(unsigned char b[TAR_BLOCK], int is_signed) {
  memset(b + 148, ' ', 8);
  int sum = 0;
  for (int i = 0; i < TAR_BLOCK; i++) sum += is_signed ? (signed char)b[i] : b[i];
  char tmp[8];
  snprintf(tmp, sizeof tmp, "%06o", sum & 0777777);
  memcpy(b + 148, tmp, 6);
  b[154] = 0;
}

/* The records of a pax header, each "<len> k=v\n" with its length counted here. */
static size_t rec(unsigned char *out, const char *kv, size_t kvlen) {
  size_t n = kvlen + 3; /* " ", "\n", one digit */
  while (snprintf(NULL, 0, "%zu", n) + kvlen + 2 != n) n++;
  int w = sprintf((char *)out, "%zu ", n);
  memcpy(out + w, kv, kvlen);
  out[n - 1] = '\n';
  return n;
}

static void pax_checks(void) {
  unsigned char d[8192];
  size_t n = 0, at = 0;
  const char *why = NULL;
  tar_pax p;
  /* a comment naming "path=" is no path record; a path after 4 KiB is one */
  n += rec(d + n, "comment=see path=/etc/passwd", 28);
  char big[5001];
  memset(big, 'x', sizeof big);
  memcpy(big, "comment=", 8);
  n += rec(d + n, big, sizeof big);
  n += rec(d + n, "path=late/name\nwith newline=and equals", 38);
  n += rec(d + n, "size=9663676416", 15);
  tar_pax_init(&p);
  int r = tar_pax_parse(d, n, &p, &at, &why);
  ok(r == 0 && p.path && strcmp(p.path, "late/name\nwith newline=and equals") == 0,
     "pax path after 5 KiB of comment, with a newline and '=' in it: %s", p.path ? p.path : "(none)");
  ok(p.has_size && p.size == 9663676416LL, "pax size 9 GiB read: %lld", (long long)p.size);
  n += rec(d + n, "path=", 5);
  r = tar_pax_parse(d, n, &p, &at, &why);
  ok(r == 0 && !p.path, "an empty path record removes the path (POSIX)");
  tar_pax_free(&p);

  n = rec(d, "GNU.sparse.major=1", 18);
  n += rec(d + n, "GNU.sparse.minor=0", 18);
  n += rec(d + n, "GNU.sparse.name=real/name", 25);
  n += rec(d + n, "GNU.sparse.realsize=1048576", 27);
  memset(d + n, 0, 100); /* NUL padding after the records */
  r = tar_pax_parse(d, n + 100, &p, &at, &why);
  ok(r == 0 && p.sparse && p.major == 1 && p.minor == 0 && p.has_realsize && p.realsize == 1048576 &&
         p.sparse_name && strcmp(p.sparse_name, "real/name") == 0,
     "GNU sparse 1.0 records: name, realsize, version");
  tar_pax_free(&p);

  static const struct { const char *d; const char *what; } bad[] = {
      {"4 x=", "no newline at its length"},
      {"99 path=a\n", "a length past the end"},
      {"x path=a\n", "no length"},
      {"11 size=-1\n", "a negative size"},
      {"12 size=1x0\n", "a size with a letter"},
      {"7 =abc\n", "no keyword"},
      {"10 path=a\n\0x", "bytes after the padding"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    tar_pax_init(&p);
    size_t len = strlen(bad[i].d) + (strstr(bad[i].what, "padding") ? 2 : 0);
    r = tar_pax_parse((const unsigned char *)bad[i].d, len, &p, &at, &why);
    ok(r == -1, "malformed pax record refused (%s): %s", bad[i].what, r == -1 ? why : "accepted");
    tar_pax_free(&p);
  }

  int64_t len = -1;
  const char *map = "3\n0\n512\n2048\n512\n4096\n0\n";
  r = tar_sparse10_len((const unsigned char *)map, strlen(map), &len);
  ok(r == 1 && len == 512,
     "a GNU sparse 1.0 map of 3 regions takes one block: %lld", (long long)len);
  ok(tar_sparse10_len((const unsigned char *)map, 9, &len) == 0, "a map cut short asks for more");
  ok(tar_sparse10_len((const unsigned char *)"#!gnu\n1\n", 9, &len) == -1, "a map line that is no number: malformed");
}

static void header_checks(void) {
  unsigned char b[TAR_BLOCK];
  tar_header h;
  vd_err err;
  int r;
  tar_format(b, "caf\xc3\xa9", 7, &err);
  seal_sum(b, 1); /* bytes over 127: the signed sum differs from the unsigned one */
  r = tar_parse(b, &h);
  ok(r == 0 && h.checksum_ok, "a signed checksum (old v7 / HP-UX) is accepted");
  b[148] = '1';
  r = tar_parse(b, &h);
  ok(r == 0 && !h.checksum_ok, "a wrong checksum is not");

  tar_format(b, "x", 0, &err);
  memcpy(b + 124, "\0 000000144\0", 12); /* GNU tar: one NUL skipped, spaces, then octal */
  seal_sum(b, 0);
  r = tar_parse(b, &h);
  ok(r == 0 && h.size == 0144, "a size field after a leading NUL: %lld", (long long)h.size);
  memcpy(b + 124, "\0\0""00000144\0", 12); /* a second NUL ends the field: 0, as GNU tar reads it */
  seal_sum(b, 0);
  r = tar_parse(b, &h);
  ok(r == 0 && h.size == 0, "two leading NULs: the field is empty (0): %lld", (long long)h.size);
  memcpy(b + 124, "0000014x\0\0\0\0", 12);
  seal_sum(b, 0);
  r = tar_parse(b, &h);
  ok(r == -1, "a size field with a letter after its digits is no number");

  /* GNU's magic: bytes 345.. are atime/ctime, never a prefix */
  tar_format(b, "name", 1, &err);
  memcpy(b + 257, "ustar  \0", 8);
  memcpy(b + 345, "00000000001", 11);
  seal_sum(b, 0);
  r = tar_parse(b, &h);
  ok(r == 0 && strcmp(h.name, "name") == 0, "GNU magic: no prefix joined: %s", h.name);

  /* old GNU sparse: real size at 483, the extension flag at 482 */
  tar_format(b, "sp", 1024, &err);
  memcpy(b + 257, "ustar  \0", 8);
  memset(b + 345, 0, 155);
  b[156] = 'S';
  memcpy(b + 386, "00000000000\0" "00000002000\0", 24);
  b[482] = 1;
  memcpy(b + 483, "00004000000\0", 12);
  seal_sum(b, 0);
  r = tar_parse(b, &h);
  ok(r == 0 && h.type == 'S' && h.gnu_extended && h.gnu_realsize == 1 << 20 && h.size == 1024 &&
         strcmp(h.name, "sp") == 0,
     "old GNU sparse header: realsize %lld, extended %d, stored %lld", (long long)h.gnu_realsize, h.gnu_extended,
     (long long)h.size);
  unsigned char ext[TAR_BLOCK] = {0};
  ext[504] = 1;
  ok(tar_sparse_ext_more(ext), "an extension block's flag at byte 504");
}

/* A header for "x" whose size field holds v in GNU base-256 (0x80, then 11 bytes). */
static void base256(unsigned char b[TAR_BLOCK], uint64_t v) {
  vd_err err;
  tar_format(b, "x", 0, &err);
  b[124] = 0x80;
  for (int i = 0; i < 11; i++) b[135 - i] = i < 8 ? (unsigned char)(v >> (8 * i)) : 0;
  memset(b + 148, ' ', 8); /* checksum again, as tar_format seals it */
  unsigned sum = 0;
  for (int i = 0; i < TAR_BLOCK; i++) sum += b[i];
  char tmp[8];
  snprintf(tmp, sizeof tmp, "%06o", sum);
  memcpy(b + 148, tmp, 6);
  b[154] = 0;
}

int main(void) {
  unsigned char b[TAR_BLOCK];
  tar_header h;
  vd_err err = {0};
  int64_t next = -1;

  ok(tar_padded(0) == 0 && tar_padded(1) == 512 && tar_padded(512) == 512 && tar_padded(513) == 1024,
     "tar_padded rounds up to whole blocks");
  ok(tar_padded(TAR_MAX_SIZE) == INT64_MAX - 1023, "tar_padded(2^63 - 1025) is 2^63 - 1024, no wrap: %lld",
     (long long)tar_padded(TAR_MAX_SIZE));

  /* (each call made before ok(): its arguments are evaluated in no fixed order) */
  base256(b, (uint64_t)INT64_MAX);
  int r = tar_parse(b, &h);
  ok(r == 0 && h.checksum_ok && h.size == INT64_MAX, "base-256 size 2^63 - 1 parses: %lld", (long long)h.size);
  vd_code rc = tar_next("t.tar", 1024, &h, &next, &err);
  ok(rc == VD_INVALID &&
         strcmp(err.msg, "t.tar: corrupt tar header at byte 1024: member size 9223372036854775807 is out of range") == 0,
     "size 2^63 - 1 refused: %s", err.msg);

  base256(b, (uint64_t)INT64_MAX - 2047);
  tar_parse(b, &h);
  rc = tar_next("t.tar", 1024, &h, &next, &err);
  ok(rc == VD_INVALID && strstr(err.msg, "corrupt tar header at byte 1024: ") &&
         strstr(err.msg, "runs past the largest possible offset"),
     "size 2^63 - 2048 after byte 1024 refused: %s", err.msg);
  rc = tar_next("t.tar", 0, &h, &next, &err);
  ok(rc == VD_OK && next == INT64_MAX - 1535,
     "the same size at byte 0 fits: next header at %lld", (long long)next);
  ok(next <= INT64_MAX - TAR_BLOCK, "and the next header itself ends at an int64 offset");

  h.size = -1;
  rc = tar_next("t.tar", 0, &h, &next, &err);
  ok(rc == VD_INVALID && strstr(err.msg, "member size -1 is out of range"),
     "negative size refused: %s", err.msg);
  h.size = 5;
  rc = tar_next("t.tar", INT64_MAX - 600, &h, &next, &err);
  ok(rc == VD_INVALID, "a header at INT64_MAX - 600 has no room: %s", err.msg);
  rc = tar_next("t.tar", 1024, &h, &next, &err);
  ok(rc == VD_OK && next == 2048, "5 bytes at 1024: next header at 2048");

  /* every base-256 size from 2^62 up: no wrap anywhere (UBSan watches), refused or in range */
  int bad = 0;
  for (int k = 0; k < 4096; k++) {
    uint64_t v = ((uint64_t)1 << 62) + (uint64_t)k * (((uint64_t)1 << 50) + 12345);
    if (v > (uint64_t)INT64_MAX) v = (uint64_t)INT64_MAX - (uint64_t)k;
    base256(b, v);
    if (tar_parse(b, &h) != 0) continue;
    int64_t at = (int64_t)(k * 4096);
    rc = tar_next("t.tar", at, &h, &next, &err);
    if (rc == VD_OK && !(next > at && next <= INT64_MAX - TAR_BLOCK)) bad++;
    if (rc != VD_OK && !strstr(err.msg, "corrupt tar header at byte")) bad++;
  }
  ok(!bad, "sizes from 2^62 to 2^63 - 1: next offset in range or a corrupt-header error (%d bad)", bad);

  header_checks();
  pax_checks();

  rc = tar_corrupt(&err, "a.tar", 7, "why %d", 42);
  ok(rc == VD_INVALID && strcmp(err.msg, "a.tar: corrupt tar header at byte 7: why 42") == 0, "tar_corrupt: %s", err.msg);
  return done_testing();
}
