/* Fuzzes pax records and the GNU sparse 1.0 map (tar_pax.c): any bytes parse or are
 * refused without a crash or a leak; a parsed size is in range; a map's length is whole
 * blocks, past its last line and within the bytes given (padded). The first byte picks
 * records or map. */
#include <stdint.h>
#include <string.h>

#include "formats/tar/tar.h"
#include "formats/tar/tar_pax.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const unsigned char *d = data + 1;
  size_t n = size - 1;
  if (data[0] & 1) {
    int64_t len = -1;
    int r = tar_sparse10_len(d, n, &len);
    if (r == 1 && (len <= 0 || len % TAR_BLOCK || len > tar_padded((int64_t)n))) __builtin_trap();
    if (r < -1 || r > 1) __builtin_trap();
    return 0;
  }
  tar_pax p;
  tar_pax_init(&p);
  size_t at = (size_t)-1;
  const char *why = NULL;
  int r = tar_pax_parse(d, n, &p, &at, &why);
  if (r == 0 && ((p.has_size && (p.size < 0 || p.size > TAR_MAX_SIZE)) ||
                 (p.has_realsize && (p.realsize < 0 || p.realsize > TAR_MAX_SIZE))))
    __builtin_trap();
  if (r == -1 && (at >= n || !why)) __builtin_trap();
  if (r == 0 && p.path && strlen(p.path) >= n) __builtin_trap();
  tar_pax_free(&p);
  return 0;
}
