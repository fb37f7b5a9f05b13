-- VTKHDF over http is not supported yet: a clear error, no request made.
SELECT * FROM vtkhdf_partitions('@DATA@/vtkhdf/ug3.vtkhdf');
SELECT requests FROM vdsql_stats() WHERE backend = 'http';
