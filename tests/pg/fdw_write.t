#!/usr/bin/env python3
"""Writes through the foreign-data wrapper follow the PostgreSQL transaction, as TAP.

A named lindi_tar foreign table over an archive the postgres user owns, checked after
each step with independent readers (GNU tar, Python's tarfile, and the SQLite front end
reading the index and walking the headers: tests/lindi/crash.t's views):
  - INSERT, COPY, RETURNING; ROLLBACK leaves the archive as it was; ROLLBACK TO, RELEASE
    and PL/pgSQL exception blocks undo exactly their subtransaction's members, also for a
    writer that joined inside a savepoint; PREPARE TRANSACTION is refused and writes nothing;
  - DELETE removes, UPDATE is refused, a duplicate name is 23505 with a hint, ON CONFLICT
    DO NOTHING keeps the old bytes, on_conflict 'replace' replaces them;
  - INSERT ... SELECT of 10,000 members is one commit: all of them, or none when its last
    row fails;
  - two sessions writing the same name: one wins, the archive holds its bytes;
  - vtkhdf_main: parts rolled back leave no main file; committed ones are what h5py reads;
  - an OpenVDS chunk written meanwhile by another session makes COMMIT fail (PRE_COMMIT):
    the whole transaction aborts, its native-table row too, and the other writer's chunk stays;
  - kill -9 of the backend at random moments of COMMIT: every reader sees the old or the
    new set of members, never a mix, and all agree once the next writer has run."""
import importlib.machinery
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tarfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from pgtest import data, ok, psql, run, stop, done, env, top, vtkhdf_parts, work  # noqa: E402

crash = importlib.machinery.SourceFileLoader('crash', os.path.join(top, 'tests/lindi/crash.t')).load_module()
TRIALS = int(os.environ.get('PG_KILL_TRIALS', '8'))


def views_agree(path):
    v = crash.views(path)
    sets = {k: tuple(x) if isinstance(x, list) else x for k, x in v.items()}
    return len(set(sets.values())) == 1, v


SPECIAL = {'.tar_index.json', '.tar_entry.json', 'lindi.json'}


def plain(names):
    return sorted(set(names) - SPECIAL)


def live(path):
    with tarfile.open(path) as t:
        return sorted(set(m.name for m in t.getmembers() if not m.name.startswith('.trash/')) -
                      {'.tar_index.json', '.tar_entry.json', 'lindi.json'})


