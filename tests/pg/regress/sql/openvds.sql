-- OpenVDS read relations in PostgreSQL, as functions and as foreign tables, over the
-- generator's datasets (tests/gen/mkvds.py tests; VDSQL_DATA names their folder). The
-- values are those tests/sqlite/layers.out, chunks.out and pushdown.out hold for SQLite.
\set VERBOSITY terse
\getenv data VDSQL_DATA
\set survey :data '/survey'
\set old :data '/old'
SELECT layer, compression, chunk_count, page_count, pages_present, valid_chunk_count, serialized_size
  FROM vds_layers(:'survey') ORDER BY layer;
SELECT * FROM vds_pages(:'survey', 'Dimensions_012LOD0') ORDER BY 1;
SELECT layer, chunk_count, page_count, pages_present, valid_chunk_count FROM vds_layers(:'old') ORDER BY 1;
SELECT status, count(*), min(chunk), max(chunk) FROM vds_chunks(:'survey', 'Dimensions_012LOD0') GROUP BY 1 ORDER BY 1;
SELECT dim, name, unit, samples, coordinate_min, coordinate_max FROM vds_axes(:'survey') ORDER BY dim;
-- the foreign tables: arguments from WHERE, hints, the columns read
CREATE SERVER regress_vdsql FOREIGN DATA WRAPPER vdsql;
CREATE SCHEMA regress_t;
IMPORT FOREIGN SCHEMA vdsql LIMIT TO (vds_chunks, vds_layers, vds_samples) FROM SERVER regress_vdsql INTO regress_t;
SELECT chunk, status, i0, i1, i2 FROM regress_t.vds_chunks
 WHERE url = :'survey' AND layer = 'Dimensions_012LOD0' AND i2 = 1 AND i0 > 2 ORDER BY chunk;
SELECT chunk FROM regress_t.vds_chunks
 WHERE url = :'survey' AND layer = 'Dimensions_012LOD0' AND chunk BETWEEN 5 AND 14 AND i0 = 2 ORDER BY 1;
SELECT chunk FROM regress_t.vds_chunks WHERE url = :'survey' AND layer = 'Dimensions_012LOD0' AND page = 2 ORDER BY 1;
SELECT count(*), sum(value) FROM regress_t.vds_samples
 WHERE url = :'survey' AND layer = 'Dimensions_012LOD1' AND chunk = 0;
SELECT count(*) FROM regress_t.vds_chunks WHERE url = :'survey';
SELECT count(*) FROM regress_t.vds_layers WHERE url = NULL;
