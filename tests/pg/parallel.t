#!/usr/bin/env python3
"""Parallel query on one server, as TAP: a catalog table of OpenVDS datasets (copies of
the generator's audit dataset, whose every verdict is made on purpose, and datasets of N
chunks that all audit ok), scanned in parallel, calls vds_audit and vds_chunks in the
workers:
  - EXPLAIN (COSTS OFF) shows Gather over a Parallel Seq Scan on the catalog with the
    vdsql function scan below it (after ALTER TABLE catalog SET (parallel_workers = 2));
  - the parallel answer equals the serial one (max_parallel_workers_per_gather = 0) and
    the numbers the generator states (tests/gen/mkvds.py, not vdsql);
  - EXPLAIN ANALYZE says 'Workers Launched: 2', and with parallel_leader_participation
    off the leader itself made no file request (vdsql_stats) while the answer is whole:
    the workers ran the function;
  - the same function marked PARALLEL RESTRICTED gives a serial plan (the marking is what
    lets workers call it)."""
import collections
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgtest import data, done, env, ok, readable, run, stop, top  # noqa: E402

AUDIT_COPIES = 6
MANY = [20, 40, 60, 80, 100, 120]


def sql(script):
    """A psql session reading the script (several statements, their rows in order)."""
    return run(['psql', '-X', '-q', '-A', '-t', '-F', '|', '-v', 'ON_ERROR_STOP=1', '-f', '-'], input=script, env=env)


