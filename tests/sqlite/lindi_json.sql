-- LINDI's JSON form: a standalone .lindi.json, here small.lindi.tar's lindi.json written
-- on its own by tests/gen/mklindi.py with Python's json, as lindi writes one
.headers on
SELECT key, kind, CASE kind WHEN 'base64' THEN hex(value) ELSE value END AS value, target, offset, size, member,
       archive_offset
  FROM lindi_refs('@DATA@/lindi/small.lindi.json');
-- the rows of the archive that holds the same lindi.json, without member and archive_offset
SELECT (SELECT count(*) FROM lindi_refs('@DATA@/lindi/small.lindi.tar')) AS archive_rows, count(*) AS json_rows,
       sum(member IS NULL AND archive_offset IS NULL) AS no_member
  FROM lindi_refs('@DATA@/lindi/small.lindi.json');
SELECT count(*) AS differing FROM (
  SELECT key, kind, value, target, offset, size FROM lindi_refs('@DATA@/lindi/small.lindi.json')
  EXCEPT SELECT key, kind, value, target, offset, size FROM lindi_refs('@DATA@/lindi/small.lindi.tar'));
SELECT count(*) AS differing FROM (
  SELECT key, kind, value, target, offset, size FROM lindi_refs('@DATA@/lindi/small.lindi.tar')
  EXCEPT SELECT key, kind, value, target, offset, size FROM lindi_refs('@DATA@/lindi/small.lindi.json'));
-- values with escapes (\u0000 among them) read the same from both forms, byte for byte
SELECT count(*) AS rows, sum(a.kind = j.kind AND a.value IS j.value AND typeof(a.value) = typeof(j.value)
                             AND a.target IS j.target) AS same
  FROM lindi_refs('@DATA@/lindi/escapes.lindi.tar') a JOIN lindi_refs('@DATA@/lindi/escapes.lindi.json') j USING (key);
SELECT key, typeof(value) AS type, length(value) AS bytes, hex(value) AS value
  FROM lindi_refs('@DATA@/lindi/escapes.lindi.json') WHERE key LIKE 'nul/%' OR key LIKE 'esc/%';
-- a small .lindi.json costs one request: the prefix lindi_open reads holds all of it
SELECT vdsql_config('cache', 'clear') AS cleared, vdsql_config('stats', 'reset') AS reset;
SELECT count(*) AS refs FROM lindi_refs('@DATA@/lindi/small.lindi.json');
SELECT sum(requests) AS requests FROM vdsql_stats();
-- larger than the prefix: one more request for the whole file
SELECT vdsql_config('cache', 'clear') AS cleared, vdsql_config('stats', 'reset') AS reset,
       vdsql_config('lindi_prefix', 1536) AS prefix;
SELECT count(*) AS refs FROM lindi_refs('@DATA@/lindi/escapes.lindi.json');
SELECT sum(requests) AS requests FROM vdsql_stats();
SELECT vdsql_config('lindi_prefix', 131072) AS prefix;
-- told from an archive by its bytes, not its name
SELECT key, value FROM lindi_refs('@DATA@/lindi/jsonform.lindi.tar');
-- relations that need tar members: one wording
SELECT * FROM lindi_files('@DATA@/lindi/small.lindi.json');
SELECT * FROM tar_members('@DATA@/lindi/small.lindi.json');
SELECT lindi_read('@DATA@/lindi/small.lindi.json', 'lindi.json');
SELECT * FROM lindi_files('@DATA@/lindi/jsonform.lindi.tar');
