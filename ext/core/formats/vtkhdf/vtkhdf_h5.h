/* Small HDF5 helpers shared by the VTKHDF reader: quiet error handling that carries
 * HDF5's own message into ours, typed reads of attributes and small datasets, virtual
 * dataset mappings and source-file resolution. Every function closes what it opens. */
#ifndef VD_VTKHDF_H5_H
#define VD_VTKHDF_H5_H

#include <hdf5.h>
#include <stdint.h>

#include "vd_ctx.h"
#include "vd_err.h"

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
/* Numeric attribute (any float width, or integers) as doubles, up to max values; returns
 * how many (0 if absent or not numeric). */
int vh5_attr_real(hid_t obj, const char *name, double *v, int max);

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

/* While one file is read (vh_open): what sub-files (and the objects in them) are is
 * asked once per name; remote sub-files go through ctx's store under the rule of
 * vh_url_check against base, the main file; fapl is the main file's access list (sub-files
 * are opened with it, as HDF5 does); max_alloc bounds what one read of a dataset, an
 * attribute or the mappings of a virtual dataset may allocate. vh5_session_end forgets
 * it all. */
void vh5_session(vd_ctx *ctx, const char *base, int remote, hid_t fapl);
void vh5_session_end(void);
/* Refuses n items of each bytes beyond max_alloc: "<what>: <name> needs N bytes, more than
 * vdsql_config('max_alloc') (M)". */
vd_code vh5_alloc_ok(int64_t n, size_t each, const char *what, const char *name, vd_err *err);

/* What a sub-file (or an object in it) named by a link or a virtual dataset is, as HDF5
 * would find it. Anything but VH5_OK makes HDF5 read the fill value (zeros) for a virtual
 * dataset, or fail an external link. */
typedef enum vh5_state {
  VH5_OK,         /* it opens as HDF5 (and holds the object, with the shape mapped) */
  VH5_MISSING,    /* no such file (a 404) */
  VH5_BAD,        /* there, but not HDF5, or without the object, or too small */
  VH5_DISALLOWED, /* a remote main file's sub-file on another host, or a malformed URL: never requested */
  VH5_FAILED      /* nothing learnt: its request failed in transit, or with a 5xx, or with an answer vdsql
                     refused (vh_vfd_last_fact). Never a status: the read fails (vh5_found_err) */
} vh5_state;
/* The partition status of a state: ok, missing_source, bad_source, disallowed_source */
const char *vh5_status(vh5_state st);
/* Whether the local file at path holds HDF5's signature where HDF5 looks for it (H5Fis_hdf5,
 * read through the store: the HDF5 helper opens nothing itself) */
int vh5_is_hdf5(const char *path);

/* What vh5_resolve found */
typedef struct vh5_found {
  vh5_state state;
  int exists;   /* 1, 0, or -1 when not asked (disallowed, a failed HEAD) */
  char *why;    /* malloc'd, NULL when ok: the fault, naming the file (redacted) */
  vd_code code; /* VH5_FAILED: the store's code */
  int fault;    /* VH5_BAD: what is wrong, for vdsql_check's verdict (vh_fault, vtkhdf.h) */
} vh5_found;
void vh5_found_free(vh5_found *f);
/* VD_OK, unless f is VH5_FAILED: then err gets the store's own error (its code, and its
 * message, which names the URL and the fault). */
vd_code vh5_found_err(const vh5_found *f, vd_err *err);

/* Where a file name stored in holder (VDS source or external link) really is, following
 * HDF5 1.10's rules: "." is holder; relative names against holder's directory, then the
 * CWD; a missing absolute name is looked for by its basename next to holder. The first
 * candidate that opens as HDF5 wins, as in HDF5; one that failed (VH5_FAILED) ends the
 * search, since which one HDF5 would take is not known. A remote holder's candidates are URLs
 * that must pass vh_url_check (a name that is not one is disallowed, not asked for).
 * Returns the path (malloc'd; where it was expected when missing) and *f. */
char *vh5_resolve(const char *holder, const char *name, vh5_found *f);
/* When f is ok: whether file holds obj (any object), and when srcspace >= 0 a dataset of
 * srcspace's rank whose extent covers srcspace's selection (of the whole source: that
 * holds at least nmapped values); else f becomes VH5_BAD, or VH5_FAILED when a read of
 * a remote file failed without telling anything of it. */
void vh5_check_object(const char *file, const char *obj, hid_t srcspace, int64_t nmapped, vh5_found *f);

/* One mapping of a virtual dataset, along its first dimension. */
typedef struct vh5_map {
  int64_t start, count;
  char *file, *resolved, *dset;
  char *shown; /* resolved as it may be shown (vh_shown) */
  vh5_found src;
  /* a plain mapping of a 1-D dataset: rows [start, start + count) are rows
   * [src_start, src_start + count) of a 1-D source (so they can be read from the source
   * directly) */
  int plain;
  int64_t src_start;
} vh5_map;

/* The mappings of dataset name in loc (0 when it is not virtual or absent), sorted by
 * start, each source checked (vh5_resolve, vh5_check_object). holder is the file that
 * holds the dataset. */
vd_code vh5_vds_maps(hid_t loc, const char *name, const char *holder, const char *what, vh5_map **maps, int *n,
                     vd_err *err);
void vh5_maps_free(vh5_map *m, int n);
/* The mapping that covers row (or, for an empty range, starts at it), or NULL. */
const vh5_map *vh5_map_at(const vh5_map *m, int n, int64_t row);

#endif
