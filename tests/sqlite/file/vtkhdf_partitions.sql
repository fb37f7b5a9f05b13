-- VTKHDF partitions: counts and starts as VTK's reader computes them (generated files).
.mode list
.headers on
-- 3 partitions, the middle one empty: Offsets starts still count its one stored value (+j)
SELECT block, step, time, partition, type, n_points, n_cells, n_connectivity_ids, point_offset, cell_offset,
       connectivity_offset, offsets_offset, source_file, status FROM vtkhdf_partitions('@DATA@/vtkhdf/ug3.vtkhdf');
-- temporal, moving geometry, 1-D CellOffsets; NSteps stored as int32, Values as float32
SELECT step, time, partition, n_points, n_cells, n_connectivity_ids, point_offset, cell_offset, connectivity_offset,
       offsets_offset FROM vtkhdf_partitions('@DATA@/vtkhdf/ug_temporal.vtkhdf');
-- ImageData: one row per step, counts from WholeExtent; Version 1.0 without Type: 9.1's rule
SELECT step, time, type, n_points, n_cells, point_offset, status FROM vtkhdf_partitions('@DATA@/vtkhdf/image.vtkhdf');
SELECT step, time, type, n_points, n_cells, status FROM vtkhdf_partitions('@DATA@/vtkhdf/image_v1.vtkhdf');
-- MultiBlock without creation order: name order; an empty leaf (no Type) is reported, not skipped
SELECT block, step, partition, type, n_points, status FROM vtkhdf_partitions('@DATA@/vtkhdf/mb_unordered.vtkhdf');
-- the multi-file layouts: each partition names the file holding its Points
SELECT block, step, partition, n_points, point_offset, offsets_offset, source_file, status
  FROM vtkhdf_partitions('@DATA@/vtkhdf/ext_partitions.vtkhdf');
SELECT block, step, partition, n_points, n_cells, point_offset, cell_offset, source_file, status
  FROM vtkhdf_partitions('@DATA@/vtkhdf/ext_composite.vtkhdf');
SELECT step, time, partition, n_points, n_cells, point_offset, cell_offset, connectivity_offset, offsets_offset, source_file
  FROM vtkhdf_partitions('@DATA@/vtkhdf/ext_steps.vtkhdf');
-- joins like any table: points per step
SELECT step, sum(n_points) AS points, count(*) AS parts FROM vtkhdf_partitions('@DATA@/vtkhdf/ext_steps.vtkhdf') GROUP BY step;
-- a NULL path gives no rows
SELECT count(*) FROM vtkhdf_partitions(NULL);
-- PolyData, points per step but connectivity stored once (CellOffsets stay 0 while
-- PartOffsets grows): Offsets starts by PolyData's own rule, per topology
SELECT step, time, partition, n_points, n_cells, n_connectivity_ids, point_offset, cell_offset, connectivity_offset,
       offsets_offset FROM vtkhdf_partitions('@DATA@/vtkhdf/poly.vtkhdf');
SELECT * FROM vtkhdf_topologies('@DATA@/vtkhdf/poly.vtkhdf');
SELECT count(*) FROM vtkhdf_topologies('@DATA@/vtkhdf/ug3.vtkhdf');
