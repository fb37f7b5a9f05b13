-- A missing sub-file: HDF5 reads zeros for a missing virtual-dataset source; vdsql reports
-- missing_source with NULL counts for exactly that file's rows and keeps every other row.
.mode list
.headers on
.system mv @DATA@/vtkhdf/ext_partitions_part0.vtkhdf @DATA@/vtkhdf/gone0
SELECT partition, n_points, n_cells, point_offset, cell_offset, offsets_offset, source_file, status
  FROM vtkhdf_partitions('@DATA@/vtkhdf/ext_partitions.vtkhdf');
SELECT object, "exists" FROM vtkhdf_sources('@DATA@/vtkhdf/ext_partitions.vtkhdf') WHERE object LIKE '%/NumberOfPoints';
.system mv @DATA@/vtkhdf/gone0 @DATA@/vtkhdf/ext_partitions_part0.vtkhdf
-- a step file: both partitions of step 1 are in it, so the second one's starts are unknown
.system mv @DATA@/vtkhdf/ext_steps_1.vtkhdf @DATA@/vtkhdf/gone1
SELECT step, partition, n_points, point_offset, cell_offset, source_file, status
  FROM vtkhdf_partitions('@DATA@/vtkhdf/ext_steps.vtkhdf');
.system mv @DATA@/vtkhdf/gone1 @DATA@/vtkhdf/ext_steps_1.vtkhdf
-- an external-link block: one row for the block, its file named
.system mv @DATA@/vtkhdf/ext_composite_BlockA.vtkhdf @DATA@/vtkhdf/gone2
SELECT block, step, partition, n_points, source_file, status FROM vtkhdf_partitions('@DATA@/vtkhdf/ext_composite.vtkhdf');
SELECT block_path, kind, type, external_file FROM vtkhdf_blocks('@DATA@/vtkhdf/ext_composite.vtkhdf');
SELECT object, kind, "exists" FROM vtkhdf_sources('@DATA@/vtkhdf/ext_composite.vtkhdf') WHERE kind = 'external_link';
.system mv @DATA@/vtkhdf/gone2 @DATA@/vtkhdf/ext_composite_BlockA.vtkhdf
SELECT count(*), sum(status = 'ok') FROM vtkhdf_partitions('@DATA@/vtkhdf/ext_composite.vtkhdf');
-- generated without its part1 (the http tests use this one too)
SELECT partition, n_points, n_cells, point_offset, offsets_offset, source_file, status
  FROM vtkhdf_partitions('@DATA@/vtkhdf/ext_missing.vtkhdf');
-- sub-files that are there but broken (a text file, an HDF5 file without /VTKHDF, one
-- without NumberOfConnectivityIds, count datasets without rows): bad_source with NULL
-- counts, never zeros, and the partition after it keeps its true starts (10, 3, 12, 5)
SELECT partition, n_points, n_cells, n_connectivity_ids, point_offset, cell_offset, connectivity_offset, offsets_offset, status
  FROM vtkhdf_partitions('@DATA@/vtkhdf/src_text.vtkhdf');
SELECT partition, n_points, point_offset, connectivity_offset, status FROM vtkhdf_partitions('@DATA@/vtkhdf/src_empty.vtkhdf');
SELECT partition, n_points, point_offset, connectivity_offset, status FROM vtkhdf_partitions('@DATA@/vtkhdf/src_no_nci.vtkhdf');
SELECT partition, n_points, point_offset, connectivity_offset, status FROM vtkhdf_partitions('@DATA@/vtkhdf/src_short.vtkhdf');
SELECT object, "exists", status, problem FROM vtkhdf_sources('@DATA@/vtkhdf/src_no_nci.vtkhdf') WHERE status != 'ok';
-- external links to a text file and to an HDF5 file without the object
SELECT block, step, n_points, source_file, status FROM vtkhdf_partitions('@DATA@/vtkhdf/elink_text.vtkhdf');
SELECT object, status, problem FROM vtkhdf_sources('@DATA@/vtkhdf/elink_empty.vtkhdf') WHERE status != 'ok';
SELECT block_path, type, external_file FROM vtkhdf_blocks('@DATA@/vtkhdf/elink_empty.vtkhdf');
