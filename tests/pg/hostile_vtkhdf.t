#!/usr/bin/env python3
"""libhdf5 in a PostgreSQL backend runs only in the HDF5 helper (issue 28, item 2), as TAP
(tests/pg/pgtest.py starts the cluster):
  - the helper is the one make pg-install put in pkglibdir, a child of the backend;
  - the two crafted files of ../shared/fixtures/hostile-vtkhdf/ (read in place), through
    every vtkhdf_* function, over http (nginx on 127.0.0.1) as a role with only
    vdsql_network and as local files as a role with pg_read_server_files: each failure
    names the file (h5s_select_fortify.vtkhdf: the helper died with SIGABRT), the query
    after each gives the generator's rows, the backend's PID is the same before and
    after, and the server log has no "terminated by signal";
  - the mutation fuzzer of tests/vtkhdf/helper.t (tests/h5mutate.py) in the backend: FUZZ_N
    mutants (default 20, seed FUZZ_SEED) through every function as loc: the same backend
    throughout, every error naming its mutant, none of class XX;
  - statement_timeout and pg_cancel_backend while the backend waits on its helper (a
    file served a byte a second by tests/http/badserver.py, and a helper stopped with
    SIGSTOP in the middle of a call) end the query with 57014 within about a second,
    the helper is killed (its PID gone), and the next query gets a new helper."""
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from pgtest import data, done, env, ok, psql, run, state, stop, top, work  # noqa: E402
sys.path.insert(0, os.path.dirname(here))
from taplib import Nginx  # noqa: E402
import h5mutate  # noqa: E402

RELATIONS = ['vtkhdf_partitions', 'vtkhdf_topologies', 'vtkhdf_arrays', 'vtkhdf_array_starts', 'vtkhdf_sources',
             'vtkhdf_blocks', 'vtkhdf_amr_boxes', 'vtkhdf_trees']
shared = os.path.realpath(os.environ.get('VDSQL_SHARED', os.path.join(top, '..', 'shared')))
hostile = os.path.join(shared, 'fixtures', 'hostile-vtkhdf')
if not os.path.isdir(hostile):
    print(f'not ok 1 - {hostile} not found: set VDSQL_SHARED to the folder holding fixtures/hostile-vtkhdf')
    print('1..1')
    stop()
    sys.exit(1)
crafted = sorted(f for f in os.listdir(hostile) if f.endswith('.vtkhdf'))
pkglib = run([os.environ.get('PG_CONFIG', 'pg_config'), '--pkglibdir']).stdout.strip()


def server_log():
    return open(os.path.join(open(os.path.join(state, 'rundir')).read().strip(), 'server.log')).read()


def session(role, script, app=None):
    """script as role in one psql session (errors do not stop it), verbose errors"""
    pre = '\\set VERBOSITY verbose\n' + (f"SET application_name = '{app}';\n" if app else '')
    return run(['psql', '-X', '-q', '-A', '-t', '-U', role, '-f', '-'], env=env, input=pre + script)


def helpers(backend):
    """the backend's vdsql-h5helper children, from /proc (no procps on a minimal Debian)"""
    out = []
    for d in os.listdir('/proc'):
        try:
            stat = open(f'/proc/{d}/stat').read() if d.isdigit() else ''
        except OSError:
            continue
        name, _, rest = stat.partition(' (')[2].rpartition(') ')
        if name == 'vdsql-h5helper' and rest.split()[1:2] == [str(backend)]:
            out.append(int(d))
    return sorted(out)


def backend_of(app):
    r = psql(f"SELECT pid FROM pg_stat_activity WHERE application_name = '{app}'")
    return int(r.stdout.split()[0]) if r.stdout.split() else None


vtk = os.path.join(data, 'vtkhdf')
g = run(['/usr/bin/python3', os.path.join(top, 'tests/gen/mkvtkhdf_types.py'), vtk])
for f in os.listdir(vtk):
    os.chmod(os.path.join(vtk, f), 0o644)
os.chmod(vtk, 0o755)
ok(g.returncode == 0, 'tests/gen/mkvtkhdf_types.py wrote the VTKHDF test files (h5py)', g.stderr)
SENT = 'htg_temporal.vtkhdf'
want = len(json.load(open(os.path.join(vtk, 'htg_temporal.expect.json')))['partitions'])

