-- The lindi_tar writer: create, append, replace (trash), delete, rollback, refusals.
.headers on
-- connecting creates nothing: the archive is made (as lindi makes an empty one) at the first write
CREATE VIRTUAL TABLE a USING lindi_tar('@DATA@/lindi/new.lindi.tar');
SELECT name, size, header_offset, data_offset FROM a;
SELECT count(*) AS bytes_rows FROM tar_members('@DATA@/lindi/new.lindi.tar');
INSERT INTO a(name, data) VALUES ('blobs/a', 'hello'), ('blobs/b', zeroblob(3000)), ('c/d.bin', x'00ff');
SELECT name, size, header_offset, data_offset, hex(substr(data, 1, 4)) AS head FROM a;
-- a plain INSERT of an existing name is a constraint error; OR REPLACE trashes the old copy
INSERT INTO a(name, data) VALUES ('blobs/a', 'again');
INSERT OR REPLACE INTO a(name, data) VALUES ('blobs/a', 'replaced');
SELECT name, size, CAST(data AS TEXT) AS data FROM a WHERE name = 'blobs/a';
DELETE FROM a WHERE name = 'c/d.bin';
SELECT name, header_offset, size, type, checksum_ok, in_index, name LIKE '.trash/%' AS trash
  FROM tar_members('@DATA@/lindi/new.lindi.tar');
-- the live copy reads back (the trashed one keeps its bytes: readers of the old entry)
SELECT hex(lindi_read('@DATA@/lindi/new.lindi.tar', 'blobs/a')) AS live;
-- a transaction rolled back leaves the archive as it was
BEGIN;
INSERT INTO a(name, data) VALUES ('tx/1', 'one'), ('tx/2', 'two');
DELETE FROM a WHERE name = 'blobs/b';
SELECT group_concat(name) AS inside FROM a;
ROLLBACK;
SELECT group_concat(name) AS after_rollback FROM a;
SELECT count(*) AS walk FROM tar_members('@DATA@/lindi/new.lindi.tar');
-- a failing statement inside a transaction undoes only itself (savepoints)
BEGIN;
INSERT INTO a(name, data) VALUES ('s/1', '1');
INSERT INTO a(name, data) VALUES ('s/2', '2'), ('blobs/a', 'dup');
COMMIT;
SELECT group_concat(name) AS committed FROM a;
-- many members in one transaction: the index outgrows its padding, is trashed and
-- re-appended with lindi's growth rule; the entry names the new one
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 299)
INSERT INTO a(name, data) SELECT printf('many/%04d', i), randomblob(100) FROM n;
SELECT count(*) AS members, sum(size) AS bytes FROM lindi_files('@DATA@/lindi/new.lindi.tar');
SELECT name, size FROM tar_members('@DATA@/lindi/new.lindi.tar') WHERE name LIKE '%index%';
SELECT count(*) AS walk, sum(in_index) AS indexed, sum(checksum_ok) AS ok FROM tar_members('@DATA@/lindi/new.lindi.tar');
-- names: relative, no '..', at most 255 bytes, storable in ustar (prefix + name)
INSERT INTO a(name, data) VALUES ('../evil', 'x');
INSERT INTO a(name, data) VALUES ('/abs', 'x');
INSERT INTO a(name, data) VALUES ('a//b', 'x');
INSERT INTO a(name, data) VALUES (printf('%.256c', 'x'), 'x');
INSERT INTO a(name, data) VALUES (printf('%.120c', 'x'), 'x');
INSERT INTO a(name, data) VALUES ('lindi.json', 'x');
-- an encoded UTF-16 surrogate is not UTF-8 (it would make an index JSON readers refuse)
INSERT INTO a(name, data) VALUES (CAST(x'eda080' AS TEXT), 'x');
INSERT INTO a(name, data) VALUES (NULL, 'x');
INSERT INTO a(name, data) VALUES (printf('%.150c/%.90c', 'p', 'n'), 'long name in the prefix field');
SELECT length(name), size FROM tar_members('@DATA@/lindi/new.lindi.tar') WHERE name LIKE 'ppp%';
UPDATE a SET data = 'x' WHERE name = 'blobs/a';
-- remote archives are read-only
CREATE VIRTUAL TABLE r USING lindi_tar('http://127.0.0.1:9/x.lindi.tar');
CREATE VIRTUAL TABLE bad USING lindi_tar('@DATA@/lindi/notar.lindi.tar');
SELECT * FROM lindi_tar;
-- lindi.json is writable too; member and ref writes of one transaction commit together
CREATE VIRTUAL TABLE r USING lindi_refs('@DATA@/lindi/new.lindi.tar');
BEGIN;
INSERT INTO a(name, data) VALUES ('blobs/z/0', randomblob(1500));
INSERT INTO r(key, member, offset, size) VALUES ('z/0', 'blobs/z/0', 0, 1500);
INSERT INTO r(key, value) VALUES ('z/.zarray', '{"chunks":[1500],"dtype":"|u1","shape":[1500]}');
INSERT INTO r(key, kind, value) VALUES ('z/.zattrs', 'json', '{"units": "mV", "scale": [1, 2.5]}');
INSERT INTO r(key, value) VALUES ('raw', x'00ff80'), ('ascii', x'414243');
INSERT INTO r(key, target, offset, size) VALUES ('ext/0', 'https://example.org/f.h5', 10, 20);
COMMIT;
SELECT key, kind, CASE WHEN typeof(value) = 'blob' THEN hex(value) ELSE value END AS value, target, offset, size, member,
       archive_offset = (SELECT data_offset FROM lindi_files('@DATA@/lindi/new.lindi.tar') WHERE name = 'blobs/z/0') AS resolved
  FROM lindi_refs('@DATA@/lindi/new.lindi.tar');
