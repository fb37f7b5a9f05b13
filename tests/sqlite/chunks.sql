-- vds_chunks: every status, hashes, positions and valid sample ranges
.headers on
SELECT chunk, page, status, hash, constant_value, object_size, adaptive_levels, i0, min0, max0, i1, min1, max1,
       i2, min2, max2, i3, min3, max3, key
  FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0');
SELECT status, count(*) FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD0') GROUP BY status ORDER BY status;
-- LOD1: page 1 is -1 in the directory, so chunks 2 and 3 read as unwritten without a request
SELECT chunk, page, status, i0, min0, max0, i1, min1, max1, i2, min2, max2
  FROM vds_chunks('@DATA@/survey', 'Dimensions_012LOD1');
-- PerTrace channels: 1 mapped value (chunks over dims 1,2) and 3 mapped values (dim 0 is one chunk of 3)
SELECT chunk, status, constant_value, i0, min0, max0, i1, i2 FROM vds_chunks('@DATA@/survey', 'TraceDimensions_012LOD0');
SELECT chunk, status, i0, min0, max0, i1, min1, max1, i2 FROM vds_chunks('@DATA@/survey', 'QualityDimensions_012LOD0');
-- a layer without pages: positions only, status unknown (NULL)
SELECT count(*), count(status), min(i2), max(i2), max(max0), max(max1)
  FROM vds_chunks('@DATA@/survey', 'Dimensions_01LOD0');
-- wavelet entries carry the object size and the adaptive levels
SELECT chunk, status, object_size, hex(adaptive_levels) FROM vds_chunks('@DATA@/wavelet', 'Dimensions_012LOD0') LIMIT 5;
-- no pageDirectory: every page counts as present
SELECT status, count(*) FROM vds_chunks('@DATA@/old', 'Dimensions_012LOD0') GROUP BY status;