def psql_err(sql):
    return run(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose', '-c', sql], env=env)


w = os.path.join(work, 'w')
os.makedirs(w)
shutil.chown(w, 'postgres', 'postgres') if os.getuid() == 0 else None
a = os.path.join(w, 'a.lindi.tar')
try:
    r = psql("CREATE EXTENSION vdsql; CREATE SERVER s FOREIGN DATA WRAPPER vdsql; "
             f"CREATE FOREIGN TABLE t (name text, data bytea) SERVER s OPTIONS (relation 'lindi_tar', url '{a}'); "
             "INSERT INTO t VALUES ('x', 'hello')")
    ok(r.returncode == 0 and live(a) == ['x'], 'a named lindi_tar foreign table: INSERT makes an archive tarfile reads',
       r.stderr)
    r = psql("BEGIN; INSERT INTO t VALUES ('y', 'y'); SELECT string_agg(name, ',' ORDER BY name) FROM t "
             "WHERE name IN ('x', 'y'); ROLLBACK")
    ok(r.returncode == 0 and r.stdout.split() == ['x,y'] and live(a) == ['x'],
       'the transaction sees its own member; ROLLBACK leaves the archive as it was', r.stdout + r.stderr + str(live(a)))
    r = psql("BEGIN; INSERT INTO t VALUES ('z1', 'z'); SAVEPOINT a; INSERT INTO t VALUES ('z2', 'z'); ROLLBACK TO a; "
             "INSERT INTO t VALUES ('z3', 'z'); SAVEPOINT b; INSERT INTO t VALUES ('r1', 'r'); RELEASE b; COMMIT")
    ok(r.returncode == 0 and live(a) == ['r1', 'x', 'z1', 'z3'],
       'ROLLBACK TO undoes its savepoint\'s member (z2), RELEASE keeps one (r1)', r.stderr + str(live(a)))
    r = psql("BEGIN; SAVEPOINT a; INSERT INTO t VALUES ('j1', 'j'); ROLLBACK TO a; INSERT INTO t VALUES ('j2', 'j'); COMMIT")
    ok(r.returncode == 0 and 'j1' not in live(a) and 'j2' in live(a),
       'a writer that joins inside a savepoint: ROLLBACK TO undoes its first member, the next one commits', r.stderr)
    r = psql("DO $$ BEGIN INSERT INTO t VALUES ('e1', 'e'); BEGIN INSERT INTO t VALUES ('e2', 'e'); "
             "RAISE EXCEPTION 'boom'; EXCEPTION WHEN others THEN NULL; END; END $$")
    ok(r.returncode == 0 and 'e1' in live(a) and 'e2' not in live(a),
       'a PL/pgSQL exception block undoes its members (e2), the block around it commits (e1)', r.stderr)
    before = live(a)
    r = run(['psql', '-X', '-q', '-v', 'VERBOSITY=verbose'], input="BEGIN;\nINSERT INTO t VALUES ('p', 'p');\n"
            "PREPARE TRANSACTION 'vd';\n", env=env)
    ok('0A000' in r.stderr and 'cannot PREPARE a transaction that wrote a vdsql foreign table' in r.stderr
       and live(a) == before, 'PREPARE TRANSACTION is refused (0A000) and writes nothing', r.stderr)
    r = psql("DELETE FROM t WHERE name = 'z1'")
    r2 = psql_err("UPDATE t SET data = 'q' WHERE name = 'x'")
    ok(r.returncode == 0 and 'z1' not in live(a) and 'cannot update foreign table "t"' in r2.stderr,
       'DELETE removes a member; UPDATE is refused', r.stderr + r2.stderr)
    r = psql_err("INSERT INTO t VALUES ('x', 'again')")
    r2 = psql("INSERT INTO t VALUES ('x', 'again') ON CONFLICT DO NOTHING")
    ok('23505' in r.stderr and 'a member named x exists' in r.stderr and "on_conflict 'replace'" in r.stderr
       and r2.returncode == 0 and crash.content(a, 'x') == b'hello',
       'a duplicate name: 23505 naming it, with the hint of on_conflict; ON CONFLICT DO NOTHING keeps the old bytes',
       r.stderr + r2.stderr)
    r = psql("ALTER FOREIGN TABLE t OPTIONS (ADD on_conflict 'replace'); INSERT INTO t VALUES ('x', 'new'); "
             "ALTER FOREIGN TABLE t OPTIONS (DROP on_conflict)")
    ok(r.returncode == 0 and crash.content(a, 'x') == b'new', "on_conflict 'replace': the member's bytes are replaced",
       r.stderr)
    r = run(['psql', '-X', '-q', '-c', 'COPY t FROM STDIN'], input='c1\t\\\\x6869\nc2\t\\\\x6869\n\\.\n', env=env)
    r2 = psql("INSERT INTO t VALUES ('rt', 'x') RETURNING name, length(data)")
    ok(r.returncode == 0 and {'c1', 'c2', 'rt'} <= set(live(a)) and crash.content(a, 'c1') == b'hi'
       and r2.stdout.split() == ['rt|1'], 'COPY FROM and INSERT ... RETURNING', r.stderr + r2.stderr + r2.stdout)
    n0 = len(live(a))
    r = psql("INSERT INTO t SELECT 'm/' || g, decode(md5(g::text), 'hex') FROM generate_series(1, 10000) g "
             "UNION ALL SELECT 'x', 'dup'")
    ok(r.returncode != 0 and len(live(a)) == n0,
       'INSERT ... SELECT of 10,000 members whose last row fails: none of them is in the archive', r.stderr[-300:])
    t0 = time.monotonic()
    r = psql("INSERT INTO t SELECT 'm/' || g, decode(md5(g::text), 'hex') FROM generate_series(1, 10000) g")
    took = time.monotonic() - t0
    ok_all, v = views_agree(a)
    ok(r.returncode == 0 and len(live(a)) == n0 + 10000 and ok_all,
       f'INSERT ... SELECT of 10,000 members: one commit ({took:.2f} s), GNU tar, tarfile and the index agree',
       r.stderr + str({k: (len(x) if isinstance(x, list) else x) for k, x in v.items()}))

    # two sessions, one name
    procs = [subprocess.Popen(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c',
                               f"BEGIN; INSERT INTO t VALUES ('same', '{who}'); SELECT pg_sleep(0.5); COMMIT"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for who in 'AB']
    res = [(p.wait(60), p.stderr.read()) for p in procs]
    won = [who for who, (rc, _) in zip('AB', res) if rc == 0]
    got = crash.content(a, 'same')
    ok(len(won) == 1 and got == won[0].encode() and live(a).count('same') == 1,
       f'two sessions insert the same name: one wins ({won}), the archive holds its bytes ({got!r}); the other is told',
       str(res))

    # a chunk another session writes meanwhile: COMMIT fails in PRE_COMMIT and aborts everything
    vds = os.path.join(w, 'survey')
    shutil.copytree(os.path.join(data, 'survey'), vds)
    if os.getuid() == 0:
        subprocess.run(['chown', '-R', 'postgres:postgres', vds])
    L0 = 'Dimensions_012LOD0'
    psql(f"CREATE TABLE native(i int); CREATE FOREIGN TABLE vt (chunk bigint, data bytea) SERVER s "
         f"OPTIONS (relation 'vds_chunks', url '{vds}', layer '{L0}')")
    A = subprocess.Popen(['psql', '-X', '-q', '-v', 'VERBOSITY=verbose'], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    A.stdin.write("BEGIN;\nINSERT INTO native VALUES (1);\n"
                  "INSERT INTO vt VALUES (20, decode(repeat('aa', 428032), 'hex'));\n\\echo ready\n")
    A.stdin.flush()
    line = A.stdout.readline()
    b = psql("INSERT INTO vt VALUES (20, decode(repeat('bb', 428032), 'hex'))")
    out, err = A.communicate("COMMIT;\n", timeout=60)
    chk = psql(f"SELECT count(*) FROM native; SELECT substr(vds_chunk_data('{vds}', '{L0}', 20), 1, 2)")
    ok(line.strip() == 'ready' and b.returncode == 0 and '23505' in err and 'chunk' in err and '20' in err
       and chk.stdout.split() == ['0', '\\xbbbb'],
       'a chunk written meanwhile by another session: COMMIT fails (23505, naming chunk 20), the transaction\'s native '
       'row is rolled back with it, the other writer\'s chunk stays', [line, b.stderr, err, chk.stdout, chk.stderr])
    r = psql("SELECT 1")
    ok(r.returncode == 0, 'the session after a failed COMMIT: the server answers', r.stderr)

    # vtkhdf_main: parts assembled at COMMIT, nothing on ROLLBACK (h5py reads the result)
    parts = vtkhdf_parts()
    main = os.path.join(w, 'main.vtkhdf')
    psql(f"CREATE FOREIGN TABLE m (file text, stored text) SERVER s OPTIONS (relation 'vtkhdf_main', url '{main}', "
         "layout 'partitions')")
    r = psql("BEGIN; " + "".join(f"INSERT INTO m(file) VALUES ('{p}'); " for p in parts) + "ROLLBACK")
    ok(r.returncode == 0 and not os.path.exists(main), 'vtkhdf_main: three parts inserted and rolled back: no main file',
       r.stderr)
    r = psql("".join(f"INSERT INTO m(file) VALUES ('{p}'); " for p in parts[:2]) +
             f"BEGIN; INSERT INTO m(file) VALUES ('{parts[2]}'); COMMIT; SELECT count(*) FROM m")
    code = ("import sys, json, h5py\n"
            "print(json.dumps([[int(x) for x in h5py.File(p, 'r')['VTKHDF/NumberOfPoints'][()]] for p in sys.argv[1:]]))")
    h = run(['/usr/bin/python3', '-c', code, main] + parts)  # Debian's python3-h5py
    try:
        res = json.loads(h.stdout)
        got, want = res[0], [x for part in res[1:] for x in part]
    except ValueError:
        got, want = h.stderr[-300:] or 'h5py failed (install python3-h5py: scripts/install-deps)', None
    ok(r.returncode == 0 and r.stdout.split()[-1:] == ['3'] and got == want,
       f'vtkhdf_main: three parts committed (two statements and a transaction): h5py reads the main file\'s '
       f'NumberOfPoints {got}, the parts\' own', r.stderr + str(got))

    # kill -9 of the backend at random moments of COMMIT
    rnd = random.Random(int(os.environ.get('PG_KILL_SEED', '7')))
    bad, outcomes = [], {'old': 0, 'new': 0, 'documented window': 0}
    for trial in range(TRIALS):
        old = live(a)
        p = subprocess.Popen(['psql', '-X', '-q', '-A', '-t'], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
        p.stdin.write("SELECT pg_backend_pid();\nBEGIN;\n"
                      f"INSERT INTO t SELECT 'k{trial}/' || g, decode(md5(g::text), 'hex') FROM generate_series(1, 3000) g;\n"
                      "DELETE FROM t WHERE name = 'rt';\n\\echo ready\n")
        p.stdin.flush()
        pid = int(p.stdout.readline())
        p.stdout.readline()
        p.stdin.write("COMMIT;\n")
        p.stdin.flush()
        time.sleep(rnd.uniform(0, 0.15))
        os.kill(pid, signal.SIGKILL)  # no kill(1) on a minimal Debian (procps): the call itself
        p.communicate(timeout=60)
        for _ in range(300):  # the postmaster restarts every backend after a crash
            if psql('SELECT 1').returncode == 0:
                break
            time.sleep(0.1)
        v = crash.views(a)
        new = sorted(set(old) - {'rt'} | {f'k{trial}/{g}' for g in range(1, 3001)})
        # as tests/lindi/crash.t: each reader sees the old or the new set (between lindi's
        # commit point and tar's they may differ, until the next writer finishes the commit)
        # as tests/lindi/crash.t, the one window docs/lindi.md documents: killed during step 6,
        # the headers walked still list the deleted member ('rt') until its header is renamed,
        # once the index (lindi's view) is new
        index_new = isinstance(v.get('vdsql index'), list) and plain(v['vdsql index']) == new
        seen = {k: ('old' if plain(x) == old else 'new' if plain(x) == new else
                    'new, rt not yet trashed' if index_new and k in ('gnu tar', 'tarfile', 'vdsql walk')
                    and plain(x) == sorted(new + ['rt']) else 'mix') if isinstance(x, list) else x
                for k, x in v.items()}
        if any(x not in ('old', 'new', 'new, rt not yet trashed') for x in seen.values()):
            bad.append((trial, seen))
        else:
            outcomes['documented window' if 'new, rt not yet trashed' in seen.values() else
                     'new' if 'new' in seen.values() else 'old'] += 1
        psql("INSERT INTO t VALUES ('rt', 'x') ON CONFLICT DO NOTHING")
        agree, v = views_agree(a)
        if not agree:
            bad.append((trial, 'after the next writer', {k: (len(x) if isinstance(x, list) else x) for k, x in v.items()}))
    ok(not bad, f'kill -9 of the backend at random moments of COMMIT, {TRIALS} trials: every reader sees the old or the '
       f'new set of members, never a mix (but docs/lindi.md\'s window: a deleted member walked until trashed), and all '
       f'agree once the next writer has run ({outcomes})', bad)
    r = psql("INSERT INTO t VALUES ('after', 'a')")
    ok(r.returncode == 0 and 'after' in live(a) and views_agree(a)[0], 'the next writer after the kills works', r.stderr)
finally:
    stop()
done()
