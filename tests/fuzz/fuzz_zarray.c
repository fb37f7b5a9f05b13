/* Fuzzes the .zarray reader of the LINDI check (lindi_zarray_parse, lindi_zarr.c): any
 * bytes parse or fail with a reason, never a crash or a leak; a parsed array's chunk
 * count and keys agree: the key of the last grid position is a chunk of it, the key one
 * past it in the first dimension is not. */
#include <stdint.h>
#include <string.h>

#include "formats/lindi/lindi_zarr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lindi_zarray z;
  char why[200] = "";
  if (lindi_zarray_parse((const char *)data, size, &z, why, sizeof why)) {
    if (!why[0]) __builtin_trap();
    return 0;
  }
  if (lindi_zarray_nchunks(&z) == 0) return 0;
  int64_t idx[LINDI_ZARR_MAXDIM];
  for (int d = 0; d < z.ndim; d++) idx[d] = (z.shape[d] + z.chunks[d] - 1) / z.chunks[d] - 1;
  char key[21 * LINDI_ZARR_MAXDIM + 2];
  lindi_zarray_key(&z, idx, key);
  if (!lindi_zarray_is_chunk(&z, key)) __builtin_trap();
  if (z.ndim) {
    idx[0]++;
    lindi_zarray_key(&z, idx, key);
    if (lindi_zarray_is_chunk(&z, key)) __builtin_trap();
  }
  (void)lindi_zarray_chunk_bytes(&z);
  return 0;
}
