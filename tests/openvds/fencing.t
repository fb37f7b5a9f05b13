#!/usr/bin/python3
"""OpenVDS commits stay whole when their writer is paused past its lease, runs in another
PID namespace of this host, or finds another machine's commit record, as TAP on local
files, S3 (radosgw on 127.0.0.1) and Azure Blob (Azurite on 127.0.0.1). Every check reads
the store with an independent client (layerkit.State: os and xattrs, boto3, the tests'
Azure client), never through vdsql.

pause: writer A runs in a PID namespace of its own (`unshare --pid`: a container on this
host, so only its lease speaks for it) with commit_lease 1 s and VDSQL_PAUSEPOINT set to
one step after its commit point (copy, pages, status, delete, release): it stops itself
there (SIGSTOP), as a GC pause or a frozen VM would. A's new chunks are plain INSERTs, so
their objects went straight to their keys (nothing staged, nothing copied for them). Once its lease has run out, writer B
opens the layer (which takes A's commit over and finishes it) and commits newer data over
the same chunks: data over A's constant, a constant over A's data, data over A's data.
Then A goes on. What B committed must stay (no empty object of A's over B's data, no
stale page entry, counts added once), and A's COMMIT reports success: its transaction
was committed, by B.

namespaces: rounds of four writers of the same chunks, each in its own PID namespace
(containers sharing the host's name and boot id): each commit waits for the live one
before it; all four report success and the last committer's data is there, counts exact.

foreign: a commit record of another machine, planted. While its lease runs, a writer
waits lock_timeout and is refused, naming the record, and writes nothing; once it ran out
the writer takes it over and finishes its plan (the staged object copied into place,
the entry and counts set) before committing its own.

Needs root (unshare). env: FENCE_STEPS (default all five), FENCE_ROUNDS (namespace
rounds, default 3), FENCE_STORES (default "file s3 az"); SO, SQLITE3 (tests/taplib.py)."""
import json
import os
import random
import signal
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "gen"))
from taplib import ok, plan  # noqa: E402
from vdstarget import q, run, run_stores, write_blob  # noqa: E402
from layerkit import CHUNK, L, NCHUNKS, State, check, data, files_of, insert_script, layout, popen  # noqa: E402
from layerkit import leftovers, staging  # noqa: E402

STEPS = os.environ.get("FENCE_STEPS", "copy pages status delete release").split()
ROUNDS = int(os.environ.get("FENCE_ROUNDS", "3"))
STORES = os.environ.get("FENCE_STORES", "file s3 az").split()
# sqlite3 runs under a shell (which waits for it) rather than as the namespace's PID 1:
# that init ignores the signals it has no handler for, its own SIGSTOP among them. The
# namespace gets a /proc of its own, as a container has, where unshare can mount one: not
# in a chroot whose root is no mount point (the fresh Debian 12 of .ci/run), where the
# writer keeps the host's /proc (its pid namespace, what vdsql checks, is its own anyway).
SH = ["sh", "-c", '"$@"; exit $?', "sh"]
NS = ["unshare", "--pid", "--fork", "--mount-proc"] + SH
if subprocess.run(NS + ["true"], capture_output=True).returncode != 0:
    NS = ["unshare", "--pid", "--fork"] + SH
CONST = b"\x07" * CHUNK  # a constant chunk: no object of its own


def child_of(pid):
    """pid's first child, or None."""
    try:
        kids = open("/proc/%d/task/%d/children" % (pid, pid)).read().split()
    except OSError:
        return None
    return int(kids[0]) if kids else None


def state_of(pid):
    try:
        return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def wait_stopped(p, limit=60):
    """The pid of p's sqlite3 once it has stopped itself, or None (it ended, or never stopped)."""
    t0 = time.time()
    while time.time() - t0 < limit and p.poll() is None:
        c = child_of(child_of(p.pid) or 0)  # unshare, sh, sqlite3
        if c and state_of(c) == "T":
            return c
        time.sleep(0.01)
    return None


def expect(committed, blobs, s):
    """committed updated with blobs as s (a State) should show them: a constant chunk as
    the constant s found (its hash comes from the writer), provided it is one."""
    for c, v in blobs.items():
        got = s.data.get(c)
        committed[c] = got if v == CONST and isinstance(got, tuple) and got[0] == "constant" else v


def finish(p, limit=120):
    try:
        rc = p.wait(limit)
    except Exception:
        p.kill()
        return -9, "did not end in %d s" % limit
    return rc, p.stderr.read()


