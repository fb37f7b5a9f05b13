#!/usr/bin/env python3
"""vdsql_datasets, vdsql_check and vdsql_check_summary in PostgreSQL, as TAP: the catalog
of tests/gen/mkbroken.py (datasets of the three formats broken on purpose, with the
generator's record of each fault) plus paths that name nothing, as a table of URLs:
  - catalog x vdsql_check in one query gives exactly the record's problem rows, serial
    and parallel alike, and does not stop at a broken dataset;
  - the functions are PARALLEL SAFE: EXPLAIN shows Gather over a Parallel Seq Scan on the
    catalog with the vdsql_check call below it, EXPLAIN ANALYZE 'Workers Launched: 2';
  - vdsql_check_summary's problems and worst verdict, from the record;
  - vdsql_datasets finds the record's datasets, with the same columns as in SQLite;
  - the foreign tables of IMPORT FOREIGN SCHEMA joined with the catalog give the same
    rows as the functions;
  - a NULL url is an error in both front ends."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgtest import data, done, env, ok, readable, run, stop, top  # noqa: E402

ORDER = ["unreadable", "malformed", "missing", "short", "mismatch", "orphan", "uncommitted"]


def sql(script):
    return run(['psql', '-X', '-q', '-A', '-t', '-F', '|', '-v', 'ON_ERROR_STOP=1', '-f', '-'], input=script, env=env)


def rows_of(out, n):
    """psql's unaligned rows, NULL as empty: tuples of n fields (empty -> None)."""
    got = []
    for line in out.splitlines():
        f = line.split('|')
        if len(f) == n:
            got.append(tuple(x if x != '' else None for x in f))
    return got


try:
    root = os.path.join(data, 'broken')
    g = run(['/usr/bin/python3', 'tests/gen/mkbroken.py', 'catalog', root], cwd=top)
    ok(g.returncode == 0, 'tests/gen/mkbroken.py builds the catalog (needs h5py: Debian python3-h5py)', g.stderr)
    rec = json.loads(g.stdout)
    readable(root)
    names = [d['name'] for d in rec['datasets']] + rec['missing']
    want = sorted([(root + '/' + d['name'], f['part'], f['item'], f['verdict']) for d in rec['datasets']
                   for f in d['faults']] + [(root + '/' + m, None, None, 'unreadable') for m in rec['missing']])
    want_s = []
    for d in rec['datasets']:
        vs = [f['verdict'] for f in d['faults']]
        want_s.append((root + '/' + d['name'], str(len(vs)), min(vs, key=ORDER.index) if vs else None))
    want_s = sorted(want_s + [(root + '/' + m, '1', 'unreadable') for m in rec['missing']])

    # one catalog row per heap page, as tests/pg/parallel.t does: a Parallel Seq Scan deals out pages
    values = ',\n'.join(f"('{root}/{n}', repeat('x', 1000))" for n in names)
    r = sql(f"""CREATE EXTENSION vdsql;
CREATE TABLE catalog (url text, note text) WITH (fillfactor = 10);
INSERT INTO catalog VALUES {values};
ALTER TABLE catalog SET (parallel_workers = 2);
VACUUM ANALYZE catalog;""")
    ok(r.returncode == 0, f'a catalog of {len(names)} URLs ({len(rec["missing"])} naming nothing), parallel_workers = 2',
       r.stderr)

    q = "SELECT c.url, k.part, k.item, k.verdict FROM catalog c, vdsql_check(c.url) k"
    par = "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;\n"
    r = sql(par + f"EXPLAIN (COSTS OFF) {q};")
    plan = r.stdout.splitlines()
    at = {k: next((i for i, line in enumerate(plan) if k in line), -1)
          for k in ('Gather', 'Parallel Seq Scan on catalog', 'vdsql_check')}
    ok(r.returncode == 0 and -1 < at['Gather'] < at['Parallel Seq Scan on catalog'] and at['Gather'] < at['vdsql_check'],
       'EXPLAIN: Gather over a Parallel Seq Scan on catalog and the vdsql_check call (PARALLEL SAFE)', r.stdout + r.stderr)
    p = sql(par + q + ';')
    s = sql('SET max_parallel_workers_per_gather = 0;\n' + q + ';')
    got_p, got_s = sorted(rows_of(p.stdout, 4)), sorted(rows_of(s.stdout, 4))
    ok(p.returncode == 0 and got_p == want, f'catalog x vdsql_check with workers: exactly the {len(want)} planted '
       'problems, no error', p.stderr + '\n' + '\n'.join(f'extra {x}' for x in sorted(set(got_p) - set(want))) +
       '\n'.join(f'lacking {x}' for x in sorted(set(want) - set(got_p))))
    ok(s.returncode == 0 and got_s == want, 'the same without workers', s.stderr)
    r = sql(par + f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) {q};")
    ok(r.returncode == 0 and 'Workers Launched: 2' in r.stdout, "EXPLAIN ANALYZE: 'Workers Launched: 2'",
       r.stdout + r.stderr)

    r = sql(par + "SELECT c.url, s.problems, s.worst FROM catalog c, vdsql_check_summary(c.url) s;")
    got = sorted(rows_of(r.stdout, 3))
    ok(r.returncode == 0 and got == want_s, f'vdsql_check_summary: problems and the worst verdict of each of the '
       f'{len(want_s)} datasets, as recorded', r.stderr + '\n'.join(f'{a} {b}' for a, b in zip(got, want_s) if a != b))

    r = sql(f"SELECT url, format, error IS NOT NULL FROM vdsql_datasets('{root}/');")
    got = sorted(rows_of(r.stdout, 3))
    want_d = sorted((root + '/' + d['name'], d['format'], 't' if d['error'] else 'f') for d in rec['datasets'])
    ok(r.returncode == 0 and got == want_d, f'vdsql_datasets: the {len(want_d)} datasets, their formats, an error '
       'where the record says it cannot be recognised', r.stderr + str(got))
    r = sql(f"SELECT count(*) FROM vdsql_datasets('{root}/') d, vdsql_check(d.url) k;")
    n_found = sum(len(d['faults']) for d in rec['datasets'])
    ok(r.returncode == 0 and r.stdout.strip() == str(n_found),
       f"vdsql_datasets(prefix) d, vdsql_check(d.url): the {n_found} problems of the datasets found", r.stdout + r.stderr)

    r = sql("CREATE SERVER vdsql FOREIGN DATA WRAPPER vdsql;\nCREATE SCHEMA vt;\n"
            "IMPORT FOREIGN SCHEMA vdsql LIMIT TO (vdsql_check, vdsql_check_summary, vdsql_datasets) FROM SERVER vdsql "
            "INTO vt;\n"
            "SELECT c.url, k.part, k.item, k.verdict FROM catalog c JOIN vt.vdsql_check k ON k.url = c.url;")
    got = sorted(rows_of(r.stdout, 4))
    ok(r.returncode == 0 and got == want, 'the foreign table vdsql_check joined with the catalog: the same rows',
       r.stderr + str(got[:5]))
    r = sql("SELECT c.url, s.problems, s.worst FROM catalog c JOIN vt.vdsql_check_summary s ON s.url = c.url;")
    ok(r.returncode == 0 and sorted(rows_of(r.stdout, 3)) == want_s, 'the foreign table vdsql_check_summary: the same',
       r.stderr)

    r = sql("SELECT * FROM vdsql_check(NULL);")
    ok(r.returncode != 0 and 'vdsql_check: the url is NULL' in r.stderr, 'vdsql_check(NULL): an error', r.stderr)
finally:
    stop()
done()
