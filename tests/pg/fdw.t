#!/usr/bin/env python3
"""The foreign-data wrapper vdsql, read side, as TAP (tests/pg/pgtest.py starts the cluster).

  - IMPORT FOREIGN SCHEMA vdsql makes one foreign table per relation that is a function
    too (the named-only tables need their dataset as options), with SQLite's columns,
    hidden ones included, in order and with gen_sql's types;
  - the same rows as SQLite through WHERE-bound arguments and through a join with a
    catalog table (a parameterized path: Nested Loop, arguments from the outer row);
  - pushdown: the request counts tests/sqlite/pushdown.sql asserts (3 for one chunk: the
    layout, LayerStatus and one page; 4 for a box over two pages; 2 for positions alone)
    and EXPLAIN VERBOSE showing the arguments, hints, columns and LIMIT handed over; the
    function, which sees no WHERE, reads every page;
  - the constant first (`20 < chunk`) for every pushed operator and column, with smallint,
    integer and bigint constants: the function's rows, and only the pages holding them read;
    a prepared statement's parameters as arguments and hints ($3 NULL: no request);
  - a LIMIT above a join is not handed to the scan (the join may drop its rows);
  - a LIMIT on vds_chunks over http (nginx): the scan is told it (EXPLAIN: vdsql limit)
    and fetches no page past the one holding the last row taken; with a clause checked
    here it is not told, and the rows are SQLite's;
  - the per-row path: text values repeated and changing row after row, a file name that
    is not UTF-8 (an error); the row estimates (plain and parameterized) not cut by
    the clauses that bind arguments, nor a join's (an argument column's one distinct value);
  - a scan without an argument is refused naming it; options check their names;
  - VTKHDF through the function and the table as the fixture states, backends exiting cleanly;
  - a foreign table's local dataset needs pg_read_server_files to read, pg_write_server_files to write,
    checked at every read: after SET ROLE, a named table the backend already opened is refused too."""
import os
import re
import shutil
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgtest import data, norm, ok, psql, run, sqlite, stop, done, env, top, work  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import Nginx  # noqa: E402

