#!/usr/bin/env python3
"""README.md's PostgreSQL example, as TAP, on the samples `make demo` writes (scripts/demo)
under umask 077, as a user whose files nobody else may read would run it:
  - every folder of demo/ is 0755 and every file 0644, whatever the umask: the server
    reads them as its own OS user, not as the one who ran make demo;
  - the README's second ```sql block runs verbatim (only /abs/path replaced by where
    demo/ is) as the cluster's superuser, and its SELECT as a role that only has
    pg_read_server_files, as the README says;
  - the rows are the generator's: survey_status in tests/gen/mkvds.py over the sample's
    4 x 3 x 2 chunks (200 x 150 x 100 samples, bricks of 64), and chunk 5's grid position
    from OpenVDS's chunk order (axis 0 fastest).
   env: PG_CONFIG (tests/pg/pgtest.py)"""
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from pgtest import ok, bail, run, psql, env, work, top, stop, done  # noqa: E402


def result_sets(text):
    """psql -A output with headers (footers off): [(columns, [row dicts])...]."""
    sets = []
    for line in text.splitlines():
        cells = line.split('|')
        if sets and len(cells) == len(sets[-1][0]) and cells != sets[-1][0]:
            sets[-1][1].append(dict(zip(sets[-1][0], cells)))
        else:
            sets.append((cells, []))
    return sets


try:
    dest = os.path.join(work, 'readme')
    os.mkdir(dest)
    os.chmod(dest, 0o755)
    r = run(['bash', '-c', 'umask 077 && exec scripts/demo "$1"', 'demo', dest], cwd=top)
    if not ok(r.returncode == 0 and os.path.isdir(os.path.join(dest, 'demo', 'openvds', 'north_sea_2019')),
              'scripts/demo DIR under umask 077 writes DIR/demo', r.stdout[-1000:] + r.stderr[-1000:]):
        bail('no demo/ to query')

    demo = os.path.join(dest, 'demo')
    want_modes = [(demo, 0o755)]
    for root, dirs, files in os.walk(demo):
        want_modes += [(os.path.join(root, d), 0o755) for d in dirs] + [(os.path.join(root, f), 0o644) for f in files]
    wrong = [f'{oct(os.stat(p).st_mode & 0o7777)} {p}' for p, want in want_modes if os.stat(p).st_mode & 0o7777 != want]
    ok(not wrong, 'every folder of demo/ is 0755, every file 0644 (umask 077)', '\n'.join(wrong[:10]))

    readme = open(os.path.join(top, 'README.md')).read()
    blocks = re.findall(r'^```sql\n(.*?)^```$', readme, re.S | re.M)
    pg_blocks = [b for b in blocks if b.startswith('CREATE EXTENSION vdsql;')]
    if not ok(len(pg_blocks) == 1 and '/abs/path/demo/' in pg_blocks[0],
              "README.md has one PostgreSQL ```sql block, on /abs/path/demo/", f'{len(pg_blocks)} blocks'):
        bail('no README example to run')
    block = pg_blocks[0].replace('/abs/path/demo/', dest + '/demo/')
    sql_file = os.path.join(work, 'readme.sql')
    with open(sql_file, 'w') as f:
        f.write(block)
    os.chmod(sql_file, 0o644)
    r = run(['psql', '-X', '-q', '-A', '-P', 'footer=off', '-v', 'ON_ERROR_STOP=1', '-f', sql_file], env=env)
    ok(r.returncode == 0 and not r.stderr, "the README's PostgreSQL block runs as written (superuser)", r.stdout + r.stderr)
    sets = result_sets(r.stdout)
    want_status = {'constant': '3', 'data': '16', 'novalue': '2', 'unwritten': '3'}
    got = {row['status']: row['count'] for cols, rows in sets if cols == ['status', 'count'] for row in rows}
    ok(got == want_status, 'vds_chunks(...) GROUP BY status: the generator\'s 16 data, 3 constant, 2 novalue, 3 unwritten',
       f'got {got}\n{r.stdout}')
    fdw = [rows for cols, rows in sets if 'chunk' in cols and 'i0' in cols]
    row = fdw[0][0] if len(fdw) == 1 and len(fdw[0]) == 1 else {}
    ok({k: row.get(k) for k in ('url', 'layer', 'chunk', 'status', 'i0', 'i1', 'i2')} ==
       {'url': dest + '/demo/openvds/north_sea_2019', 'layer': 'Dimensions_012LOD0', 'chunk': '5',
        'status': 'novalue', 'i0': '1', 'i1': '1', 'i2': '0'},
       'the foreign table vds_chunks WHERE ... chunk = 5: one row, novalue, at (1, 1, 0)', r.stdout)

    psql('CREATE ROLE demo_reader LOGIN; GRANT pg_read_server_files TO demo_reader')
    select = [line for line in block.splitlines() if line.startswith('SELECT status, count(*) FROM vds_chunks(')]
    reader = dict(env, PGUSER='demo_reader')
    r = psql(select[0], reader) if len(select) == 1 else None
    got = dict(line.split('|') for line in r.stdout.split()) if r and r.returncode == 0 else {}
    ok(got == want_status, "the README's SELECT as a role with pg_read_server_files only: the same counts",
       (r.stdout + r.stderr) if r else 'no such SELECT in the block')
finally:
    stop()
done()