def setup(t, tmp, name, rng):
    url = t.url(name)
    lp = write_blob(tmp, json.dumps(layout().json()).encode())
    first = {c: data(rng) for c in range(0, 64)}
    out, err, rc = run(t, "SELECT vds_create(%s, readfile(%s), 'RLE');\n%s" % (
        q(url), q(lp), insert_script(url, sorted(first), "", files_of(tmp, first))))
    return url, first, rc, err


def pauses(t, tmp):
    K = t.kind
    rng = random.Random(27)
    for step in STEPS:
        name = "fence_" + step
        url, committed, rc, err = setup(t, tmp, name, rng)
        if rc:
            ok(False, "%s %s: a dataset of 64 committed chunks" % (K, step), err)
            continue
        # A: data over data (0-7), a constant over data (8), new data on both pages (1100-1103)
        a = {c: data(rng) for c in list(range(0, 8)) + [1100, 1101, 1102, 1103]}
        a[8] = CONST
        fa = files_of(tmp, a)
        new = [1100, 1101, 1102, 1103]  # plain INSERTs of chunks never written: put at their keys
        script = insert_script(url, sorted(c for c in a if c not in new), "OR REPLACE", fa, end="")
        script += "".join("INSERT INTO t(chunk, data) VALUES (%d, readfile(%s));\n" % (c, q(fa[c])) for c in new)
        pa = popen(t, "SELECT vdsql_config('commit_lease', '1');\n" + script + "COMMIT;\n",
                   prefix=NS, env={"VDSQL_PAUSEPOINT": step})
        stopped = wait_stopped(pa)
        if not stopped:
            rc, err = finish(pa)
            ok(False, "%s %s: writer A stopped itself at step %s of its COMMIT" % (K, step, step), [rc, err[-300:]])
            continue
        time.sleep(1.3)  # past A's lease
        # B: data over A's constant (8), a constant over A's data (0), data over A's data
        # and A's new chunks (1-7, 1100-1103), and a new chunk of its own (1104), so that
        # its counts differ from A's (random chunks all have one RLE size, so the rest of
        # B's counts would come out as A's, and LayerStatus with them)
        b = {c: data(rng) for c in list(range(1, 9)) + [1100, 1101, 1102, 1103, 1104]}
        b[0] = CONST
        out, berr, brc = run(t, insert_script(url, sorted(b), "OR REPLACE", files_of(tmp, b)))
        mid = State(t, name)
        os.kill(stopped, signal.SIGCONT)
        arc, aerr = finish(pa)
        expect(committed, b, mid)
        ok(brc == 0 and arc == 0, "%s %s: B took A's commit over after its lease and committed; A, resumed at %s, "
           "reports its COMMIT done" % (K, step, step), [brc, berr[-300:], arc, aerr[-300:]])
        s = check(t, name, committed, "%s %s, A resumed after B committed" % (K, step))
        moved = [c for c in b if mid.data.get(c) != s.data.get(c)]
        ok(not moved, "%s %s: A changed nothing once it had lost its lease (chunks, entries)" % (K, step), moved)
        out, err, rc = run(t, "SELECT vdsql_config('stage_ttl', '0');\nSELECT vds_repair(%s, %s);\n"
                              "SELECT count(*) FROM vds_audit(%s, %s) WHERE verdict <> 'ok';"
                              % (q(url), q(L), q(url), q(L)))
        ok(rc == 0 and out == ["0", "0", "0"] and not staging(t, name) and not leftovers(t, name),
           "%s %s: vds_repair finds nothing to change, the audit nothing wrong, nothing staged is left, no object "
           "at a key that no entry names" % (K, step), [out, err, staging(t, name)[:4], leftovers(t, name)[:4]])


