-- VTKHDF arrays, sources and the Assembly tree (generated files).
.mode list
.headers on
SELECT * FROM vtkhdf_arrays('@DATA@/vtkhdf/ug3.vtkhdf');
-- ImageData arrays are (t, z, y, x[, c]): components only from the extra trailing axis
SELECT block, association, name, type, components, tuples FROM vtkhdf_arrays('@DATA@/vtkhdf/image.vtkhdf');
SELECT block, association, name, type, components, tuples FROM vtkhdf_arrays('@DATA@/vtkhdf/image_v1.vtkhdf');
-- arrays of a partitioned block live in several files: source_file is NULL (see vtkhdf_sources)
SELECT block, association, name, tuples, source_file FROM vtkhdf_arrays('@DATA@/vtkhdf/ext_composite.vtkhdf');
SELECT * FROM vtkhdf_sources('@DATA@/vtkhdf/ext_composite.vtkhdf');
SELECT object, kind, file, target, "exists" FROM vtkhdf_sources('@DATA@/vtkhdf/ext_partitions.vtkhdf') WHERE object LIKE '%Points';
SELECT kind, count(*), sum("exists") FROM vtkhdf_sources('@DATA@/vtkhdf/ext_steps.vtkhdf') GROUP BY kind;
SELECT count(*) FROM vtkhdf_sources('@DATA@/vtkhdf/ug3.vtkhdf');
SELECT * FROM vtkhdf_blocks('@DATA@/vtkhdf/ext_composite.vtkhdf');
SELECT * FROM vtkhdf_blocks('@DATA@/vtkhdf/mb_unordered.vtkhdf');
SELECT count(*) FROM vtkhdf_blocks('@DATA@/vtkhdf/ug3.vtkhdf');
-- per-array starts: arrays without Steps/*DataOffsets follow the geometry
SELECT * FROM vtkhdf_array_starts('@DATA@/vtkhdf/ug_temporal.vtkhdf') WHERE step = 1;
SELECT * FROM vtkhdf_array_starts('@DATA@/vtkhdf/ext_missing.vtkhdf');
SELECT count(*) FROM vtkhdf_array_starts('@DATA@/vtkhdf/image.vtkhdf');
-- local VTKHDF reads are counted like every other local read (main file and sub-files)
SELECT vdsql_config('stats', 'reset');
SELECT count(*) FROM vtkhdf_partitions('@DATA@/vtkhdf/ext_composite.vtkhdf');
SELECT backend, requests > 0 AS counted, bytes > 0 AS read FROM vdsql_stats() WHERE backend = 'file';
