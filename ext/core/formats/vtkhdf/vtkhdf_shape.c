/* Shapes of VTKHDF structured data (see vtkhdf_shape.h). Everything here comes from the
 * file, so every product is checked for overflow. */
#include "vtkhdf_shape.h"

#include <math.h>

int vh_extent_counts(const int64_t ext[6], int cells, int64_t n[3]) {
  int ovf = 0;
  for (int k = 0; k < 3; k++) {
    int64_t d;
    ovf |= __builtin_sub_overflow(ext[2 * k + 1], ext[2 * k], &d) || __builtin_add_overflow(d, 1, &d);
    if (ovf || d <= 0) d = 0;
    else if (cells && d > 1) d--; /* a flat axis (d == 1) is one cell layer */
    n[k] = d;
  }
  return ovf;
}

/* The product of dims[lo..hi) into *p; 1 when it does not fit 64 bits */
static int product(const uint64_t *dims, int lo, int hi, int64_t *p) {
  int64_t x = 1;
  for (int k = lo; k < hi; k++)
    if (dims[k] > INT64_MAX || __builtin_mul_overflow(x, (int64_t)dims[k], &x)) return 1;
  *p = x;
  return 0;
}

/* The components when the axes of dims[from..rank) begin with tuple axes whose sizes
 * multiply to count: the product of the axes after them; 0 when no prefix does. */
static int64_t split(int64_t count, int from, int rank, const uint64_t *dims) {
  int64_t p = 1, c;
  for (int k = from; k < rank; k++) {
    if (dims[k] == 0 || dims[k] > INT64_MAX || __builtin_mul_overflow(p, (int64_t)dims[k], &p) || p > count) return 0;
    if (p == count) return product(dims, k + 1, rank, &c) || c < 1 ? 0 : c;
  }
  return 0;
}

void vh_struct_shape(const int64_t ext[6], int cells, int temporal, int rank, const uint64_t *dims, int64_t *tuples,
                     int64_t *comps) {
  int64_t n[3], count = 0, total = 0, c = 0;
  int lead = temporal && rank > 1 ? 1 : 0;
  if (rank < 0) rank = 0;
  if (!vh_extent_counts(ext, cells, n) && !__builtin_mul_overflow(n[0], n[1], &count) &&
      !__builtin_mul_overflow(count, n[2], &count) && count > 0) {
    c = split(count, lead, rank, dims);
    /* a temporal leaf's array without a time axis (one value per tuple for all steps) */
    if (!c && lead) c = split(count, 0, rank, dims);
  }
  if (!c) { /* VTK's reader: the extent's dimensions, less a flat z and a flat y */
    int nd = 3 - (ext[5] == ext[4]) - (ext[3] == ext[2]) + lead;
    c = rank > nd && dims[rank - 1] <= INT64_MAX ? (int64_t)dims[rank - 1] : 1;
    if (c < 1) c = 1;
  }
  *comps = c;
  *tuples = product(dims, 0, rank, &total) ? -1 : total / c;
}

int vh_whole_numbers(const double *v, int k, int64_t *out) {
  for (int i = 0; i < k; i++) {
    /* +-2^63 are the first doubles outside int64 (both ends: -2^63 itself fits) */
    if (!(v[i] == trunc(v[i])) || !(v[i] >= -9223372036854775808.0 && v[i] < 9223372036854775808.0)) return i;
    out[i] = (int64_t)v[i];
  }
  return -1;
}
