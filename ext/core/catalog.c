/* The list of every relation and function, in the order front ends register them. */
#include "vd_catalog.h"

extern const vd_relation vd_rel_vds_layout, vd_rel_vds_axes, vd_rel_vds_channels,
    vd_rel_vds_metadata, vd_rel_vds_layers, vd_rel_vds_pages, vd_rel_vds_chunks,
    vd_rel_vds_samples, vd_rel_vds_objects, vd_rel_vds_audit, vd_rel_vds_levels, vd_rel_vdsql_stats,
    vd_rel_lindi_files, vd_rel_tar_members, vd_rel_lindi_refs, vd_rel_lindi_tar, vd_rel_lindi_repair;
extern const vd_relation vd_rel_vtkhdf_partitions, vd_rel_vtkhdf_topologies, vd_rel_vtkhdf_arrays,
    vd_rel_vtkhdf_sources, vd_rel_vtkhdf_blocks, vd_rel_vtkhdf_array_starts, vd_rel_vdsql_relations, vd_rel_vdsql_config;
extern const vd_relation vd_rel_vtkhdf_amr_boxes, vd_rel_vtkhdf_trees, vd_rel_vtkhdf_main;
extern const vd_relation vd_rel_store_objects, vd_rel_vds_datasets, vd_rel_vdsql_datasets, vd_rel_vdsql_check,
    vd_rel_vdsql_check_summary;
extern const vd_function vd_fn_vds_chunk_data, vd_fn_vds_create, vd_fn_vds_repair, vd_fn_vds_chunk_bytes, vd_fn_vdsql_version,
    vd_fn_vdsql_config, vd_fn_lindi_read;

const vd_relation *const vd_relations[] = {
    &vd_rel_vds_layout, &vd_rel_vds_axes,   &vd_rel_vds_channels, &vd_rel_vds_metadata,
    &vd_rel_vds_layers, &vd_rel_vds_pages,  &vd_rel_vds_chunks,   &vd_rel_vds_samples,
    &vd_rel_vds_objects, &vd_rel_vds_audit, &vd_rel_vds_levels,
    &vd_rel_lindi_files, &vd_rel_tar_members, &vd_rel_lindi_refs, &vd_rel_lindi_tar, &vd_rel_lindi_repair, &vd_rel_vdsql_stats,
    &vd_rel_vtkhdf_partitions, &vd_rel_vtkhdf_topologies, &vd_rel_vtkhdf_arrays, &vd_rel_vtkhdf_sources,
    &vd_rel_vtkhdf_blocks, &vd_rel_vtkhdf_array_starts, &vd_rel_vtkhdf_amr_boxes, &vd_rel_vtkhdf_trees, &vd_rel_vtkhdf_main,
    &vd_rel_vdsql_relations, &vd_rel_vdsql_config, &vd_rel_store_objects, &vd_rel_vds_datasets,
    &vd_rel_vdsql_datasets, &vd_rel_vdsql_check, &vd_rel_vdsql_check_summary, NULL};

const vd_function *const vd_functions[] = {&vd_fn_vds_chunk_data, &vd_fn_vds_create, &vd_fn_vds_repair, &vd_fn_vds_chunk_bytes,
                                           &vd_fn_lindi_read,     &vd_fn_vdsql_version, &vd_fn_vdsql_config, NULL};

int vd_rel_arg_col(const vd_relation *r, int k) {
  for (int i = 0; i < r->ncols; i++)
    if ((r->cols[i].flags & VD_COL_ARG) && k-- == 0) return i;
  return -1;
}

int vd_rel_null_col(const vd_relation *r, const vd_value *row) {
  for (int i = 0, n = 0; i < r->ncols; i++) {
    if (r->cols[i].flags & VD_COL_ARG) continue;
    if ((r->cols[i].flags & VD_COL_NOTNULL) && row[n].type == VD_NULL) return i;
    n++;
  }
  return -1;
}

int vd_rel_nargs(const vd_relation *r) {
  int n = 0;
  for (int i = 0; i < r->ncols; i++) n += (r->cols[i].flags & VD_COL_ARG) != 0;
  return n;
}

double vd_rel_rows(const vd_relation *r, vd_ctx *ctx, const vd_value *args, int nargs, const vd_filter *f, int nf) {
  double rows = r->rows > 0 ? r->rows : 1000;
  if (ctx && args && r->known) {
    double k = r->known(ctx, args, nargs);
    if (k > 0) rows = k;
  }
  if (r->estimate) rows = r->estimate(rows, f, nf);
  return rows < 1 ? 1 : rows;
}

double vd_rel_requests(const vd_relation *r, double rows) {
  return r->requests + (r->rows_per_request > 0 ? rows / r->rows_per_request : 0);
}
