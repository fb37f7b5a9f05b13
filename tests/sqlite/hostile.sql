-- Archives made to break readers (tests/gen/mklindi.py build_hostile): every one is
-- refused with an error naming the archive and the fault; nothing is left to chance.
.headers on
-- an index that lists a name twice
SELECT name FROM lindi_files('@DATA@/lindi/dupindex.lindi.tar');
SELECT lindi_read('@DATA@/lindi/dupindex.lindi.tar', 'blobs/a');
SELECT count(*) FROM lindi_refs('@DATA@/lindi/dupindex.lindi.tar');
-- refs whose offset or size is no integer from 0 to 2^53: the rows list, the numbers refuse
SELECT key, kind, target FROM lindi_refs('@DATA@/lindi/badrefs.lindi.tar') ORDER BY key;
SELECT key, offset, size, archive_offset FROM lindi_refs('@DATA@/lindi/badrefs.lindi.tar') WHERE key IN ('good', 'max_offset');
SELECT offset FROM lindi_refs('@DATA@/lindi/badrefs.lindi.tar') WHERE key = 'huge_offset';
SELECT archive_offset FROM lindi_refs('@DATA@/lindi/badrefs.lindi.tar') WHERE key = 'huge_offset';
SELECT size FROM lindi_refs('@DATA@/lindi/badrefs.lindi.tar') WHERE key = 'frac_size';
SELECT offset FROM lindi_refs('@DATA@/lindi/badrefs.lindi.tar') WHERE key = 'neg_offset';
SELECT offset FROM lindi_refs('@DATA@/lindi/badrefs.lindi.tar') WHERE key = 'big_offset';
SELECT size FROM lindi_refs('@DATA@/lindi/badrefs.lindi.tar') WHERE key = 'size_2p63';
SELECT size FROM lindi_refs('@DATA@/lindi/badrefs.lindi.tar') WHERE key = 'huge_offset';
-- templates are expanded when a column needs them, within max_alloc
SELECT key, kind, length(target) AS n, substr(target, 1, 12) AS head, member, archive_offset
  FROM lindi_refs('@DATA@/lindi/templates.lindi.tar') ORDER BY key;
SELECT value FROM lindi_refs('@DATA@/lindi/templates.lindi.tar') WHERE key = 'inline';
SELECT vdsql_config('max_alloc', '1048576') IS NOT NULL AS set_;
SELECT count(*) AS refs, sum(length(key)) AS key_bytes, sum(kind = 'ref') AS n_refs FROM lindi_refs('@DATA@/lindi/templates.lindi.tar');
SELECT key, offset, size FROM lindi_refs('@DATA@/lindi/templates.lindi.tar') WHERE key = 'bomb';
SELECT length(target) FROM lindi_refs('@DATA@/lindi/templates.lindi.tar') WHERE key = 'bomb';
SELECT member FROM lindi_refs('@DATA@/lindi/templates.lindi.tar') WHERE key = 'bomb';
SELECT key, target FROM lindi_refs('@DATA@/lindi/templates.lindi.tar') WHERE key <> 'bomb' AND kind = 'ref' ORDER BY key;
SELECT vdsql_config('max_alloc', '268435456') IS NOT NULL AS reset;
-- tar headers with GNU base-256 sizes whose data would end past the largest offset
-- (no statement here both prints rows and fails: the asan run's stdout is buffered)
SELECT name, header_offset, size FROM tar_members('@DATA@/lindi/bigsize.tar') LIMIT 1;
-- lindi.json strings that JSON does not allow (cJSON takes them): an error, not a wrong value ("a" before them is read)
SELECT key, hex(value) FROM lindi_refs('@DATA@/lindi/badescape.lindi.json') WHERE key = 'b';
SELECT key, hex(value) FROM lindi_refs('@DATA@/lindi/rawnul.lindi.json');
SELECT count(*) FROM tar_members('@DATA@/lindi/bigsize.tar');
SELECT count(*) FROM tar_members('@DATA@/lindi/bigsize2.tar');
SELECT count(*) FROM tar_members('@DATA@/lindi/negsize.tar');
-- OpenVDS Int metadata that is no whole int64 comes out as a real
SELECT name, value, typeof(value) AS t FROM vds_metadata('@DATA@/bad_meta');
