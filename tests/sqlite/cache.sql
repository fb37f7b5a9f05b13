-- The document cache: cache_ttl 0 turns it off, a fresh entry is served without a
-- request, an expired one is fetched again (a 1-microsecond TTL expires between
-- statements without any sleeping, so the test is not timing-dependent).
SELECT vdsql_config('cache_ttl', 0), vdsql_config('stats', 'reset');
SELECT count(*) FROM vds_layers('@DATA@/survey');
SELECT count(*) FROM vds_layers('@DATA@/survey');
SELECT sum(requests), sum(cache_hits) FROM vdsql_stats();
SELECT vdsql_config('cache_ttl', 60), vdsql_config('stats', 'reset');
SELECT count(*) FROM vds_layers('@DATA@/survey');
SELECT count(*) FROM vds_layers('@DATA@/survey');
SELECT sum(requests), sum(cache_hits) FROM vdsql_stats();
SELECT vdsql_config('cache_ttl', 0.000001), vdsql_config('stats', 'reset');
SELECT count(*) FROM vds_layers('@DATA@/survey');
SELECT sum(requests), sum(cache_hits) FROM vdsql_stats();
-- a smaller cache_size evicts: 1 byte holds nothing
SELECT vdsql_config('cache_ttl', 60), vdsql_config('cache_size', 1), vdsql_config('stats', 'reset');
SELECT count(*) FROM vds_layers('@DATA@/survey');
SELECT count(*) FROM vds_layers('@DATA@/survey');
SELECT sum(requests), sum(cache_hits) FROM vdsql_stats();
