#!/usr/bin/python3
"""Savepoints around vds_chunks INSERTs, as TAP, on local files, S3 (radosgw on 127.0.0.1)
and Azure Blob (Azurite on 127.0.0.1): ROLLBACK TO (and SQLite's rollback of a failed
statement) takes back exactly what was put after the savepoint, and the transaction goes
on and commits (docs/openvds.md, "Savepoints").

Every check of what is stored reads the store with an independent client (os and xattrs,
boto3, the tests' Azure client) through vdstarget's LayerState: page entries, objects
decoded from the spec, LayerStatus counts; the expected bytes are the test's own.

Cases: (1) nested savepoints, one chunk at three levels (each level's bytes): ROLLBACK TO
the middle one and COMMIT publishes the outer level's bytes, ROLLBACK TO the inner one
and RELEASE the middle level's; chunks put at their keys by undone puts are taken back,
no staged object is left; (2) a constant at one level over data at another, both ways,
and released; (3) a failed multi-row statement in a transaction: its rows are taken back
(also one that replaced an earlier chunk), the transaction commits the rest; (4) kill -9
between statements (after a ROLLBACK TO) and during COMMIT (stopped at its copy step,
VDSQL_PAUSEPOINT): after recovery (vds_repair) the layer is exactly the old one or the
outer transaction's, and vds_repair with stage_ttl 0 leaves nothing staged or
uncommitted; (5) the requests of a transaction without savepoints are those of the same
transaction before savepoints were kept (N + P + 5, docs/openvds.md).
   env: SP_STORES (default "file s3 az"); SO, SQLITE3 (tests/taplib.py)"""
import json
import os
import random
import signal
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "gen"))
from layerkit import CHUNK, L, check, data, layout, leftovers, popen, staging  # noqa: E402
from taplib import ok  # noqa: E402
from vdstarget import q, run, run_stores, write_blob  # noqa: E402

STORES = os.environ.get("SP_STORES", "file s3 az").split()
SEVENS = bytes([7]) * CHUNK  # a constant chunk (U8, scale 1): no object


def new_dataset(t, tmp, name):
    lp = write_blob(tmp, json.dumps(layout().json()).encode())
    out, err, rc = run(t, "SELECT vds_create(%s, readfile(%s), 'RLE');" % (q(t.url(name)), q(lp)))
    ok(rc == 0, "%s: dataset %s created (2-D RLE, 1 KiB chunks, 2 pages)" % (t.kind, name), err)
    return t.url(name)


class Tx:
    """The SQL of one sqlite3 session writing table t of a layer; blobs live in files."""

    def __init__(self, tmp, url):
        self.tmp, self.sql = tmp, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\n" % (q(url), q(L))

    def __call__(self, s):
        self.sql += s + "\n"
        return self

    def put(self, chunk, blob, mode=""):
        return self("INSERT %s INTO t(chunk, data) VALUES (%d, readfile(%s));" % (mode, chunk,
                                                                                  q(write_blob(self.tmp, blob))))


def clean(t, name, what):
    st, lo = staging(t, name), leftovers(t, name)
    ok(not st and not lo, "%s: nothing staged and no uncommitted object at a chunk key" % what, st[:6] + lo[:6])


