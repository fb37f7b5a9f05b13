#!/usr/bin/env python3
"""Every read stopped the same way (issue 29, item 4), as TAP: each relation of
vdsql_relations() that reads a dataset, as a function and as its foreign table of
vdsql_tables (and an INSERT into a writable one), on every remote store -- http (nginx),
s3:// (radosgw) and az:// (Azurite), each behind tests/faultproxy.py stalling every
answer 20 s -- waits on its first request; statement_timeout (1 s) and pg_cancel_backend
(0.5 s in) then end it with SQLSTATE 57014, PostgreSQL's own message, and a CONTEXT line
naming the URL the core was reading, within a second; the same calls in the sqlite3
shell (the functions, and an INSERT into a vds_chunks table) end with SQLITE_INTERRUPT
(9) and the URL when SIGINT makes the shell call sqlite3_interrupt. Local files (the file store) are
read too fast to wait on: their cancels are tested where a local read is long
(tests/pg/resources.t: a LINDI COMMIT, a template bomb; tests/pg/hostile_vtkhdf.t: a
stopped HDF5 helper).
INTERRUPT_STORES=http,s3,az picks stores; INTERRUPT_ONLY=REGEX picks relations."""
import os
import re
import signal
import subprocess
import sys
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from pgtest import data, done, env, ok, psql, run, stop, top, work  # noqa: E402
sys.path.insert(0, os.path.dirname(here))
from taplib import Azurite, FaultProxy, Nginx, Radosgw  # noqa: E402

STORES = os.environ.get('INTERRUPT_STORES', 'http,s3,az').split(',')
ONLY = re.compile(os.environ.get('INTERRUPT_ONLY', '.'))
STALL = 20
LAYER = 'Dimensions_012LOD0'
# the arguments after url each relation takes (vdsql_relations().arguments is checked against it)
LAYOUT = open(os.path.join(data, 'survey', 'VolumeDataLayout')).read().replace("'", "''")
ARGS = {'layer': f"'{LAYER}'", 'chunk': '0', 'name': "'a'", 'layout_json': f"'{LAYOUT}'", 'compression': "'None'",
        'layout': "'partitions'"}
PATH = {'vds': 'survey', 'lindi': 'lindi/small.lindi.tar', 'tar': 'lindi/small.lindi.tar',
        'vtkhdf': 'vtkhdf/x.vtkhdf', 'store': '', 'vdsql': ''}
NO_READ = {'vdsql_stats', 'vdsql_relations', 'vdsql_config', 'vdsql_version'}
LOCAL_ONLY = {'lindi_tar', 'vtkhdf_main'}  # local archives and main files: a URL is refused before any request
HTTP_NOT = {'store_objects', 'vds_datasets', 'vdsql_datasets', 'vds_create',
            'lindi_repair'}  # http has no listing and no writes: refused first
NO_TABLE = {'lindi_repair'}  # writes: a function only, never a foreign table (docs/postgresql.md)
servers = []
relays = {}


def relay(upstream):
    f = FaultProxy(upstream)
    f.arm(rate=1, kinds='stall', stall=STALL, seed=1)
    servers.append(f)
    return f


def session(script, app):
    return run(['psql', '-X', '-q', '-A', '-t', '-f', '-'], env=env, timeout=120,
               input=f"\\set VERBOSITY verbose\nSET application_name = '{app}';\nSET vdsql.server = 'st';\n"
                     "SET vdsql.http_timeout = 60; SET vdsql.request_deadline = 60; SET vdsql.http_retries = 0;\n" + script)


