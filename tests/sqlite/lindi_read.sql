-- LINDI read relations on archives built from the spec (tests/gen/mklindi.py)
.headers on
SELECT * FROM lindi_files('@DATA@/lindi/small.lindi.tar');
SELECT * FROM tar_members('@DATA@/lindi/small.lindi.tar');
SELECT key, kind, CASE kind WHEN 'base64' THEN hex(value) ELSE value END AS value, target, offset, size, member, archive_offset
  FROM lindi_refs('@DATA@/lindi/small.lindi.tar');
SELECT hex(lindi_read('@DATA@/lindi/small.lindi.tar', 'blobs/group1/temps/0', 2, 4)) AS part,
       length(lindi_read('@DATA@/lindi/small.lindi.tar', 'sample.h5')) AS whole;
-- a ref read through its archive offset gives the member's bytes
SELECT lindi_read('@DATA@/lindi/small.lindi.tar', r.member, r.offset, r.size)
     = lindi_read('@DATA@/lindi/small.lindi.tar', 'blobs/group1/temps/0') AS same
  FROM lindi_refs('@DATA@/lindi/small.lindi.tar') r WHERE r.key = 'group1/temps/0';
-- an archive whose index outgrew 8 KiB: trash, a re-appended index, 200 members
SELECT count(*) AS listed, sum(size) AS bytes FROM lindi_files('@DATA@/lindi/many.lindi.tar');
SELECT name, header_offset, size, in_index FROM tar_members('@DATA@/lindi/many.lindi.tar') WHERE name NOT LIKE 'blobs/%';
-- audit: every member the walk sees against the index
SELECT count(*) AS members, sum(in_index) AS indexed, sum(name LIKE '.trash/%') AS trash, sum(checksum_ok) AS checksums_ok
  FROM tar_members('@DATA@/lindi/many.lindi.tar');
SELECT count(*) AS refs, sum(archive_offset IS NOT NULL) AS resolved FROM lindi_refs('@DATA@/lindi/many.lindi.tar');
-- any tar: GNU long names and pax headers (in_index NULL: not a LINDI archive)
SELECT name, header_offset, data_offset, size, type, mode, mtime, checksum_ok, in_index FROM tar_members('@DATA@/lindi/gnu.tar');
SELECT name, size, type FROM tar_members('@DATA@/lindi/pax.tar');
-- bad archives
SELECT * FROM lindi_files('@DATA@/lindi/badentry.lindi.tar');
SELECT * FROM lindi_files('@DATA@/lindi/badindex.lindi.tar');
SELECT * FROM lindi_files('@DATA@/lindi/notar.lindi.tar');
SELECT count(*) FROM lindi_files('@DATA@/lindi/truncated.lindi.tar');
SELECT name, checksum_ok FROM tar_members('@DATA@/lindi/badchecksum.lindi.tar');
SELECT count(*) FROM tar_members('@DATA@/lindi/truncated.lindi.tar');
SELECT lindi_read('@DATA@/lindi/small.lindi.tar', 'nope');
SELECT lindi_read('@DATA@/lindi/small.lindi.tar', 'sample.h5', 3000, 100);
SELECT * FROM lindi_files('@DATA@/lindi/missing.lindi.tar');
