-- LINDI read relations in PostgreSQL over the generator's archives (tests/gen/mklindi.py
-- tests; VDSQL_DATA names the datasets' folder), the values of tests/sqlite/lindi_read.out.
\set VERBOSITY terse
\getenv data VDSQL_DATA
\set small :data '/lindi/small.lindi.tar'
\set many :data '/lindi/many.lindi.tar'
SELECT name, size FROM lindi_files(:'small') ORDER BY 1;
SELECT encode(lindi_read(:'small', 'blobs/group1/temps/0', 2, 4), 'hex') AS part,
       length(lindi_read(:'small', 'sample.h5')) AS whole;
SELECT count(*) AS listed, sum(size) AS bytes FROM lindi_files(:'many');
SELECT count(*) AS members, sum(in_index) AS indexed, count(*) FILTER (WHERE name LIKE '.trash/%') AS trash,
       sum(checksum_ok) AS checksums_ok FROM tar_members(:'many');
SELECT count(*) AS refs, count(archive_offset) AS resolved FROM lindi_refs(:'many');
SELECT key, kind, target, "offset", size FROM lindi_refs(:'small') ORDER BY key LIMIT 6;
