-- vds_chunk_data: decoded samples; the same chunk stored as Zip, RLE and None decodes
-- to the same bytes; constant, NoValue and unwritten chunks are filled without a fetch.
SELECT length(vds_chunk_data('@DATA@/survey', 'Dimensions_012LOD0', 0)) AS interior,
       length(vds_chunk_data('@DATA@/survey', 'Dimensions_012LOD0', 3)) AS last_along_dim0,
       length(vds_chunk_data('@DATA@/survey', 'Dimensions_012LOD0', 23)) AS corner;
-- chunk 13: generator values ((13*7 + i/64) % 97) / 8 for i < 64 -> 11.375, then (13 + i) % 97 / 8 + 12.5 from i = 256
SELECT hex(substr(vds_chunk_data('@DATA@/survey', 'Dimensions_012LOD0', 13), 1, 8)), hex(substr(vds_chunk_data('@DATA@/survey', 'Dimensions_012LOD0', 13), 1025, 8));
SELECT c, vds_chunk_data('@DATA@/survey', 'Dimensions_012LOD0', c) = vds_chunk_data('@DATA@/survey_none', 'Dimensions_012LOD0', c) AS zip_eq_none,
       vds_chunk_data('@DATA@/survey_rle', 'Dimensions_012LOD0', c) = vds_chunk_data('@DATA@/survey_none', 'Dimensions_012LOD0', c) AS rle_eq_none
  FROM (SELECT chunk AS c FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') WHERE status = 'data');
SELECT vdsql_config('stats', 'reset');
-- constant 0.5, NoValue (-999.25) and unwritten (filled with noValue): no object fetched
SELECT hex(substr(vds_chunk_data('@DATA@/survey', 'Dimensions_012LOD0', 3), 1, 8)),
       hex(substr(vds_chunk_data('@DATA@/survey', 'Dimensions_012LOD0', 5), 1, 8)),
       hex(substr(vds_chunk_data('@DATA@/survey', 'Dimensions_012LOD0', 20), -8));
SELECT sum(requests) AS requests FROM vdsql_stats();
-- one data chunk cold costs layout + status + page + object
SELECT vdsql_config('cache', 'clear'), vdsql_config('stats', 'reset');
SELECT length(vds_chunk_data('@DATA@/survey', 'Dimensions_012LOD0', 9));
SELECT sum(requests) AS requests FROM vdsql_stats();
-- U8 PerTrace constant 1.0; U16 (scale 0.5, offset -10) unwritten without NoValue -> 0.0 -> 20
SELECT length(vds_chunk_data('@DATA@/survey', 'TraceDimensions_012LOD0', 0)),
       hex(substr(vds_chunk_data('@DATA@/survey', 'TraceDimensions_012LOD0', 0), 1, 4));
SELECT length(vds_chunk_data('@DATA@/survey', 'QualityDimensions_012LOD0', 0)),
       hex(substr(vds_chunk_data('@DATA@/survey', 'QualityDimensions_012LOD0', 0), 1, 12)),
       hex(substr(vds_chunk_data('@DATA@/survey', 'QualityDimensions_012LOD0', 1), 1, 4));
-- LOD1 sizes: margins halved, edges rounded up; chunk 3 sits on a -1 page
SELECT length(vds_chunk_data('@DATA@/survey', 'Dimensions_012LOD1', 0)), length(vds_chunk_data('@DATA@/survey', 'Dimensions_012LOD1', 3));
SELECT vds_chunk_data('@DATA@/survey', 'Dimensions_012LOD0', NULL) IS NULL;
-- vds_samples: the same data as rows; chunk 23 is 32 x 38 x 44 voxels
SELECT count(*), min(x), max(x), max(y), max(z) FROM vds_samples('@DATA@/survey', 'Dimensions_012LOD0', 23);
-- generator: 11.375 (i < 64), 11.5 (64..127), 21.875 (i = 256), 17.375 (i = 511), period 512
SELECT sample, x, y, z, component, value FROM vds_samples('@DATA@/survey', 'Dimensions_012LOD0', 13)
 WHERE sample IN (0, 63, 64, 256, 511, 512, 4096);
-- quantized U16 samples come out as stored integers; a NoValue chunk is all -999.25
SELECT count(*), min(value), max(value) FROM vds_samples('@DATA@/survey', 'QualityDimensions_012LOD0', 0);
SELECT count(*), count(DISTINCT value), max(value) FROM vds_samples('@DATA@/survey', 'Dimensions_012LOD0', 5);
SELECT count(*) FROM vds_samples('@DATA@/survey', 'Dimensions_012LOD0', NULL);