try:
    # the datasets, and what the generator says an audit and a chunk count must give
    cat = os.path.join(data, 'catalog')
    os.makedirs(cat)
    g = run([sys.executable, 'tests/gen/mkvds.py', 'audit', os.path.join(cat, 'audit0')], cwd=top)
    spec = json.loads(g.stdout)
    verdicts, statuses, rows = collections.Counter(), collections.Counter(), []
    for i in range(AUDIT_COPIES):
        if i:
            shutil.copytree(os.path.join(cat, 'audit0'), os.path.join(cat, f'audit{i}'), symlinks=True)
        for layer, lay in spec['layers'].items():
            rows.append((os.path.join(cat, f'audit{i}'), layer))
            written = 0
            for r in lay['rows'].values():
                verdicts[r['verdict']] += 1
                if r['page_status'] != 'unwritten':
                    statuses[r['page_status']] += 1
                    written += 1
            statuses['unwritten'] += lay['count'] - written
    for n in MANY:
        d = os.path.join(cat, f'many{n}')
        run([sys.executable, 'tests/gen/mkvds.py', 'many', str(n), d], cwd=top)
        rows.append((d, 'Dimensions_012LOD0'))
        verdicts['ok'] += n
        statuses['data'] += n
    readable(cat)
    want_audit = sorted(f'{k}|{v}' for k, v in verdicts.items())
    want_status = sorted(f'{k}|{v}' for k, v in statuses.items())

    # the catalog: one row per heap page (fillfactor 10, a 1000-byte note), since a
    # Parallel Seq Scan deals out pages
    values = ',\n'.join(f"('{u}', '{lay}', repeat('x', 1000))" for u, lay in rows)
    r = sql(f"""CREATE EXTENSION vdsql;
CREATE TABLE catalog (url text, layer text, note text) WITH (fillfactor = 10);
INSERT INTO catalog VALUES {values};
ALTER TABLE catalog SET (parallel_workers = 2);
VACUUM ANALYZE catalog;
SELECT pg_relation_size('catalog') / current_setting('block_size')::int;""")
    ok(r.returncode == 0 and int(r.stdout.split()[-1]) == len(rows),
       f'a catalog of {len(rows)} (dataset, layer) rows, one per heap page, parallel_workers = 2', r.stdout + r.stderr)

    q_audit = "SELECT a.verdict, count(*) FROM catalog c, vds_audit(c.url, c.layer) a GROUP BY 1 ORDER BY 1"
    q_status = "SELECT ch.status, count(*) FROM catalog c, vds_chunks(c.url, c.layer) ch GROUP BY 1 ORDER BY 1"
    par = "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;\n"
    for what, q, want, fn in (('vds_audit verdicts', q_audit, want_audit, 'vds_audit'),
                              ('vds_chunks statuses', q_status, want_status, 'vds_chunks')):
        r = sql(par + f"EXPLAIN (COSTS OFF) {q};")
        plan = r.stdout.splitlines()
        at = {k: next((i for i, line in enumerate(plan) if k in line), -1)
              for k in ('Gather', 'Parallel Seq Scan on catalog', f'Function Call: {fn}(')}
        ok(r.returncode == 0 and -1 < at['Gather'] < at['Parallel Seq Scan on catalog']
           and at['Gather'] < at[f'Function Call: {fn}('],
           f'{what}: EXPLAIN shows Gather over a Parallel Seq Scan on catalog and the streaming scan of {fn} (Function Call)',
           r.stdout + r.stderr)
        p = sql(par + q + ';')
        s = sql('SET max_parallel_workers_per_gather = 0;\n' + q + ';')
        sp = sql('SET max_parallel_workers_per_gather = 0;\n' + f"EXPLAIN (COSTS OFF) {q};")
        ok(p.returncode == 0 and sorted(p.stdout.split()) == want and sorted(s.stdout.split()) == want
           and 'Gather' not in sp.stdout,
           f'{what}: the parallel answer, the serial one (a plan without Gather) and the generator\'s agree: '
           + ', '.join(want), f'parallel {p.stdout.split()} {p.stderr}\nserial {s.stdout.split()} {s.stderr}\n'
           f'generator {want}\nserial plan {sp.stdout}')

    # the workers run the function: two launched, and the leader (not taking part) made no
    # request of its own while the answer is whole
    r = sql(par + f"EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) {q_audit};")
    for line in r.stdout.splitlines():
        print('# ' + line)
    ok(r.returncode == 0 and 'Workers Launched: 2' in r.stdout,
       "EXPLAIN ANALYZE of the audit: 'Workers Launched: 2'", r.stdout + r.stderr)
    r = sql(par + "SET parallel_leader_participation = off;\n"
            "SELECT vdsql_config('stats', 'reset');\n" + q_audit + ";\n"
            "SELECT 'stats', coalesce(sum(requests), 0) FROM vdsql_stats();\n")
    out = r.stdout.split()
    leader = [x for x in out if x.startswith('stats|')]
    answer = sorted(x for x in out if '|' in x and not x.startswith('stats|'))
    r2 = sql("SELECT vdsql_config('stats', 'reset');\n" + "SET max_parallel_workers_per_gather = 0;\n" + q_audit + ";\n"
             "SELECT 'stats', coalesce(sum(requests), 0) FROM vdsql_stats();\n")
    serial = [x for x in r2.stdout.split() if x.startswith('stats|')]
    ok(r.returncode == 0 and answer == want_audit and leader == ['stats|0'] and serial and serial != ['stats|0'],
       'parallel_leader_participation off: the whole audit, and the leader made no request (a serial run makes '
       f'{serial[0].split("|")[1] if serial else "?"}): the workers called vds_audit',
       f'{r.stdout}{r.stderr}{r2.stdout}{r2.stderr}')

    # what makes it parallel: the PARALLEL SAFE marking
    r = sql("ALTER FUNCTION vds_audit(text, text) PARALLEL RESTRICTED;\n" + par + f"EXPLAIN (COSTS OFF) {q_audit};\n"
            "ALTER FUNCTION vds_audit(text, text) PARALLEL SAFE;")
    ok(r.returncode == 0 and 'Gather' not in r.stdout and 'Function Call: vds_audit(' in r.stdout,
       'vds_audit marked PARALLEL RESTRICTED: a serial plan (no Gather)', r.stdout + r.stderr)
finally:
    stop()
done()
