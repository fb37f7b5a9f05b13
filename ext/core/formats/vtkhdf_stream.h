/* A streamed leaf: an UnstructuredGrid or PolyData leaf whose vtkhdf_partitions rows are
 * made one at a time as they are read, with the count datasets read through windows, so
 * memory stays flat however many partitions the file holds. Only the Steps arrays (one
 * row per step) and the virtual-dataset mappings are held whole. */
#ifndef VD_VTKHDF_STREAM_H
#define VD_VTKHDF_STREAM_H

#include "vtkhdf.h"
#include "vtkhdf_h5.h"

/* What the reader hands over when it decides to stream a leaf; the stream owns the
 * arrays, maps and group path from then on, also when vh_stream_new fails. The count
 * datasets are opened again by path when the first row is asked for and closed after
 * the last, so a composite of many leaves holds one leaf's HDF5 ids at a time. */
typedef struct vh_stream_init {
  vd_ctx *ctx;
  int remote, poly;
  hid_t file;                        /* kept open by the doc */
  char *group;                       /* the leaf group's path from the file root, malloc'd */
  const char *block, *type, *holder; /* interned in the doc, outlive the stream */
  const char *where;
  vh_counts c; /* Steps arrays and Values (malloc'd, owned); the count datasets' lengths
                * (checked at open), not their entries */
  vh5_map *pm, *cm; /* mappings of Points and NumberOfPoints */
  int npm, ncm;
} vh_stream_init;

vd_code vh_stream_new(vh_stream_init *in, vh_stream **out, vd_err *err);
/* Frees what an init holds, for a caller that did not get as far as vh_stream_new. */
void vh_stream_init_free(vh_stream_init *in);
/* Up to max next rows into rows[] (strings borrowed from the stream; for PolyData the
 * topologies into topos[]): *n of them, 0 at the end. On an error the *n before it are
 * good. */
vd_code vh_stream_fill(vh_stream *s, vh_part *rows, vh_topo *topos, int max, int *n, vd_err *err);
void vh_stream_free(vh_stream *s);

/* Runs with HDF5's error printing off and the remote driver pointed at ctx, as vh_open
 * does, for HDF5 calls made after it returned. */
typedef struct vh_h5scope {
  H5E_auto2_t fn;
  void *data;
  int remote;
} vh_h5scope;
void vh_h5_enter(vh_h5scope *sc, vd_ctx *ctx, int remote);
void vh_h5_leave(vh_h5scope *sc);

#endif
