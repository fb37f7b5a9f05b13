-- Bad input: every error names the object and the fault; nothing crashes.
SELECT * FROM vds_layout('@DATA@/bad_json');
SELECT * FROM vds_layers('@DATA@/bad_count');
SELECT * FROM vds_chunks('@DATA@/bad_pages', 'Dimensions_012LOD0') WHERE chunk = 1;
SELECT * FROM vds_chunks('@DATA@/bad_pages', 'Dimensions_012LOD0') WHERE chunk = 12;
SELECT * FROM vds_chunks('@DATA@/bad_pages', 'Dimensions_012LOD0') WHERE chunk = 21;
SELECT count(status) FROM vds_chunks('@DATA@/bad_pages', 'Dimensions_012LOD0');
-- positions need no page, so they answer even here
SELECT count(*) FROM vds_chunks('@DATA@/bad_pages', 'Dimensions_012LOD0');
SELECT vds_chunk_data('@DATA@/bad_chunks', 'Dimensions_012LOD0', 0);
-- the page says data and the object's vdschunkmetadata disagrees (files keep it in xattrs;
-- plain http has no user metadata, so there the chunk decodes)
SELECT length(vds_chunk_data('@DATA@/bad_chunks', 'Dimensions_012LOD0', 1));
SELECT vds_chunk_data('@DATA@/bad_chunks', 'Dimensions_012LOD0', 2);
SELECT vds_chunk_data('@DATA@/bad_chunks', 'Dimensions_012LOD0', 99);
SELECT vds_chunk_data('@DATA@/bad_chunks', 'Dimensions_012LOD0', 'x');
SELECT vds_chunk_data('@DATA@/wavelet', 'Dimensions_012LOD0', 0);
SELECT * FROM vds_chunks('@DATA@/survey', 'Nope');
SELECT * FROM vds_layout('@DATA@/nothing');
SELECT * FROM vds_chunks('@DATA@/survey');
SELECT * FROM vds_layers(42);
-- the good layers of a dataset with bad pages still answer what needs no page
SELECT count(*) FROM vds_pages('@DATA@/bad_pages', 'Dimensions_012LOD0');
-- URLs that name nothing usable
SELECT * FROM vds_layout('');
SELECT * FROM vds_layout('file://otherhost/survey');
