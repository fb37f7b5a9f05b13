-- 5xx answers are retried with backoff (counted in vdsql_stats), then reported with the URL
SELECT vdsql_config('http_retry_delay_ms', 1), vdsql_config('stats', 'reset');
SELECT * FROM vds_layout('@DATA@/fail503/survey');
SELECT backend, requests, retries FROM vdsql_stats() WHERE backend = 'http';
SELECT vdsql_config('http_retries', 0), vdsql_config('stats', 'reset');
SELECT * FROM vds_layout('@DATA@/fail503/survey');
SELECT backend, requests, retries FROM vdsql_stats() WHERE backend = 'http';
-- a 404 is final: no retry
SELECT vdsql_config('http_retries', 3), vdsql_config('stats', 'reset');
SELECT * FROM vds_layout('@DATA@/nothing');
SELECT requests, retries FROM vdsql_stats() WHERE backend = 'http';
-- nothing listens: connection refused, retried, then named
SELECT vdsql_config('stats', 'reset');
SELECT * FROM vds_layout('http://127.0.0.1:9/survey');
SELECT requests, retries FROM vdsql_stats() WHERE backend = 'http';
