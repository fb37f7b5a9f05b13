/* Fuzzes the Blob Batch answer reader (vd_az_parse_batch): any bytes (a hostile or
 * broken multipart answer) give every subrequest an answer, never a crash, a read past
 * the body or a leak; every failure's message names its own blob, and a subrequest is
 * reported deleted only when some part of the answer carries its Content-ID. */
#include <stdint.h>
#include <string.h>

#include "store/azure_batch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const where[] = {"az://c/a", "az://c/b", "az://c/c", "az://c/d"};
  enum { N = sizeof where / sizeof *where };
  vd_code rc[N];
  vd_err errs[N];
  for (int i = 0; i < N; i++) rc[i] = (vd_code)-1;
  vd_az_parse_batch((const char *)data, size, N, where, rc, errs);
  for (int i = 0; i < N; i++) {
    if (rc[i] == (vd_code)-1) __builtin_trap();
    if (rc[i] && rc[i] != VD_NOMEM && strncmp(errs[i].msg, where[i], strlen(where[i])) != 0) __builtin_trap();
  }
  if (rc[3] == VD_OK && !memmem(data, size, "3", 1)) __builtin_trap(); /* Content-ID 3 must be there */
  return 0;
}
