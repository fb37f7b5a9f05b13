-- The real OpenVDS test documents (shared/fixtures/openvds): 9 layers, chunk counts
-- 200/30/6 and 20/6/2, wavelet 28-byte entries, no pageDirectory
.headers on
SELECT * FROM vds_layout('@DATA@/fixture');
SELECT * FROM vds_axes('@DATA@/fixture');
SELECT channel, name, format, components, mapping, mapped_values, renderable FROM vds_channels('@DATA@/fixture');
SELECT layer, channel, lod, compression, compression_tolerance, chunk_count, page_size, entry_size, page_count,
       pages_present, uncompressed_size FROM vds_layers('@DATA@/fixture');
SELECT category, name, type, CASE WHEN typeof(value) = 'blob' THEN length(value) || ' bytes' ELSE substr(value, 1, 40) END
  FROM vds_metadata('@DATA@/fixture');
SELECT * FROM vds_pages('@DATA@/fixture', 'SEGYTraceHeaderDimensions_012LOD0');
