/* What the two files of the LINDI check share (check_lindi.c: index, refs, HEADs;
 * check_lindi_zarr.c: the Zarr arrays): the rows found so far and what the refs said. */
#ifndef VD_CHECK_LINDI_H
#define VD_CHECK_LINDI_H

#include "check_run.h"
#include "formats/lindi/lindi.h"
#include "formats/lindi/lindi_zarr.h"
#include "util/strmap.h"

typedef struct {
  char *part, *item, *detail;
  int verdict;
} lc_row;

typedef struct {
  char *key;
  int url;     /* into urls */
  int64_t end; /* offset + size */
} lc_xref;

typedef struct {
  char *folder;
  lindi_zarray z;
  int64_t present; /* chunk keys of the grid that refs hold */
} lc_array;

typedef struct {
  char *key;
  int64_t len; /* a chunk's length as its ref gives it, -1 unknown */
} lc_key;

typedef struct lc_state {
  vd_ctx *ctx;
  char *url;
  char where[600];
  int json_form, refs_cut;
  int64_t size; /* the object's, -1 unknown */
  lindi_index ix;
  lc_row *rows;
  int n, cap, pos;
  int64_t items;
  /* external refs: distinct URLs, then each ref */
  char **urls;
  int nurl, nx;
  vd_strmap umap;
  lc_xref *xr;
  /* Zarr: arrays by folder, every key that is no metadata */
  lc_array *arr;
  int narr;
  vd_strmap amap, kmap;
  lc_key *keys;
  int nkeys;
} lc_state;

vd_code lc_add(lc_state *r, int verdict, const char *part, const char *item, vd_err *err, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* A .zarray / .zattrs / .zgroup value (base its name): parsed, the array kept. */
vd_code lc_zarr_meta(lc_state *r, const char *part, const char *key, const char *base, const char *text, size_t n,
                     vd_err *err);
/* A key that is no metadata, with the length of its value (-1 unknown). */
vd_code lc_zarr_key(lc_state *r, const char *key, int64_t len, vd_err *err);
/* After the last ref: absent chunk keys and raw chunks of another size. */
vd_code lc_zarr_check(lc_state *r, vd_err *err);
void lc_zarr_free(lc_state *r);

/* Rows of absent chunk keys given per array at most; the last says how many more. */
#define LC_MISSING_CAP 10

#endif
