/* A streamed leaf: an UnstructuredGrid or PolyData leaf whose vtkhdf_partitions rows are
 * made one at a time as they are read, with the count datasets read through windows, so
 * memory stays flat however many partitions the file holds. Only the Steps arrays (one
 * row per step) and the virtual-dataset mappings are held whole (and a count dataset of
 * an odd shape, within max_alloc).
 *
 * A leaf whose virtual datasets map entries to a sub-file that is missing, broken or not
 * allowed streams too: HDF5 reads the fill value for those entries, so their rows get
 * that sub-file's status with NULL counts; an entry alone in its mapping gets its true
 * size back from the big datasets' mappings (its rows there still name that file) before
 * it is summed, so the partitions after it keep their true starts; after an entry that
 * shares its mapping (a step file), the starts of the rest of the step are not knowable
 * (offsets_unknown). */
#ifndef VD_VTKHDF_STREAM_H
#define VD_VTKHDF_STREAM_H

#include "vtkhdf.h"
#include "vtkhdf_h5.h"

/* The count datasets: NumberOfPoints, then per topology NumberOfCells, then per topology
 * NumberOfConnectivityIds */
#define VH_NCOUNT (1 + 2 * VH_NTOPO)
/* The big datasets whose mappings give a broken entry's sizes back: Points, then per
 * topology Types (UnstructuredGrid) or Offsets (PolyData) and Connectivity */
#define VH_NBIG (1 + 2 * VH_NTOPO)

/* What the reader hands over when it decides to stream a leaf; the stream owns the
 * arrays, maps and group path from then on, also when vh_stream_new fails. The count
 * datasets are opened again by path when the first row is asked for and closed after
 * the last, so a composite of many leaves holds one leaf's HDF5 ids at a time. */
typedef struct vh_stream_init {
  vd_ctx *ctx;
  int remote, poly;
  hid_t file;                        /* kept open by the doc */
  const char *base;                  /* the main file as given (the doc's): the driver's rule */
  char *group;                       /* the leaf group's path from the file root, malloc'd */
  const char *block, *type, *holder; /* interned in the doc, outlive the stream (holder: shown) */
  const char *where;
  vh_counts c; /* Steps arrays and Values (malloc'd, owned); the count datasets' lengths
                * (checked at open), not their entries */
  int64_t *whole[VH_NCOUNT];         /* a count dataset read whole (an odd shape), else NULL: windows */
  vh5_map *cm[VH_NCOUNT];            /* the count datasets' mappings */
  int ncm[VH_NCOUNT];
  vh5_map *bm[VH_NBIG];              /* the big datasets' mappings */
  int nbm[VH_NBIG];
} vh_stream_init;

vd_code vh_stream_new(vh_stream_init *in, vh_stream **out, vd_err *err);
/* Frees what an init holds, for a caller that did not get as far as vh_stream_new. */
void vh_stream_init_free(vh_stream_init *in);
/* Up to max next rows into rows[] (strings borrowed from the stream; for PolyData the
 * topologies into topos[]): *n of them, 0 at the end. On an error the *n before it are
 * good. */
vd_code vh_stream_fill(vh_stream *s, vh_part *rows, vh_topo *topos, int max, int *n, vd_err *err);
void vh_stream_free(vh_stream *s);
/* Gives back the HDF5 ids and windows of a leaf whose rows are not wanted any more. */
void vh_stream_done(vh_stream *s);

/* Runs with HDF5's error printing off and the remote driver pointed at ctx (with base,
 * the main file, for its rule), as vh_open does, for HDF5 calls made after it returned. */
typedef struct vh_h5scope {
  H5E_auto2_t fn;
  void *data;
  int remote;
} vh_h5scope;
void vh_h5_enter(vh_h5scope *sc, vd_ctx *ctx, int remote, const char *base);
void vh_h5_leave(vh_h5scope *sc);

#endif
