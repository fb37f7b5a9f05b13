/* VTKHDF: what a VTKHDF file (and the sub-files behind it) holds, read with the HDF5 C
 * library into plain rows the relations iterate. Only the small datasets (counts,
 * Steps) are read; the big arrays are only sized. Facts: ../shared/spec/vtkhdf.md. */
#ifndef VD_VTKHDF_H
#define VD_VTKHDF_H

#include <stdint.h>

#include "vd_ctx.h"
#include "vd_err.h"
#include "vd_value.h"

#define VH_NULL VD_INT_NULL /* an integer column that has no value for this row */

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
  /* the integers, one after the other: vtkhdf_partitions hands them to the front end as
   * an array (vd_relation.ints) */
  int64_t step, partition, n_points, n_cells, n_conn, point_off, cell_off, conn_off, offsets_off;
  int64_t n_trees;         /* HyperTreeGrid: NumberOfTrees of the partition; VH_NULL otherwise */
  double time;
  int has_time;
  vh_topo *topo;           /* PolyData: malloc'd (a streamed row: the walker's); NULL otherwise */
} vh_part;

typedef struct vh_array {
  char *block, *association, *name, *type, *attribute, *source_file;
  int64_t components, tuples;
} vh_array;

/* What a bad_source lacks, as the HDF5 helper found it: the object absent, fewer values
 * than the virtual dataset maps (HDF5 fills the rest), or something else (not HDF5,
 * another rank). vdsql_check's verdicts come from it, never from the problem's words. */
typedef enum vh_fault { VH5_FAULT_OTHER, VH5_FAULT_ABSENT, VH5_FAULT_SHORT } vh_fault;

typedef struct vh_source {
  char *object, *kind, *file, *resolved, *target; /* file and resolved as shown (redacted) */
  int64_t exists;                                 /* 1, 0, or VH_NULL when not asked */
  const char *status;                             /* ok, missing_source, bad_source, disallowed_source */
  char *problem;                                  /* the fault, NULL when ok */
  int fault;                                      /* bad_source: vh_fault (absent, short, other) */
} vh_source;

/* One row of vtkhdf_amr_boxes: an OverlappingAMR box of a step and level */
typedef struct vh_amrbox {
  const char *block; /* pooled: the leaf's block path */
  int64_t step, level, box, ext[6]; /* ext: imin, imax, jmin, jmax, kmin, kmax as stored */
  double origin[3], spacing[3];     /* the box's own origin (Origin + lo * Spacing), its level's Spacing */
} vh_amrbox;

/* One row of vtkhdf_trees: a HyperTreeGrid tree of a step and partition. Offsets are
 * where VTK's reader reads it: rows of CellData (before the array's own Steps offset),
 * bit positions in Descriptors and Mask (byte offset * 8 + bit, most significant bit
 * first as vtkBitArray packs them). */
typedef struct vh_tree {
  const char *block; /* pooled */
  int64_t step, partition, tree, tree_id, depth, n_cells, cell_off, desc_off, desc_bits, mask_off, mask_bits;
} vh_tree;

/* The lengths of a UnstructuredGrid or PolyData leaf's geometry arrays (their HDF5
 * extents; nothing is read), against which vdsql_check sets the partitions' slices.
 * VH_NULL: the leaf has no such dataset. UnstructuredGrid uses offs[0] and conn[0];
 * PolyData has no Types and one Offsets and Connectivity per topology. */
typedef struct vh_geom {
  const char *block; /* pooled */
  int poly;
  int64_t points, types, offs[VH_NTOPO], conn[VH_NTOPO];
} vh_geom;

typedef struct vh_block {
  char *path, *name, *kind, *leaf, *type, *external_file;
  int64_t index;
} vh_block;

/* What a leaf's PointData/CellData arrays need to place each partition's slice (spec
 * section 3): per array, Steps/<Assoc>DataOffsets/<name> when the file has it (the array
 * changes at its own rate) or NULL (it follows the geometry); per step, the geometry's
 * own Steps start, subtracted from the partition's start to get its offset in the step. */
