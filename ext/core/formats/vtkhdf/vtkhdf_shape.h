/* Shapes of VTKHDF structured data (ImageData, RectilinearGrid, StructuredGrid): the point
 * and cell counts of an extent, how an array's HDF5 shape splits into tuples and
 * components over it, and WholeExtent values written as floats. Pure C (no HDF5), so it
 * is unit tested and fuzzed on its own. */
#ifndef VD_VTKHDF_SHAPE_H
#define VD_VTKHDF_SHAPE_H

#include <stdint.h>

/* Counts along x, y, z of extent ext (x0 x1 y0 y1 z0 z1): points (cells = 0) or cells
 * (cells = 1; a flat axis, one point thick, counts 1 cell layer, as VTK's 2-D grids do).
 * An inverted axis counts 0. Returns 1 when a count does not fit 64 bits. */
int vh_extent_counts(const int64_t ext[6], int cells, int64_t n[3]);

/* Tuples and components of an array of shape dims[0..rank) over the structured extent
 * ext, for PointData (cells = 0) or CellData (cells = 1); temporal: a leading time axis.
 * Writers keep the axes whose extent is flat or drop them (gridformat writes a 2-D image
 * as (y, x[, c])), so the rule is the extent's, not the rank's: after the time axis, the
 * leading axes whose sizes multiply to the extent's point (cell) count are the tuples, the
 * axes after them the components ((8, 6, 3) over 6 x 8 points: 48 tuples of 3;
 * (8, 6, 3, 3): 48 of 9). A shape that does not fit the extent falls back to VTK's
 * reader: 1 component when the array has as many axes as the extent has dimensions (3,
 * less a flat z, less a flat y) plus time, else its last axis. *tuples counts every step;
 * it is -1 when the shape's product does not fit 64 bits. */
void vh_struct_shape(const int64_t ext[6], int cells, int temporal, int rank, const uint64_t *dims, int64_t *tuples,
                     int64_t *comps);

/* v[0..k) as integers into out: VTK reads WholeExtent as int, and some writers store it
 * as float32/float64. Returns -1 when every value is a whole number within int64, else
 * the index of the first that is not (a fraction, NaN, infinite, out of range). */
int vh_whole_numbers(const double *v, int k, int64_t *out);

#endif
