/* Internal to the VTKHDF reader (vtkhdf_file.c, vtkhdf_grid.c, vtkhdf_tree.c): the
 * state of one vh_open and the helpers its parts share. */
#ifndef VD_VTKHDF_READ_H
#define VD_VTKHDF_READ_H

#include <stdlib.h>
#include <string.h>

#include "vtkhdf.h"
#include "vtkhdf_h5.h"

/* One vh_open in progress */
typedef struct rd {
  vh_doc *doc;
  vd_ctx *ctx;
  int remote;
  unsigned what;
  hid_t file;
  const char *path; /* the file as given: for HDF5 and the resolution of sub-files */
  const char *name; /* the file as errors and columns show it (redacted) */
  vd_err *err;
} rd;

/* Grows arr by doubling; returns VD_NOMEM (through r->err) from the caller when it cannot. */
#define GROW(arr, n, cap)                                              \
  do {                                                                 \
    if ((n) == (cap)) {                                                \
      int nc_ = (cap) ? (cap) * 2 : 16;                                \
      void *p_ = realloc((arr), (size_t)nc_ * sizeof *(arr));          \
      if (!p_) return vd_nomem(r->err);                                \
      (arr) = p_;                                                      \
      (cap) = nc_;                                                     \
    }                                                                  \
  } while (0)

/* A group's children (vhr_children) */
typedef struct names {
  char **v;
  int n, cap;
} names;

/* The leaf being read (a plain file's /VTKHDF or a composite's block) */
typedef struct leaf {
  const char *block, *type, *holder; /* holder: the file that holds this leaf's group */
  const char *shown;                 /* holder as columns show it (redacted) */
  char where[1024];                  /* names the leaf in errors (redacted) */
} leaf;

char *vhr_dup0(const char *s);
/* The doc's string pool (rows point into it); clears *ok when memory runs out */
const char *vhr_intern(vh_doc *d, const char *s, int *ok);
/* Children of g in creation order, or name order when creation order is not tracked
 * (or by_name). An error says "<prefix>: cannot list <name>" with HDF5's message; *ns is
 * empty then. */
vd_code vhr_children(rd *r, hid_t g, int by_name, const char *prefix, const char *name, names *ns);
/* Opens leaf L's group name (PointData, ...) and lists it: *g = -1 and no error when the
 * leaf has none. The caller closes *g and frees *ns. */
vd_code vhr_data_group(rd *r, hid_t lg, const leaf *L, const char *name, hid_t *g, names *ns);
void vhr_names_free(names *ns);
/* A materialised partition row of leaf L, with NULL counts and status ok */
vd_code vhr_add_part(rd *r, const leaf *L, vh_part **out);
/* The Type of group g (VTK 9.1's rule for Version 1.x files without one); NULL: none */
vd_code vhr_read_type(rd *r, hid_t g, const char *where, char **type);
/* The WholeExtent of group g: *has = 0 when it has none (or not 6 numbers). Integers as
 * stored; floating-point values (some writers store float32) must be whole numbers, else
 * an error naming where and the attribute. */
vd_code vhr_whole_extent(rd *r, hid_t g, const char *where, int64_t ext[6], int *has);
/* Everything the doc wants of one leaf */
vd_code vhr_do_leaf(rd *r, hid_t lg, leaf *L);

/* vtkhdf_grid.c: the partition rows of a leaf */
vd_code vhr_grid_parts(rd *r, hid_t lg, const leaf *L, int poly); /* UnstructuredGrid, PolyData */
/* VH_GEOM: the lengths of the leaf's geometry arrays (vtkhdf_geom.c) */
vd_code vhr_geom(rd *r, hid_t lg, const leaf *L, int poly);
vd_code vhr_image_parts(rd *r, hid_t lg, const leaf *L);          /* one row per step */

/* Steps header (vtkhdf_grid.c): NSteps (1 without Steps or without the attribute) and the
 * time values; g is the Steps group or -1 */
typedef struct steps {
  hid_t g;
  int64_t nsteps;
  double *values;
  int64_t nvalues;
} steps;
vd_code vhr_open_steps(rd *r, hid_t lg, const leaf *L, steps *s);
void vhr_close_steps(steps *s);

/* vtkhdf_types.c: the partition rows (and boxes, trees) of the other Types */
vd_code vhr_amr(rd *r, hid_t lg, const leaf *L);          /* OverlappingAMR: rows per box (VH_PARTS, VH_AMR) */
vd_code vhr_htg(rd *r, hid_t lg, const leaf *L);          /* HyperTreeGrid: per partition (VH_PARTS), tree (VH_TREES) */
vd_code vhr_struct_parts(rd *r, hid_t lg, const leaf *L); /* RectilinearGrid, StructuredGrid, Table: per step */
vd_code vhr_amr_arrays(rd *r, hid_t lg, const leaf *L);   /* the arrays of each Level<k> */

/* vtkhdf_tree.c: arrays, the Assembly, the sources */
vd_code vhr_leaf_arrays(rd *r, hid_t lg, const leaf *L, int image, int temporal);
vd_code vhr_assembly(rd *r, hid_t root, hid_t g, const char *path, int depth);
vd_code vhr_walk_sources(rd *r, hid_t g, const char *path, const char *holder, int depth);

#endif
