#!/usr/bin/env python3
"""The pg_regress suite of tests/pg/regress/ (sql/<name>.sql against expected/<name>.out),
run by PostgreSQL's own pg_regress against the harness's temporary cluster (never PGXS's
make check, which tests nothing), one TAP check per test file. The datasets are the
generators' (VDSQL_DATA: tests/gen/mkvds.py and mklindi.py; VDSQL_VTK: build/mkvtkhdf),
so the expected values are those the SQLite suites' .out files hold for the same queries.
VDSQL_BLESS=1 copies the results over the expected files (review the diff)."""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgtest import data, ok, psql, run, stop, done, env, top, work, pgbin  # noqa: E402

here = os.path.join(top, 'tests', 'pg', 'regress')
tests = sorted(f[:-4] for f in os.listdir(os.path.join(here, 'sql')) if f.endswith('.sql'))
try:
    vtk = os.path.join(work, 'vtk')
    os.makedirs(vtk)
    g = run([os.path.join(top, 'build', 'mkvtkhdf'), vtk])
    for f in os.listdir(vtk):
        os.chmod(os.path.join(vtk, f), 0o644)
    os.chmod(vtk, 0o755)
    ok(g.returncode == 0, 'build/mkvtkhdf wrote the VTKHDF test files', g.stderr)
    out = os.path.join(work, 'regress')
    os.makedirs(out)
    regress = os.path.join(os.path.dirname(pgbin), 'lib', 'pgxs', 'src', 'test', 'regress', 'pg_regress')
    e = dict(env, VDSQL_DATA=data, VDSQL_VTK=vtk)
    # --use-existing makes no database: the suite's own, with the extension
    c = psql('CREATE DATABASE vdsql_regress')
    c2 = run(['psql', '-X', '-q', '-d', 'vdsql_regress', '-c', 'CREATE EXTENSION vdsql'], env=env)
    ok(c.returncode == 0 and c2.returncode == 0, 'a database vdsql_regress with CREATE EXTENSION vdsql', c.stderr + c2.stderr)
    r = run([regress, '--use-existing', f'--bindir={pgbin}', f'--host={env["PGHOST"]}', f'--port={env["PGPORT"]}',
             '--user=postgres', '--dbname=vdsql_regress', f'--inputdir={here}',
             f'--outputdir={out}'] + tests, env=e)
    for t in tests:
        m = re.search(rf'^(?:ok|not ok|test)\s+(?:\d+\s+-?\s*)?{t}\s+\.\.\.\s+(ok|FAILED)', r.stdout, re.M)
        diffs = ''
        if os.path.exists(os.path.join(out, 'regression.diffs')):
            diffs = open(os.path.join(out, 'regression.diffs')).read()
        ok(m is not None and m.group(1) == 'ok', f'pg_regress {t}: the output equals tests/pg/regress/expected/{t}.out',
           (diffs or r.stdout + r.stderr)[-3000:])
        if os.environ.get('VDSQL_BLESS') and os.path.exists(os.path.join(out, 'results', f'{t}.out')):
            shutil.copyfile(os.path.join(out, 'results', f'{t}.out'), os.path.join(here, 'expected', f'{t}.out'))
finally:
    stop()
done()