ng = Nginx(data, os.path.join(work, 'nginx'))
nh = Nginx(hostile, os.path.join(work, 'nginx-hostile'))
bad = subprocess.Popen([sys.executable, os.path.join(top, 'tests/http/badserver.py'), data, '300'],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
slow = f'http://127.0.0.1:{bad.stdout.readline().split()[0]}/slow/vtkhdf/{SENT}'
try:
    if not ok(ng.started and nh.started, 'nginx serves the datasets and the crafted files on 127.0.0.1',
              ng.error + nh.error):
        raise SystemExit
    r = psql('CREATE EXTENSION vdsql; CREATE ROLE net LOGIN; GRANT vdsql_network TO net; '
             'CREATE ROLE loc LOGIN; GRANT pg_read_server_files TO loc')
    ok(r.returncode == 0, 'roles net (vdsql_network only) and loc (pg_read_server_files only)', r.stderr)

    # the helper a backend runs: pkglibdir's, its child
    r = session('net', f"SELECT 'pid', pg_backend_pid();\nSELECT 'rows', count(*) FROM vtkhdf_partitions('{ng.url}/vtkhdf/{SENT}');\n"
                       "SELECT pg_sleep(1);\n", app='vdsql_h5_probe')
    ok(f'rows|{want}' in r.stdout.split(), f'a backend reads a VTKHDF file over http ({want} partitions)', r.stdout + r.stderr)

    def probe():
        time.sleep(0.5)
        b = backend_of('vdsql_h5_probe')
        hs = helpers(b) if b else []
        probe.exe = [os.readlink(f'/proc/{h}/exe') for h in hs]
    probe.exe = []
    th = threading.Thread(target=probe)
    th.start()
    session('net', f"SELECT count(*) FROM vtkhdf_partitions('{ng.url}/vtkhdf/{SENT}');\nSELECT pg_sleep(1.5);\n",
            app='vdsql_h5_probe')
    th.join()
    ok(probe.exe == [os.path.join(pkglib, 'vdsql-h5helper')],
       f'the backend runs one helper, {pkglib}/vdsql-h5helper (found next to vdsql_pg.so)', probe.exe)

    # the crafted files, over http as net and as local files as loc
    log0 = len(server_log())
    for role, where, base in (('net', 'over http', nh.url), ('loc', 'as local files', hostile)):
        sent = f'{ng.url}/vtkhdf/{SENT}' if role == 'net' else os.path.join(vtk, SENT)
        for name in crafted:
            lines = ["SELECT 'pid', pg_backend_pid();"]
            for rel in RELATIONS:
                lines.append(f"SELECT '{rel}', count(*) FROM {rel}('{base}/{name}');")
                lines.append(f"SELECT 'next', count(*) FROM vtkhdf_partitions('{sent}');")
            lines.append("SELECT 'pid', pg_backend_pid();")
            r = session(role, '\n'.join(lines) + '\n')
            out = r.stdout.split()
            pids = [x for x in out if x.startswith('pid|')]
            errs = [x for x in r.stderr.splitlines() if 'ERROR:' in x]
            ok(out.count(f'next|{want}') == len(RELATIONS) and len(pids) == 2 and pids[0] == pids[1],
               f'{name} {where} as {role}: the query after each of the {len(RELATIONS)} functions gives its '
               f'{want} rows, the backend\'s PID is the same before and after', r.stdout + r.stderr)
            ok(errs and all(name in e for e in errs) and not any(': XX' in e for e in errs),
               f'{name} {where} as {role}: {len(errs)} failures, each names the file, none of SQLSTATE class XX', r.stderr)
            if name == 'h5s_select_fortify.vtkhdf':
                ok(any('the HDF5 helper process died (SIGABRT) reading this file' in e for e in errs),
                   f'{name} {where} as {role}: the error says the HDF5 helper died with SIGABRT', r.stderr)

    # the mutation fuzzer of tests/vtkhdf/helper.t in a backend: FUZZ_N mutants of the
    # VTKHDF files of both generators, each through every function, as loc in one session
    n = int(os.environ.get('FUZZ_N', '20'))
    rng = random.Random(int(os.environ.get('FUZZ_SEED', '28')))
    mut = os.path.join(data, 'h5mut')
    os.makedirs(mut)
    os.chmod(mut, 0o755)
    gen = os.path.join(data, 'h5gen')  # the C generator's files too, as in helper.t
    mk = os.path.join(top, 'build', 'mkvtkhdf')
    if not os.path.exists(mk):  # pgtest.py builds the modules only (make vdsql.so pg-install)
        run(['make', '-s', 'build/mkvtkhdf'], cwd=top)
    run([mk, gen])
    for f in os.listdir(gen):
        os.chmod(os.path.join(gen, f), 0o644)
    os.chmod(gen, 0o755)
    seeds = h5mutate.seeds_in(vtk) + h5mutate.seeds_in(gen)
    lines = ["SELECT 'pid', pg_backend_pid();"]
    for i in range(n):
        dst = h5mutate.mutant(rng, seeds, mut, i)
        lines += [f"SELECT count(*) FROM {rel}('{dst}');" for rel in RELATIONS]
    lines += [f"SELECT 'next', count(*) FROM vtkhdf_partitions('{os.path.join(vtk, SENT)}');",
              "SELECT 'pid', pg_backend_pid();"]
    r = session('loc', '\n'.join(lines) + '\n')
    out = r.stdout.split()
    pids = [x for x in out if x.startswith('pid|')]
    errs = [x for x in r.stderr.splitlines() if 'ERROR:' in x]
    deaths = {}
    for e in errs:
        m = re.search(r'the HDF5 helper process died \(([^)]*)\)', e)
        if m:
            deaths[m.group(1)] = deaths.get(m.group(1), 0) + 1
    ok(f'next|{want}' in out and len(pids) == 2 and pids[0] == pids[1],
       f'fuzzer: {n} mutants x {len(RELATIONS)} functions as loc, the backend goes on (same PID, the next query gives '
       f'its {want} rows; helper deaths: {sum(deaths.values())} {deaths}, {len(errs)} errors)', r.stdout[-500:] + r.stderr[-1500:])
    unnamed = [e for e in errs if mut + '/m' not in e or ': XX' in e]
    ok(not unnamed, 'fuzzer: every error names its mutant, none of SQLSTATE class XX', unnamed[:5])
    tail = server_log()[log0:]
    ok('terminated by signal' not in tail and 'server process' not in tail,
       'the server log has no backend ended by a signal (no restart of the cluster)', tail[-1500:])

    # interrupts while the backend waits on its helper: the failing query between two
    # clock readings; every helper the backend runs seen by polling its children
    def interrupted(what, target, app, timeout=False, stop_helper=False):
        res, seen = {}, []
        script = ("SELECT 'start', extract(epoch FROM clock_timestamp());\n" +
                  ("SET statement_timeout = '1s';\n" if timeout else '') +
                  f"SELECT count(*) AS under_test FROM vtkhdf_partitions('{target}');\n" +
                  "SELECT 'end', extract(epoch FROM clock_timestamp());\nRESET statement_timeout;\n"
                  f"SELECT 'next', count(*) FROM vtkhdf_partitions('{ng.url}/vtkhdf/{SENT}');\nSELECT pg_sleep(0.8);\n")
        if stop_helper:  # a helper to stop first: the call's own is then waited on
            script = f"SELECT count(*) FROM vtkhdf_partitions('{ng.url}/vtkhdf/{SENT}');\nSELECT pg_sleep(2);\n" + script

        def victim():
            res['r'] = session('net', script, app=app)
        th = threading.Thread(target=victim)
        th.start()
        t0, b, cancel, stopped, in_call = time.monotonic(), None, None, None, None
        while th.is_alive() and time.monotonic() - t0 < 30:
            b = b or backend_of(app)
            for h in helpers(b) if b else []:
                if h not in seen:
                    seen.append(h)
            # stopped once its first query is done (the session sleeps): the next call waits on it
            if stop_helper and seen and stopped is None and 'pg_sleep(2)' in psql(
                    f"SELECT query FROM pg_stat_activity WHERE pid = {b}").stdout:
                os.kill(seen[0], signal.SIGSTOP)
                stopped = time.monotonic()
            # the cancel comes a second after the call under test has started (not in a pg_sleep)
            if not timeout and cancel is None and (stopped is not None or not stop_helper) and b:
                if in_call is None and 'under_test' in psql(f"SELECT query FROM pg_stat_activity WHERE pid = {b}").stdout:
                    in_call = time.monotonic()
                if in_call is not None and time.monotonic() - in_call > 1.0:
                    cancel = time.time()
                    psql(f'SELECT pg_cancel_backend({b})')
            time.sleep(0.05)
        th.join(30)
        r = res.get('r')
        out = r.stdout.split() if r else []
        errs = [x for x in r.stderr.splitlines() if 'ERROR:' in x] if r else []
        ok(r is not None and len(errs) == 1 and 'ERROR:  57014:' in errs[0] and f'next|{want}' in out,
           f'{what}: the query ends with 57014, the next one gives its {want} rows',
           (r.stdout + r.stderr) if r else 'no result')
        ok(seen and not os.path.exists(f'/proc/{seen[0]}'), f'{what}: the helper was killed (its pid gone)', seen)
        t = {x.split('|')[0]: float(x.split('|')[1]) for x in out if x.split('|')[0] in ('start', 'end')}
        took = t['end'] - (t['start'] + 1 if timeout else (cancel or 0)) if len(t) == 2 else 99
        ok(took < 1.0, f'{what}: the query ended {took:.2f} s after the ' + ('timeout' if timeout else 'cancel'), (t, cancel))
        ok(len(seen) == 2, f'{what}: the next query gets a new helper', seen)

    interrupted('statement_timeout, a file served a byte a second', slow, 'vdsql_h5_t1', timeout=True)
    interrupted('pg_cancel_backend, a file served a byte a second', slow, 'vdsql_h5_t2')
    interrupted('statement_timeout, the helper stopped in the call', f'{ng.url}/vtkhdf/{SENT}', 'vdsql_h5_t3',
                timeout=True, stop_helper=True)
    interrupted('pg_cancel_backend, the helper stopped in the call', f'{ng.url}/vtkhdf/{SENT}', 'vdsql_h5_t4',
                stop_helper=True)
    tail = server_log()[log0:]
    ok('terminated by signal' not in tail, 'after it all, the server log has no "terminated by signal"', tail[-1500:])
finally:
    ng.stop()
    nh.stop()
    bad.kill()
    stop()
done()
