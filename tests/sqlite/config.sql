-- vdsql_version, vdsql_config and vdsql_stats
SELECT vdsql_version();
SELECT vdsql_config('cache_ttl'), vdsql_config('http_retries'), vdsql_config('max_parallel');
SELECT vdsql_config('cache_ttl', 5), vdsql_config('cache_ttl');
SELECT vdsql_config('http_timeout', '2.5');
SELECT vdsql_config('http_retries', 'many');
SELECT vdsql_config('max_parallel', 0);
SELECT vdsql_config('nope', 1);
SELECT vdsql_config('stats', 'sideways');
SELECT backend FROM vdsql_stats();
-- S3 settings: a secret is never shown back, only whether it is set; other keys as given
SELECT vdsql_config('s3_secret_access_key'), vdsql_config('s3_secret_access_key', 'wJalrXUtnFEMI/K7MDENG'), vdsql_config('s3_secret_access_key');
SELECT vdsql_config('s3_session_token', 'FwoGZXIvYXdzEBc'), vdsql_config('s3_region', 'eu-west-1'), vdsql_config('s3_access_key_id', 'AKIAEXAMPLE');
SELECT key, value FROM vdsql_config() WHERE key LIKE 's3%' ORDER BY key;
-- Azure credentials: a secret is never shown, only whether it is set ('(set)' or '')
SELECT vdsql_config('azure_key', 'c2VjcmV0LWtleS1ieXRlcw=='), vdsql_config('azure_key'), vdsql_config('azure_sas_token'), vdsql_config('azure_account', 'myacct');
SELECT vdsql_config('azure_connection_string', 'AccountName=a;AccountKey=c2VjcmV0LWtleS1ieXRlcw==');
SELECT key, value FROM vdsql_config() WHERE key LIKE 'azure%';
-- switches: 'on'/'off' (or 1/0), shown as on/off; anything else refused
SELECT vdsql_config('progress'), vdsql_config('progress', 'on'), vdsql_config('progress', 0), vdsql_config('vtkhdf_absolute_paths', 1);
SELECT vdsql_config('progress', 'yes');
-- the S3 endpoint is a URL: shown redacted (no userinfo, no query values), and only http(s)
SELECT vdsql_config('s3_endpoint', 'http://user:pw@127.0.0.1:9/?X-Amz-Signature=abc'), vdsql_config('s3_endpoint');
SELECT vdsql_config('s3_endpoint', 'ftp://127.0.0.1/');
SELECT vdsql_config('s3_endpoint', ''), vdsql_config('commit_lease'), vdsql_config('stage_ttl');