def case_levels(t, tmp, rng):
    """1: one chunk at three levels, nested savepoints, puts at keys undone."""
    K = t.kind
    url = new_dataset(t, tmp, "levels")
    a, b, c = data(rng), data(rng), data(rng)
    x0, x1, x2, x3 = data(rng), data(rng), data(rng), data(rng)
    s = Tx(tmp, url)("BEGIN;").put(0, x0).put(5, a, "OR REPLACE")("SAVEPOINT s1;").put(5, b, "OR REPLACE")
    s.put(1, x1)("SAVEPOINT s2;").put(5, c, "OR REPLACE").put(1, x2, "OR REPLACE").put(2, x2)
    s("ROLLBACK TO s1;").put(3, x3)("COMMIT;")
    out, err, rc = run(t, s.sql)
    ok(rc == 0 and not err, "%s: BEGIN; 0, 5=a; SAVEPOINT s1; 5=b, 1; SAVEPOINT s2; 5=c, 1 replaced, 2; "
       "ROLLBACK TO s1; 3; COMMIT succeeds" % K, err)
    check(t, "levels", {0: x0, 5: a, 3: x3}, "%s: ROLLBACK TO the middle savepoint: chunk 5 holds the outer "
          "level's bytes, chunks 1 and 2 are not there" % K)
    clean(t, "levels", "%s: after it, chunks 1 and 2 (put at their keys, then undone) taken back, every version "
          "of chunk 5" % K)
    # ROLLBACK TO the inner one, then RELEASE: the middle level's bytes
    d, e, f = data(rng), data(rng), data(rng)
    s = Tx(tmp, url)("BEGIN;").put(6, d)("SAVEPOINT s1;").put(6, e, "OR REPLACE")("SAVEPOINT s2;")
    s.put(6, f, "OR REPLACE")("ROLLBACK TO s2;")("RELEASE s1;")("COMMIT;")
    out, err, rc = run(t, s.sql)
    ok(rc == 0 and not err, "%s: 6=d; SAVEPOINT s1; 6=e; SAVEPOINT s2; 6=f; ROLLBACK TO s2; RELEASE s1; COMMIT" % K,
       err)
    check(t, "levels", {0: x0, 5: a, 3: x3, 6: e}, "%s: ROLLBACK TO the inner savepoint: the middle level's bytes" % K)
    clean(t, "levels", "%s: after it" % K)
    # the whole thing rolled back after savepoints: nothing changes, nothing is left
    s = Tx(tmp, url)("BEGIN;").put(7, d).put(0, e, "OR REPLACE")("SAVEPOINT s1;").put(7, f, "OR REPLACE")
    s.put(8, f)("ROLLBACK TO s1;").put(9, f)("ROLLBACK;")
    out, err, rc = run(t, s.sql)
    ok(rc == 0 and not err, "%s: savepoints, then ROLLBACK" % K, err)
    check(t, "levels", {0: x0, 5: a, 3: x3, 6: e}, "%s: after ROLLBACK: the layer as it was" % K)
    clean(t, "levels", "%s: after ROLLBACK" % K)


def case_constant(t, tmp, rng):
    """2: a constant at one level over data at another."""
    K = t.kind
    url = new_dataset(t, tmp, "const")
    d0, d1, d2, d3 = data(rng), data(rng), data(rng), data(rng)
    s = Tx(tmp, url)("BEGIN;").put(10, d0).put(11, SEVENS)("SAVEPOINT s;").put(10, SEVENS, "OR REPLACE")
    s.put(11, d1, "OR REPLACE")("ROLLBACK TO s;")
    s("SAVEPOINT a;").put(12, d2)("SAVEPOINT b;").put(12, SEVENS, "OR REPLACE")("RELEASE b;")("RELEASE a;")
    s.put(13, d3, "OR REPLACE")("SAVEPOINT c;").put(13, SEVENS, "OR REPLACE")("RELEASE c;")("COMMIT;")
    out, err, rc = run(t, s.sql)
    ok(rc == 0 and not err, "%s: data under a constant and a constant under data, rolled back; constants over "
       "data released" % K, err)
    s7 = ("constant", __import__("mkvds").constant_hash(7.0))
    st = check(t, "const", {10: d0, 11: s7, 12: s7, 13: s7}, "%s: ROLLBACK TO restores data under a constant "
               "(10) and a constant under data (11); released constants stay (12, 13)" % K)
    clean(t, "const", "%s: the data objects superseded by constants (12 at its key, 13 staged) gone" % K)
    ok(st.status["validChunkCount"] == 4, "%s: validChunkCount 4" % K, st.status)


def case_statement(t, tmp, rng):
    """3: a failed statement takes back its rows; the transaction goes on."""
    K = t.kind
    url = new_dataset(t, tmp, "stmt")
    d = {c: data(rng) for c in range(20, 27)}
    f = {c: write_blob(tmp, b) for c, b in d.items()}
    bad = "INSERT OR REPLACE INTO t(chunk, data) VALUES %s, (26, x'00');" % ", ".join(
        "(%d, readfile(%s))" % (c, q(f[c])) for c in (21, 22))
    s = Tx(tmp, url)("BEGIN;").put(20, d[20]).put(23, d[23])(bad)
    s("INSERT INTO t(chunk, data) VALUES (24, readfile(%s)), (20, readfile(%s));" % (q(f[24]), q(f[25])))
    s.put(25, d[25])("COMMIT;")
    out, err, rc = run(t, s.sql)
    errs = [x for x in err.split("\n") if x]
    ok(len(errs) == 2 and "26" in errs[0] and "written already" in errs[1],
       "%s: the two failing statements fail (chunk 26's length; chunk 20 inserted twice), nothing else" % K, err)
    check(t, "stmt", {20: d[20], 23: d[23], 25: d[25]}, "%s: a failed statement's rows taken back (21, 22 staged; "
          "24 at its key), the rest committed" % K)
    clean(t, "stmt", "%s: after it" % K)


def wait_for(cond, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.05)
    return False


def repair(t, url, ttl0=False):
    s = ("SELECT vdsql_config('stage_ttl', 0);\n" if ttl0 else "") + "SELECT vds_repair(%s, %s);" % (q(url), q(L))
    return run(t, s)


