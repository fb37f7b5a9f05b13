#!/usr/bin/env python3
"""Columns whose value a foreign table's option fixes (url, layer ...) live as long as the
scan (issue 28, item 1), as TAP (tests/pg/pgtest.py starts the cluster):
  - as a role with only vdsql_network, foreign tables with fixed options over nginx on
    127.0.0.1 (vds_axes, vds_chunks with url and layer, lindi_files) read the fixed
    column in expressions (url || 'x', url with current_schema(), layer || url) over
    every row: each row's value is the option's, as the test wrote it;
  - the same over rescans (a lateral filter reopens the scan for each outer row) and for
    arguments bound by a join with a catalog table;
  - the backend's PID is the same before and after, and the server log has no
    "terminated by signal". Once, these values came from the scan's per-tuple memory,
    freed before the row was used: wrong values, then a SIGSEGV that restarted the cluster."""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from pgtest import data, done, env, ok, psql, run, state, stop, work  # noqa: E402
sys.path.insert(0, os.path.dirname(here))
from taplib import Nginx  # noqa: E402

L0 = 'Dimensions_012LOD0'


def server_log():
    return open(os.path.join(open(os.path.join(state, 'rundir')).read().strip(), 'server.log')).read()


def as_net(sql):
    """sql as the role net in one session, one output line per row; the PID first and last."""
    script = 'SELECT pg_backend_pid();\n' + sql + '\nSELECT pg_backend_pid();\n'
    return run(['psql', '-X', '-q', '-A', '-t', '-U', 'net', '-v', 'ON_ERROR_STOP=1', '-f', '-'], env=env, input=script)


ng = Nginx(data, os.path.join(work, 'nginx'))
try:
    if not ok(ng.started, 'nginx serves the datasets on 127.0.0.1', ng.error):
        raise SystemExit
    survey, lindi = ng.url + '/survey', ng.url + '/lindi/small.lindi.tar'
    r = psql("CREATE EXTENSION vdsql; CREATE SERVER vdsql FOREIGN DATA WRAPPER vdsql; CREATE ROLE net LOGIN; "
             "GRANT vdsql_network TO net; GRANT USAGE ON FOREIGN SERVER vdsql TO net; GRANT CREATE ON SCHEMA public TO net")
    ok(r.returncode == 0, 'a role net with only vdsql_network (and USAGE on the server, CREATE on public)', r.stderr)
    r = as_net(f"CREATE FOREIGN TABLE axes (dim bigint, url text) SERVER vdsql OPTIONS (relation 'vds_axes', url '{survey}');\n"
               f"CREATE FOREIGN TABLE chunks (chunk bigint, status text, url text, layer text) SERVER vdsql "
               f"OPTIONS (relation 'vds_chunks', url '{survey}', layer '{L0}');\n"
               f"CREATE FOREIGN TABLE files (name text, url text) SERVER vdsql OPTIONS (relation 'lindi_files', url '{lindi}');\n"
               "CREATE FOREIGN TABLE chunks_arg (chunk bigint, url text, layer text) SERVER vdsql OPTIONS (relation 'vds_chunks');\n"
               f"CREATE TABLE catalog (url text, layer text); INSERT INTO catalog VALUES ('{survey}', '{L0}'), "
               f"('{survey}', 'Dimensions_012LOD1');")
    ok(r.returncode == 0, 'net creates foreign tables with fixed options over http, one with argument columns, a catalog',
       r.stderr)

    # what the rows must be, from the generator's files (not from vdsql)
    ndims = len(json.load(open(os.path.join(data, 'survey', 'VolumeDataLayout')))['axisDescriptors'])
    log0 = len(server_log())
    cases = [
        ("url || 'x' on vds_axes", "SELECT url || 'x' FROM axes;", [survey + 'x'] * ndims),
        ('url, current_schema() on vds_axes', 'SELECT url, current_schema() FROM axes;', [survey + '|public'] * ndims),
        ("dim, upper(url), url || url", "SELECT dim, upper(url), url || url FROM axes ORDER BY dim;",
         [f'{d}|{survey.upper()}|{survey}{survey}' for d in range(ndims)]),
        ('layer || url, length(url) on vds_chunks (url and layer fixed)',
         "SELECT layer || ' ' || url, length(url), length(layer) FROM chunks;", f'{L0} {survey}|{len(survey)}|{len(L0)}'),
        ("url || '#' on lindi_files", "SELECT url || '#' FROM files;", lindi + '#'),
        ('a scan reopened for each outer row (a lateral filter): url || g',
         "SELECT a.url || g FROM generate_series(1, 4) g CROSS JOIN LATERAL "
         "(SELECT url FROM axes WHERE dim < g + 10) a;",
         [survey + str(g) for g in range(1, 5) for _ in range(ndims)]),
    ]
    for what, q, want in cases:
        r = as_net(q)
        lines = r.stdout.split('\n')[:-1]
        pids, rows = lines[:1] + lines[-1:], lines[1:-1]
        if isinstance(want, str):  # as many rows as the relation has (at least two), each this
            want = [want] * max(len(rows), 2)
        ok(r.returncode == 0 and sorted(rows) == sorted(want) and len(pids) == 2 and pids[0] == pids[1],
           f'{what}: {len(want)} rows, each the option\'s value; the same backend before and after',
           r.stderr + '\n'.join(f'got {x!r}' for x in rows[:5]))

    # arguments bound by a join: their values come from the catalog's rows
    r = as_net("SELECT ch.url || ' ' || ch.layer, count(*) FROM catalog c JOIN chunks_arg ch "
               "ON ch.url = c.url AND ch.layer = c.layer GROUP BY 1 ORDER BY 1;")
    rows = r.stdout.split('\n')[1:-2]
    ok(r.returncode == 0 and [x.split('|')[0] for x in rows] == [f'{survey} {L0}', f'{survey} Dimensions_012LOD1'],
       'a catalog joined with vds_chunks: url || layer of each joined row is its catalog row\'s', r.stdout + r.stderr)

    log = server_log()[log0:]
    ok('terminated by signal' not in log and 'was terminated' not in log,
       'no backend ended with a signal (server log)', log[-2000:])
finally:
    ng.stop()
    stop()
done()
