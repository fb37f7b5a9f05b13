-- Request economy: listing an archive whose index sits near its start is one range
-- request (a prefix holding entry and index; the padding is not read), a member read
-- one more; an index appended at the end costs one more request for its text only.
SELECT vdsql_config('stats', 'reset');
SELECT count(*) FROM lindi_files('@DATA@/lindi/small.lindi.tar');
SELECT sum(requests) AS requests, sum(bytes) AS bytes FROM vdsql_stats();
SELECT length(lindi_read('@DATA@/lindi/small.lindi.tar', 'blobs/data/0.0'));
SELECT sum(requests) AS requests, sum(bytes) AS bytes FROM vdsql_stats();
SELECT vdsql_config('stats', 'reset');
SELECT count(*) FROM lindi_files('@DATA@/lindi/many.lindi.tar');
SELECT sum(requests) AS requests, sum(bytes) < 131072 + 131072 AS less_than_prefix_plus_padded_index FROM vdsql_stats();
-- a smaller prefix: the index text is then read in growing steps until complete
SELECT vdsql_config('cache', 'clear'), vdsql_config('stats', 'reset'), vdsql_config('lindi_prefix', 4096);
SELECT count(*) FROM lindi_files('@DATA@/lindi/small.lindi.tar');
SELECT sum(requests) AS requests, sum(bytes) AS bytes FROM vdsql_stats();
