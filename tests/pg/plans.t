#!/usr/bin/env python3
"""Plans that fit what the relations cost (issue 29, item 2), as TAP, with PostgreSQL's
default settings (JIT on, jit_above_cost 100,000; no parallel_workers, no cost settings):
  - with a constant url and layer, once the dataset's documents are in the backend's
    cache, the estimated rows of a call are within 2x of what it returns: vds_chunks and
    vds_layers exactly the generator's counts (tests/gen/mkvds.py), vds_audit from the
    layer's valid chunk count against its verdict rows; the function and the foreign
    table alike. 2x, not 10x: the count is read from LayerStatus, so only vds_audit
    (written chunks against rows for each chunk either side knows) may differ at all;
  - planning makes no request: EXPLAIN in a fresh session leaves vdsql_stats at 0;
  - the catalog audit of 51 datasets (catalog x vds_layers x vds_audit) is costed under
    jit_above_cost and EXPLAIN ANALYZE has no JIT section, and runs serially (its one
    heap page cannot be shared);
  - the same audit over a catalog of 500 datasets gets a Gather over a Parallel Seq Scan
    of the catalog, the function scans below it, 2 workers launched; its answer equals
    the serial plan's (max_parallel_workers_per_gather = 0) and the generator's
    verdicts times 500; a catalog joined with the foreign table vds_chunks likewise.
JIT must be available (pg_jit_available(): the Debian package postgresql-15 with its
LLVM) or the JIT check would prove nothing: the suite then fails saying so."""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgtest import data, done, env, ok, psql, readable, run, stop, top  # noqa: E402

N_SMALL, N_LARGE = 51, 500


def sql(script):
    """A psql session reading the script (several statements, their rows in order)."""
    return run(['psql', '-X', '-q', '-A', '-t', '-F', '|', '-v', 'ON_ERROR_STOP=1', '-f', '-'], input=script, env=env)


def plan_rows(explain_json):
    """The top plan node's estimated rows of EXPLAIN (FORMAT JSON)."""
    return json.loads(explain_json)[0]['Plan']['Plan Rows']


def analyzed(q):
    """EXPLAIN (ANALYZE, FORMAT JSON) of q in a fresh session: (psql's result, the JSON's
    top object or {}, the plan's total cost or None)."""
    r = psql(f"EXPLAIN (ANALYZE, FORMAT JSON) {q}")
    try:
        js = json.loads(r.stdout)[0]
        return r, js, js['Plan']['Total Cost']
    except (ValueError, IndexError, KeyError):
        return r, {}, None


def nodes(plan):
    yield plan
    for p in plan.get('Plans', []):
        yield from nodes(p)


