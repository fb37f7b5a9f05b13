-- vds_layers and vds_pages: chunk counts from the layout, page directory with -1,
-- short last page, a page-less layer, 2.0.x-era status without pageDirectory, wavelet
.headers on
SELECT * FROM vds_layers('@DATA@/survey');
SELECT * FROM vds_pages('@DATA@/survey', 'Dimensions_012LOD0');
SELECT * FROM vds_pages('@DATA@/survey', 'Dimensions_012LOD1');
SELECT count(*) AS pageless_pages FROM vds_pages('@DATA@/survey', 'Dimensions_01LOD0');
SELECT layer, chunk_count, page_count, pages_present, valid_chunk_count, serialized_size FROM vds_layers('@DATA@/old');
SELECT * FROM vds_pages('@DATA@/old', 'Dimensions_012LOD0');
SELECT layer, compression, entry_size, chunk_count FROM vds_layers('@DATA@/wavelet');