def namespaces(t, tmp):
    K = t.kind
    rng = random.Random(28)
    name = "fence_ns"
    url, committed, rc, err = setup(t, tmp, name, rng)
    bad = []
    for rnd in range(ROUNDS):
        same = sorted(rng.sample(range(NCHUNKS), 24))
        blobs = [{c: data(rng) for c in same} for _ in range(4)]
        ps = [popen(t, "SELECT vdsql_config('lock_timeout', '60');\n" +
                    insert_script(url, same, "OR REPLACE", files_of(tmp, bl)), prefix=NS) for bl in blobs]
        res = [finish(p) for p in ps]
        s = State(t, name)
        winners = [i for i in range(4) if all(s.data.get(c) == blobs[i][c] for c in same)]
        if any(r for r, _ in res) or len(winners) != 1 or s.bad or not s.counts_ok()[0]:
            bad.append((rnd, [(r, e[-200:]) for r, e in res], winners, s.bad[:4], s.counts_ok()[1]))
        for i in winners:
            committed.update(blobs[i])
    ok(not bad, "%s: %d rounds of 4 writers of the same 24 chunks, each in its own PID namespace: all report "
       "success, one holds every chunk last, entries agree with objects, counts exact" % (K, ROUNDS), bad[:2])
    check(t, name, committed, "%s, after the namespace rounds" % K)
    # a live writer in another PID namespace, stopped well within its lease (60 s) after
    # its commit point: its pid means nothing here, so the other writer must wait for it
    a = {c: data(rng) for c in (1, 2, 1110)}
    pa = popen(t, insert_script(url, sorted(a), "OR REPLACE", files_of(tmp, a)), prefix=NS,
               env={"VDSQL_PAUSEPOINT": "copy"})
    stopped = wait_stopped(pa)
    b = {c: data(rng) for c in (2, 3)}
    out, berr, brc = run(t, "SELECT vdsql_config('lock_timeout', '1');\n" +
                         insert_script(url, sorted(b), "OR REPLACE", files_of(tmp, b)))
    s = State(t, name)
    if stopped:
        os.kill(stopped, signal.SIGCONT)
    arc, aerr = finish(pa)
    committed.update(a)
    ok(stopped and brc != 0 and "another writer is committing to layer %s" % L in berr
       and all(s.data.get(c) == committed.get(c) for c in (3,)) and arc == 0,
       "%s: a live writer of another PID namespace, stopped within its lease, is waited for (the other writer is "
       "refused after lock_timeout, nothing written), then finishes its own commit" % K,
       [bool(stopped), brc, berr[-300:], arc, aerr[-300:]])
    check(t, name, committed, "%s, after the stopped writer of another namespace went on" % K)


def foreign_records(t, tmp):
    K = t.kind
    rng = random.Random(29)
    name = "fence_foreign"
    url, committed, rc, err = setup(t, tmp, name, rng)
    rec = ".vdsql/%s/commit" % L
    # a real record: writer A stops itself right after its commit point, and is killed
    # there; the test then makes it another machine's by rewriting its owner and lease
    a = {70: data(rng), 71: data(rng), 0: CONST}
    pa = popen(t, insert_script(url, sorted(a), "OR REPLACE", files_of(tmp, a)), env={"VDSQL_PAUSEPOINT": "copy"})
    t0 = time.time()
    while state_of(pa.pid) != "T" and pa.poll() is None and time.time() - t0 < 60:
        time.sleep(0.01)
    if pa.poll() is None:
        os.kill(pa.pid, signal.SIGKILL)
    pa.wait()
    body = t.get(name, rec)[0]
    r = json.loads(body) if body else {}
    if not ok(r.get("state") == "commit" and len(r.get("chunks", [])) == 3,
              "%s: writer A killed right after its commit point left a record of its 3 chunks" % K, body):
        return
    s0 = State(t, name)

    def plant(expires):
        r["owner"] = {"host": "elsewhere.example", "boot": "another-boot", "pidns": "pid:[1]", "pid": 1, "start": 1}
        r["expires"] = expires
        t.put_raw(name, rec, json.dumps(r).encode())

    plant(int(time.time() * 1000) + 60000)  # its lease runs another minute
    mine = {72: data(rng)}
    out, err, rc = run(t, "SELECT vdsql_config('lock_timeout', '1');\n" +
                       insert_script(url, [72], "OR REPLACE", files_of(tmp, mine)))
    s1 = State(t, name)
    ok(rc != 0 and "%s/%s: another writer is committing to layer %s" % (url, rec, L) in err
       and s1.entries == s0.entries and s1.data == s0.data,
       "%s: another machine's commit record whose lease runs: the writer waits lock_timeout, is refused naming the "
       "record, and nothing is written" % K, [err, set(s1.entries.items()) ^ set(s0.entries.items())])
    plant(int(time.time() * 1000) - 1000)  # its lease ran out a second ago
    out, err, rc = run(t, insert_script(url, [72], "OR REPLACE", files_of(tmp, mine)))
    expect(committed, a, State(t, name))
    committed.update(mine)
    ok(rc == 0, "%s: another machine's commit record whose lease ran out is taken over, then the writer commits" % K,
       err)
    check(t, name, committed, "%s, A's plan finished by the writer that took it over, then its own" % K)
    ok(not staging(t, name), "%s: the taken-over transaction's staging is deleted" % K, staging(t, name)[:4])


def suite(t, tmp):
    pauses(t, tmp)
    namespaces(t, tmp)
    foreign_records(t, tmp)


def main():
    if os.geteuid() != 0:
        ok(False, "fencing.t needs root: it runs writers in PID namespaces of their own (unshare --pid)")
        return plan()
    return run_stores("vdsql-fence.", suite, STORES)


sys.exit(main())
