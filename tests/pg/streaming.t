#!/usr/bin/env python3
"""The relation functions stream their rows (issue 29, item 3), as TAP.

A Function Scan stores every row of a function in a tuplestore before the first one
moves on, spilling to a temporary file past work_mem: over a layer of 1M chunks that
was a temporary file of hundreds of MB, or as much memory with a large work_mem. Here,
on a generated layer of 1,000,000 chunks (tests/gen/mkvds.py big), SQLite with the
extension giving the expected rows and requests:
  - GROUP BY status through vds_chunks in FROM under temp_file_limit = '1MB' gives
    SQLite's counts, and pg_stat_database counts no temporary file for it;
  - with work_mem = '1GB' (where a tuplestore would stay in memory) the backend's peak
    RSS (VmHWM) stays under 64 MiB;
  - a LIMIT makes the requests SQLite makes for it (the two documents and the pages
    that hold the rows), not one per page of the layer, in FROM and in the select list;
    a cursor (DECLARE ... FETCH) reads as it goes;
  - a page that is not one, met mid-stream, is an error naming it; the session, a
    savepoint rolled back to and the next scans work; a statement_timeout mid-stream is
    57014 and the session goes on;
  - in parallel workers (a catalog, Gather) the same, under temp_file_limit too."""
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgtest import ok, psql, readable, run, sqlite, stop, done, top, work, bail, env  # noqa: E402

LAYER = 'Dimensions_012LOD0'
STATS = "SELECT 'req', requests FROM vdsql_stats() WHERE backend = 'file'"
HWM = "SELECT 'hwm', substring(pg_read_file('/proc/self/status') from 'VmHWM:\\s*(\\d+)')"


def tagged(out, tag):
    return [x.split('|', 1)[1] for x in out.split('\n') if x.startswith(tag + '|')]


def temp_files():
    r = psql("SELECT temp_files || '|' || temp_bytes FROM pg_stat_database WHERE datname = current_database()")
    return r.stdout.strip()


