/* Fuzzes the DeleteObjects answer reader (vd_s3_parse_delete): any bytes (a hostile or
 * broken S3 answer) give every key an answer, never a crash or a leak; a key the
 * answer does not name as deleted is never reported deleted, and every failure's
 * message names its own object. */
#include <stdint.h>
#include <string.h>

#include "store/s3_delete.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const keys[] = {"ds/a", "ds/b", "ds/a", "ds/&<c>", "ds/d"};
  static const char *const where[] = {"s3://b/ds/a", "s3://b/ds/b", "s3://b/ds/a", "s3://b/ds/&<c>", "s3://b/ds/d"};
  enum { N = sizeof keys / sizeof *keys };
  vd_code rc[N];
  vd_err errs[N];
  for (int i = 0; i < N; i++) rc[i] = (vd_code)-1;
  vd_s3_parse_delete((const char *)data, size, keys, N, where, rc, errs);
  for (int i = 0; i < N; i++) {
    if (rc[i] == (vd_code)-1) __builtin_trap();
    if (rc[i] && rc[i] != VD_NOMEM && strncmp(errs[i].msg, where[i], strlen(where[i])) != 0) __builtin_trap();
  }
  if (rc[0] != rc[2]) __builtin_trap(); /* one key, one answer */
  /* nothing that does not name "ds/b" in a Deleted or Error can delete it */
  if (rc[1] == VD_OK && !memmem(data, size, "ds/b", 4)) __builtin_trap();
  return 0;
}
