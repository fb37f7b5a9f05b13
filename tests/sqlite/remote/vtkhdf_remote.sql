-- VTKHDF on a remote store (http, s3, az): HDF5 reads through vdsql's store (a read-only HDF5 file driver over
-- range requests with a block cache), sub-files behind virtual datasets and external
-- links included; every request shows in vdsql_stats. Same rows as on local files.
.mode list
.headers on
SELECT block, step, partition, n_points, n_cells, point_offset, offsets_offset, source_file, status
  FROM vtkhdf_partitions('@DATA@/vtkhdf/ug3.vtkhdf');
-- a single file under vtkhdf_prefix (1 MiB): one range read, whose answer is the whole file and says its
-- size (no HEAD)
SELECT requests, bytes FROM vdsql_stats() WHERE backend = '@BACKEND@';
SELECT block, step, partition, n_points, n_cells, point_offset, offsets_offset, source_file, status
  FROM vtkhdf_partitions('@DATA@/vtkhdf/ext_partitions.vtkhdf');
-- and one per file of a layout: the main file and its three part files (4 more)
SELECT requests, bytes FROM vdsql_stats() WHERE backend = '@BACKEND@';
SELECT block, step, partition, n_points, n_cells, point_offset, cell_offset, source_file, status
  FROM vtkhdf_partitions('@DATA@/vtkhdf/ext_composite.vtkhdf');
SELECT step, time, partition, n_points, n_cells, point_offset, cell_offset, connectivity_offset, offsets_offset, source_file
  FROM vtkhdf_partitions('@DATA@/vtkhdf/ext_steps.vtkhdf');
SELECT partition, n_points, n_cells, point_offset, source_file, status FROM vtkhdf_partitions('@DATA@/vtkhdf/poly.vtkhdf');
-- a sub-file the server does not have (404): missing_source, never zero counts
SELECT partition, n_points, n_cells, point_offset, offsets_offset, source_file, status
  FROM vtkhdf_partitions('@DATA@/vtkhdf/ext_missing.vtkhdf');
SELECT object, file, resolved_path, "exists" FROM vtkhdf_sources('@DATA@/vtkhdf/ext_missing.vtkhdf') WHERE object LIKE '%/Points';
SELECT * FROM vtkhdf_blocks('@DATA@/vtkhdf/ext_composite.vtkhdf');
SELECT association, name, tuples, source_file FROM vtkhdf_arrays('@DATA@/vtkhdf/ext_composite.vtkhdf');
-- a sub-file that is there but not HDF5: bad_source, the partition after it keeps its starts
SELECT partition, n_points, point_offset, source_file, status FROM vtkhdf_partitions('@DATA@/vtkhdf/src_text.vtkhdf');
SELECT block, n_points, source_file, status FROM vtkhdf_partitions('@DATA@/vtkhdf/elink_empty.vtkhdf');
-- errors name the URL and the fault
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/nothing.vtkhdf');
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/not_hdf5.vtkhdf');
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/truncated.vtkhdf');
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/steps_short.vtkhdf');
