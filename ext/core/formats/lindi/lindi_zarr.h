/* What a Zarr v2 array's .zarray says about its chunks (lindi_zarr.c): the chunk keys
 * its shape and chunks imply, and a raw chunk's byte size. Pure: no store, no I/O; the
 * LINDI check (relations/check/check_lindi.c) asks it. */
#ifndef VD_LINDI_ZARR_H
#define VD_LINDI_ZARR_H

#include <stddef.h>
#include <stdint.h>

#define LINDI_ZARR_MAXDIM 32

typedef struct lindi_zarray {
  int ndim;
  int64_t shape[LINDI_ZARR_MAXDIM], chunks[LINDI_ZARR_MAXDIM];
  int64_t itemsize; /* bytes per element; -1 when the dtype does not say (object, structured) */
  int raw;          /* compressor null and no filters: a chunk is its bytes as they are */
  char sep;         /* dimension_separator: '.' (the default) or '/' */
} lindi_zarray;

/* Parses a .zarray's JSON text: 0, or -1 with why (a sentence) when it is no JSON, no
 * object, or lacks shape, chunks or dtype (or they do not fit each other). */
int lindi_zarray_parse(const char *text, size_t n, lindi_zarray *z, char *why, size_t whylen);
/* How many chunks the grid holds (INT64_MAX when more). */
int64_t lindi_zarray_nchunks(const lindi_zarray *z);
/* The byte size of one raw chunk (chunks' product times itemsize); -1 unknown. */
int64_t lindi_zarray_chunk_bytes(const lindi_zarray *z);
/* 1 when s (a key after "<array>/") names a chunk inside the grid, as z's separator
 * writes it (decimal indices without sign or leading zeros). */
int lindi_zarray_is_chunk(const lindi_zarray *z, const char *s);
/* The key suffix of the chunk at grid position idx, into out (room for 21 * ndim + 2). */
void lindi_zarray_key(const lindi_zarray *z, const int64_t *idx, char *out);

#endif
