#!/usr/bin/env python3
"""Resources and paths (issue 28, item 4), as TAP:
- a role that is not a superuser cannot make its backend hold more than the superuser
  allows: the sizes a backend holds (cache_size, lindi_prefix, vtkhdf_prefix,
  http_max_excess) are superuser settings, and the backend's RSS (read from /proc) grows by
  less than the superuser's max_alloc while that role sets them as high as it can and reads
  eight 40 MiB files;
- "file:NAME" (no //) is a relative path: refused like every relative path, for reads and
  writes, and nothing appears in the data directory;
- pg_cancel_backend during a local lindi_tar COMMIT of a large archive lands within a few
  hundred ms and leaves the archive as it was (byte for byte);
- a {{template}} bomb in a .lindi.json (one ref of 12 million placeholders) stops at
  statement_timeout, not seconds after it."""
import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgtest import data, done, env, ok, psql, run, stop, top, work  # noqa: E402

MAX_ALLOC = 64 << 20
FILES, FILE_SIZE = 8, 40 << 20
MEMBERS = int(os.environ.get('RES_MEMBERS', '200000'))  # names of 180 bytes: an index of 40 MB

w = os.path.join(work, 'res')
os.makedirs(w)
os.chmod(w, 0o777)  # the postgres user writes the archive's journal beside it


def as_role(role, script, timeout=120):
    return run(['psql', '-X', '-q', '-A', '-t', '-U', role], input=script, env=env, timeout=timeout)


def proc_kb(text, key):
    """The last 'key: N kB' line of /proc/PID/status output."""
    vals = [int(line.split()[1]) for line in text.splitlines() if line.startswith(key + ':')]
    return vals


