#!/usr/bin/env python3
"""lindi_repair(url) in PostgreSQL, as TAP, on tests/gen/mkrepair_lindi.py's
archives:
  - it is a set-returning function, VOLATILE and PARALLEL UNSAFE (pg_proc), and a plan
    over a catalog of urls never puts it under a Gather; it is no foreign table (IMPORT
    FOREIGN SCHEMA leaves it out, CREATE FOREIGN TABLE refuses it);
  - the least privileged role that may run it: a role without pg_read_server_files is
    refused (42501), one with it but without pg_write_server_files too, the archive
    unchanged; with both it repairs, with the rows SQLite gives on a copy, and tarfile
    then reads the index lindi reads exactly;
  - a healthy archive: no rows, the file unchanged."""
import hashlib
import json
import os
import shutil
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgtest import data, done, env, ok, psql, run, stop, top  # noqa: E402


def as_role(role, sql):
    return run(['psql', '-X', '-q', '-A', '-t', '-F', '|', '-U', role, '-v', 'ON_ERROR_STOP=1', '-v',
                'VERBOSITY=verbose', '-c', sql], env=env)


def digest(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def agrees(path):
    with tarfile.open(path) as t:
        tv = {m.name: (m.offset, m.offset_data, m.size) for m in t.getmembers() if not m.name.startswith('.trash/')}
    with open(path, 'rb') as f:
        f.seek(512)
        e = json.loads(f.read(1024))['index']
        f.seek(e['d'])
        ix = json.loads(f.read(e['s']).decode().rstrip(' '))
    return tv == {x['n']: (x['o'], x['d'], x['s']) for x in ix['files']} and tv['.tar_index.json'] == (e['o'], e['d'], e['s'])


try:
    root = os.path.join(data, 'repair')
    g = run([sys.executable, 'tests/gen/mkrepair_lindi.py', 'catalog', root], cwd=top)
    ok(g.returncode == 0, 'tests/gen/mkrepair_lindi.py builds the archives', g.stderr)
    os.chmod(data, 0o777)
    os.chmod(root, 0o777)  # the postgres user writes the journal beside the archive
    for f in os.listdir(root):
        os.chmod(os.path.join(root, f), 0o666)
    ref = os.path.join(data, 'repair_ref')
    shutil.copytree(root, ref)

    r = psql('CREATE EXTENSION vdsql')
    ok(r.returncode == 0, 'CREATE EXTENSION vdsql', r.stderr)
    r = psql("SELECT proretset, provolatile, proparallel FROM pg_proc WHERE proname = 'lindi_repair'")
    ok(r.stdout.strip() == 't|v|u', 'lindi_repair is a set-returning function, VOLATILE, PARALLEL UNSAFE', r.stdout + r.stderr)
    names = sorted(f for f in os.listdir(root) if f.endswith('.lindi.tar'))
    values = ','.join(f"('{root}/{n}')" for n in names)
    r = psql(f"CREATE TABLE catalog AS SELECT * FROM (VALUES {values}) v(url); ALTER TABLE catalog SET (parallel_workers = 2);"
             " ANALYZE catalog")
    r = psql("SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"
             " EXPLAIN (COSTS OFF) SELECT * FROM catalog c, lindi_repair(c.url)")
    ok(r.returncode == 0 and 'Gather' not in r.stdout and 'lindi_repair' in r.stdout,
       'a plan over a catalog of urls runs lindi_repair in the leader only (no Gather)', r.stdout + r.stderr)

    r = psql("CREATE SERVER s FOREIGN DATA WRAPPER vdsql; CREATE SCHEMA v; IMPORT FOREIGN SCHEMA vdsql FROM SERVER s INTO v;"
             " SELECT count(*) FROM pg_foreign_table t JOIN pg_class c ON c.oid = t.ftrelid WHERE c.relname = 'lindi_repair'")
    r2 = psql("CREATE FOREIGN TABLE v.lr (action text) SERVER s OPTIONS (relation 'lindi_repair')")
    ok(r.stdout.strip() == '0' and r2.returncode != 0 and 'call the function lindi_repair(url)' in r2.stderr,
       'no foreign table for lindi_repair: IMPORT FOREIGN SCHEMA leaves it out, CREATE FOREIGN TABLE is refused',
       r.stdout + r.stderr + r2.stderr)
    psql('CREATE ROLE carol LOGIN')
    path = os.path.join(root, 'appended.lindi.tar')
    before = digest(path)
    q = f"SELECT action, name, header_offset, size FROM lindi_repair('{path}')"
    r = as_role('carol', q)
    ok(r.returncode != 0 and '42501' in r.stderr and f'reading local file "{path}" needs the privileges of '
       'pg_read_server_files' in r.stderr and digest(path) == before,
       'without pg_read_server_files: refused (42501), the archive unchanged', r.stderr)
    psql('GRANT pg_read_server_files TO carol')
    r = as_role('carol', q)
    ok(r.returncode != 0 and '42501' in r.stderr and f'writing local file "{path}" needs the privileges of '
       'pg_write_server_files' in r.stderr and digest(path) == before,
       'with pg_read_server_files only: refused (42501), the archive unchanged', r.stderr)
    psql('GRANT pg_write_server_files TO carol')
    for n in names:
        p = os.path.join(root, n)
        r = as_role('carol', f"SELECT action, name, header_offset, size FROM lindi_repair('{p}')")
        s = run(['sqlite3', '-batch', '-cmd', '.load ' + os.path.join(top, 'vdsql'), ':memory:'],
                input=f"SELECT action, coalesce(name, ''), header_offset, size FROM lindi_repair('{ref}/{n}');")
        pg_rows = r.stdout.strip().splitlines()
        sq_rows = s.stdout.strip().splitlines()
        ok(r.returncode == 0 and s.returncode == 0 and pg_rows == sq_rows and agrees(p) and
           (n != 'healthy.lindi.tar' or pg_rows == []),
           f'{n}: carol (pg_read_server_files + pg_write_server_files) repairs it; the rows are SQLite\'s; tarfile '
           'reads the index lindi reads', r.stderr + s.stderr + '\n'.join(pg_rows + ['--'] + sq_rows))
    h = os.path.join(root, 'healthy.lindi.tar')
    before = digest(h)
    r = as_role('carol', f"SELECT count(*) FROM lindi_repair('{h}')")
    ok(r.stdout.strip() == '0' and digest(h) == before, 'a healthy archive: no rows, unchanged', r.stdout + r.stderr)
    r = as_role('carol', f"SELECT * FROM lindi_repair('{root}/plain.tar')")
    ok(r.returncode != 0 and 'not a LINDI archive' in r.stderr and f'{root}/plain.tar' in r.stderr,
       'a plain tar is refused, naming it', r.stderr)
finally:
    stop()
done()