typedef struct vh_larray {
  const char *association, *name; /* static / pooled */
  int64_t *o;                     /* one per step, or NULL */
} vh_larray;
typedef struct vh_leafarrs {
  const char *block; /* pooled: the block of the partition rows these apply to */
  int64_t nsteps;
  int64_t *base_pt, *base_cell; /* per step; NULL without Steps (base 0) */
  vh_larray *a;
  int na;
} vh_leafarrs;

/* The rows of vtkhdf_partitions come in segments, in file order: a run of materialised
 * rows (doc.parts[lo, hi)), or a streamed leaf whose rows are made as they are read. */
typedef struct vh_stream vh_stream;
typedef struct vh_seg {
  int lo, hi;
  vh_stream *st;
} vh_seg;

typedef struct vh_doc {
  char *path;  /* as given (a URL with its userinfo and ?query: for requests only) */
  char *shown; /* path as errors and columns show it (vh_shown: no userinfo, no query) */
  vd_ctx *ctx;
  int remote;
  int64_t file; /* the HDF5 file, kept open while streamed leaves read from it; else -1 */
  vh_seg *segs;
  int nsegs, capsegs;
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
  vh_leafarrs *larrs; /* VH_STARTS: the UnstructuredGrid and PolyData leaves' arrays */
  int nlarrs, caplarrs;
  vh_amrbox *boxes;   /* VH_AMR */
  int nboxes, capboxes;
  vh_tree *trees;     /* VH_TREES */
  int ntrees, captrees;
  vh_geom *geoms;     /* VH_GEOM */
  int ngeoms, capgeoms;
} vh_doc;

/* What to collect (the rest is skipped, which keeps each relation cheap). */
#define VH_PARTS 0x1
#define VH_ARRAYS 0x2
#define VH_SOURCES 0x4
#define VH_BLOCKS 0x8
#define VH_STARTS 0x10
#define VH_AMR 0x20
#define VH_TREES 0x40
#define VH_GEOM 0x80 /* with VH_PARTS: the geometry arrays' lengths (vdsql_check) */

/* Reads the file at url (a local path or file:// URL) into doc. Errors name the file and
 * the fault; HDF5's own message is carried into err, never printed. */
vd_code vh_open(vd_ctx *ctx, const char *url, unsigned what, vh_doc *doc, vd_err *err);
void vh_doc_free(vh_doc *doc);

/* Walks the rows of vtkhdf_partitions (VH_PARTS) in order. Start from {doc}; each call
 * moves to the next row (the first call to the first): *cur, or eof. A streamed row's
 * memory is reused by the next call. */
#define VH_BATCH 64 /* streamed rows are made this many at a time */
typedef struct vh_rows {
  vh_doc *doc;
  int seg, i;
  int eof;
  const vh_part *cur;
  vh_part buf[VH_BATCH];  /* a streamed leaf's rows, made in batches */
  vh_topo tbuf[VH_BATCH];
  int bi, bn;             /* next row of buf, rows in it */
  vd_code pend;           /* the error that ended the batch, reported after its rows */
  char pend_msg[sizeof(((vd_err *)0)->msg)];
} vh_rows;
vd_code vh_rows_next(vh_rows *r, vd_err *err);
/* 1 when the current row comes from a streamed leaf: every row of that leaf has the same
 * block and type. vh_rows_skip_leaf then drops the rest of that leaf's rows (the next
 * vh_rows_next gives the row after them), so a relation that makes nothing of a leaf's
 * rows (vtkhdf_topologies of an UnstructuredGrid) does not walk them all. */
int vh_rows_streamed(const vh_rows *r);
void vh_rows_skip_leaf(vh_rows *r);

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

/* A count dataset (NumberOfPoints, NumberOfCells, NumberOfConnectivityIds) seen through
 * a window of entries, so a file with millions of partitions is never held whole. An
 * in-memory array is a window that covers everything. Loaded entries are checked >= 0. */
