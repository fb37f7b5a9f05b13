-- https with the test server's self-signed certificate: refused until its CA is given
SELECT vdsql_config('http_retries', 0);
SELECT count(*) FROM vds_layers('@TLS@/survey');
SELECT vdsql_config('ca_file', '@CA@') IS NOT NULL;
SELECT count(*) FROM vds_layers('@TLS@/survey');
-- other protocols are refused
SELECT * FROM vds_layout('ftp://127.0.0.1/survey');