try:
    cat = os.path.join(data, 'plans')
    os.makedirs(cat)
    g = run([sys.executable, 'tests/gen/mkvds.py', 'audit', os.path.join(cat, 'audit0')], cwd=top)
    spec = json.loads(g.stdout)
    layers = spec['layers']
    verdicts = collections.Counter(r['verdict'] for lay in layers.values() for r in lay['rows'].values())
    # the catalog's datasets: names for the one dataset (the calls read them apart)
    for i in range(N_LARGE):
        os.symlink('audit0', os.path.join(cat, f'd{i}'))
    readable(cat)
    ds = os.path.join(cat, 'audit0')
    L0 = 'Dimensions_012LOD0'

    r = psql("CREATE EXTENSION vdsql; CREATE SERVER s FOREIGN DATA WRAPPER vdsql; CREATE SCHEMA v; "
             "IMPORT FOREIGN SCHEMA vdsql FROM SERVER s INTO v")
    ok(r.returncode == 0, 'CREATE EXTENSION vdsql; IMPORT FOREIGN SCHEMA vdsql FROM SERVER s INTO v', r.stderr)
    r = psql("SELECT current_setting('jit'), current_setting('jit_above_cost'), pg_jit_available(), "
             "current_setting('max_parallel_workers_per_gather')")
    ok(r.stdout.strip() == 'on|100000|t|2',
       'default settings: jit on, jit_above_cost 100000, JIT available (else install postgresql-15 with its LLVM), '
       'max_parallel_workers_per_gather 2', r.stdout + r.stderr)

    # --- estimates from what the cache knows, never a request -----------------------
    fresh = sql(f"SELECT vdsql_config('stats', 'reset');\n"
                f"EXPLAIN SELECT * FROM vds_chunks('{ds}', '{L0}');\n"
                f"EXPLAIN SELECT * FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}';\n"
                "SELECT 'requests', coalesce(sum(requests), 0) FROM vdsql_stats();")
    ok(fresh.returncode == 0 and 'requests|0' in fresh.stdout.split(),
       'planning in a fresh session makes no request (vdsql_stats: 0 after two EXPLAINs of an uncached dataset)',
       fresh.stdout + fresh.stderr)
    calls = [('vds_chunks function', f"SELECT * FROM vds_chunks('{ds}', '{L0}')", layers[L0]['count']),
             ('vds_chunks foreign table', f"SELECT chunk, status FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}'",
              layers[L0]['count']),
             ('vds_chunks function, LOD1', f"SELECT * FROM vds_chunks('{ds}', 'Dimensions_012LOD1')",
              layers['Dimensions_012LOD1']['count']),
             ('vds_layers function', f"SELECT * FROM vds_layers('{ds}')", len(layers)),
             ('vds_layers foreign table', f"SELECT * FROM v.vds_layers WHERE url = '{ds}'", len(layers)),
             ('vds_audit function', f"SELECT * FROM vds_audit('{ds}', '{L0}')", len(layers[L0]['rows'])),
             ('vds_audit foreign table', f"SELECT * FROM v.vds_audit WHERE url = '{ds}' AND layer = '{L0}'",
              len(layers[L0]['rows']))]
    for what, q, want in calls:
        # the first query of the session reads the documents; the next plan knows them
        r = sql(f"SELECT count(*) FROM ({q}) x;\nEXPLAIN (FORMAT JSON) {q};\n"
                f"EXPLAIN (ANALYZE, FORMAT JSON) {q};")
        out = r.stdout.strip().split('\n', 1)
        try:
            got = int(out[0])
            js = out[1]
            est = plan_rows(js[:js.index('\n]') + 2])
            actual = json.loads(js[js.index('\n]') + 2:])[0]['Plan']['Actual Rows']
        except (ValueError, IndexError, KeyError) as e:
            got, est, actual = None, None, str(e)
        ok(r.returncode == 0 and got == want and actual == want and est and want / 2 <= est <= want * 2,
           f'{what} with constant url/layer, its dataset cached: estimated {est} rows, returns {want} '
           '(the generator\'s count), within 2x', r.stdout[-1500:] + r.stderr)

    # --- the catalog audit: 51 datasets, no JIT, serial --------------------------------
    def catalog(name, n):
        values = ', '.join(f"('{os.path.join(cat, f'd{i}')}')" for i in range(n))
        return f"CREATE TABLE {name} (url text); INSERT INTO {name} VALUES {values}; ANALYZE {name};"

    r = psql(catalog('catalog51', N_SMALL) + catalog('catalog500', N_LARGE))
    ok(r.returncode == 0, f'catalogs of {N_SMALL} and {N_LARGE} datasets (plain tables, default storage)', r.stderr)

    def audit(c):
        return (f"SELECT a.verdict, count(*) FROM {c} c, vds_layers(c.url) l, vds_audit(c.url, l.layer) a "
                "GROUP BY 1 ORDER BY 1")

    def want_for(n):
        return [f'{k}|{v * n}' for k, v in sorted(verdicts.items())]

    r, js, cost = analyzed(audit('catalog51'))
    types = [p['Node Type'] for p in nodes(js['Plan'])] if js else []
    ok(r.returncode == 0 and 'JIT' not in js and cost is not None and cost < 100000,
       f'the audit of {N_SMALL} datasets (catalog x vds_layers x vds_audit), default settings: costed {cost} '
       '(under jit_above_cost 100000), EXPLAIN ANALYZE has no JIT section', r.stdout[-2000:] + r.stderr)
    ok('Gather' not in types and 'Gather Merge' not in types,
       f'the {N_SMALL}-dataset catalog (one heap page) gets a serial plan', ', '.join(types))
    r = psql(audit('catalog51'))
    ok(r.returncode == 0 and r.stdout.split() == want_for(N_SMALL),
       f'its answer is the generator\'s verdicts times {N_SMALL}', r.stdout + r.stderr)

    # --- 500 datasets: a Gather without any setting -----------------------------------
    for what, q, fn in (('the catalog audit', audit('catalog500'), 'vds_audit'),
                        ('a catalog joined with the foreign table vds_chunks',
                         "SELECT ch.status, count(*) FROM catalog500 c JOIN v.vds_chunks ch ON ch.url = c.url "
                         f"AND ch.layer = '{L0}' GROUP BY 1 ORDER BY 1", 'vds_chunks')):
        e = psql(f"EXPLAIN (ANALYZE, VERBOSE, TIMING OFF, SUMMARY OFF) {q}")
        plan = e.stdout.splitlines()
        at = {k: next((i for i, line in enumerate(plan) if k in line), -1)
              for k in ('Gather', 'Parallel Seq Scan on public.catalog500', fn)}
        ok(e.returncode == 0 and -1 < at['Gather'] < at['Parallel Seq Scan on public.catalog500']
           and at['Gather'] < at[fn] and 'Workers Launched: 2' in e.stdout,
           f'{what} over {N_LARGE} datasets, default settings: Gather over a Parallel Seq Scan of the catalog and '
           f'the scans of {fn}, 2 workers launched', e.stdout + e.stderr)
        p = psql(q)
        s = sql(f"SET max_parallel_workers_per_gather = 0;\n{q};")
        sp = sql(f"SET max_parallel_workers_per_gather = 0;\nEXPLAIN (COSTS OFF) {q};")
        ok(p.returncode == 0 and p.stdout.split() == s.stdout.split() and s.stdout.split()
           and 'Gather' not in sp.stdout,
           f'{what}: the parallel answer equals the serial plan\'s', f'parallel {p.stdout.split()} {p.stderr}\n'
           f'serial {s.stdout.split()} {s.stderr}\n{sp.stdout}')
        if fn == 'vds_audit':
            ok(p.stdout.split() == want_for(N_LARGE),
               f'and the generator\'s verdicts times {N_LARGE}: ' + ', '.join(want_for(N_LARGE)), p.stdout)
        else:
            statuses = collections.Counter(r['page_status'] for r in layers[L0]['rows'].values()
                                           if r['page_status'] != 'unwritten')
            statuses['unwritten'] = layers[L0]['count'] - sum(statuses.values())
            want = [f'{k}|{v * N_LARGE}' for k, v in sorted(statuses.items())]
            ok(p.stdout.split() == want, f'and the generator\'s statuses times {N_LARGE}: ' + ', '.join(want),
               p.stdout)
    # --- JIT decided without the requests' waits (plan_jit.c) ---------------------------
    # the 500-dataset audit costs more than jit_above_cost, most of it requests: in a
    # fresh session (the module loaded while this very query is planned) no JIT
    r, js, cost = analyzed(audit('catalog500'))
    ok(r.returncode == 0 and cost is not None and cost > 100000 and 'JIT' not in js,
       f'the audit of {N_LARGE} datasets costs {cost}, over jit_above_cost 100000, most of it waiting on requests: '
       'a fresh session runs it without JIT (EXPLAIN ANALYZE has no JIT section)', r.stdout[-1500:] + r.stderr)
    # a query whose own work is over the threshold keeps its JIT: the layers of one
    # dataset joined with three million numbers
    q = f"SELECT sum(g) FROM vds_layers('{ds}') l, generate_series(1, 3000000) g"
    r, js, cost = analyzed(q)
    jit = js.get('JIT', {})
    ok(r.returncode == 0 and cost is not None and cost > 100000 and jit.get('Functions', 0) > 0,
       f'a vdsql query whose own work costs {cost} (vds_layers x 3M numbers) keeps PostgreSQL\'s JIT: {jit}',
       r.stdout[-1500:] + r.stderr)

    # what makes it parallel is the catalog feeding vdsql calls, not the table's size:
    # the same table driving another function (costed so that workers would pay, as a
    # Gather shows once the table has parallel_workers) gets no partial scan; the module
    # loaded first (a session that never called vdsql has no planner hook of it)
    q = "SELECT count(*) FROM catalog500 c, generate_series(1, length(c.url) * 100) g"
    r = sql(f"SELECT 'v', vdsql_version();\nEXPLAIN {q};\nALTER TABLE catalog500 SET (parallel_workers = 2);\nEXPLAIN {q};\n"
            "ALTER TABLE catalog500 RESET (parallel_workers);")
    plans = r.stdout.split('Finalize Aggregate')
    ok(r.returncode == 0 and len(plans) == 2 and 'Parallel' not in plans[0] and 'Gather' in plans[1],
       f'the {N_LARGE}-row catalog driving generate_series (no vdsql call) stays serial; with parallel_workers set '
       'the same query gets a Gather', r.stdout + r.stderr)
finally:
    stop()
done()
