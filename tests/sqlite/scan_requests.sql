-- Request economy of vds_chunks on a layer of 4096 chunks on 32 pages of 128 entries, of
-- which pages 2, 5, 6, 9 and 30 are listed as not stored (-1): 27 stored pages.
-- A full scan reads each stored page once: 2 documents + 27 pages = 29 requests.
SELECT vdsql_config('cache', 'clear') AS cache, vdsql_config('stats', 'reset') AS stats;
SELECT count(status), sum(status = 'unwritten') FROM vds_chunks('@DATA@/holes', 'Dimensions_012LOD0');
SELECT sum(requests) AS requests FROM vdsql_stats();
-- with a cache too small for the layer's pages (32 KiB > 16 KiB / 4) a scan bypasses it,
-- but a point lookup keeps its page: cold 3 requests (2 documents, 1 page), warm 0
SELECT vdsql_config('cache_size', 16384) AS size, vdsql_config('cache', 'clear') AS cache,
       vdsql_config('stats', 'reset') AS stats;
SELECT chunk, status FROM vds_chunks('@DATA@/holes', 'Dimensions_012LOD0') WHERE chunk = 1000;
SELECT sum(requests) AS requests FROM vdsql_stats();
SELECT vdsql_config('stats', 'reset') AS stats;
SELECT chunk, status FROM vds_chunks('@DATA@/holes', 'Dimensions_012LOD0') WHERE chunk = 1000;
SELECT sum(requests) AS requests, sum(cache_hits) AS hits FROM vdsql_stats();
-- a full scan under that cache: the 26 stored pages not cached (the documents and page 7
-- are), and it keeps none of them: a second scan reads the same 26 again
SELECT vdsql_config('stats', 'reset') AS stats;
SELECT count(status) FROM vds_chunks('@DATA@/holes', 'Dimensions_012LOD0');
SELECT sum(requests) AS requests FROM vdsql_stats();
SELECT vdsql_config('stats', 'reset') AS stats;
SELECT count(status) FROM vds_chunks('@DATA@/holes', 'Dimensions_012LOD0');
SELECT sum(requests) AS requests FROM vdsql_stats();
