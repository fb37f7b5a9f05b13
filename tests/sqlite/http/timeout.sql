-- A server that trickles bytes: the request times out (http_timeout), is retried, and fails with the URL
SELECT vdsql_config('http_timeout', 0.3), vdsql_config('http_retries', 1), vdsql_config('http_retry_delay_ms', 1);
SELECT * FROM vds_layout('@DATA@/slow/survey');
SELECT requests, retries FROM vdsql_stats() WHERE backend = 'http';
