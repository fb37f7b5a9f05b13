"""The PostgreSQL suites' harness (tests/pg/*.t): TAP output, the module built and
installed, the test datasets written where the postgres user can read them, a
temporary cluster (scripts/pg-test-server), and psql / sqlite3 runners. Importing it
does all of that; stop() removes the cluster and the data."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
n = 0
failed = 0


def ok(cond, what, detail=''):
    global n, failed
    n += 1
    print(('ok' if cond else 'not ok') + f' {n} - {what}')
    if not cond:
        failed += 1
        for line in str(detail).splitlines()[:20]:
            print('#   ' + line)
    return cond


def bail(why):  # noqa: E302
    print(f'not ok {n + 1} - {why}')
    print(f'1..{n + 1}')
    sys.exit(1)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


# PG_CONFIG may name the pg_config of a private copy of the PostgreSQL tree (see
# docs/postgresql.md, "Testing"): the module is then installed there and the clusters run from there,
# so that two checkouts can test their own builds side by side.
pg_config = os.environ.get('PG_CONFIG', 'pg_config')
for tool in (pg_config, 'psql', 'sqlite3'):
    if not shutil.which(tool):
        bail(f'{tool} not found (scripts/install-deps installs postgresql-15 postgresql-server-dev-15 sqlite3)')
pgbin = run([pg_config, '--bindir']).stdout.strip()
if not os.path.exists(os.path.join(pgbin, 'initdb')):
    bail(f'{pgbin}/initdb not found (Debian package postgresql-15: scripts/install-deps)')
os.environ['PG_BINDIR'] = pgbin

r = run(['make', '-s', 'vdsql.so', 'pg-install'], cwd=top)
ok(r.returncode == 0, 'make pg-install builds and installs the module (and make the SQLite one, the reference)', r.stdout + r.stderr)
pkglib = run([pg_config, '--pkglibdir']).stdout.strip()
ok(os.path.exists(os.path.join(pkglib, 'vdsql_pg.so')), f'vdsql_pg.so is in {pkglib}')

work = tempfile.mkdtemp(prefix='vdsql-pgtest.', dir='/tmp')
os.chmod(work, 0o755)
data = os.path.join(work, 'ds')
gen = run([sys.executable, 'tests/gen/mkvds.py', 'tests', data], cwd=top)
gen2 = run([sys.executable, 'tests/gen/mklindi.py', 'tests', os.path.join(data, 'lindi')], cwd=top)
if gen.returncode or gen2.returncode:
    bail('generating the test datasets failed: ' + gen.stderr[-300:] + gen2.stderr[-300:])


def readable(top_dir):
    """Makes what a suite generates under top_dir readable by the postgres user."""
    for root, dirs, files in os.walk(top_dir):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)


readable(work)

state = os.path.join(work, 'pg')
r = run([os.path.join(top, 'scripts/pg-test-server'), 'start', state])
if r.returncode:
    bail('the temporary PostgreSQL cluster did not start: ' + r.stderr[-500:])
env = dict(os.environ)
for line in r.stdout.splitlines():
    k, _, v = line.partition('=')
    env[k] = v


clusters = [state]


def cluster(name):
    """Another temporary cluster (scripts/pg-test-server, loopback only) from the same
    PostgreSQL tree, e.g. the shards of tests/pg/shards.t; stop() removes it. Returns the
    environment for its psql (PGHOST, PGPORT, ...)."""
    st = os.path.join(work, 'pg-' + name)
    r = run([os.path.join(top, 'scripts/pg-test-server'), 'start', st])
    if r.returncode:
        bail(f'the temporary PostgreSQL cluster {name} did not start: ' + r.stderr[-500:])
    clusters.append(st)
    e = dict(os.environ)
    for line in r.stdout.splitlines():
        k, _, v = line.partition('=')
        e[k] = v
    return e


def psql(sql, e=None):
    return run(['psql', '-X', '-q', '-A', '-t', '-F', '|', '-v', 'ON_ERROR_STOP=1', '-c', sql], env=e or env)


def sqlite(sql):
    return run(['sqlite3', '-bail', '-cmd', '.load ' + os.path.join(top, 'vdsql'), ':memory:', sql])


NUM = re.compile(r'^-?\d+(\.\d+)?([eE][-+]?\d+)?$')


def norm(text):
    rows = []
    for line in text.strip().splitlines():
        cells = []
        for c in line.split('|'):
            cells.append(repr(float(c)) if NUM.match(c) else c)
        rows.append('|'.join(cells))
    return rows




def vtkhdf_parts(n=3):
    """The generator's (build/mkvtkhdf) partitioned VTKHDF parts, readable by the postgres
    user: their paths, part 0 to n - 1."""
    g = os.path.join(work, 'vtk')
    os.makedirs(g, exist_ok=True)
    run([os.path.join(top, 'build', 'mkvtkhdf'), g])
    for f in os.listdir(g):
        os.chmod(os.path.join(g, f), 0o644)
    os.chmod(g, 0o755)
    return [os.path.join(g, f'ext_partitions_part{i}.vtkhdf') for i in range(n)]


def stop():
    for st in clusters:
        run([os.path.join(top, 'scripts/pg-test-server'), 'stop', st])
    shutil.rmtree(work, ignore_errors=True)


def done():
    print(f'1..{n}')
    sys.exit(1 if failed else 0)
