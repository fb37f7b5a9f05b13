-- vds_layout, vds_axes, vds_channels and vds_metadata of a generated survey
.headers on
SELECT * FROM vds_layout('@DATA@/survey');
SELECT * FROM vds_axes('@DATA@/survey');
SELECT * FROM vds_channels('@DATA@/survey');
SELECT category, name, type, typeof(value) AS t, CASE WHEN type = 'BLOB' THEN CAST(value AS TEXT) ELSE value END AS value
  FROM vds_metadata('@DATA@/survey');
-- NULL arguments give no rows, as SQL functions of NULL do
SELECT count(*) FROM vds_layout(NULL);
