#!/usr/bin/env python3
"""The PostgreSQL front end's functions against SQLite's, as TAP.

`make pg-install` puts the module in the system's PostgreSQL 15; a temporary cluster
(scripts/pg-test-server) gets CREATE EXTENSION vdsql. Then:
  - every relation and function that vdsql_relations() lists (but the named tables,
    which become foreign tables) is a function of the extension in pg_proc, and nothing
    else is;
  - the same queries give the same rows in psql and in sqlite3 with the extension loaded
    (SQLite is the reference: its front end is tested against the format specs); numbers
    are compared as numbers (PostgreSQL prints 0.0 as 0);
  - a missing dataset is an error with the SQLSTATE of its fault, naming the path;
  - a NULL argument gives no rows, as in SQLite.
The datasets are the test generators' (tests/gen), written where the postgres user can
read them."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgtest import data, norm, ok, psql, run, sqlite, stop, done, env, top  # noqa: E402

try:
    r = psql('CREATE EXTENSION vdsql')
    ok(r.returncode == 0, 'CREATE EXTENSION vdsql', r.stderr)

    # every catalogue entry that is not a named table, as a function; nothing more
    cat = run(['sqlite3', '-cmd', '.load ' + os.path.join(top, 'vdsql'), ':memory:',
               "SELECT name, kind FROM vdsql_relations()"]).stdout.split('\n')
    want = set()
    for line in cat:
        if not line:
            continue
        name, kind = line.split('|')
        want.add(name)
    r = psql("SELECT DISTINCT p.proname FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e' "
             "JOIN pg_extension e ON e.oid = d.refobjid WHERE e.extname = 'vdsql'")
    # the foreign-data wrapper's handler and validator are functions of the extension too,
    # and the relation functions' planner support function (ext/pg/funcscan.c)
    have = set(r.stdout.split()) - {'vdsql_fdw_handler', 'vdsql_fdw_validator', 'vdsql_relation_support'}
    # lindi_tar and vtkhdf_main exist only as named tables (docs/lindi.md, docs/vtkhdf.md):
    # in PostgreSQL they are foreign tables, not functions
    table_only = {'lindi_tar', 'vtkhdf_main'}
    have.discard('vdsql_fdw_validator')  # the foreign-data wrapper's own (tests/pg/privileges.t)
    ok(have == want - table_only,
       f'pg_proc holds a function for each of the {len(want - table_only)} relations and functions of '
       f'vdsql_relations() but the named-only tables lindi_tar and vtkhdf_main, and nothing else',
       f'missing: {sorted(want - table_only - have)}; extra: {sorted(have - want)}')

    # parallel markings (issue 20): setters and writers unsafe, per-connection state
    # restricted, every other (read-only) function safe
    r = psql("SELECT p.proname || '(' || p.pronargs || ')=' || p.proparallel::text FROM pg_proc p JOIN pg_depend d "
             "ON d.objid = p.oid AND d.deptype = 'e' JOIN pg_extension e ON e.oid = d.refobjid "
             "WHERE e.extname = 'vdsql' AND p.proname NOT LIKE 'vdsql_fdw_%' ORDER BY 1")
    marks = dict(x.split('=') for x in r.stdout.split())
    special = {'vds_create(3)': 'u', 'vds_repair(2)': 'u', 'lindi_repair(1)': 'u', 'vdsql_config(2)': 'u',
               'vdsql_config(1)': 'r',
               'vdsql_config(0)': 'r', 'vdsql_stats(0)': 'r'}
    marks.pop('vdsql_fdw_validator(2)', None)  # DDL's, never in a query
    wrong = {k: v for k, v in marks.items() if v != special.get(k, 's')}
    ok(marks and not wrong and all(k in marks for k in special),
       f'PARALLEL markings of {len(marks)} functions: vds_create, vds_repair, lindi_repair and vdsql_config(key, value) '
       'unsafe, '
       'vdsql_stats and vdsql_config reads restricted, the rest safe', f'wrong: {wrong}; have: {marks}')

    ds, lin = os.path.join(data, 'survey'), os.path.join(data, 'lindi')
    queries = [
        ('vds_layers', f"SELECT * FROM vds_layers('{ds}') ORDER BY 1"),
        ('vds_axes', f"SELECT * FROM vds_axes('{ds}') ORDER BY 1"),
        ('vds_chunks GROUP BY', f"SELECT status, count(*) FROM vds_chunks('{ds}', 'Dimensions_012LOD0') GROUP BY status ORDER BY 1"),
        ('vds_chunks columns', f"SELECT chunk, page, status, hash FROM vds_chunks('{ds}', 'Dimensions_012LOD0') ORDER BY chunk"),
        ('vds_pages', f"SELECT * FROM vds_pages('{ds}', 'Dimensions_012LOD1') ORDER BY 1"),
        ('vds_samples (a join)', f"SELECT c.chunk, count(*), sum(s.value) FROM vds_chunks('{ds}', 'Dimensions_012LOD1') c, "
                                 f"vds_samples('{ds}', 'Dimensions_012LOD1', c.chunk) s GROUP BY c.chunk ORDER BY 1"),
        ('lindi_files', f"SELECT * FROM lindi_files('{lin}/small.lindi.tar') ORDER BY 1"),
        ('tar_members', f"SELECT * FROM tar_members('{lin}/small.lindi.tar') ORDER BY 2"),
        ('lindi_refs', f"SELECT key, kind, target, \"offset\", size, member FROM lindi_refs('{lin}/small.lindi.tar') ORDER BY 1"),
        ('lindi_refs with templates', f"SELECT key, target, archive_offset FROM lindi_refs('{lin}/templates.lindi.tar') ORDER BY 1"),
        ('lindi_read', f"SELECT length(lindi_read('{lin}/small.lindi.tar', name)) FROM lindi_files('{lin}/small.lindi.tar') ORDER BY name"),
        ('vdsql_config()', "SELECT key FROM vdsql_config() ORDER BY 1"),
        ('vdsql_config(key)', "SELECT vdsql_config('max_parallel')"),
        ('vdsql_version()', "SELECT vdsql_version()"),
    ]
    for what, q in queries:
        p, s = psql(q), sqlite(q)
        rows = norm(s.stdout)
        ok(p.returncode == 0 and s.returncode == 0 and norm(p.stdout) == rows and rows,
           f'{what}: the same {len(rows)} rows as SQLite', (p.stderr + s.stderr) or
           '\n'.join(f'pg {a} | sqlite {b}' for a, b in zip(norm(p.stdout), rows) if a != b))

    # vds_chunks' hidden column data (each chunk's object) is not part of the function,
    # and a function in FROM computes only the columns the query reads, as SQLite does: a
    # count(*) and a count(status) each make the requests SQLite makes for it (the
    # documents; and the pages), and no chunk object (vdsql_stats)
    tail = "; SELECT requests FROM vdsql_stats() WHERE backend = 'file'"
    cols = psql("SELECT string_agg(a, ',') FROM (SELECT unnest(proargnames) a FROM pg_proc WHERE proname = 'vds_chunks') x")
    for what in ('*', 'status'):
        p = psql(f"SELECT count({what}) FROM vds_chunks('{ds}', 'Dimensions_012LOD0')" + tail)
        s2 = sqlite(f"SELECT count({what}) FROM vds_chunks('{ds}', 'Dimensions_012LOD0')" + tail)
        ok(p.returncode == 0 and norm(p.stdout) == norm(s2.stdout) and 'data' not in cols.stdout.split(','),
           f'vds_chunks in PostgreSQL has no data column, and a count({what}) makes the requests of SQLite\'s, '
           f'no chunk object ({norm(s2.stdout)[-1:]})', p.stdout + p.stderr + s2.stdout + cols.stdout)
    r = run(['psql', '-X', '-q', '-v', 'VERBOSITY=verbose', '-c', f"SELECT * FROM vds_layers('{data}/nothing')"], env=env)
    ok(r.returncode != 0 and '58P01' in r.stderr and f'{data}/nothing' in r.stderr,
       'a missing dataset: SQLSTATE 58P01 (undefined_file), the message naming the path', r.stderr)
    r = psql("SELECT count(*) FROM vds_layers(NULL)")
    ok(r.returncode == 0 and r.stdout.strip() == '0', 'a NULL url gives no rows, as in SQLite', r.stdout + r.stderr)
    # what reads files is not for every role: a role without pg_read_server_files is refused
    # when the call runs (the whole privilege model: tests/pg/privileges.t)
    psql("CREATE ROLE vdsql_nobody LOGIN")
    refused = []
    for q in (f"SELECT * FROM vds_layers('{data}/survey')", f"SELECT lindi_read('{data}/lindi/small.lindi.tar', 'x')",
              f"SELECT length(vds_chunk_data('{data}/survey', 'Dimensions_012LOD0', 0))",
              f"SELECT * FROM store_objects('{data}')"):
        r = run(['psql', '-X', '-q', '-U', 'vdsql_nobody', '-c', q], env=env)
        if r.returncode == 0 or 'needs the privileges of pg_read_server_files' not in r.stderr:
            refused.append(q + ': ' + (r.stderr or r.stdout)[:200])
    r = run(['psql', '-X', '-q', '-A', '-t', '-U', 'vdsql_nobody', '-c', 'SELECT vdsql_version()'], env=env)
    ok(not refused and r.returncode == 0,
       'a role without pg_read_server_files is refused every relation and function that reads local files '
       '(vds_layers, lindi_read, vds_chunk_data, store_objects), not vdsql_version()', '\n'.join(refused) + r.stderr)
    r2 = psql("SELECT 1")
    ok(r2.returncode == 0, 'the backend still answers after an error', r2.stderr)
finally:
    stop()
done()
