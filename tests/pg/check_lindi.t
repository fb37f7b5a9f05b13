#!/usr/bin/env python3
"""vdsql_check on LINDI datasets in PostgreSQL, as TAP: tests/gen/mkbroken_lindi.py's
datasets (index, refs and Zarr faults, both forms, with the generator's record) as a
catalog table, audited by the least privileged role that can read them (LOGIN, with
pg_read_server_files and SELECT on the catalog, nothing else):
  - catalog x vdsql_check in one query with 2 workers gives exactly the record's rows
    (EXPLAIN ANALYZE: 'Workers Launched: 2'), and the same without workers;
  - vdsql_check_summary: problems and the worst verdict as recorded;
  - a role without pg_read_server_files gets an error (42501), not a row."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgtest import data, done, env, ok, readable, run, stop, top  # noqa: E402

ORDER = ["unreadable", "malformed", "missing", "short", "mismatch", "orphan", "uncommitted"]


def sql(script, role=None):
    return run(['psql', '-X', '-q', '-A', '-t', '-F', '|', '-v', 'ON_ERROR_STOP=1'] + (['-U', role] if role else []) +
               ['-f', '-'], input=script, env=env)


def rows_of(out, n):
    got = []
    for line in out.splitlines():
        f = line.split('|')
        if len(f) == n:
            got.append(tuple(x if x != '' else None for x in f))
    return sorted(got, key=str)


try:
    root = os.path.join(data, 'broken_lindi')
    g = run(['/usr/bin/python3', 'tests/gen/mkbroken_lindi.py', 'catalog', root], cwd=top)
    ok(g.returncode == 0, 'tests/gen/mkbroken_lindi.py builds the datasets', g.stderr)
    rec = json.loads(g.stdout)
    readable(root)
    want = rows_of('\n'.join('|'.join(x or '' for x in (root + '/' + d['name'], f['part'], f['item'], f['verdict']))
                             for d in rec['datasets'] for f in d['faults']), 4)
    want_s = rows_of('\n'.join('%s/%s|%d|%s' % (root, d['name'], len(d['faults']),
                                                min((f['verdict'] for f in d['faults']), key=ORDER.index)
                                                if d['faults'] else '') for d in rec['datasets']), 3)
    values = ',\n'.join(f"('{root}/{d['name']}', repeat('x', 1000))" for d in rec['datasets'])
    r = sql(f"""CREATE EXTENSION vdsql;
CREATE TABLE catalog (url text, note text) WITH (fillfactor = 10);
INSERT INTO catalog VALUES {values};
ALTER TABLE catalog SET (parallel_workers = 2);
VACUUM ANALYZE catalog;
CREATE ROLE auditor LOGIN;
GRANT pg_read_server_files TO auditor;
GRANT SELECT ON catalog TO auditor;
CREATE ROLE nobody LOGIN;
GRANT SELECT ON catalog TO nobody;""")
    ok(r.returncode == 0, f'a catalog of the {len(rec["datasets"])} LINDI datasets; a role auditor with only '
       'pg_read_server_files and SELECT on it', r.stderr)

    q = "SELECT c.url, k.part, k.item, k.verdict FROM catalog c, vdsql_check(c.url) k"
    par = "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;\n"
    p = sql(par + q + ';', 'auditor')
    got = rows_of(p.stdout, 4)
    ok(p.returncode == 0 and got == want, f'auditor: catalog x vdsql_check with workers: exactly the {len(want)} '
       'planted problems', p.stderr + '\n' + '\n'.join(f'extra {x}' for x in sorted(set(got) - set(want), key=str)) +
       '\n'.join(f'lacking {x}' for x in sorted(set(want) - set(got), key=str)))
    r = sql(par + f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) {q};", 'auditor')
    ok(r.returncode == 0 and 'Workers Launched: 2' in r.stdout, "EXPLAIN ANALYZE: 'Workers Launched: 2'",
       r.stdout + r.stderr)
    s = sql('SET max_parallel_workers_per_gather = 0;\n' + q + ';', 'auditor')
    ok(s.returncode == 0 and rows_of(s.stdout, 4) == want, 'the same without workers', s.stderr)
    r = sql(par + "SELECT c.url, s.problems, s.worst FROM catalog c, vdsql_check_summary(c.url) s;", 'auditor')
    ok(r.returncode == 0 and rows_of(r.stdout, 3) == want_s, 'vdsql_check_summary: problems and the worst verdict '
       'as recorded', r.stderr + str(rows_of(r.stdout, 3)))
    r = sql(q + ';', 'nobody')
    ok(r.returncode != 0 and 'pg_read_server_files' in r.stderr, 'a role without pg_read_server_files: an error '
       'naming the privilege, not a row', r.stdout + r.stderr)
finally:
    stop()
done()
