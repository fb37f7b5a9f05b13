/* vtkhdf_main: assembles one VTKHDF main file over existing local VTKHDF files, without
 * copying their data, in the three layouts of VTK 9.4's multi-file writer (spec
 * ../shared/spec/vtkhdf.md section 5): partitions (virtual datasets), timesteps (a Steps
 * group and virtual datasets) and composite (external links). The member list is edited
 * in transactions; at commit the whole main file is rewritten under a temporary name and
 * renamed into place. Engine-free: the SQLite table (relations/vtkhdf/vtkhdf_main_table.c) and, later,
 * the PostgreSQL front end drive it through the vd_table_ops hooks below. */
#ifndef VD_VTKHDF_MAIN_H
#define VD_VTKHDF_MAIN_H

#include <stdint.h>

#include "vd_ctx.h"
#include "vd_err.h"

typedef enum vm_layout { VM_PARTITIONS, VM_TIMESTEPS, VM_COMPOSITE } vm_layout;

typedef struct vm_info vm_info; /* what a part file holds (vtkhdf_main_part.c) */

/* One row. Immutable once listed (lists share them through refs), except info, a cache. */
typedef struct vm_member {
  int refs;
  int64_t id;    /* the rowid */
  char *file;    /* the part as given (read back: the main file's directory as given, joined) */
  char *canon;   /* canonical (realpath; cleaned when the file is gone): compared, and stored */
  int64_t step;  /* timesteps; VD_INT_NULL otherwise */
  double time;
  int has_time;
  char *block;   /* composite */
  vm_info *info; /* NULL until inspected */
} vm_member;

typedef struct vm_list {
  vm_member **v;
  int n, cap;
} vm_list;

typedef struct vm_table vm_table;

/* args: the main file's path (local) and the layout name. An existing main file must be
 * one this layout made: its members are read back from its mappings or links. */
vd_code vm_open(vd_ctx *ctx, const char *path, const char *layout, vm_table **out, vd_err *err);
void vm_close(vm_table *t);
/* The rows a scan shows now (in a transaction: with its changes), held (refs) so that
 * changes during the scan do not move them: *n members, freed by vm_rows_free */
vm_member **vm_rows(const vm_table *t, int *n);
void vm_rows_free(vm_member **v, int n);
/* The name the main file stores for a part (canon: its canonical path), relative to
 * the main file or absolute: malloc'd */
char *vm_stored_name(const vm_table *t, const char *canon);
vm_layout vm_table_layout(const vm_table *t);

/* file: as given; step, time, block: VD_INT_NULL / has_time 0 / NULL when not given */
vd_code vm_insert(vm_table *t, const char *file, int64_t step, double time, int has_time, const char *block,
                  int64_t *rowid, vd_err *err);
vd_code vm_remove(vm_table *t, int64_t rowid, vd_err *err);

/* vd_table_ops hooks (tab is a vm_table) */
vd_code vm_tx_begin(void *t, vd_err *err);
vd_code vm_tx_sync(void *t, vd_err *err);
void vm_tx_commit(void *t);
void vm_tx_rollback(void *t);
void vm_tx_savepoint(void *t, int n);
void vm_tx_release(void *t, int n);
void vm_tx_rollback_to(void *t, int n);

#endif
