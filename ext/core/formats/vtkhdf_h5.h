/* Small HDF5 helpers shared by the VTKHDF reader: quiet error handling that carries
 * HDF5's own message into ours, typed reads of attributes and small datasets, virtual
 * dataset mappings and source-file resolution. Every function closes what it opens. */
#ifndef VD_VTKHDF_H5_H
#define VD_VTKHDF_H5_H

#include <hdf5.h>
#include <stdint.h>

#include "../vd_ctx.h"
#include "../vd_err.h"

/* HDF5's innermost error description of the current stack (then cleared), or "". */
const char *vh5_msg(char *buf, size_t n);

/* Link kind of name in loc: H5L_TYPE_HARD/SOFT/EXTERNAL, or -1 when absent. */
int vh5_link_type(hid_t loc, const char *name);
/* Target of a soft link (malloc'd). */
char *vh5_soft_target(hid_t loc, const char *name);
/* File and object of an external link (both malloc'd); 0 on success. */
int vh5_external_target(hid_t loc, const char *name, char **file, char **obj);

/* String attribute (fixed or variable length, trimmed at NUL/space), malloc'd; NULL if
 * absent or not a string. */
char *vh5_attr_str(hid_t obj, const char *name);
/* Integer attribute with up to max values; returns how many (0 if absent). */
int vh5_attr_i64(hid_t obj, const char *name, int64_t *v, int max);

/* Reads a 1-D or 2-D integer dataset whole as int64. *v is malloc'd (NULL and *n = 0
 * when the dataset is absent and !required). *cols = second dimension (1 for 1-D).
 * offsets: the values are Steps offsets, where an int32 dataset that holds 2^31-1 has
 * saturated (the writer overflowed), which is refused. */
vd_code vh5_read_i64(hid_t loc, const char *name, int required, int offsets, const char *what, int64_t **v,
                     int64_t *n, int *cols, vd_err *err);
/* Opens a 1-D integer count dataset for reading in windows: *ds and its length. A
 * missing or non-integer dataset is an error; a scalar or 2-D one gives *ds = -1 (the
 * caller reads it whole instead). */
vd_code vh5_open_counts(hid_t loc, const char *name, const char *what, hid_t *ds, int64_t *n, vd_err *err);
/* Reads entries [lo, lo+n) of a 1-D integer dataset as int64. */
vd_code vh5_read_rows(hid_t ds, int64_t lo, int64_t n, int64_t *dst, const char *what, const char *name, vd_err *err);
vd_code vh5_read_f64(hid_t loc, const char *name, const char *what, double **v, int64_t *n, vd_err *err);

/* Where a file name stored in holder (VDS source or external link) really is, following
 * HDF5 1.10's rules: "." is holder; relative names against holder's directory, then the
 * CWD; a missing absolute name is looked for by its basename next to holder.
 * Returns the path (malloc'd; where it was expected when missing) and sets *exists. */
char *vh5_resolve(const char *holder, const char *name, int *exists);

/* While a remote file is read, existence checks go through ctx's store (NULL ends it and
 * forgets what was learnt). */
void vh5_set_remote(vd_ctx *ctx);

/* One mapping of a virtual dataset, along its first dimension. */
typedef struct vh5_map {
  int64_t start, count;
  char *file, *resolved, *dset;
  int exists;
} vh5_map;

/* The mappings of dataset name in loc (0 when it is not virtual or absent), sorted by
 * start. holder is the file that holds the dataset. */
vd_code vh5_vds_maps(hid_t loc, const char *name, const char *holder, const char *what, vh5_map **maps, int *n,
                     vd_err *err);
void vh5_maps_free(vh5_map *m, int n);
/* The mapping that covers row (or, for an empty range, starts at it), or NULL. */
const vh5_map *vh5_map_at(const vh5_map *m, int n, int64_t row);

#endif