#define VH_WINDOW 8192 /* entries per window: 64 KiB per column, few enough H5Dread calls */
typedef vd_code (*vh_load_fn)(void *arg, int64_t lo, int64_t n, int64_t *dst, vd_err *err);
typedef struct vh_col {
  const char *name, *what; /* dataset and leaf, for errors */
  int64_t n;               /* entries in the dataset */
  int64_t window;          /* entries per load (VH_WINDOW; the unit tests use tiny ones) */
  int64_t lo, hi;          /* the window: entries [lo, hi) are v[0 .. hi-lo) */
  const int64_t *v;
  int64_t *buf;
  vh_load_fn load;
  void *arg;
} vh_col;
void vh_col_mem(vh_col *c, const char *name, const int64_t *v, int64_t n);
void vh_col_lazy(vh_col *c, const char *name, const char *what, int64_t n, vh_load_fn load, void *arg);
void vh_col_free(vh_col *c);
vd_code vh_col_fill(vh_col *c, int64_t e, vd_err *err);
static inline vd_code vh_col_get(vh_col *c, int64_t e, int64_t *out, vd_err *err) {
  if ((uint64_t)(e - c->lo) >= (uint64_t)(c->hi - c->lo)) {
    vd_code rc = vh_col_fill(c, e, err);
    if (rc) return rc;
  }
  *out = c->v[e - c->lo];
  return VD_OK;
}

/* Walks every (step, partition) of a leaf in order, one at a time: the Steps arrays come
 * from c (small, in memory), the count entries from the columns. scan[k] is a second
 * reader of nc[k] for PolyData's Offsets rule (it walks the earlier entries). */
typedef struct vh_iter vh_iter;
/* Optional (a leaf with broken sub-files): fix sees entry e's counts (np, nc[k], nci[k])
 * before they are summed, with the iterator at that partition's starts, and may replace
 * them; fixscan may replace the NumberOfCells[k] of an earlier entry e that PolyData's
 * Offsets rule reads (v as read). */
typedef vd_code (*vh_fix_fn)(void *arg, const vh_iter *it, int64_t e, int64_t *np, int64_t *nc, int64_t *nci,
                             vd_err *err);
typedef int64_t (*vh_fixscan_fn)(void *arg, int k, int64_t e, int64_t v);
struct vh_iter {
  const vh_counts *c;
  const char *what;
  vh_col *np, *nc[VH_NTOPO], *nci[VH_NTOPO], *scan[VH_NTOPO];
  int64_t t, j, n, p; /* step, partition in it, its partitions, its first entry */
  int64_t pt, cell[VH_NTOPO], conn[VH_NTOPO], offs[VH_NTOPO];
  int64_t m[VH_NTOPO], msum[VH_NTOPO], last_p, last_cell[VH_NTOPO]; /* PolyData scan state */
  vh_fix_fn fix;         /* set after vh_iter_init; NULL: the counts as read */
  vh_fixscan_fn fixscan;
  void *fix_arg;
};

/* Checks the Steps arrays against each other and against the columns' lengths (nothing
 * is read), and positions before the first partition. */
vd_code vh_iter_init(vh_iter *it, const vh_counts *c, vh_col *np, vh_col *const *nc, vh_col *const *nci,
                     vh_col *const *scan, const char *what, vd_err *err);
/* The next partition into *x (and, for PolyData, *y); *eof at the end. */
vd_code vh_iter_next(vh_iter *it, vh_slot *x, vh_topo *y, int *eof, vd_err *err);
/* Up to max partitions into x[] (and y[] for PolyData): *n of them, fewer at the end.
 * On an error, the *n before it are good. */
vd_code vh_iter_fill(vh_iter *it, vh_slot *x, vh_topo *y, int max, int *n, vd_err *err);

/* Computes every (step, partition) of a leaf whose counts are in c's arrays. *out (and
 * for PolyData *topo, one per slot) are malloc'd. what names the leaf in errors. */
vd_code vh_compute(const vh_counts *c, const char *what, vh_slot **out, vh_topo **topo, int64_t *nout, vd_err *err);

/* err's message with every URL in it shown as vh_show shows it (userinfo and ?query
 * cut: vtkhdf_vfd.c): the last guard before a message leaves the reader. */
void vh_err_redact(vd_err *err);

#endif