SELECT CAST(lindi_read('@DATA@/lindi/new.lindi.tar', 'lindi.json', 0, 60) AS TEXT) AS lindi_json_starts;
INSERT INTO r(key, value) VALUES ('raw', 'dup');
INSERT OR REPLACE INTO r(key, value) VALUES ('raw', 'replaced');
INSERT INTO r(key, member, offset, size) VALUES ('bad', 'blobs/z/0', 1400, 200);
INSERT INTO r(key, member, offset, size) VALUES ('bad', 'no/such', 0, 1);
INSERT INTO r(key) VALUES ('empty');
INSERT INTO r(key, kind, value) VALUES ('j', 'json', '{not json');
DELETE FROM r WHERE key = 'ext/0';
-- a failed statement inside a transaction leaves the refs as they were before it
BEGIN;
INSERT INTO r(key, value) VALUES ('t/1', 'kept');
INSERT INTO r(key, value) VALUES ('t/2', 'lost'), ('raw', 'dup');
COMMIT;
SELECT group_concat(key) AS refs FROM lindi_refs('@DATA@/lindi/new.lindi.tar');
INSERT INTO lindi_refs(key, value) VALUES ('x', 'y');
SELECT count(*) AS trash FROM tar_members('@DATA@/lindi/new.lindi.tar') WHERE name LIKE '.trash/lindi.json%';
-- a standalone .lindi.json is read, never written
CREATE VIRTUAL TABLE j USING lindi_refs('@DATA@/lindi/small.lindi.json');
SELECT count(*) AS refs, sum(key = 'k') AS k FROM lindi_refs('@DATA@/lindi/small.lindi.json');
-- a NULL key or NULL data is SQLite's NOT NULL error (SQLITE_CONSTRAINT_NOTNULL), as in a
-- table of its own with a NOT NULL column: OR IGNORE skips the row, OR REPLACE has no
-- default to put there and fails; never an empty member
INSERT OR REPLACE INTO a(name, data) VALUES (NULL, 'x');
INSERT OR IGNORE INTO a(name, data) VALUES (NULL, 'x');
SELECT changes() AS ignored;
INSERT INTO a(name, data) VALUES ('nodata', NULL);
INSERT INTO a(name) VALUES ('nodata');
INSERT INTO r(value) VALUES ('nokey');
SELECT count(*) AS nodata FROM lindi_files('@DATA@/lindi/new.lindi.tar') WHERE name = 'nodata';
