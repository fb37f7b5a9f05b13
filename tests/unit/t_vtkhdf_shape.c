/* Shapes of structured VTKHDF data (vtkhdf_shape.c), without HDF5: points and cells of an
 * extent, tuples and components of an array over it (3-D, 2-D with the flat axis kept or
 * dropped, temporal, cell data, tensors, shapes that do not fit), and float extents. The
 * expected values are worked out by hand from the extents below. */
#include <math.h>
#include <stdint.h>

#include "formats/vtkhdf/vtkhdf_shape.h"
#include "tap.h"

static void shape(const int64_t ext[6], int cells, int temporal, int rank, const uint64_t *dims, int64_t want_t,
                  int64_t want_c, const char *what) {
  int64_t t = -2, c = -2;
  vh_struct_shape(ext, cells, temporal, rank, dims, &t, &c);
  ok(t == want_t && c == want_c, "%s: %lld tuples of %lld (got %lld of %lld)", what, (long long)want_t,
     (long long)want_c, (long long)t, (long long)c);
}

int main(void) {
  static const int64_t cube[6] = {0, 3, 0, 3, 0, 3};   /* 4x4x4 points, 3x3x3 cells */
  static const int64_t flat[6] = {0, 5, 0, 7, 0, 0};   /* 6x8 points, 5x7 cells, z flat */
  static const int64_t line[6] = {2, 9, 0, 0, 0, 0};   /* 8 points along x, 7 cells */
  static const int64_t inv[6] = {0, 3, 5, 4, 0, 3};    /* y inverted: nothing */

  int64_t n[3];
  ok(!vh_extent_counts(cube, 0, n) && n[0] == 4 && n[1] == 4 && n[2] == 4, "cube: 4x4x4 points");
  ok(!vh_extent_counts(cube, 1, n) && n[0] == 3 && n[1] == 3 && n[2] == 3, "cube: 3x3x3 cells");
  ok(!vh_extent_counts(flat, 1, n) && n[0] == 5 && n[1] == 7 && n[2] == 1, "flat z: 5x7x1 cells");
  ok(!vh_extent_counts(inv, 0, n) && n[1] == 0, "an inverted axis counts 0");
  static const int64_t huge[6] = {INT64_MIN, INT64_MAX, 0, 0, 0, 0};
  ok(vh_extent_counts(huge, 0, n) == 1, "an extent past 64 bits is reported");

  /* 3-D: (z, y, x[, c]) */
  shape(cube, 0, 0, 3, (const uint64_t[]){4, 4, 4}, 64, 1, "cube scalar (4,4,4)");
  shape(cube, 0, 0, 4, (const uint64_t[]){4, 4, 4, 3}, 64, 3, "cube vector (4,4,4,3)");
  shape(cube, 1, 0, 4, (const uint64_t[]){3, 3, 3, 9}, 27, 9, "cube cell tensor (3,3,3,9)");
  shape(cube, 1, 0, 5, (const uint64_t[]){3, 3, 3, 3, 3}, 27, 9, "cube cell tensor (3,3,3,3,3)");
  shape(cube, 0, 1, 5, (const uint64_t[]){2, 4, 4, 4, 3}, 128, 3, "temporal cube vector (2,4,4,4,3)");
  shape(cube, 0, 0, 2, (const uint64_t[]){64, 3}, 64, 3, "cube vector flattened (64,3)");

  /* 2-D as gridformat writes it (flat z dropped) and as VTK does (kept) */
  shape(flat, 0, 0, 3, (const uint64_t[]){8, 6, 3}, 48, 3, "2-D vector (8,6,3)");
  shape(flat, 0, 0, 2, (const uint64_t[]){8, 6}, 48, 1, "2-D scalar (8,6)");
  shape(flat, 0, 0, 3, (const uint64_t[]){8, 6, 9}, 48, 9, "2-D tensor (8,6,9)");
  shape(flat, 0, 0, 4, (const uint64_t[]){1, 8, 6, 3}, 48, 3, "2-D vector, z kept (1,8,6,3)");
  shape(flat, 0, 0, 3, (const uint64_t[]){1, 8, 6}, 48, 1, "2-D scalar, z kept (1,8,6)");
  shape(flat, 1, 0, 3, (const uint64_t[]){7, 5, 3}, 35, 3, "2-D cell vector (7,5,3)");
  shape(flat, 0, 1, 4, (const uint64_t[]){3, 8, 6, 3}, 144, 3, "temporal 2-D vector (3,8,6,3)");
  shape(flat, 0, 1, 3, (const uint64_t[]){3, 8, 6}, 144, 1, "temporal 2-D scalar (3,8,6)");
  shape(flat, 0, 1, 2, (const uint64_t[]){8, 6}, 48, 1, "temporal leaf, array without a time axis (8,6)");
  shape(line, 0, 0, 2, (const uint64_t[]){8, 2}, 8, 2, "1-D (8,2)");
  shape(line, 1, 0, 1, (const uint64_t[]){7}, 7, 1, "1-D cells (7)");

  /* shapes that do not fit the extent: VTK's rule (rank against the extent's dimensions) */
  shape(flat, 0, 0, 3, (const uint64_t[]){5, 5, 4}, 25, 4, "(5,5,4) over 6x8: last axis");
  shape(flat, 0, 0, 2, (const uint64_t[]){5, 5}, 25, 1, "(5,5) over 6x8: one component");
  shape(cube, 0, 0, 1, (const uint64_t[]){10}, 10, 1, "(10) over 4x4x4");
  shape(inv, 0, 0, 3, (const uint64_t[]){4, 4, 4}, 64, 1, "an empty extent: VTK's rule");
  shape(cube, 0, 0, 4, (const uint64_t[]){4, 4, 4, 0}, 0, 1, "an empty component axis");
  shape(cube, 0, 0, 0, NULL, 1, 1, "a scalar dataset");
  shape(cube, 0, 0, 3, (const uint64_t[]){UINT64_MAX, 4, 4}, -1, 1, "dims past 64 bits: no tuples");
  shape(cube, 0, 0, 4, (const uint64_t[]){4, 4, 4, UINT64_MAX}, -1, 1, "a component axis past 64 bits");

  /* float extents */
  int64_t e[6];
  ok(vh_whole_numbers((const double[]){0, 3, 0, 3, 0, 3}, 6, e) == -1 && e[1] == 3 && e[5] == 3,
     "whole floats are the extent");
  ok(vh_whole_numbers((const double[]){-2, 3, 0, 7.5, 0, 0}, 6, e) == 3, "7.5 refused at [3]");
  ok(vh_whole_numbers((const double[]){0, NAN}, 2, e) == 1, "NaN refused");
  ok(vh_whole_numbers((const double[]){INFINITY}, 1, e) == 0, "infinity refused");
  ok(vh_whole_numbers((const double[]){9223372036854775808.0}, 1, e) == 0, "2^63 refused");
  ok(vh_whole_numbers((const double[]){-9223372036854775808.0}, 1, e) == -1 && e[0] == INT64_MIN, "-2^63 fits");
  return done_testing();
}
