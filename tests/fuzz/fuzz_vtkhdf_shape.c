/* libFuzzer target: the structured-shape rules of VTKHDF (vtkhdf_shape.c) on hostile
 * extents and array shapes, as a file puts them in WholeExtent (integers or floats) and in
 * a dataset's dims. Input: flags (1 cells, 2 temporal), rank (0..8), six extent values,
 * then the dims; each value is small or, by its first byte, extreme. Invariants: at least
 * one component, and tuples x components = the product of the dims whenever that fits
 * 64 bits (-1 otherwise); a float extent that is accepted round-trips exactly. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/vtkhdf/vtkhdf_shape.h"
#include "fuzz_input.h"

static uint64_t value(in *s) {
  unsigned k = byte(s);
  if (k < 220) return k % 11;
  if (k < 236) return UINT64_MAX - (k % 3);
  return raw(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  in s = {data, size};
  unsigned flags = byte(&s);
  int rank = (int)(byte(&s) % 9);
  int64_t ext[6];
  for (int k = 0; k < 6; k++) ext[k] = (int64_t)(value(&s) - (k % 2 ? 0u : 3u)); /* wraps: both ends of int64 */
  uint64_t dims[8];
  for (int k = 0; k < rank; k++) dims[k] = value(&s);
  int64_t tuples, comps, total = 1;
  vh_struct_shape(ext, flags & 1, (flags >> 1) & 1, rank, dims, &tuples, &comps);
  int ovf = 0;
  for (int k = 0; k < rank; k++) ovf |= dims[k] > INT64_MAX || __builtin_mul_overflow(total, (int64_t)dims[k], &total);
  if (comps < 1) abort();
  if (ovf ? tuples != -1 : (tuples < 0 || __builtin_mul_overflow(tuples, comps, &tuples) || tuples != total)) abort();
  int64_t n[3];
  vh_extent_counts(ext, flags & 1, n);
  if (n[0] < 0 || n[1] < 0 || n[2] < 0) abort();
  /* float extents: whatever bits the file holds */
  double v[6];
  for (int k = 0; k < 6; k++) {
    uint64_t b = (flags & 4) ? raw(&s) : 0;
    if (flags & 4) memcpy(&v[k], &b, sizeof b);
    else v[k] = (double)(int)(byte(&s) % 64) - 8 + ((flags & 8) && k == 3 ? 0.5 : 0);
  }
  int64_t e[6];
  int bad = vh_whole_numbers(v, 6, e);
  for (int k = 0; k < (bad < 0 ? 6 : bad); k++)
    if ((double)e[k] != v[k]) abort();
  if (bad >= 0 && v[bad] == trunc(v[bad]) && v[bad] >= -9223372036854775808.0 && v[bad] < 9223372036854775808.0) abort();
  return 0;
}