def cases(base, store):
    """(label, SQL, what the CONTEXT must name, SQLite's SQL or None) for every reading relation on base"""
    r = psql('SELECT name, kind, arguments FROM vdsql_relations() ORDER BY 1')
    out = []
    for line in r.stdout.splitlines():
        name, kind, args = line.split('|')
        if name in NO_READ or not ONLY.search(name):
            continue
        if name in LOCAL_ONLY or (name in HTTP_NOT and store == 'http'):
            continue
        args = [a.strip().strip('[]') for a in args.replace('[,', ',').split(',') if a.strip()]
        args = [a for a in args if a and a not in ('offset', 'size', 'level')]  # optional trailing arguments
        group = name.split('_')[0]
        url = f"{base}/{PATH.get(group, '')}".rstrip('/') + ('/' if name in ('store_objects', 'vds_datasets', 'vdsql_datasets') else '')
        vals = [f"'{url}'"] + [ARGS[a] for a in args[1:]]
        shown = url.split('?')[0].rstrip('/')
        if kind == 'function':
            out.append((f'{name}()', f"SELECT length({name}({', '.join(vals)})::text);", shown,
                        f"SELECT length({name}({', '.join(vals)}));"))
            continue
        out.append((f'{name}()', f"SELECT count(*) FROM {name}({', '.join(vals)});", shown,
                    f"SELECT count(*) FROM {name}({', '.join(vals)});"))
        if name in NO_TABLE:
            continue
        where = ' AND '.join(f'{a} = {v}' for a, v in zip(args, vals))
        out.append((f'vdsql_tables.{name}', f"SELECT count(*) FROM vdsql_tables.{name} WHERE {where};", shown, None))
        if kind == 'writable' and name == 'vds_chunks':
            psql(f"CREATE FOREIGN TABLE IF NOT EXISTS ch_{store} (chunk bigint, data bytea) SERVER st "
                 f"OPTIONS (relation 'vds_chunks', url '{url}', layer '{LAYER}')")
            out.append((f'INSERT INTO vds_chunks table', f"INSERT INTO ch_{store} VALUES (0, '\\x00');", shown,
                        f"CREATE VIRTUAL TABLE temp.ch USING vds_chunks('{url}', '{LAYER}'); "
                        "INSERT INTO temp.ch(chunk, data) VALUES (0, x'00'); COMMIT;"))
    return out


LOCK = threading.Lock()  # the stores run side by side: one TAP line at a time


def judge(store, label, how, r, took, limit, shown):
    errs = [x for x in r.stderr.splitlines() if x.startswith('ERROR:') or x.startswith('psql:') and 'ERROR:' in x]
    ctx = [x for x in r.stderr.splitlines() if x.startswith('CONTEXT:')]
    want = 'statement timeout' if how == 'statement_timeout' else 'user request'
    with LOCK:
        judge_ok(store, label, how, r, took, limit, shown, errs, ctx, want)


def judge_ok(store, label, how, r, took, limit, shown, errs, ctx, want):
    ok(len(errs) == 1 and 'ERROR:  57014: canceling statement due to ' + want in errs[0] and took < limit,
       f'{store} {label}: {how} ends it with 57014 ({want}) in {took:.1f} s', r.stdout + r.stderr)
    if ok(any(shown in c for c in ctx), f'{store} {label}: the CONTEXT names {shown}', r.stderr):
        print('#   ' + next(c for c in ctx if shown in c))


def timed(store, label, sql, shown):
    """under statement_timeout 1 s: the query's time read by the server's clock around it"""
    r = session("SET statement_timeout = '1s';\nSELECT 'start', extract(epoch FROM clock_timestamp());\n"
                f"{sql}\nSELECT 'end', extract(epoch FROM clock_timestamp());\n", f'int_{store}')
    t = {x.split('|')[0]: float(x.split('|')[1]) for x in r.stdout.split() if x.split('|')[0] in ('start', 'end')}
    judge(store, label, 'statement_timeout', r, t['end'] - t['start'] if len(t) == 2 else 99, 2.0, shown)


def cancelled(store, label, sql, shown):
    app = f'int_c_{store}'
    res = {}
    th = threading.Thread(target=lambda: res.update(r=session(sql + '\n', app)))
    th.start()
    t0, t_cancel = time.monotonic(), None
    while th.is_alive() and time.monotonic() - t0 < 30:
        if t_cancel is None:
            q = psql(f"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = '{app}' "
                     "AND state = 'active' AND query NOT LIKE 'SET %' AND clock_timestamp() - query_start > '0.5 s'")
            if q.stdout.strip() == 't':
                t_cancel = time.monotonic()
        time.sleep(0.05)
    th.join(30)
    took = time.monotonic() - t_cancel if t_cancel else 99
    judge(store, label, 'pg_cancel_backend', res.get('r') or subprocess.CompletedProcess([], 1, '', 'no result'),
          took, 1.5, shown)


