#!/usr/bin/env python3
"""One deadline per request (issue 29, item 4), as TAP, in SQLite and PostgreSQL alike:
a server that accepts and never answers (tests/http/badserver.py hang/) holds a query
request_deadline, not http_timeout x (1 + http_retries). With http_timeout 60 s and 3
retries, request_deadline 1.5 s ends the query in 1.5 s (+ 1 s slack) after exactly one
try; with http_timeout 0.5 s, a first backoff of 0.1 s and request_deadline 1.8 s,
tries start at about 0, 0.6 and 1.3 s and no fourth fits: exactly 3 tries, 2 retries
(vdsql_stats(), twice that: the reader asks for the dataset's two documents at once). The error names the
URL, the tries and the deadline. The default is 30 s and the setting is bounded (0.001
to 1e6) in both front ends."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgtest import data, done, env, ok, psql, run, sqlite, stop, top  # noqa: E402

srv = subprocess.Popen([sys.executable, os.path.join(top, 'tests/http/badserver.py'), data, '300'],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
url = f'http://127.0.0.1:{srv.stdout.readline().split()[0]}/hang/survey'
shown = url + '/VolumeDataLayout'
CASES = [  # (what, http_timeout, request_deadline, requests, retries, tries said)
    ('http_timeout 60 s, 3 retries, request_deadline 1.5 s', 60, 1.5, 2 * 1, 0, '1 try in request_deadline 1.5 s'),
    ('http_timeout 0.5 s, 3 retries, first backoff 0.1 s, request_deadline 1.8 s', 0.5, 1.8, 2 * 3, 2 * 2,
     '3 tries in request_deadline 1.8 s'),
]
# an OpenVDS dataset is opened with its two documents asked for at once (VolumeDataLayout
# and LayerStatus): 2 requests a try
QUERY = f"SELECT count(*) FROM vds_layout('{url}')"
try:
    r = psql('CREATE EXTENSION vdsql')
    ok(r.returncode == 0, 'CREATE EXTENSION vdsql', r.stderr)
    for what, per_try, deadline, requests, retries, said in CASES:
        for front in ('SQLite', 'PostgreSQL'):
            if front == 'SQLite':
                setup = (f"SELECT vdsql_config('http_timeout', {per_try}), vdsql_config('http_retries', 3), "
                         f"vdsql_config('http_retry_delay_ms', 100), vdsql_config('request_deadline', {deadline});")
                t0 = time.monotonic()
                b = run(['sqlite3', '-cmd', '.load ' + os.path.join(top, 'vdsql'), ':memory:'],
                        input=f"{setup}\n{QUERY};\nSELECT 'stats', requests, retries FROM vdsql_stats() "
                        "WHERE backend = 'http';\n")
                took = time.monotonic() - t0
                out, errtext = b.stdout, b.stderr
            else:
                setup = (f"SET vdsql.http_timeout = {per_try}; SET vdsql.http_retries = 3; "
                         f"SET vdsql.http_retry_delay_ms = 100; SET vdsql.request_deadline = {deadline};\n")
                t0 = time.monotonic()
                b = run(['psql', '-X', '-q', '-A', '-t', '-F', '|', '-f', '-'], env=env,
                        input=setup + QUERY + ";\nSELECT 'stats', requests, retries FROM vdsql_stats() "
                        "WHERE backend = 'http';\n")
                took = time.monotonic() - t0
                out, errtext = b.stdout, b.stderr
            stats = [x for x in out.split() if x.startswith('stats|')]
            ok(took < deadline + 1.0, f'{front}, {what}: the query ends in {took:.2f} s', errtext)
            ok(stats == [f'stats|{requests}|{retries}'], f'{front}, {what}: {requests} requests, {retries} retries '
               '(vdsql_stats)', out + b.stderr)
            ok(shown in errtext and said in errtext, f'{front}, {what}: the error names the URL and says "{said}"',
               errtext)
    # the default and the bounds, in both front ends
    a = sqlite("SELECT vdsql_config('request_deadline');")
    b = psql("SELECT vdsql_config('request_deadline')")  # SHOW says '' (unset: the core's default)
    ok(a.stdout.strip() == '30' and b.stdout.split()[-1:] == ['30'], 'request_deadline is 30 s by default (SQLite, PostgreSQL)',
       a.stdout + a.stderr + b.stdout + b.stderr)
    for bad in ('0', '1e7', "'soon'"):
        a = sqlite(f"SELECT vdsql_config('request_deadline', {bad});")
        b = run(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', 'SELECT vdsql_version() IS NULL', '-c',
                 f"SET vdsql.request_deadline = {bad}"], env=env)
        ok(a.returncode != 0 and 'request_deadline' in a.stderr and b.returncode != 0 and 'request_deadline' in b.stderr,
           f'request_deadline {bad} is refused in both front ends', a.stderr + b.stderr)
finally:
    srv.kill()
    stop()
done()