ds, lin = os.path.join(data, 'survey'), os.path.join(data, 'lindi')
L0 = 'Dimensions_012LOD0'
ng = None
try:
    r = psql("CREATE EXTENSION vdsql; CREATE SERVER s FOREIGN DATA WRAPPER vdsql; CREATE SCHEMA v; "
             "IMPORT FOREIGN SCHEMA vdsql FROM SERVER s INTO v")
    ok(r.returncode == 0, 'CREATE SERVER s FOREIGN DATA WRAPPER vdsql; IMPORT FOREIGN SCHEMA vdsql FROM SERVER s INTO v',
       r.stderr)

    # one foreign table per relation that is also a function, with SQLite's columns
    fts = set(psql("SELECT foreign_table_name FROM information_schema.foreign_tables "
                   "WHERE foreign_table_schema = 'v'").stdout.split())
    rels = [line.split('|') for line in sqlite("SELECT name, kind FROM vdsql_relations() "
                                               "WHERE kind IN ('table', 'writable')").stdout.split()]
    want = {name for name, kind in rels} - {'lindi_tar', 'vtkhdf_main', 'lindi_repair'}
    ok(fts == want and len(want) > 20,
       f'IMPORT FOREIGN SCHEMA made one foreign table per relation ({len(want)}), the named-only lindi_tar and '
       'vtkhdf_main and the writer lindi_repair (a function only) left out', f'missing {sorted(want - fts)}; extra {sorted(fts - want)}')
    tmap = {'INTEGER': 'bigint', 'REAL': 'double precision', 'TEXT': 'text', 'BLOB': 'bytea', '': 'text'}
    bad = []
    for name in sorted(want):
        s = sqlite(f"SELECT name, type FROM pragma_table_xinfo('{name}')").stdout.split('\n')
        s = [tuple(x.split('|')) for x in s if x]
        s = [(a, tmap.get(b, b)) for a, b in s]
        p = psql(f"SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'v.{name}'::regclass "
                 "AND attnum > 0 AND NOT attisdropped ORDER BY attnum").stdout.split('\n')
        p = [tuple(x.split('|')) for x in p if x]
        if p != s:
            bad.append(f'{name}: pg {p} sqlite {s}')
    ok(not bad, f'every imported table has SQLite\'s columns (arguments and hidden ones too) in order, with gen_sql\'s types',
       '\n'.join(bad))

    same = [
        ('vds_layers', f"SELECT * FROM v.vds_layers WHERE url = '{ds}' ORDER BY layer",
         f"SELECT *, '{ds}' FROM vds_layers('{ds}') ORDER BY layer"),
        ('vds_chunks with data', f"SELECT chunk, status, hash, length(data) FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}' ORDER BY 1",
         f"SELECT chunk, status, hash, length(data) FROM vds_chunks('{ds}', '{L0}') ORDER BY 1"),
        ('vds_chunks pushed ranges', f"SELECT chunk FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}' AND min0 <= 100 AND max0 >= 100 "
         "AND min1 <= 70 AND max1 >= 70 ORDER BY 1",
         f"SELECT chunk FROM vds_chunks('{ds}', '{L0}') WHERE min0 <= 100 AND max0 >= 100 AND min1 <= 70 AND max1 >= 70 ORDER BY 1"),
        ('vds_chunks IN with NULL and a duplicate', f"SELECT chunk, status FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}' "
         "AND chunk IN (3, 7, 1, 7, 30, NULL) ORDER BY 1",
         f"SELECT chunk, status FROM vds_chunks('{ds}', '{L0}') WHERE chunk IN (3, 7, 1, 7, 30, NULL) ORDER BY 1"),
        ('vds_chunks with a fraction (not pushed)', f"SELECT chunk FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}' AND chunk > 20.5 ORDER BY 1",
         f"SELECT chunk FROM vds_chunks('{ds}', '{L0}') WHERE chunk > 20.5 ORDER BY 1"),
        ('vds_samples, three arguments', f"SELECT count(*), sum(value) FROM v.vds_samples WHERE url = '{ds}' AND layer = 'Dimensions_012LOD1' AND chunk = 0",
         f"SELECT count(*), sum(value) FROM vds_samples('{ds}', 'Dimensions_012LOD1', 0)"),
        ('lindi_refs', f"SELECT key, kind, target, \"offset\", size FROM v.lindi_refs WHERE url = '{lin}/small.lindi.tar' ORDER BY 1",
         f"SELECT key, kind, target, \"offset\", size FROM lindi_refs('{lin}/small.lindi.tar') ORDER BY 1"),
        ('store_objects LIMIT', f"SELECT key FROM v.store_objects WHERE url = '{ds}/{L0}/' LIMIT 3",
         f"SELECT key FROM store_objects('{ds}/{L0}/') LIMIT 3"),
    ]
    for what, q, qs in same:
        p, s = psql(q), sqlite(qs)
        rows = norm(s.stdout)
        ok(p.returncode == 0 and s.returncode == 0 and norm(p.stdout) == rows and rows,
           f'{what}: the same {len(rows)} rows as SQLite', (p.stderr + s.stderr) or
           '\n'.join(f'pg {a} | sqlite {b}' for a, b in zip(norm(p.stdout), rows) if a != b))

    # a catalog joined with the relations: each catalog row binds the arguments
    cat = (f"CREATE TEMP TABLE catalog(url text, layer text); INSERT INTO catalog VALUES ('{ds}', '{L0}'), "
           f"('{ds}', 'Dimensions_012LOD1'), ('{data}/wavelet', NULL); ANALYZE catalog; ")
    q = ("SELECT c.layer, ch.status, count(*) FROM catalog c JOIN v.vds_chunks ch ON ch.url = c.url AND ch.layer = c.layer "
         "GROUP BY 1, 2 ORDER BY 1, 2")
    p = psql(cat + q)
    s = sqlite(f"SELECT l, status, count(*) FROM (SELECT '{L0}' l UNION ALL SELECT 'Dimensions_012LOD1') c, "
               f"vds_chunks('{ds}', c.l) GROUP BY 1, 2 ORDER BY 1, 2")
    ok(p.returncode == 0 and norm(p.stdout) == norm(s.stdout) and s.stdout,
       'a catalog joined with vds_chunks on url and layer: the rows of SQLite\'s lateral calls (the NULL layer none)',
       p.stdout + p.stderr + s.stdout)
    e = psql(cat + "EXPLAIN (VERBOSE, COSTS OFF) " + q).stdout
    ok(re.search(r'Nested Loop.*Seq Scan on pg_temp\w*\.catalog c.*Foreign Scan on v\.vds_chunks ch.*'
                 r'vdsql arguments: url = \$\d+, layer = \$\d+', e, re.S) is not None,
       'EXPLAIN: a nested loop whose foreign scan takes url and layer from each catalog row (a parameterized path)', e)
    e = psql(cat + "EXPLAIN " + q).stdout
    # (a Memoize may sit above it now: this catalog names one dataset twice, and the
    # planner caches a call's rows per (url, layer) when a call is estimated at 1000
    # rows; before, 1,000,000 rows per call never fitted work_mem)
    ok(re.search(r'Foreign Scan on vds_chunks ch .*rows=1000 ', e),
       'the parameterized scan is estimated at the relation\'s rows per call (vds_chunks: 1000, docs/postgresql.md '
       '"Plans") per catalog row, not cut by the join clauses that bind its arguments (not a 25-row guess)', e)
    m = re.search(r'Nested Loop .*rows=(\d+) ', e)
    ok(m and int(m.group(1)) >= 3 * 1000 // 30 and 'HashAggregate' in e,
       'the join keeps each dataset\'s rows (an argument column has one distinct value to the planner, not 1/200 '
       'per clause): at least a 30th of 3 catalog rows x 1000 rows per call (the join clauses on the catalog\'s '
       'repeated url and its NULL layer keep 500), not a few, and GROUP BY a hash aggregate', e)
    q2 = "SELECT c.url, count(*) FROM catalog c, v.vds_layers l WHERE l.url = c.url GROUP BY 1 ORDER BY 1"
    p = psql(cat + q2)
    ok(p.returncode == 0 and p.stdout.split() == [f'{ds}|10', f'{data}/wavelet|1'],
       'a join through an equivalence (WHERE l.url = c.url): 5 layers per survey row (two rows), 1 for wavelet',
       p.stdout + p.stderr)

    # under a Gather: each worker runs the parameterized foreign scan for its catalog rows
    # (rows padded onto pages of their own: a Parallel Seq Scan deals out pages)
    pcat = (f"CREATE TEMP TABLE pc AS SELECT '{ds}'::text AS url, l AS layer, repeat('x', 3000) AS pad "
            f"FROM unnest(ARRAY['{L0}', 'Dimensions_012LOD1', '{L0}', 'Dimensions_012LOD1', '{L0}', 'Dimensions_012LOD1']) l; "
            "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; ")
    pq = "SELECT ch.status, count(*) FROM pc c JOIN v.vds_chunks ch ON ch.url = c.url AND ch.layer = c.layer GROUP BY 1 ORDER BY 1"
    # a temporary table is never scanned in parallel: a plain one, dropped at the end
    pcat = pcat.replace('CREATE TEMP TABLE pc', 'DROP TABLE IF EXISTS pc; CREATE TABLE pc')
    e = psql(pcat + "ALTER TABLE pc SET (parallel_workers = 2); EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + pq)
    par = psql(pcat + "ALTER TABLE pc SET (parallel_workers = 2); " + pq)
    ser = psql(pcat + "SET max_parallel_workers_per_gather = 0; " + pq + "; DROP TABLE pc")
    ok(re.search(r'Gather.*Workers Launched: 2.*Nested Loop.*Parallel Seq Scan on pc c.*Foreign Scan on vds_chunks ch',
                 e.stdout, re.S) is not None and par.stdout == ser.stdout and 'data|54' in par.stdout.split(),
       'the foreign scan runs inside 2 parallel workers, below the Gather (parallel safe: a read-only relation), '
       'and counts as the serial plan does (54 data chunks: 3 x 16 + 3 x 2)', e.stdout + e.stderr + par.stdout + ser.stdout)

    # pushdown: the requests of tests/sqlite/pushdown.sql (one backend per psql call: a cold cache)
    stats = "; SELECT sum(requests) FROM vdsql_stats()"
    counts = [
        ('one chunk (chunk = 23): the layout, LayerStatus and its page', f"chunk = 23", 3),
        ('IN (3, 7, 1, 7, 30): page 0 only', "chunk IN (3, 7, 1, 7, 30)", 3),
        ('the chunks holding a sample: pages 0 and 1', "min0 <= 100 AND max0 >= 100 AND min1 <= 70 AND max1 >= 70", 4),
        ('positions alone: no page', None, 2),
    ]
    for what, where, n in counts:
        cols = 'chunk, status' if where else 'count(*), max(max0), sum(i1)'
        p = psql(f"SELECT {cols} FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}'" + (f" AND {where}" if where else '') + stats)
        got = p.stdout.split()[-1:] if p.returncode == 0 else p.stderr
        ok(got == [str(n)], f'{what}: {n} requests, as in SQLite (vdsql_stats)', f'got {got}')
    p = psql(f"SELECT chunk, status FROM vds_chunks('{ds}', '{L0}') WHERE chunk = 23" + stats)
    ok(p.returncode == 0 and int(p.stdout.split()[-1]) > 3,
       f'the function, which never sees WHERE, reads every page for the same chunk ({p.stdout.split()[-1:]} requests)',
       p.stdout + p.stderr)
    p = psql(f"SELECT count(status) FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}'" + stats +
             f"; SELECT count(data) FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}'" + stats)
    b = [int(x) for x in p.stdout.split()] if p.returncode == 0 else []
    # the generator's survey: 24 chunks over 3 pages, 16 of them data (each an object)
    ok(b == [24, 5, 24, 21],
       'data (each chunk object) is read only when named: a count makes 5 requests (the layout, LayerStatus, 3 pages), '
       'reading data 16 more (the 16 data objects)', p.stdout + p.stderr)
    x = psql(f"EXPLAIN (VERBOSE, COSTS OFF) SELECT chunk, status FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}' "
             "AND chunk = 5").stdout
    ok(f"vdsql arguments: url = '{ds}'::text, layer = '{L0}'::text" in x and 'vdsql hints: chunk = 5' in x
       and 'vdsql columns: chunk, status\n' in x + '\n' and 'Filter: (vds_chunks.chunk = 5)' in x,
       'EXPLAIN VERBOSE shows the arguments (consumed), the hint chunk = 5 (checked again: Filter) and the columns read', x)
    # the constant first (`20 < chunk` is `chunk > 20`): every pushed operator on every
    # pushed column, constants of each integer type, against the function's rows (it never
    # sees WHERE: PostgreSQL filters every row); the requests are the layout, LayerStatus
    # and the pages holding the rows (chunks 0-9, 10-19, 20-23), so a range pushed the
    # wrong way round reads other pages and, its rows checked again here, loses rows
    firsts = ['20 < chunk', '10 > chunk', '9 >= chunk', '20 <= chunk', '23 = chunk',
              '1 = page', '1 < page', '1 > page', '2 <= page', '0 >= page',
              '60 <= min2', '60 > min2', '59 < min2', '0 >= min2', '60 = min2', '100 >= min0',
              '99 = max2', '59 < max2', '60 > max2', '99 <= max2', '59 >= max2',
              '1 = i2', '0 < i2', '1 > i2', '1 <= i2', '0 >= i2', '2 > i0',
              '20::smallint < chunk', '1::int2 > i2', '2::smallint = page', '60::int2 <= min2',
              '20::bigint < chunk', '59::bigint >= max2', '0::int8 = i2',
              'min0 <= 100 AND 100 <= max0 AND 70 >= min1 AND max1 >= 70']
    bad = []
    for w in firsts:
        f = psql(f"SELECT chunk, status, page FROM vds_chunks('{ds}', '{L0}') WHERE {w} ORDER BY 1")
        t = psql(f"SELECT chunk, status FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}' AND {w} ORDER BY 1" + stats)
        want = [x.rsplit('|', 1)[0] for x in f.stdout.split()]
        n = 2 + len({x.rsplit('|', 1)[1] for x in f.stdout.split()})
        got = t.stdout.split()
        if f.returncode or t.returncode or not 0 < len(want) < 24 or got != want + [str(n)]:
            bad.append(f'{w}: function {want} ({n} requests due) | table {got} {f.stderr}{t.stderr}')
    ok(not bad, f'the constant first ({len(firsts)} clauses: <, <=, >, >=, = on chunk, page, min2, max2, i2, smallint and '
       'bigint constants): the function\'s rows, and only the pages holding them read (vdsql_stats)', '\n'.join(bad))
    x = psql(f"EXPLAIN (VERBOSE, COSTS OFF) SELECT chunk FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}' "
             "AND 20 < chunk AND 100 >= min0 AND 1 <= i2").stdout
    ok('vdsql hints: chunk > 20, min0 <= 100, i2 >= 1' in x,
       'EXPLAIN VERBOSE: 20 < chunk, 100 >= min0, 1 <= i2 reach the core commuted (chunk > 20, min0 <= 100, i2 >= 1)', x)
    # parameters instead of constants (a prepared statement's generic plan): bound at each
    # EXECUTE; a NULL compared with a column matches nothing and opens no cursor
    prep = ("SET plan_cache_mode = force_generic_plan; PREPARE q(text, text, bigint) AS SELECT chunk, status "
            "FROM v.vds_chunks WHERE url = $1 AND layer = $2 AND $3 < chunk ORDER BY 1; ")
    f = psql(f"SELECT chunk, status FROM vds_chunks('{ds}', '{L0}') WHERE chunk > 20 ORDER BY 1")
    p = psql(prep + f"EXECUTE q('{ds}', '{L0}', 20)" + stats)
    p0 = psql(prep + f"EXECUTE q('{ds}', '{L0}', NULL)" + stats)
    x = psql(prep + f"EXPLAIN (VERBOSE, COSTS OFF) EXECUTE q('{ds}', '{L0}', 20)").stdout
    ok(p.returncode == 0 and p.stdout.split() == f.stdout.split() + ['3'] and len(f.stdout.split()) == 3
       and 'vdsql arguments: url = $1, layer = $2' in x and 'vdsql hints: chunk > $3' in x
       and p0.returncode == 0 and p0.stdout.split() == ['0'],
       'a generic plan with $1, $2 as arguments and $3 < chunk as a hint: the function\'s 3 rows in 3 requests; '
       '$3 NULL: no row and no request', p.stdout + p.stderr + p0.stdout + p0.stderr + x)
    x = psql(f"EXPLAIN (VERBOSE, COSTS OFF) SELECT key FROM v.store_objects WHERE url = '{ds}/' LIMIT 3").stdout
    y = psql(f"EXPLAIN (VERBOSE, COSTS OFF) SELECT key FROM v.store_objects WHERE url = '{ds}/' AND size > 100 LIMIT 3; "
             f"EXPLAIN (VERBOSE, COSTS OFF) SELECT key FROM v.store_objects WHERE url = '{ds}/' ORDER BY key DESC LIMIT 3; "
             f"EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FROM v.store_objects WHERE url = '{ds}/' LIMIT 3").stdout
    ok('vdsql limit: 3' in x and 'vdsql limit' not in y,
       'a lone scan under LIMIT 3 is told it may stop at 3; not with a clause checked here, an ORDER BY or an aggregate', x + y)
    # a LIMIT above a join is not the scan's: the join may drop what the scan gives
    jw = ("CREATE TEMP TABLE want(c bigint); INSERT INTO want VALUES (20), (21), (22); ANALYZE want; ")
    jq = (f"SELECT ch.chunk, ch.status FROM v.vds_chunks ch JOIN want w ON w.c = ch.chunk "
          f"WHERE ch.url = '{ds}' AND ch.layer = '{L0}' LIMIT 2")
    f = psql(f"SELECT chunk, status FROM vds_chunks('{ds}', '{L0}') WHERE chunk IN (20, 21, 22)")
    p = psql(jw + jq)
    x = psql(jw + "EXPLAIN (VERBOSE, COSTS OFF) " + jq).stdout
    rows = p.stdout.split()
    ok(p.returncode == 0 and len(rows) == 2 and set(rows) <= set(f.stdout.split()) and 'vdsql limit' not in x,
       'LIMIT 2 over a join of vds_chunks with chunks 20-22: 2 of their rows; the scan is not told the LIMIT',
       p.stdout + p.stderr + f.stdout + x)

    # LIMIT over http, where pages are fetched ahead: the survey's pages hold 10 chunks, all
    # 3 stored; without the LIMIT told, all 3 went out (5 requests with the documents)
    ng = Nginx(data, os.path.join(work, 'nginx'))
    if ok(ng.started, 'nginx serves the datasets on 127.0.0.1', ng.error):
        hs = ng.url + '/survey'
        q = f"FROM v.vds_chunks WHERE url = '{hs}' AND layer = '{L0}'"
        x = psql(f"EXPLAIN (VERBOSE, COSTS OFF) SELECT chunk, status {q} LIMIT 5").stdout
        y = psql(f"EXPLAIN (VERBOSE, COSTS OFF) SELECT chunk, status {q} AND status = 'data' LIMIT 5").stdout
        ok('vdsql limit: 5' in x and 'vdsql limit' not in y,
           'vds_chunks under LIMIT 5 is told it; not with status = \'data\' checked here', x + y)
        cases = [('LIMIT 5: page 0 alone', 'LIMIT 5', '', 3),
                 ('LIMIT 5 OFFSET 12 (told 17: chunks 0-16): pages 0 and 1', 'LIMIT 5 OFFSET 12', '', 4),
                 ('LIMIT 30, past the last row: every page', 'LIMIT 30', '', 5),
                 ("status = 'data' LIMIT 5, not told: every page, SQLite's rows", 'LIMIT 5', " AND status = 'data'", 5)]
        for what, lim, where, n in cases:
            p = psql(f"SELECT chunk, status {q}{where} {lim}" + stats)  # no ORDER BY: that keeps the LIMIT back
            s = sqlite(f"SELECT chunk, status FROM vds_chunks('{ds}', '{L0}') WHERE 1{where} ORDER BY chunk {lim}")
            rows = p.stdout.split()
            ok(p.returncode == 0 and rows[:-1] == s.stdout.split() and len(rows) > 1 and rows[-1] == str(n),
               f'{what}: {n} requests, the rows SQLite gives', p.stdout + p.stderr + s.stdout + s.stderr)

    r = run(['psql', '-X', '-q', '-c', f"SELECT * FROM v.vds_chunks WHERE url = '{ds}'"], env=env)
    ok(r.returncode != 0 and 'vds_chunks needs its argument layer' in r.stderr,
       'a scan without its layer is refused, naming the argument', r.stderr)
    r = psql("CREATE FOREIGN TABLE v.bad1 (x text) SERVER s OPTIONS (relation 'vds_nothing')")
    r2 = psql("CREATE FOREIGN TABLE v.bad2 (layer text) SERVER s OPTIONS (relation 'vds_layers', uri '/x')")
    r3 = psql("CREATE FOREIGN TABLE v.bad3 (name text) SERVER s OPTIONS (relation 'lindi_tar')")
    r4 = psql(f"CREATE FOREIGN TABLE v.bad4 (layer bigint) SERVER s OPTIONS (relation 'vds_layers', url '{ds}'); SELECT * FROM v.bad4")
    ok('no relation named "vds_nothing"' in r.stderr and 'no option "uri" for vds_layers (its options: relation, on_conflict, url)' in r2.stderr
       and "lindi_tar is a table over one dataset: give OPTIONS (relation 'lindi_tar', url)" in r3.stderr
       and 'column "layer" is text in vds_layers, not bigint' in r4.stderr,
       'options and columns are checked: an unknown relation, an unknown option (the valid ones listed), a named-only '
       'table without its url, a column of the wrong type', r.stderr + r2.stderr + r3.stderr + r4.stderr)
    p = psql(f"CREATE FOREIGN TABLE v.survey_layers (layer text, compression text) SERVER s OPTIONS (relation 'vds_layers', url '{ds}'); "
             "SELECT count(*) FROM v.survey_layers")
    ok(p.returncode == 0 and p.stdout.split()[-1:] == ['5'],
       'an option named as an argument fixes it: a table of the survey\'s layers (5)', p.stdout + p.stderr)
    # the scan's per-row path: a text column's value is reused while its bytes repeat
    # (status), replaced when they change (key, every row), and checked when new
    q = "SELECT chunk, status, key, status || '/' || key FROM {} ORDER BY 1"
    p = psql(q.format(f"v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}'"))
    s = sqlite(q.format(f"vds_chunks('{ds}', '{L0}')"))
    ok(p.returncode == 0 and norm(p.stdout) == norm(s.stdout) and len(p.stdout.split()) == 24,
       'text columns read row after row (status repeats, key changes) give SQLite\'s values', p.stdout + p.stderr + s.stdout)
    bad = os.path.join(data, 'badnames')
    os.makedirs(bad)
    for name in (b'a', b'b\xff', b'c'):
        open(os.path.join(bad.encode(), name), 'w').close()
    r = psql(f"SELECT key FROM v.store_objects WHERE url = '{bad}/' ORDER BY key")
    r2 = psql(f"SELECT count(*) FROM v.store_objects WHERE url = '{bad}/' AND key <> 'a'")
    ok(r.returncode != 0 and 'column key: the value is not valid UTF8 text' in r.stderr
       and 'column key: the value is not valid UTF8 text' in r2.stderr,
       'a file name that is not UTF-8 is an error naming the column (its bytes are checked, not only the first value\'s)',
       r.stdout + r.stderr + r2.stdout + r2.stderr)
    # the first statement reads the layer's documents into the backend's cache; the
    # second is planned after it ran
    x = psql(f"SELECT count(*) FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}'; "
             f"EXPLAIN SELECT status, count(*) FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}' GROUP BY status").stdout
    ok('HashAggregate' in x and re.search(r'Foreign Scan on vds_chunks .*rows=24 ', x),
       'the arguments bound by WHERE do not cut the estimate (they pick the dataset): the layer\'s 24 chunks (the '
       'generator\'s survey, from the cached LayerStatus), and GROUP BY a hash aggregate', x)
    r = psql("SELECT 1")
    ok(r.returncode == 0, 'the backend still answers after the errors', r.stderr)

    # VTKHDF (HDF5) in a backend: the partitions the fixture's expect.json states, through
    # the function and the foreign table, and the backends exit cleanly afterwards (HDF5's
    # exit handler is off: a crash at exit would reset the whole cluster)
    shared = os.environ.get('VDSQL_SHARED') or os.path.join(top, '..', 'shared')
    fx = os.path.join(shared, 'fixtures', 'vtkhdf', 'fvtkhdf_ug_test')
    if not os.path.exists(fx + '.vtkhdf'):
        print(f'ok {0} # SKIP no shared folder at {shared} (set VDSQL_SHARED): VTKHDF in PostgreSQL not checked')
    else:
        import json
        vt = os.path.join(work, 'ug.vtkhdf')
        shutil.copyfile(fx + '.vtkhdf', vt)  # where the postgres user can read it; removed with the test's folder
        os.chmod(vt, 0o644)
        e = json.load(open(fx + '.expect.json'))
        want = [f"{st['step']}|{pa['partition']}|{pa['NumberOfPoints']}|{pa['NumberOfCells']}"
                for st in e['steps'] for pa in st['partitions']]
        q = "step, partition, n_points, n_cells"
        p1 = psql(f"SELECT {q} FROM vtkhdf_partitions('{vt}') ORDER BY 1, 2")
        p2 = psql(f"SELECT {q} FROM v.vtkhdf_partitions WHERE url = '{vt}' ORDER BY 1, 2")
        ok(p1.stdout.split() == want and p2.stdout.split() == want,
           f'VTKHDF: vtkhdf_partitions as a function and as a foreign table gives the fixture\'s {len(want)} partitions '
           '(points and cells as its expect.json states)', p1.stdout + p1.stderr + p2.stdout + p2.stderr)
        logf = os.path.join(open(os.path.join(work, 'pg', 'rundir')).read().strip(), 'server.log')
        log = open(logf, errors='replace').read()
        ok(not re.search(r'terminated by signal|server process .* was terminated|PANIC', log),
           'every backend that read VTKHDF (and every other) exited cleanly: no crash in the server log',
           '\n'.join(x for x in log.splitlines() if 'terminated' in x or 'PANIC' in x)[:2000])

    # privileges (file_fdw's model, tests/pg/privileges.t for the functions): a foreign
    # table's dataset is checked when it is read or written, as a call's url is
    a = os.path.join(work, 'w.lindi.tar')
    psql(f"CREATE ROLE regress_fdw LOGIN; GRANT USAGE ON SCHEMA v TO regress_fdw; "
         f"GRANT SELECT ON ALL TABLES IN SCHEMA v TO regress_fdw; GRANT USAGE ON FOREIGN SERVER s TO regress_fdw")
    as_role = lambda q: run(['psql', '-X', '-q', '-A', '-t', '-v', 'VERBOSITY=verbose', '-U', 'regress_fdw', '-c', q], env=env)  # noqa: E731
    r1 = as_role(f"SELECT count(*) FROM v.vds_layers WHERE url = '{ds}'")
    psql("GRANT pg_read_server_files TO regress_fdw")
    r2 = as_role(f"SELECT count(*) FROM v.vds_layers WHERE url = '{ds}'")
    r3 = as_role("SELECT count(*) FROM v.vds_layers WHERE url = 'survey'")
    ok('42501' in r1.stderr and 'pg_read_server_files' in r1.stderr and ds in r1.stderr and r2.returncode == 0
       and r2.stdout.split() == ['5'] and r3.returncode != 0 and 'relative' in r3.stderr,
       'a role reads a foreign table over local files only with pg_read_server_files (42501 naming the path and the role '
       'before the grant); a relative path is refused', r1.stderr + r2.stdout + r2.stderr + r3.stderr)
    # the check is each read's, not the backend's first: a named table read by a superuser,
    # then after SET ROLE in the same session by a role without pg_read_server_files
    # (a copy the server may write: a named table opens its archive for writing)
    nd = os.path.join(work, 'nt')
    os.makedirs(nd)
    nt = os.path.join(nd, 'small.lindi.tar')
    shutil.copyfile(f'{lin}/small.lindi.tar', nt)
    if os.getuid() == 0:
        subprocess.run(['chown', '-R', 'postgres:postgres', nd])
    psql(f"CREATE ROLE regress_nopriv; CREATE FOREIGN TABLE v.nt (name text) SERVER s "
         f"OPTIONS (relation 'lindi_tar', url '{nt}'); GRANT USAGE ON SCHEMA v TO regress_nopriv; "
         "GRANT SELECT ON v.nt TO regress_nopriv")
    n_members = len(tarfile.open(nt).getnames())
    r = run(['psql', '-X', '-q', '-A', '-t', '-v', 'VERBOSITY=verbose', '-v', 'ON_ERROR_STOP=1', '-c',
             "SELECT count(*) FROM v.nt; SET ROLE regress_nopriv; SELECT count(*) FROM v.nt"], env=env)
    ok(r.stdout.split() == [str(n_members)] and '42501' in r.stderr and 'pg_read_server_files' in r.stderr,
       f'a named table read ({n_members} members, as tarfile lists them), then after SET ROLE to a role without '
       'pg_read_server_files in the same backend: refused (42501), not served by the backend\'s open table',
       r.stdout + r.stderr)
    r = psql(f"CREATE FOREIGN TABLE v.wt (name text, data bytea) SERVER s OPTIONS (relation 'lindi_tar', url '{a}'); "
             "GRANT INSERT ON v.wt TO regress_fdw")
    r4 = as_role("INSERT INTO v.wt VALUES ('x', 'y')")
    ok(r.returncode == 0 and '42501' in r4.stderr and 'pg_write_server_files' in r4.stderr and not os.path.exists(a),
       'an INSERT into a named table over a local file needs pg_write_server_files (42501), and writes nothing before',
       r.stderr + r4.stderr)
finally:
    if ng:
        ng.stop()
    stop()
done()
