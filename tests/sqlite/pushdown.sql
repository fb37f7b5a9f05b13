-- Constraint pushdown on vds_chunks: the plan shows what the cursor receives
-- (idxNum = arguments present, idxStr = column:op pairs), and vdsql_stats() shows
-- that only the pages holding candidate chunks are read.
EXPLAIN QUERY PLAN SELECT * FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE chunk = 5;
EXPLAIN QUERY PLAN SELECT * FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE chunk IN (1, 2);
EXPLAIN QUERY PLAN SELECT * FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE min0 <= 100 AND max0 >= 100;
EXPLAIN QUERY PLAN SELECT * FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') ORDER BY chunk;
SELECT vdsql_config('stats', 'reset');
-- cold: layout + status + one page = 3 requests
SELECT chunk, status FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE chunk = 23;
SELECT sum(requests) AS requests, sum(cache_hits) AS hits FROM vdsql_stats();
-- warm: 0 requests while the cache is fresh
SELECT chunk, status FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE chunk = 23;
SELECT sum(requests) AS requests, sum(cache_hits) AS hits FROM vdsql_stats();
SELECT vdsql_config('cache', 'clear'), vdsql_config('stats', 'reset');
-- IN (with a duplicate and a chunk past the end): only page 0 is read
SELECT group_concat(chunk || ':' || status) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE chunk IN (3, 7, 1, 7, 30);
SELECT sum(requests) AS requests FROM vdsql_stats();
SELECT vdsql_config('cache', 'clear'), vdsql_config('stats', 'reset');
-- the chunk holding sample (100, 70, *): two chunks along dim 2, on pages 0 and 1
SELECT group_concat(chunk || ':' || status) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0')
 WHERE min0 <= 100 AND max0 >= 100 AND min1 <= 70 AND max1 >= 70;
SELECT sum(requests) AS requests FROM vdsql_stats();
SELECT vdsql_config('cache', 'clear'), vdsql_config('stats', 'reset');
-- a box: i2 = 1 and i0 > 2 -> chunks 15, 19, 23 (pages 1 and 2)
SELECT group_concat(chunk || ':' || status) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE i2 = 1 AND i0 > 2;
SELECT sum(requests) AS requests FROM vdsql_stats();
SELECT vdsql_config('cache', 'clear'), vdsql_config('stats', 'reset');
-- positions alone come from the layout: no page is read (layout + status only)
SELECT count(*), max(max0), sum(i1) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0');
SELECT sum(requests) AS requests FROM vdsql_stats();
-- ranges, BETWEEN, page, and mixed types behave like the full scan filtered by SQLite
SELECT group_concat(chunk) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE chunk BETWEEN 5 AND 14 AND i0 = 2;
SELECT group_concat(chunk) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE page = 2;
SELECT group_concat(chunk) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE chunk > 20.5;
SELECT group_concat(chunk) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE chunk < 2.5 OR chunk >= 22;
SELECT group_concat(chunk) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE chunk IN (2, 2.5, NULL, 4.0);
SELECT group_concat(chunk) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE chunk = 5.5;
SELECT group_concat(chunk) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE min2 > 1000;
SELECT group_concat(chunk) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE max1 BETWEEN 100 AND 120 AND i0 = 0;
-- pushdown never changes an answer: every constraint compared with the unconstrained scan
CREATE TEMP TABLE allc AS SELECT * FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0');
SELECT (SELECT group_concat(chunk) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE min0 >= 60 AND max2 < 99 AND chunk <> 13)
     = (SELECT group_concat(chunk) FROM allc WHERE min0 >= 60 AND max2 < 99 AND chunk <> 13) AS same;
SELECT (SELECT count(*) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE i1 IN (0, 2) AND page <= 1)
     = (SELECT count(*) FROM allc WHERE i1 IN (0, 2) AND page <= 1) AS same;
