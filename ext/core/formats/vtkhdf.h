/* VTKHDF: what a VTKHDF file (and the sub-files behind it) holds, read with the HDF5 C
 * library into plain rows the relations iterate. Only the small datasets (counts,
 * Steps) are read; the big arrays are only sized. Facts: ../shared/spec/vtkhdf.md. */
#ifndef VD_VTKHDF_H
#define VD_VTKHDF_H

#include <stdint.h>

#include "../vd_ctx.h"
#include "../vd_err.h"

#define VH_NULL INT64_MIN /* an integer column that has no value for this row */

/* PolyData's topologies, in VTK's canonical order. */
#define VH_NTOPO 4
extern const char *const vh_topo_names[VH_NTOPO];

/* PolyData only: per topology, in vh_topo_names order */
typedef struct vh_topo {
  int64_t nc[VH_NTOPO], nci[VH_NTOPO], cell_off[VH_NTOPO], conn_off[VH_NTOPO], offs_off[VH_NTOPO];
} vh_topo;

/* One row of vtkhdf_partitions. Files can hold millions of partitions, so rows are kept
 * small: strings point into the doc's string pool, topology details only for PolyData. */
typedef struct vh_part {
  const char *block;       /* assembly path of the leaf ("/Assembly/Block-A"), "" for a plain file */
  const char *type;        /* the leaf's Type, NULL for an empty block */
  const char *source_file; /* file that really holds this partition's Points */
  const char *status;      /* a static string */
  int64_t step, partition;
  double time;
  int has_time;
  int64_t n_points, n_cells, n_conn;
  int64_t point_off, cell_off, conn_off, offsets_off;
  vh_topo *topo;           /* PolyData: malloc'd; NULL otherwise */
} vh_part;

typedef struct vh_array {
  char *block, *association, *name, *type, *attribute, *source_file;
  int64_t components, tuples;
} vh_array;

typedef struct vh_source {
  char *object, *kind, *file, *resolved, *target;
  int exists;
} vh_source;

typedef struct vh_block {
  char *path, *name, *kind, *leaf, *type, *external_file;
  int64_t index;
} vh_block;

/* Where a PointData/CellData array's slice for one partition starts (spec section 3). */
typedef struct vh_astart {
  const char *block, *association, *name; /* pooled / static */
  int64_t step, partition, start, count;
} vh_astart;

typedef struct vh_doc {
  char *path;
  char **strs; /* the string pool vh_part points into */
  int nstrs, capstrs;
  vh_part *parts;
  int nparts, capparts;
  vh_array *arrays;
  int narrays, caparrays;
  vh_source *sources;
  int nsources, capsources;
  vh_block *blocks;
  int nblocks, capblocks;
  vh_astart *starts;
  int nstarts, capstarts;
} vh_doc;

/* What to collect (the rest is skipped, which keeps each relation cheap). */
#define VH_PARTS 0x1
#define VH_ARRAYS 0x2
#define VH_SOURCES 0x4
#define VH_BLOCKS 0x8
#define VH_STARTS 0x10

/* Reads the file at url (a local path or file:// URL) into doc. Errors name the file and
 * the fault; HDF5's own message is carried into err, never printed. */
vd_code vh_open(vd_ctx *ctx, const char *url, unsigned what, vh_doc *doc, vd_err *err);
void vh_doc_free(vh_doc *doc);

/* ---- partition math (vtkhdf_parts.c), independent of HDF5 so it can be unit tested ---- */

/* One leaf's counts and Steps, as read from the file (int64, VH_NULL-free). Arrays the
 * file does not have are NULL. */
typedef struct vh_counts {
  int poly;                              /* PolyData: per-topology counts */
  int64_t nsteps;                        /* 1 without Steps */
  int has_steps;
  const int64_t *np; int64_t n_np;       /* NumberOfPoints */
  const int64_t *nc[VH_NTOPO];           /* NumberOfCells (UG: [0] only) */
  const int64_t *nci[VH_NTOPO];          /* NumberOfConnectivityIds */
  int64_t n_nc[VH_NTOPO], n_nci[VH_NTOPO];
  const double *values; int64_t n_values;
  const int64_t *part_offsets; int64_t n_part_offsets;
  const int64_t *number_of_parts; int64_t n_number_of_parts;
  const int64_t *point_offsets; int64_t n_point_offsets;
  const int64_t *cell_offsets; int64_t n_cell_offsets; int cell_offsets_cols;   /* 1-D: cols 1 */
  const int64_t *conn_offsets; int64_t n_conn_offsets; int conn_offsets_cols;
} vh_counts;

/* One computed partition (step, partition, counts and starts as VTK's reader computes them). */
typedef struct vh_slot {
  int64_t step, partition, entry; /* entry: index into the count datasets */
  int64_t np, nc, nci, point_off, cell_off, conn_off, offsets_off;
} vh_slot;

/* Computes every (step, partition) of a leaf. *out (and for PolyData *topo, one per slot)
 * are malloc'd. what names the leaf in errors (file and group). */
vd_code vh_compute(const vh_counts *c, const char *what, vh_slot **out, vh_topo **topo, int64_t *nout, vd_err *err);

#endif
