/* ustar headers read from hostile archives: GNU base-256 sizes up to 2^63 - 1 parse,
 * and tar_next refuses every size whose data (padded, plus the next header) would end
 * past the largest int64 offset, with the one "corrupt tar header at byte N" message.
 * Run under UBSan by scripts/run-tests: any wrap in the arithmetic aborts the test. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/tar/tar.h"
#include "tap.h"

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

  rc = tar_corrupt(&err, "a.tar", 7, "why %d", 42);
  ok(rc == VD_INVALID && strcmp(err.msg, "a.tar: corrupt tar header at byte 7: why 42") == 0, "tar_corrupt: %s", err.msg);
  return done_testing();
}