def case_kill(t, tmp, rng):
    """4: kill -9 between statements and during COMMIT."""
    K = t.kind
    url = new_dataset(t, tmp, "kill")
    old = {c: data(rng) for c in (30, 31)}
    s = Tx(tmp, url)("BEGIN;").put(30, old[30]).put(31, old[31])("COMMIT;")
    ok(run(t, s.sql)[2] == 0, "%s: the old state committed" % K)
    new = {c: data(rng) for c in range(30, 36)}
    marker = os.path.join(tmp, "marker-%s" % K)

    def script(m=None):
        # chunk 30's outer version is its second put (a versioned staged name in the record)
        s = Tx(tmp, url)("BEGIN;").put(30, new[33], "OR REPLACE").put(30, new[30], "OR REPLACE").put(32, new[32])
        s("SAVEPOINT s1;")
        s.put(30, new[31], "OR REPLACE").put(33, new[33])("SAVEPOINT s2;").put(30, new[34], "OR REPLACE")
        s.put(31, new[35], "OR REPLACE")("ROLLBACK TO s1;").put(34, new[34])
        if m:
            # the marker, then a statement that runs until the kill
            s("SELECT writefile(%s, 'x');" % q(m))("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r "
                                                   "WHERE i < 1e12) SELECT count(*) FROM r;")
        return s("COMMIT;").sql

    want = {30: new[30], 31: old[31], 32: new[32], 34: new[34]}
    # between statements: after the ROLLBACK TO, killed before COMMIT
    p = popen(t, script(marker))
    started = wait_for(lambda: os.path.exists(marker) or p.poll() is not None) and os.path.exists(marker)
    p.send_signal(signal.SIGKILL)
    p.wait()
    ok(started, "%s: a writer reached the statement after its ROLLBACK TO and was killed (-9)" % K)
    out, err, rc = repair(t, url)
    ok(rc == 0, "%s: vds_repair after the kill" % K, err)
    check(t, "kill", old, "%s: killed between statements: the old state" % K)
    out, err, rc = repair(t, url, ttl0=True)
    ok(rc == 0, "%s: vds_repair with stage_ttl 0" % K, err)
    clean(t, "kill", "%s: killed between statements, repaired with stage_ttl 0" % K)
    # during COMMIT: stopped at its copy step (the commit point passed), killed there
    p = popen(t, script(), env={"VDSQL_PAUSEPOINT": "copy"})
    pid = p.pid
    stopped = wait_for(lambda: p.poll() is not None or open("/proc/%d/stat" % pid).read().split(") ")[1][0] == "T")
    p.send_signal(signal.SIGKILL)
    p.wait()
    ok(stopped and p.returncode == -signal.SIGKILL, "%s: a writer stopped in its COMMIT after the commit point, "
       "killed (-9)" % K, p.returncode)
    out, err, rc = repair(t, url)
    ok(rc == 0, "%s: vds_repair finishes the killed commit" % K, err)
    check(t, "kill", want, "%s: killed during COMMIT and finished: the outer transaction's state (chunk 30 from "
          "its first staged version, 31 as it was, 33 never)" % K)
    out, err, rc = repair(t, url, ttl0=True)
    ok(rc == 0, "%s: vds_repair with stage_ttl 0" % K, err)
    clean(t, "kill", "%s: killed during COMMIT, finished, repaired with stage_ttl 0" % K)


def case_requests(t, tmp, rng):
    """5: savepoints that roll nothing back cost no request: N + P + 5, as without them."""
    K = t.kind
    url = new_dataset(t, tmp, "req")
    rows = [0, 3, 17, 1024, 1100]
    s = Tx(tmp, url)("SELECT vdsql_config('stats', 'reset');")("BEGIN;")("SAVEPOINT a;")
    for c in rows:
        s.put(c, data(rng))("SAVEPOINT b;")("RELEASE b;")
    s("RELEASE a;")("COMMIT;")("SELECT 'stats', requests FROM vdsql_stats() WHERE backend = '%s';" % K)
    out, err, rc = run(t, s.sql)
    reqs = [int(x.split("|")[1]) for x in out if x.startswith("stats|")]
    want = len(rows) + 2 + 5
    ok(rc == 0 and reqs == [want], "%s: %d new chunks over 2 new pages inside savepoints released: %d requests "
       "(N + P + 5, as without savepoints)" % (K, len(rows), want), out + [err])


def main(t, tmp):
    rng = random.Random(29)
    for case in (case_levels, case_constant, case_statement, case_kill, case_requests):
        case(t, tmp, rng)


sys.exit(run_stores("vdsql-sp-", main, STORES))
