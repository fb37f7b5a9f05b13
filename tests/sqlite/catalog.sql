-- Catalog discovery: store_objects and vds_datasets on the test datasets (over http both
-- are refused: a server cannot be listed). The plans show the hints the cursor gets:
-- "U<hex>;" the columns read (colUsed), "-1:L," / "-1:O," a LIMIT / OFFSET it may stop at,
-- only where SQLite cuts the rows right after the scan.
EXPLAIN QUERY PLAN SELECT key FROM store_objects('@DATA@/survey/') LIMIT 3;
EXPLAIN QUERY PLAN SELECT * FROM store_objects('@DATA@/survey/') LIMIT 3 OFFSET 2;
EXPLAIN QUERY PLAN SELECT key FROM store_objects('@DATA@/survey/') ORDER BY key LIMIT 3;
EXPLAIN QUERY PLAN SELECT key FROM store_objects('@DATA@/survey/') ORDER BY key DESC LIMIT 3;
EXPLAIN QUERY PLAN SELECT key FROM store_objects('@DATA@/survey/') WHERE size > 100 LIMIT 3;
EXPLAIN QUERY PLAN SELECT count(*) FROM store_objects('@DATA@/survey/');
SELECT vdsql_config('stats', 'reset');
SELECT key, size, metadata FROM store_objects('@DATA@/survey/Dimensions_012LOD0/ChunkMetadata/');
SELECT key FROM store_objects('@DATA@/survey/Dimensions_012LOD0/') LIMIT 2 OFFSET 1;
SELECT key FROM store_objects('@DATA@/survey/Dimensions_012LOD0/') WHERE size > 8000 LIMIT 3;
SELECT count(*), sum(size) FROM store_objects('@DATA@/survey/TraceDim');
SELECT count(*) FROM store_objects('@DATA@/no/such/prefix/');
-- 5 listings (and on S3 3 HEADs: the metadata column of the 3 pages; over http none: refused)
SELECT requests FROM vdsql_stats() WHERE backend = '@BACKEND@';
SELECT vdsql_config('stats', 'reset');
-- (survey_none left out: the harness rewrites "none", its https root in file mode)
SELECT dataset, dimensionality, samples, samples0, samples1, samples2, samples3, layer_count, error FROM vds_datasets('@DATA@/s') WHERE dataset NOT LIKE '%none';
SELECT dataset, samples, error FROM vds_datasets('@DATA@/bad_');
SELECT d.dataset, l.layer FROM vds_datasets('@DATA@/survey_r') d, vds_layers(d.dataset) l WHERE l.lod > 0;
-- 19: the 3 prefixes' own listings + 2 documents for each of the 8 datasets not yet in the
-- cache (the probe of a folder's VolumeDataLayout finds it a dataset, so no dataset folder
-- is listed; survey_rle's come from the cache in the third query, as they do for the join)
SELECT requests, cache_hits FROM vdsql_stats() WHERE backend = '@BACKEND@';
