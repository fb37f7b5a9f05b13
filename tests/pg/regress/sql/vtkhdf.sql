-- VTKHDF read relations in PostgreSQL over build/mkvtkhdf's files (VDSQL_VTK names their
-- folder): the queries and values of tests/sqlite/file/vtkhdf_meta.sql and .out.
\set VERBOSITY terse
\getenv vtk VDSQL_VTK
\set ext :vtk '/ext_partitions.vtkhdf'
\set comp :vtk '/ext_composite.vtkhdf'
\set steps :vtk '/ext_steps.vtkhdf'
SELECT step, partition, type, n_points, n_cells, n_connectivity_ids FROM vtkhdf_partitions(:'ext') ORDER BY 1, 2;
SELECT block, association, name, tuples FROM vtkhdf_arrays(:'comp') ORDER BY 1, 2, 3;
SELECT object, kind, target, "exists" FROM vtkhdf_sources(:'ext') WHERE object LIKE '%Points' ORDER BY 1, 3;
SELECT kind, count(*), sum("exists") FROM vtkhdf_sources(:'steps') GROUP BY kind ORDER BY 1;
SELECT block_path, name, kind, leaf, index, type, regexp_replace(external_file, '^.*/', '') AS external_file
  FROM vtkhdf_blocks(:'comp') ORDER BY 1;
