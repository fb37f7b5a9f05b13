-- Bad VTKHDF files: every error names the file and the fault; nothing crashes or prints
-- HDF5's error stack.
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/nothing.vtkhdf');
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/not_hdf5.vtkhdf');
SELECT * FROM vtkhdf_arrays('@DATA@/vtkhdf/no_vtkhdf.h5');
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/truncated.vtkhdf');
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/bad_type.vtkhdf');
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/no_type_v2.vtkhdf');
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/no_counts.vtkhdf');
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/steps_short.vtkhdf');
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/too_many_steps.vtkhdf');
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/negative_offset.vtkhdf');
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/non_monotonic.vtkhdf');
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/int32_overflow.vtkhdf');
SELECT * FROM vtkhdf_blocks('@DATA@/vtkhdf/pdc_no_assembly.vtkhdf');
SELECT * FROM vtkhdf_partitions(42);
SELECT * FROM vtkhdf_partitions('');
-- a directory is not a file
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf');
-- the other relations still work after errors
SELECT count(*) FROM vtkhdf_partitions('@DATA@/vtkhdf/ug3.vtkhdf');
-- URLs the store does not read: its own wording
SELECT * FROM vtkhdf_partitions('gs://bucket/x.vtkhdf?X-Goog-Signature=secret');
SELECT * FROM vtkhdf_partitions('file://otherhost/x.vtkhdf');