def sha(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for b in iter(lambda: f.read(1 << 20), b''):
            h.update(b)
    return h.hexdigest()


try:
    r = psql("CREATE EXTENSION vdsql; CREATE ROLE vdsql_res LOGIN; GRANT pg_read_server_files TO vdsql_res; "
             "GRANT pg_write_server_files TO vdsql_res")
    r2 = run(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1'], env=env,
             input=f"LOAD 'vdsql_pg';\nALTER SYSTEM SET vdsql.max_alloc = '{MAX_ALLOC}';\nSELECT pg_reload_conf();\n")
    ok(r.returncode == 0 and r2.returncode == 0, f'a role vdsql_res with pg_read_server_files; max_alloc {MAX_ALLOC >> 20} MiB '
       'for the cluster', r.stderr + r2.stderr)

    # --- 1. what a role that is not a superuser can make its backend hold ---
    for k in range(FILES):
        with open(os.path.join(w, f'big{k}.lindi.tar'), 'wb') as f:
            f.truncate(FILE_SIZE)  # sparse: zeros read from the page cache, no disk
        os.chmod(os.path.join(w, f'big{k}.lindi.tar'), 0o644)
    sizes = {'cache_size': '1000000000000', 'lindi_prefix': '1000000000', 'vtkhdf_prefix': '1000000000',
             'http_max_excess': '1000000000000'}
    script = ["SELECT vdsql_version();", "SELECT pg_backend_pid() AS pid \\gset", "\\setenv VPID :pid",
              "\\! grep -E '^(VmRSS|VmHWM):' /proc/$VPID/status"]
    script += [f"SET vdsql.{k} = '{v}';" for k, v in sizes.items()]
    script += [f"SELECT vdsql_config('{k}', '{v}');" for k, v in sizes.items()]
    script += [f"SELECT count(*) FROM lindi_files('{w}/big{k}.lindi.tar');" for k in range(FILES)]
    script += ["\\! grep -E '^(VmRSS|VmHWM):' /proc/$VPID/status",
               "SELECT 'now:' || string_agg(vdsql_config(k), ',') FROM unnest(ARRAY['cache_size', 'lindi_prefix', "
               "'vtkhdf_prefix', 'http_max_excess']) k;"]
    r = as_role('vdsql_res', '\n'.join(script) + '\n')
    rss, hwm = proc_kb(r.stdout, 'VmRSS'), proc_kb(r.stdout, 'VmHWM')
    refused = [k for k in sizes if f'permission denied to set parameter "vdsql.{k}"' in r.stderr]
    ok(sorted(refused) == sorted(sizes), 'SET of cache_size, lindi_prefix, vtkhdf_prefix, http_max_excess is refused '
       'to a role that is not a superuser', r.stderr)
    now = [x for x in r.stdout.split() if x.startswith('now:')]
    ok(now == ['now:16777216,131072,1048576,4194304'], 'vdsql_config(key, value) does not change them either: the '
       'core\'s defaults stay (16 MiB cache, 128 KiB and 1 MiB prefixes, 4 MiB excess)', r.stdout + r.stderr)
    grew = (rss[1] - rss[0]) * 1024 if len(rss) == 2 else None
    peak = (hwm[1] - rss[0]) * 1024 if len(hwm) == 2 and rss else None
    ok(grew is not None and grew < MAX_ALLOC and peak < MAX_ALLOC,
       f'after reading {FILES} files of {FILE_SIZE >> 20} MiB the backend\'s RSS grew by '
       f'{(grew or 0) / 2**20:.1f} MiB and its peak by {(peak or 0) / 2**20:.1f} MiB: both under max_alloc '
       f'({MAX_ALLOC >> 20} MiB)', r.stdout + r.stderr)
    r = psql("SET vdsql.cache_size = '33554432'; SELECT vdsql_config('cache_size')")
    ok(r.returncode == 0 and r.stdout.strip() == '33554432', 'a superuser still sets them (cache_size 32 MiB)',
       r.stdout + r.stderr)

    # --- 2. file:NAME is a relative path ---
    datadir = psql('SHOW data_directory').stdout.strip()
    for url in ('file:survey', 'file:/survey', 'FILE:survey'):
        r = psql(f"SELECT * FROM vds_layout('{url}')")
        ok(r.returncode != 0 and f'reading relative path "{url}" needs an absolute path' in r.stderr,
           f"'{url}' is refused like a relative path (42501), a superuser's too", r.stderr)
    r = as_role('vdsql_res', "SELECT vds_create('file:made', '{}', 'None');\n")
    ok('reading relative path "file:made" needs an absolute path' in r.stderr,
       "vds_create('file:made', ...) is refused before it writes", r.stderr)
    psql("CREATE SERVER res FOREIGN DATA WRAPPER vdsql")
    r = psql("CREATE FOREIGN TABLE rel_t (name text, data bytea) "
             "SERVER res OPTIONS (relation 'lindi_tar', url 'file:made.lindi.tar'); INSERT INTO rel_t VALUES ('x', 'y')")
    ok(r.returncode != 0 and 'reading relative path "file:made.lindi.tar" needs an absolute path' in r.stderr,
       "a lindi_tar foreign table over 'file:made.lindi.tar' refuses INSERT", r.stderr)
    left = [f for f in os.listdir(datadir) if f.lower().startswith('file:')] if os.path.isdir(datadir) else ['?']
    ok(left == [], f'nothing named file:... in the data directory ({datadir})', left)

    # --- 3. pg_cancel_backend during a local lindi_tar COMMIT ---
    arch = os.path.join(w, 'many.lindi.tar')
    shutil.copy(os.path.join(data, 'lindi/small.lindi.tar'), arch)
    t0 = time.monotonic()
    g = run(['sqlite3', ':memory:'], input=f".load {top}/vdsql\nCREATE VIRTUAL TABLE a USING lindi_tar('{arch}');\n"
            f"BEGIN;\nINSERT INTO a(name, data) SELECT 'm/' || printf('%.90c', 'x') || '/' || printf('%.80c', 'y') || value, "
            f"zeroblob(0) FROM generate_series(1, {MEMBERS});\n"
            "COMMIT;\n")
    os.chmod(arch, 0o666)
    ok(g.returncode == 0 and not g.stderr, f'an archive of {MEMBERS} members (made with the SQLite extension in '
       f'{time.monotonic() - t0:.1f} s)', g.stderr)
    before = sha(arch)
    psql(f"CREATE FOREIGN TABLE many_t (name text, data bytea) SERVER res OPTIONS (relation 'lindi_tar', url '{arch}')")
    res = {}

    def committer():
        t = time.monotonic()
        res['r'] = run(['psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1'],
                       input="SET application_name = 'vdsql_committer';\nBEGIN;\n"
                             "INSERT INTO many_t VALUES ('one more', 'x');\nCOMMIT;\n", env=env)
        res['end'] = time.monotonic()
        res['took'] = res['end'] - t
    th = threading.Thread(target=committer)
    th.start()
    seen = None
    for _ in range(2000):  # wait for the COMMIT to start
        c = psql("SELECT 1 FROM pg_stat_activity WHERE application_name = 'vdsql_committer' AND state = 'active' "
                 "AND query LIKE 'COMMIT%'")
        if c.stdout.strip() == '1':
            seen = time.monotonic()
            break
        if not th.is_alive():
            break
        time.sleep(0.01)
    time.sleep(0.05)
    c = psql("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'vdsql_committer'")
    t_cancel = time.monotonic()
    th.join(120)
    rr = res.get('r')
    after = res['end'] - t_cancel if rr else None
    ok(seen is not None and c.stdout.strip() == 't' and rr is not None and rr.returncode != 0 and
       'canceling statement due to user request' in rr.stderr and after < 0.5,
       f'pg_cancel_backend as the COMMIT writes the index: 57014 {after if after is not None else -1:.2f} s after the cancel '
       f'(the session took {res.get("took", -1):.1f} s)',
       (c.stdout + c.stderr + (rr.stdout + rr.stderr if rr else 'no result')))
    ok(sha(arch) == before, 'the archive is byte for byte what it was before the cancelled transaction')
    r = psql("INSERT INTO many_t VALUES ('one more', 'x')")
    ok(r.returncode == 0, 'the next transaction on the archive commits', r.stderr)

    # --- 4. a {{template}} bomb under statement_timeout ---
    bomb = os.path.join(w, 'bomb.lindi.json')
    with open(bomb, 'w') as f:
        f.write('{"generationMetadata": {}, "templates": {"x": ""}, "refs": {"r0": ["' + '{{x}}' * 12000000 +
                '", 0, 1]}}')
    os.chmod(bomb, 0o644)
    q = f"SELECT count(*), sum(length(target)) FROM lindi_refs('{bomb}')"
    t0 = time.monotonic()
    whole = psql(q)
    took = time.monotonic() - t0
    ok(whole.returncode == 0 and whole.stdout.strip() == '1|0', f'the bomb: one ref that expands to nothing, '
       f'{took:.1f} s without a timeout', whole.stdout + whole.stderr)
    limit = 1.5
    # psql's \timing: the statement alone (the module loaded before it, no connection time)
    r = run(['psql', '-X', '-q', '-A', '-t'], env=env,
            input=f"SELECT vdsql_version();\nSET statement_timeout = '{int(limit * 1000)}ms';\n\\timing on\n{q};\n")
    ms = [float(x.split()[1]) for x in r.stdout.splitlines() if x.startswith('Time: ')]
    over = ms[-1] / 1000 - limit if ms else 99
    ok('canceling statement due to statement timeout' in r.stderr and over < 0.3,
       f'statement_timeout {limit} s stops it {over:.2f} s after the timeout', r.stdout + r.stderr)
finally:
    stop()
done()
