-- A server that ignores Range (200 with the whole body) still gives exact answers;
-- a query string on the base URL (presigned/SAS style) is kept on every object URL
-- and never shown in errors.
SELECT vdsql_config('stats', 'reset');
SELECT status, count(*) FROM vds_chunks('@DATA@/norange/survey', 'Dimensions_012LOD0') GROUP BY 1 ORDER BY 1;
SELECT vds_chunk_data('@DATA@/norange/survey', 'Dimensions_012LOD0', 13) = vds_chunk_data('@DATA@/survey_none', 'Dimensions_012LOD0', 13);
SELECT count(*) FROM vds_chunks('@DATA@/survey?sig=s3cr3t&se=2030', 'Dimensions_012LOD0');
SELECT * FROM vds_layout('@DATA@/nothing?sig=s3cr3t');
-- an object whose x-amz-meta-vdschunkmetadata disagrees with its page entry
SELECT vds_chunk_data('@DATA@/badmeta/survey', 'Dimensions_012LOD0', 0);
-- constant chunks need no object, so the wrong header is never seen
SELECT length(vds_chunk_data('@DATA@/badmeta/survey', 'Dimensions_012LOD0', 3));