try:
    big = os.path.join(work, 'big')
    r = run([sys.executable, 'tests/gen/mkvds.py', 'big', '1000000', big], cwd=top)
    if r.returncode:
        bail('tests/gen/mkvds.py big 1000000 failed: ' + r.stderr[-300:])
    bad = os.path.join(work, 'bad')
    shutil.copytree(big, bad)
    pages = sorted(os.listdir(os.path.join(big, LAYER, 'ChunkMetadata')), key=int)
    with open(os.path.join(bad, LAYER, 'ChunkMetadata', pages[len(pages) // 2]), 'wb') as f:
        f.write(os.urandom(3000))  # the middle page: not a page at all
    readable(work)
    r = psql('CREATE EXTENSION vdsql')
    ok(r.returncode == 0, 'CREATE EXTENSION vdsql', r.stderr)

    fn = f"vds_chunks('{big}', '{LAYER}')"
    q = f"SELECT status, count(*), sum(chunk) FROM {fn} GROUP BY 1 ORDER BY 1"
    want = sqlite(q + ';').stdout.split()
    ok(len(want) >= 3 and sum(int(x.split('|')[1]) for x in want) == 1000000,
       f'SQLite: GROUP BY status over the {len(pages)} pages of 1,000,000 chunks: {want}', want)

    before = temp_files()
    r = psql(f"SET temp_file_limit = '1MB';\n{q};\nSELECT pg_stat_force_next_flush();")
    got = [x for x in r.stdout.split() if x.count('|') == 2]
    after = temp_files()
    ok(r.returncode == 0 and got == want, "GROUP BY status through vds_chunks under temp_file_limit = '1MB': SQLite's rows",
       r.stderr + r.stdout)
    ok(before and before == after, f'no temporary file written (pg_stat_database temp_files|temp_bytes {before} -> {after})',
       f'{before} -> {after}')

    r = psql(f"SET work_mem = '1GB';\n{q};\nSELECT count(*), sum(length(key)), sum(hash % 7) FROM {fn};\n{HWM};")
    hwm = tagged(r.stdout, 'hwm')
    ok(r.returncode == 0 and hwm and int(hwm[0]) < 64 * 1024,
       f"work_mem = '1GB', GROUP BY and every column read: the backend's peak RSS {int(hwm[0]) // 1024 if hwm else '?'} "
       "MiB < 64 MiB", r.stdout + r.stderr)

    # a LIMIT: the requests SQLite makes (SQLite's LIMIT is its own; the rows come as read)
    for what, sel in (('in FROM', f"SELECT status FROM {fn}"), ('in the select list', f"SELECT ({fn}).status")):
        for n in (1, 1025):
            s = sqlite(f"SELECT status FROM {fn} LIMIT {n};\n{STATS};")
            p = psql(f"{sel} LIMIT {n};\n{STATS};")
            sreq, preq = tagged(s.stdout, 'req'), tagged(p.stdout, 'req')
            rows = [x for x in p.stdout.split('\n') if x and not x.startswith('req|')]
            ok(p.returncode == 0 and len(rows) == n and sreq and preq == sreq,
               f'LIMIT {n} {what}: {n} rows and SQLite\'s {sreq} requests, of {len(pages) + 2} for the whole layer',
               f'pg {preq} {p.stderr}; sqlite {sreq} {s.stderr}')
    # a cursor: each FETCH goes on where the last stopped (PostgreSQL shuts the plan down
    # after each), reading pages as it goes
    r = run(['psql', '-X', '-q', '-A', '-t'], env=env,
            input=f"BEGIN;\nDECLARE c NO SCROLL CURSOR FOR SELECT chunk, status FROM {fn};\nFETCH 1 FROM c;\n{STATS};\n"
            f"FETCH 1024 FROM c;\n{STATS};\nFETCH 1 FROM c;\nCLOSE c;\nCOMMIT;\n{STATS};\n")
    req = tagged(r.stdout, 'req')
    rows = [x for x in r.stdout.split() if not x.startswith('req|')]
    ok(r.returncode == 0 and req == ['3', '4', '4'] and len(rows) == 1026 and rows[0].startswith('0|')
       and rows[-1].startswith('1025|'),
       'a cursor: FETCH 1 reads the two documents and the first page, FETCH 1024 one page more, FETCH 1 the next chunk '
       '(1025), CLOSE nothing', f'{req} {rows[:2]} {rows[-2:]} {len(rows)} {r.stderr}')

    # errors mid-stream
    r = run(['psql', '-X', '-q', '-A', '-t', '-v', 'VERBOSITY=verbose', '-c',
             f"SELECT count(status) FROM vds_chunks('{bad}', '{LAYER}')"], env=env)
    page = f'{bad}/{LAYER}/ChunkMetadata/{pages[len(pages) // 2]}'
    ok(r.returncode != 0 and page in r.stderr and '22023' in r.stderr,
       'a page that is not one, half way through the layer: 22023 naming it', r.stderr)
    r = run(['psql', '-X', '-q', '-A', '-t'], input=f"SELECT count(status) FROM vds_chunks('{bad}', '{LAYER}');\n"
            f"{q};\nBEGIN;\nSAVEPOINT s;\nSELECT count(status) FROM vds_chunks('{bad}', '{LAYER}');\nROLLBACK TO s;\n"
            f"{q};\nCOMMIT;\nSET statement_timeout = '200ms';\nSELECT count(*) FILTER (WHERE pg_sleep(0.001)::text = '') FROM {fn};\n"
            f"RESET statement_timeout;\n{q};\n{STATS};\n", env=env)
    got = [x for x in r.stdout.split() if x.count('|') == 2]
    ok(got == want * 3 and r.stderr.count('ERROR') == 3 and 'canceling statement due to statement timeout' in r.stderr,
       'in one session: an error mid-stream, the next scan whole; another in a savepoint, rolled back to, the next '
       'scan whole; a statement_timeout mid-stream, the next scan whole', r.stdout + r.stderr)

    # parallel workers: a catalog of 2 rows, one per heap page, Gather over it
    for st in ("CREATE TABLE catalog (url text, layer text, note text) WITH (fillfactor = 10)",
               f"INSERT INTO catalog VALUES ('{big}', '{LAYER}', repeat('x', 1000)), ('{big}', '{LAYER}', repeat('x', 1000))",
               "ALTER TABLE catalog SET (parallel_workers = 2)", "VACUUM ANALYZE catalog"):
        r = psql(st)
        if r.returncode:
            bail(f'{st}: {r.stderr}')
    qp = ("SELECT ch.status, count(*), sum(ch.chunk) FROM catalog c, vds_chunks(c.url, c.layer) ch GROUP BY 1 ORDER BY 1")
    par = ("SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET parallel_leader_participation = off;\n"
           "SET temp_file_limit = '1MB';\n")
    plan = psql(par + f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) {qp};")
    p = psql(par + qp + ';')
    got = [x for x in p.stdout.split() if x.count('|') == 2]
    want2 = [f"{x.split('|')[0]}|{2 * int(x.split('|')[1])}|{2 * int(x.split('|')[2])}" for x in want]
    ok(plan.returncode == 0 and re.search(r'Workers Launched: [12]', plan.stdout) and 'Gather' in plan.stdout
       and p.returncode == 0 and got == want2,
       "parallel workers (the leader not taking part) under temp_file_limit = '1MB': twice SQLite's rows",
       plan.stdout + plan.stderr + p.stdout + p.stderr)

    # the streaming scan is the function's call: EXECUTE checked (a REVOKE holds, 42501),
    # and the call counted in pg_stat_user_functions as a Function Scan's
    r = psql("CREATE ROLE streamer LOGIN; GRANT pg_read_server_files TO streamer; "
             "REVOKE EXECUTE ON FUNCTION vds_chunks(text, text) FROM PUBLIC")
    q2 = f"SELECT count(status) FROM vds_chunks('{big}', '{LAYER}')"
    e = psql(f"EXPLAIN {q2}")
    d = run(['psql', '-X', '-q', '-A', '-t', '-U', 'streamer', '-v', 'VERBOSITY=verbose', '-c', q2], env=env)
    ok(r.returncode == 0 and 'Custom Scan (vdsql function)' in e.stdout and d.returncode != 0
       and '42501' in d.stderr and 'permission denied for function vds_chunks' in d.stderr,
       'EXECUTE revoked from PUBLIC: the streaming scan (Custom Scan in EXPLAIN) refuses the call with 42501',
       r.stderr + e.stdout + e.stderr + d.stdout + d.stderr)
    psql("GRANT EXECUTE ON FUNCTION vds_chunks(text, text) TO PUBLIC")
    psql("SELECT pg_stat_reset()")
    r = psql("SET track_functions = 'all'; "
             f"SELECT count(*) FROM (SELECT 1 FROM vds_chunks('{big}', '{LAYER}') LIMIT 5) x; "
             f"SELECT count(*) FROM (VALUES (1), (2), (3)) v(i), LATERAL (SELECT 1 FROM vds_chunks('{big}', '{LAYER}') "
             "LIMIT v.i) y")
    calls, deadline = None, time.monotonic() + 15
    while calls != '4' and time.monotonic() < deadline:  # the session's counts reach the server when it ends
        c = psql("SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions WHERE funcname = 'vds_chunks'")
        calls = c.stdout.strip()
        time.sleep(0.3)
    ok(r.returncode == 0 and calls == '4',
       'track_functions = all counts the streaming scan\'s calls in pg_stat_user_functions: 4 (one, then one per '
       f'outer row of three): {calls}', r.stdout + r.stderr)
finally:
    stop()
done()
