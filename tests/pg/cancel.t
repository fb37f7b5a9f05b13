#!/usr/bin/env python3
"""Cancellation in PostgreSQL, as TAP: a query whose transfer stalls (the tests' own bad
server, tests/http/badserver.py: hang/ never answers, slow/ sends a byte a second) is
stopped by statement_timeout and by pg_cancel_backend within a second, with PostgreSQL's
own error (57014), and by pg_terminate_backend; the next query on the same connection
works. The core sees the cancel through its one hook (vd_ctx.interrupted) between turns
of its transfers, aborts them and returns; nothing jumps out of curl."""
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgtest import data, done, env, ok, psql, run, stop, top  # noqa: E402

srv = subprocess.Popen([sys.executable, os.path.join(top, 'tests/http/badserver.py'), data, '120'],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
port = srv.stdout.readline().split()[0]
base = f'http://127.0.0.1:{port}'
try:
    r = psql('CREATE EXTENSION vdsql')
    ok(r.returncode == 0, 'CREATE EXTENSION vdsql', r.stderr)
    # one session: a stalled query under statement_timeout, then an ordinary one
    script = (f"SET vdsql.http_timeout = 60; SET statement_timeout = '800ms';\n"
              f"SELECT count(*) FROM vds_layers('{base}/hang/survey');\n"
              f"RESET statement_timeout;\nSELECT count(*) FROM vds_layers('{base}/ok/survey');\n")
    t0 = time.monotonic()
    r = run(['psql', '-X', '-q', '-A', '-t'], input=script, env=env)
    took = time.monotonic() - t0
    ok('canceling statement due to statement timeout' in r.stderr and took < 5,
       f'a hung server: statement_timeout 0.8 s stops the query with PostgreSQL\'s error in {took:.1f} s '
       '(http_timeout is 60 s)', r.stderr)
    ok(r.stdout.split()[-1:] == ['5'], 'the next query on the same connection works (5 layers over http)',
       r.stdout + r.stderr)

    # pg_cancel_backend from another session, while a slow/ transfer trickles
    res = {}

    def victim():
        t = time.monotonic()
        res['r'] = run(['psql', '-X', '-q', '-A', '-t', '-c', "SET application_name = 'vdsql_victim'",
                        '-c', f"SELECT count(*) FROM vds_layers('{base}/slow/survey')"], env=env)
        res['t'] = time.monotonic() - t
    th = threading.Thread(target=victim)
    th.start()
    time.sleep(1.5)
    t_cancel = time.monotonic()
    c = psql("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'vdsql_victim'")
    th.join(30)
    after = time.monotonic() - t_cancel
    ok(c.stdout.strip() == 't' and res.get('r') is not None and 'canceling statement due to user request' in res['r'].stderr
       and after < 2, f'pg_cancel_backend stops a trickling transfer {after:.1f} s after the cancel, with 57014',
       (c.stdout + c.stderr + (res['r'].stderr if res.get('r') else 'no result')))

    # pg_terminate_backend: the backend ends (FATAL), the cluster stays up
    res.clear()
    th = threading.Thread(target=victim)
    th.start()
    time.sleep(1.5)
    c = psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'vdsql_victim'")
    th.join(30)
    alive = psql("SELECT 1")
    ok(c.stdout.strip() == 't' and res.get('r') is not None and res['r'].returncode != 0 and alive.stdout.strip() == '1'
       and 'server closed the connection' in (res['r'].stderr + res['r'].stdout) or
       'terminating connection due to administrator command' in res['r'].stderr,
       'pg_terminate_backend ends the backend during a transfer; the cluster goes on', res['r'].stderr if res.get('r') else '')
finally:
    srv.kill()
    stop()
done()