def interrupted_sqlite(store, label, sql, shown, setup):
    """sql in the sqlite3 shell, SIGINT (its sqlite3_interrupt) 0.5 s after its first request reached the
    relay: SQLITE_INTERRUPT (9), the URL"""
    p = subprocess.Popen(['sqlite3', '-bail', '-cmd', '.load ' + os.path.join(top, 'vdsql'), ':memory:'],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = relays[store].stats()['requests']
    p.stdin.write(setup + '\n' + sql + '\n')
    p.stdin.flush()
    t0 = time.monotonic()  # SIGINT once the shell's request waits at the relay (the shell has its handler)
    while relays[store].stats()['requests'] == seen and time.monotonic() - t0 < 20:
        time.sleep(0.05)
    time.sleep(0.5)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    took = time.monotonic() - t0
    with LOCK:
        ok('(9)' in err and 'interrupted' in err and took < 1.5,
           f'{store} {label} in SQLite: sqlite3_interrupt ends it with SQLITE_INTERRUPT in {took:.1f} s', out + err)
        ok(shown in err, f'{store} {label} in SQLite: the error names {shown}', err)


try:
    r = psql('CREATE EXTENSION vdsql')
    ok(r.returncode == 0, 'CREATE EXTENSION vdsql', r.stderr)
    bases = {}
    opts, mapping = [], []
    common = "SELECT vdsql_config('http_timeout', 60), vdsql_config('request_deadline', 60), vdsql_config('http_retries', 0);"
    lite_setup = {'http': common}
    if 'http' in STORES:
        ng = Nginx(data, os.path.join(work, 'nginx'))
        servers.append(ng)
        if ok(ng.started, 'nginx serves the test datasets on 127.0.0.1', ng.error):
            relays['http'] = relay(ng.url.rsplit(":", 1)[1])
            bases['http'] = f'http://127.0.0.1:{relays["http"].port}'
    if 's3' in STORES:
        rgw = Radosgw()
        servers.append(rgw)
        if ok(rgw.started, 'radosgw runs on 127.0.0.1', rgw.error):
            f = relays['s3'] = relay(rgw.endpoint.rsplit(':', 1)[1])
            bases['s3'] = f's3://{rgw.bucket}'
            opts.append(f"s3_endpoint 'http://127.0.0.1:{f.port}', s3_region '{rgw.region}'")
            lite_setup['s3'] = common + (f"SELECT vdsql_config('s3_endpoint', 'http://127.0.0.1:{f.port}'), "
                                         f"vdsql_config('s3_region', '{rgw.region}'), vdsql_config('s3_access_key_id', "
                                         f"'{rgw.key}'), vdsql_config('s3_secret_access_key', '{rgw.secret}');")
            mapping.append(f"s3_access_key_id '{rgw.key}', s3_secret_access_key '{rgw.secret}'")
    if 'az' in STORES:
        azs = Azurite()
        servers.append(azs)
        if ok(azs.started, 'Azurite runs on 127.0.0.1', azs.error):
            port = azs.endpoint.split(':')[2].split('/')[0]
            f = relays['az'] = relay(port)
            endpoint = azs.endpoint.replace(f':{port}/', f':{f.port}/')
            bases['az'] = f'az://{azs.account}/{azs.container}'
            cs = f"DefaultEndpointsProtocol=http;AccountName={azs.account};AccountKey={azs.key};BlobEndpoint={endpoint};"
            mapping.append(f"azure_connection_string '{cs}'")
            lite_setup['az'] = common + f"SELECT vdsql_config('azure_connection_string', '{cs}');"
    r = psql(f"CREATE SERVER st FOREIGN DATA WRAPPER vdsql OPTIONS ({', '.join(opts + ['cache_ttl ' + chr(39) + '0' + chr(39)])});"
             f"CREATE USER MAPPING FOR CURRENT_USER SERVER st" + (f" OPTIONS ({', '.join(mapping)})" if mapping else ''))
    r2 = psql('CREATE SCHEMA vdsql_tables; IMPORT FOREIGN SCHEMA vdsql FROM SERVER st INTO vdsql_tables')
    ok(r.returncode == 0 and r2.returncode == 0, 'a server st with every store behind its stalling relay, the '
       'credentials, its foreign tables in vdsql_tables', r.stderr + r2.stderr)

    def one_store(store):
        for label, sql, shown, lite in cases(bases[store], store):
            timed(store, label, sql, shown)
            cancelled(store, label, sql, shown)
            if lite:
                interrupted_sqlite(store, label, lite, shown, lite_setup[store])
    ths = [threading.Thread(target=one_store, args=(s,)) for s in bases]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
finally:
    for s in servers:
        s.stop()
    stop()
done()
