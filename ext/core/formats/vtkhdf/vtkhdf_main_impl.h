/* Internal to vtkhdf_main: what a part holds, the checks between parts, and the layout
 * writers. */
#ifndef VD_VTKHDF_MAIN_IMPL_H
#define VD_VTKHDF_MAIN_IMPL_H

#include <hdf5.h>

#include "vtkhdf.h"
#include "vtkhdf_main.h"

/* Part kinds the partitions and timesteps layouts know how to concatenate */
enum { VM_UG = 1, VM_POLY, VM_IMAGE, VM_OTHER };

/* One dataset of a part's /VTKHDF group that the main file maps (path below /VTKHDF) */
typedef struct vm_dset {
  char *path;
  hid_t type; /* the file type (a copy) */
  int rank;
  hsize_t dims[H5S_MAX_RANK];
} vm_dset;

struct vm_info {
  char *type;                /* Type */
  int kind;
  int64_t version[2];
  int temporal;              /* has a Steps group */
  int64_t nsteps;            /* its NSteps (1 without Steps) */
  int64_t nparts, np, nc[VH_NTOPO], nci[VH_NTOPO]; /* partitions and their sums */
  vm_dset *d;                /* geometry, counts, then PointData and CellData arrays */
  int nd;
  double image[21];          /* ImageData: WholeExtent, Origin, Spacing, Direction */
  int nimage[4];             /* how many values of each */
};

struct vm_table {
  vd_ctx *ctx;
  char *path;   /* the main file as given */
  char *dir;    /* realpath of its directory */
  char *base;   /* its file name */
  char *gdir;   /* its directory as given, with a final '/' ("" for none) */
  vm_layout layout;
  vm_list done; /* committed */
  vm_list cur;  /* in a transaction: committed plus this transaction's changes */
  int in_tx, dirty;
  vm_list *saves; /* cur at each open savepoint */
  int nsaves;
  int64_t next_id;
  /* The main file as this table last read or wrote it (device, inode, mtime, size; ""
   * none): a commit finding another one refuses, so two writers never lose each
   * other's members */
  char seen[96];
};

extern const char *const vm_layout_names[3];

void vm_info_free(vm_info *in);
/* Reads what file holds (through vh_open for Type, partitions and arrays; HDF5 for the
 * datasets' types and shapes) and checks it suits the layout on its own. The parts are
 * the user's files: vm_inspect asks the HDF5 helper (vtkhdf_main_proxy.c), which runs
 * vm_inspect_here (vtkhdf_main_part.c). */
vd_code vm_inspect(vd_ctx *ctx, vm_layout lay, const char *file, vm_info **out, vd_err *err);
vd_code vm_inspect_here(vd_ctx *ctx, vm_layout lay, const char *file, vm_info **out, vd_err *err);

/* A member as an existing main file names it (vtkhdf_main_load.c) */
typedef struct vm_found {
  char *stored; /* as stored: relative to the main file, or absolute */
  int64_t step; /* VD_INT_NULL but for timesteps */
  double time;
  int has_time;
  char *block;  /* composite */
} vm_found;
void vm_found_free(vm_found *f, int n);
/* The members main file mp (shown as shown) names in layout lay, read with HDF5: in the
 * helper (vm_load_scan), asked for by the parent (vm_load_read, vtkhdf_main_proxy.c):
 * the file on disk may be anyone's. */
vd_code vm_load_scan(vd_ctx *ctx, const char *mp, const char *shown, vm_layout lay, vm_found **out, int *n, vd_err *err);
vd_code vm_load_read(vd_ctx *ctx, const char *mp, const char *shown, vm_layout lay, vm_found **out, int *n, vd_err *err);
/* Checks member m against ref (the first member): same Type, arrays of the same shape,
 * same NSteps for composites, the same image geometry. */
vd_code vm_check_pair(vm_layout lay, const vm_member *ref, const vm_member *m, vd_err *err);
/* The dataset of in at path, or NULL */
const vm_dset *vm_find(const vm_info *in, const char *path);

/* Layout writers: fill the new file f (its /VTKHDF not yet made) from the members in
 * order; names[i] is member i's stored name. */
vd_code vm_write_vds(vm_table *t, hid_t f, vm_member **m, int n, char **names, vd_err *err);
vd_code vm_write_composite(vm_table *t, hid_t f, vm_member **m, int n, char **names, vd_err *err);
/* Reads the table's main file back into its member list (vtkhdf_main_load.c) */
vd_code vm_load(vm_table *t, vd_err *err);

/* Helpers of the writers and the loader (vtkhdf_main_part.c). */
/* Lexically cleaned absolute path ("." and ".." folded): for names whose file is gone */
char *vm_clean_path(const char *p);
/* Group creation list with creation order tracked and indexed (VTK iterates by it) */
hid_t vm_gcpl(void);
/* Writes an integer attribute of n values (int64, as VTK writes them) */
int vm_attr_i64(hid_t obj, const char *name, const int64_t *v, int n);
/* Writes the fixed-length UTF-8 string attribute Type, as VTK writes it */
int vm_attr_type(hid_t obj, const char *type);

#endif
