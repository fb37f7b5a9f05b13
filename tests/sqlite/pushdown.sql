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
-- LIMIT (issue 21): given to the cursor (-1:L, with OFFSET -1:O, the rows taken being
-- both) only when SQLite cuts right after it; a filter SQLite still checks keeps it back
EXPLAIN QUERY PLAN SELECT chunk, status FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') LIMIT 5;
EXPLAIN QUERY PLAN SELECT chunk, status FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') LIMIT 5 OFFSET 12;
EXPLAIN QUERY PLAN SELECT chunk, status FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE chunk >= 3 LIMIT 5;
EXPLAIN QUERY PLAN SELECT chunk, status FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE status = 'data' LIMIT 5;
-- pages of 10 chunks, all 3 stored: LIMIT 5 reads page 0 alone (layout + status + 1;
-- over http pages 1 and 2 were fetched ahead too, 5); LIMIT 5 OFFSET 12 (chunks 12-16)
-- page 1 alone, SQLite reading no column of the rows it skips (3; page 2 was fetched
-- ahead, 4)
SELECT vdsql_config('cache', 'clear'), vdsql_config('stats', 'reset');
SELECT (SELECT group_concat(chunk || ':' || status) FROM (SELECT chunk, status FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') LIMIT 5))
     = (SELECT group_concat(chunk || ':' || status) FROM (SELECT * FROM allc ORDER BY chunk LIMIT 5)) AS same;
SELECT sum(requests) AS requests FROM vdsql_stats();
SELECT vdsql_config('cache', 'clear'), vdsql_config('stats', 'reset');
SELECT (SELECT group_concat(chunk || ':' || status) FROM (SELECT chunk, status FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') LIMIT 5 OFFSET 12))
     = (SELECT group_concat(chunk || ':' || status) FROM (SELECT * FROM allc ORDER BY chunk LIMIT 5 OFFSET 12)) AS same;
SELECT sum(requests) AS requests FROM vdsql_stats();
SELECT vdsql_config('cache', 'clear'), vdsql_config('stats', 'reset');
-- a LIMIT past the last row (the scan reads every page: 5) and one left to SQLite by a
-- filter on an unpushed column: the same rows as the full scan, cut by SQLite
SELECT (SELECT group_concat(chunk || ':' || status) FROM (SELECT chunk, status FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') LIMIT 100))
     = (SELECT group_concat(chunk || ':' || status) FROM (SELECT * FROM allc ORDER BY chunk)) AS same;
SELECT sum(requests) AS requests FROM vdsql_stats();
SELECT vdsql_config('cache', 'clear'), vdsql_config('stats', 'reset');
SELECT (SELECT group_concat(chunk || ':' || status) FROM (SELECT chunk, status FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE status = 'data' LIMIT 5))
     = (SELECT group_concat(chunk || ':' || status) FROM (SELECT * FROM allc WHERE status = 'data' ORDER BY chunk LIMIT 5)) AS same;
SELECT vdsql_config('cache', 'clear'), vdsql_config('stats', 'reset');
