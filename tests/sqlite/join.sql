-- The point of table-valued functions: a catalog of datasets joined with them
CREATE TABLE datasets(name TEXT, url TEXT);
INSERT INTO datasets VALUES ('survey', '@DATA@/survey'), ('old', '@DATA@/old'), ('wavelet', '@DATA@/wavelet');
.headers on
SELECT d.name, l.layer, l.chunk_count, l.compression FROM datasets d, vds_layers(d.url) l ORDER BY 1, 2;
SELECT d.name, l.layer, c.status, count(*) AS chunks
  FROM datasets d, vds_layers(d.url) l, vds_chunks(d.url, l.layer) c
 WHERE l.has_pages AND l.lod = 0
 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
-- chunks whose valid range holds sample 150 along dim 0, per dataset
SELECT d.name, group_concat(c.chunk) FROM datasets d, vds_chunks(d.url, 'Dimensions_012LOD0') c
 WHERE c.min0 <= 150 AND c.max0 >= 150 GROUP BY 1 ORDER BY 1;
