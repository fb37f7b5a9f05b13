-- Writable tables against hostile values: ref bounds that would wrap, numbers JSON cannot
-- hold exactly, templates that amplify, and an archive whose index lists a name twice.
.headers on
CREATE VIRTUAL TABLE a USING lindi_tar('@DATA@/lindi/hw.lindi.tar');
CREATE VIRTUAL TABLE r USING lindi_refs('@DATA@/lindi/hw.lindi.tar');
INSERT INTO a(name, data) VALUES ('blobs/m', zeroblob(1500));
-- offset + size would wrap past 2^63 and pass a naive bound check
INSERT INTO r(key, member, offset, size) VALUES ('wrap', 'blobs/m', 9223372036854775807, 1);
INSERT INTO r(key, member, offset, size) VALUES ('wrap', 'blobs/m', 9223372036854775807, 9223372036854775807);
INSERT INTO r(key, member, offset, size) VALUES ('wrap', 'blobs/m', 1, 9223372036854775807);
INSERT INTO r(key, member, offset, size) VALUES ('wrap', 'blobs/m', 1500, 1);
-- lindi.json holds numbers as doubles: exact up to 2^53 only
INSERT INTO r(key, target, offset, size) VALUES ('far', 'https://example.org/x', 9007199254740993, 1);
INSERT INTO r(key, target, offset, size) VALUES ('far', 'https://example.org/x', 0, 1e300);
INSERT INTO r(key, target, offset, size) VALUES ('far', 'https://example.org/x', 1.5, 1);
INSERT INTO r(key, target, offset, size) VALUES ('edge', 'https://example.org/x', 9007199254740992, 0);
INSERT INTO r(key, member, offset, size) VALUES ('fits', 'blobs/m', 1000, 500), ('empty_end', 'blobs/m', 1500, 0);
SELECT key, target, offset, size, member FROM r ORDER BY key;
SELECT key, offset, size FROM lindi_refs('@DATA@/lindi/hw.lindi.tar') ORDER BY key;
-- the table's cursor expands templates lazily and within max_alloc, as lindi_refs() does
SELECT vdsql_config('max_alloc', '1048576') IS NOT NULL AS set_;
CREATE VIRTUAL TABLE t USING lindi_refs('@DATA@/lindi/templates.lindi.tar');
SELECT count(*) AS refs, sum(length(key)) AS key_bytes FROM t;
SELECT target FROM t WHERE key = 'bomb';
SELECT key, target FROM t WHERE key IN ('plain', 'twice');
SELECT vdsql_config('max_alloc', '268435456') IS NOT NULL AS reset;
-- a writer refuses an archive whose index lists a name twice (lindi_parse_index)
CREATE VIRTUAL TABLE d USING lindi_tar('@DATA@/lindi/dupindex.lindi.tar');
SELECT name FROM d;
-- "file:NAME" (no //) is no file URL but a relative path that looks like one: refused for
-- reads and writes, where it would have named a file in the working directory
SELECT * FROM vds_layout('file:survey');
SELECT * FROM lindi_files('file:/lindi/small.lindi.tar');
CREATE VIRTUAL TABLE rel USING lindi_tar('file:made.lindi.tar');
INSERT INTO rel(name, data) VALUES ('x', x'00');
