#!/usr/bin/python3
"""Reads and OpenVDS writes through tests/faultproxy.py, a loopback relay that injects
faults in front of nginx (http://), radosgw (s3://) and Azurite (az://), as TAP
(issue 27, item 3).

Reads, FAULT_RATE (0.2) of the requests faulted with every kind the relay has (resets,
500, 503, stalls, truncated bodies, a wrong Content-Range, a 200 for a range, answers
dropped): an OpenVDS dataset (vds_layers, vds_chunks, every chunk's bytes), LINDI archives
(lindi_files, lindi_refs, lindi_read) and, over http, a multi-file VTKHDF layout
(vtkhdf_partitions), each query FAULT_READS times in a fresh process: its output equals
the fault-free output byte for byte, or it fails with an error that names the object's URL
(as vdsql shows it) and what went wrong; never a crash, never a hang (FAULT_TIMEOUT s a
query). Once more with every range answered 200 and the whole object (a server ignoring
Range): exact, no error.

Writes (s3, az), FAULT_ROUNDS transactions through the relay at FAULT_RATE, each replacing
data chunks, a data chunk by a constant and inserting new chunks. Each COMMIT is one of:
success; a failure saying "the commit is recorded" (then the recovery must roll it
forward); "the commit may be recorded" (the record could not be read back: whole or
absent); any other failure (then the transaction must be absent). After each, recovery
without the relay (a writer opening the layer, or vds_repair, in turn), then the layer
read with boto3 / tests/azclient.py alone (tests/openvds/vdstarget.py: every page entry
against its object's vdschunkmetadata, every object decoded, the LayerStatus counts against
the pages): each transaction whole or absent as its COMMIT said, no committed chunk lost,
and at the end nothing staged after vds_repair with stage_ttl 0.

Aimed faults, one answer each dropped after the server did the request: the commit
record's PUT ("state":"commit"), a chunk object's copy into place, a page's PUT, the
LayerStatus PUT, the record's release ("state":"free"). The writer reads back what a
refused retry (412) may hide, so each COMMIT must succeed and say so, the counts not
doubled, no committed chunk lost.

env: FAULT_READS (runs of each read query per store, default 3), FAULT_ROUNDS (write
rounds per store, default 10), FAULT_RATE (default 0.2), FAULT_SEED (default 27),
FAULT_STORES (default "http s3 az"), FAULT_TIMEOUT (s, default 120); SO, SQLITE3
(tests/taplib.py), VDSQL_TESTDATA (datasets, else generated)."""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "openvds"))
sys.path.insert(0, os.path.join(os.path.dirname(here), "gen"))
import mkvds  # noqa: E402
from taplib import FaultProxy, Nginx, datasets, ok, plan, shell_args  # noqa: E402
from vdstarget import (AWS_VARS, LayerState, Via, check_layer, chunk_data, chunks_script, each_store,  # noqa: E402
                       leftovers, q, run, staged, write_blob)

READS = int(os.environ.get("FAULT_READS", "3"))
ROUNDS = int(os.environ.get("FAULT_ROUNDS", "10"))
RATE = float(os.environ.get("FAULT_RATE", "0.2"))
SEED = int(os.environ.get("FAULT_SEED", "27"))
STORES = os.environ.get("FAULT_STORES", "http s3 az").split()
TIMEOUT = float(os.environ.get("FAULT_TIMEOUT", "120"))
STALL = 1.5  # s: well below vdsql's http_timeout (60 s)
L = "Dimensions_01LOD0"
CHUNK = 1024  # 32 x 32 U8 samples
NCHUNKS = 40 * 30  # two pages of 1024 entries
RECORDED = "the commit is recorded"
MAYBE = "the commit may be recorded"  # the record could not be read back: whole or absent
# what an error must say of the fault it met (curl's words, or vdsql's checks of an answer)
FAULT_WORDS = re.compile(r"HTTP 50[03]|reset by peer|Empty reply|Server returned nothing|transfer closed|short read|"
                         r"Content-Range|Timeout|Recv failure|Failure when receiving|after [0-9]+ retries|"
                         r"http_max_excess|partial|asked for", re.I)


class Proxy(FaultProxy):
    """The relay, its stalls STALL s unless told."""

    def arm(self, **a):
        a.setdefault("stall", STALL)
        super().arm(**a)


def vsql(env, script):
    """(rc or None on a timeout, stdout, stderr) of script in a fresh sqlite3, env as the
    store's settings (the test's own AWS_* never leak in)."""
    e = {k: v for k, v in os.environ.items() if k not in AWS_VARS}
    e.update(env)
    try:
        p = subprocess.run(shell_args(), input=".mode list\n" + script, text=True, capture_output=True, env=e,
                           timeout=TIMEOUT)
    except subprocess.TimeoutExpired as x:
        return None, x.stdout or "", x.stderr or ""
    return p.returncode, p.stdout, p.stderr


def read_queries(kind):
    """(name, SQL) with %(vds)s, %(lindi)s, ... for the dataset URLs."""
    lay = "Dimensions_012LOD0"
    qs = [("vds_layers", "SELECT * FROM vds_layers(%(vds)s);"),
          ("vds_chunks", "SELECT * FROM vds_chunks(%%(vds)s, '%s') ORDER BY chunk;" % lay),
          ("every chunk's vds_chunk_data", "SELECT c.chunk, hex(vds_chunk_data(c.url, '%s', c.chunk)) FROM "
           "(SELECT %%(vds)s AS url) u, vds_chunks(u.url, '%s') c ORDER BY 1;" % (lay, lay)),
          ("lindi_files", "SELECT * FROM lindi_files(%(many)s) ORDER BY 1;"),
          ("lindi_refs", "SELECT key, hex(value) FROM lindi_refs(%(small)s) ORDER BY 1;"),
          ("lindi_read of 40 members", "SELECT name, hex(lindi_read(%(many)s, name)) FROM lindi_files(%(many)s) "
           "ORDER BY name LIMIT 40;")]
    if kind == "http":
        qs.append(("vtkhdf_partitions (main file and 3 part files)",
                   "SELECT * FROM vtkhdf_partitions(%(vtk)s) ORDER BY 1, 2, 3;"))
    return qs


def read_suite(kind, env, urls, proxy, rng):
    """Each read query fault-free, then READS times at RATE faults."""
    t_start = time.monotonic()
    qurls = {k: q(v) for k, v in urls.items()}
    named = [u.rsplit("/", 1)[0] + "/" for u in urls.values()]
    tally = {"exact": 0, "errors": 0}
    for name, sql in read_queries(kind):
        sql = sql % qurls
        proxy.off()
        rc, want, err = vsql(env, sql)
        if not ok(rc == 0 and not err and want, "%s: %s without faults" % (kind, name), [rc, err[:500]]):
            continue
        bad = []
        for i in range(READS):
            proxy.arm(rate=RATE, seed=rng.randrange(1 << 30))
            t0 = time.monotonic()
            rc, out, err = vsql(env, sql)
            st = proxy.stats()
            if rc is None:
                bad.append("run %d: no answer in %d s (a hang); faults %s" % (i, TIMEOUT, st["faults"]))
            elif rc == 0 and not err and out == want:
                tally["exact"] += 1
            elif rc < 0 or rc > 1:
                bad.append("run %d: exit status %d (a crash): %s" % (i, rc, err[-300:]))
            elif out != want[:len(out)] and not err:
                bad.append("run %d: rows differ from the fault-free ones, no error; faults %s" % (i, st["faults"]))
            else:
                lines = [x for x in err.split("\n") if x.strip()]
                unclear = [x for x in lines if not any(u in x for u in named) or not FAULT_WORDS.search(x)]
                if unclear or out != want[:len(out)]:
                    bad.append("run %d: %s; faults %s" % (i, "an error naming no URL or no fault: %s" % unclear[:2]
                                                          if unclear else "rows before the error differ", st["faults"]))
                else:
                    tally["errors"] += 1
                    tally.setdefault("example", lines[0][:300])
            if time.monotonic() - t0 > TIMEOUT / 2:
                print("# %s %s run %d took %.0f s" % (kind, name, i, time.monotonic() - t0))
        ok(not bad, "%s: %s at %.0f%% faults, %d runs: each exact or a clear error naming the URL and the fault"
           % (kind, name, RATE * 100, READS), "\n".join(bad[:6]))
        if name.startswith("lindi_read"):  # ranges: a 200 with the whole object is a valid answer, never an error
            proxy.arm(rate=1, kinds="full200", seed=1)
            rc, out, err = vsql(env, sql)
            st = proxy.stats()
            ok(rc == 0 and not err and out == want and st["faults"].get("full200"),
               "%s: %s with every range answered 200 and the whole object: exact, no error (%d such answers)"
               % (kind, name, st["faults"].get("full200", {}).get("GET", 0)), [rc, err[-300:], st["not_applied"]])
    print("# %s reads: %d exact, %d clear errors%s; %.0f s" % (
        kind, tally["exact"], tally["errors"], ", e.g. " + tally["example"] if "example" in tally else "",
        time.monotonic() - t_start))


def upload(t, ds, name):
    """The read datasets put with the independent client under name/."""
    n = 0
    for sub in ("survey", "lindi"):
        for root, _, files in os.walk(os.path.join(ds, sub)):
            for f in files:
                if sub == "lindi" and f not in ("small.lindi.tar", "many.lindi.tar"):
                    continue
                p = os.path.join(root, f)
                t.put_raw(name, os.path.relpath(p, ds), open(p, "rb").read())
                n += 1
    return n


def layout():
    return mkvds.Layout([32 * 40, 32 * 30], brick=32, neg=0, pos=0, mult2d=1,
                        channels=[mkvds.channel("Amplitude", "U8")])


def commit_script(url, tx):
    """tx: [(mode, chunk, file)]. The shell stops at the first error (.bail), so a failed
    statement never lets the rest commit; 'committing' and 'committed' say how far it got."""
    s = ".bail on\nCREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\nBEGIN;\n" % (q(url), q(L))
    s += "".join("INSERT %s INTO t(chunk, data) VALUES (%d, readfile(%s));\n" % (m, c, q(f)) for m, c, f in tx)
    return s + "SELECT 'committing';\nCOMMIT;\nSELECT 'committed';\n"


def classify(rc, out, err):
    if rc is None:
        return "hang"
    if rc == 0 and "committed" in out.split("\n"):
        return "success"
    if rc < 0 or rc > 1:
        return "crash"
    if "committing" in out.split("\n") and RECORDED in err:
        return "recorded"
    if "committing" in out.split("\n") and MAYBE in err:
        return "maybe"
    return "failed"


class Writes:
    """One dataset written through the relay, with what each chunk must hold (committed,
    tracked here from what COMMIT said) checked after each recovery."""

    def __init__(self, t, tmp, proxy, name, rng):
        self.t, self.tmp, self.proxy, self.name, self.rng = t, tmp, proxy, name, rng
        self.url = t.url(name)
        self.via = Via(t, proxy.port)
        self.committed = {}
        self.nrec = 0
        lp = write_blob(tmp, json.dumps(layout().json()).encode())
        first = {c: chunk_data(rng, CHUNK) for c in range(0, NCHUNKS, 5)}
        files = {c: write_blob(tmp, b) for c, b in first.items()}
        out, err, rc = run(t, "SELECT vds_create(%s, readfile(%s), 'RLE');\n%s" % (
            q(self.url), q(lp), chunks_script(self.url, L, sorted(first), "", files)))
        self.committed.update(first)
        self.ready = ok(rc == 0, "%s %s: a 2-D RLE dataset of %d chunks over 2 pages, %d committed (no faults)"
                        % (t.kind, name, NCHUNKS, len(first)), err)

    def transaction(self, n_replace=6, n_new=3):
        """Replaces data chunks (OR REPLACE), one by a constant, inserts new ones (plain)."""
        data = [c for c, v in self.committed.items() if isinstance(v, bytes)]
        free = sorted(set(range(NCHUNKS)) - set(self.committed))
        rows = self.rng.sample(data, n_replace + 1)
        new = self.rng.sample(free, n_new)
        blobs = {c: chunk_data(self.rng, CHUNK) for c in rows[1:] + new}
        blobs[rows[0]] = bytes([self.rng.randrange(3, 250)]) * CHUNK
        tx = [("OR REPLACE", c, write_blob(self.tmp, blobs[c])) for c in rows] + \
             [("", c, write_blob(self.tmp, blobs[c])) for c in new]
        self.rng.shuffle(tx)
        return tx, blobs, rows[0]

    def recover(self):
        """Without the relay: a writer opening the layer, or vds_repair, in turn."""
        self.nrec += 1
        if self.nrec % 2:
            return run(self.t, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);" % (q(self.url), q(L)))
        return run(self.t, "SELECT vds_repair(%s, %s);" % (q(self.url), q(L)))

    def judge(self, how, blobs, const):
        """After recovery: what is wrong (a list of strings), committed updated to what the
        store holds when the transaction is wholly there."""
        s = LayerState(self.t, self.name, L, CHUNK)
        have = {}
        for c in blobs:
            v = s.data.get(c)
            if c == const:
                have[c] = isinstance(v, tuple) and v[0] == "constant" and v[1] >> 32 == 0x01010101
            else:
                have[c] = v == blobs[c]
        old = {c: s.data.get(c) == self.committed.get(c) for c in blobs}
        whole, absent = all(have.values()), all(old.values())
        wrong = []
        split = "new %s, old %s, neither %s" % (sorted(c for c in blobs if have[c]),
                                               sorted(c for c in blobs if old[c] and not have[c]),
                                               sorted(c for c in blobs if not old[c] and not have[c]))
        if how == "maybe" and not (whole or absent):
            wrong.append("COMMIT said '%s', but after recovery half its transaction is there: %s" % (MAYBE, split))
        if how in ("success", "recorded") and not whole:
            wrong.append("COMMIT said %s, but after recovery %s of its %d chunks are not there (%s)"
                         % (how, sum(not x for x in have.values()), len(blobs),
                            "absent, its transaction lost" if absent else "half there: " + split))
        if how not in ("success", "recorded", "maybe") and not absent:
            wrong.append("COMMIT failed without '%s', but after recovery %s" % (
                RECORDED, "its whole transaction is there" if whole else
                "%d of its %d chunks are new (half a transaction: %s)" % (sum(have.values()), len(blobs), split)))
        if whole:
            self.committed.update({c: (s.data[c] if c == const else blobs[c]) for c in blobs})
        elif not absent:  # go on from what is there
            self.committed.update({c: s.data.get(c) for c in blobs})
            self.committed = {c: v for c, v in self.committed.items() if v is not None}
        lost = [c for c in self.committed if c not in blobs and s.data.get(c) != self.committed[c]]
        if lost:
            wrong.append("committed chunks of earlier transactions lost or changed: %s" % lost[:6])
        if s.bad:
            wrong.append("page entries that disagree with their object's vdschunkmetadata: %s" % s.bad[:6])
        good, d = s.counts_ok()
        if not good:
            wrong.append("LayerStatus counts (valid, serialized, uncompressed) are %s, the pages add up to %s"
                         % (d[1], d[0]))
        if wrong:
            wrong.append("(the constant was chunk %d)" % const)
        return wrong, whole

    def commit(self, tx):
        rc, out, err = vsql(self.via.env, commit_script(self.url, tx))
        return classify(rc, out, err), err


def write_suite(t, tmp, proxy, rng):
    K = t.kind
    w = Writes(t, tmp, proxy, "faults", rng)
    if not w.ready:
        return
    tally = {}
    bad = []
    t_start = time.monotonic()
    for rnd in range(ROUNDS):
        tx, blobs, const = w.transaction()
        proxy.arm(rate=RATE, seed=rng.randrange(1 << 30))
        how, err = w.commit(tx)
        st = proxy.stats()
        proxy.off()
        tally[how] = tally.get(how, 0) + 1
        out, rerr, rc = w.recover()
        wrong, whole = w.judge(how, blobs, const)
        if rc:
            wrong.append("recovery without faults failed: %s" % rerr[:300])
        if how in ("hang", "crash"):
            wrong.append("the writer %s" % ("hung" if how == "hang" else "crashed"))
        if wrong:
            bad.append("round %d (%s; faults %s): %s\n  COMMIT: %s" % (
                rnd, how, st["faults"], "; ".join(wrong), err.strip()[-400:]))
    ok(not bad, "%s: %d transactions at %.0f%% faults (%s), each recovered without faults: every COMMIT's report true "
       "(success and '%s': whole; other failures: absent), no committed chunk lost, entries agree with objects, counts "
       "equal the pages" % (K, ROUNDS, RATE * 100, ", ".join("%d %s" % (n, k) for k, n in sorted(tally.items())),
                            RECORDED), "\n".join(bad[:6]))
    print("# %s writes: %d rounds in %.0f s" % (K, ROUNDS, time.monotonic() - t_start))
    out, err, rc = run(t, "SELECT vdsql_config('stage_ttl', '0');\nSELECT vds_repair(%s, %s);" % (q(w.url), q(L)))
    left = staged(t, w.name)
    ok(rc == 0 and not left, "%s: after the faulted rounds, vds_repair with stage_ttl 0 leaves nothing staged" % K,
       [err, left[:5]])
    keys = leftovers(t, w.name, L, CHUNK)
    ok(not keys, "%s: nor an object at a chunk key that no entry names (new chunks' objects of transactions that "
       "failed)" % K, keys[:5])
    check_layer(t, w.name, L, CHUNK, w.committed, "%s, after the faulted rounds" % K)


# one answer dropped after the server did the request: (what, methods, url, body)
AIMED = [
    ("the commit record's PUT (\"state\":\"commit\")", "PUT", r"/\.vdsql/[^/?]+/commit(\?|$)", r'"state"\s*:\s*"commit"'),
    ("a chunk object's copy into place", "PUT", r"/%s/[0-9]+(\?|$)" % L, r"\A\Z"),  # a copy has no body
    # a new chunk's object put at its key by its plain INSERT (create-only, with a body): the
    # retry is refused, the object goes to the staging folder and is copied over its key
    ("a new chunk's create-only PUT at its key", "PUT", r"/%s/[0-9]+(\?|$)" % L, r"\A."),
    ("a page's PUT", "PUT", r"/%s/ChunkMetadata/[0-9]+(\?|$)" % L, ""),
    ("the LayerStatus PUT", "PUT", r"/LayerStatus(\?|$)", ""),
    ("the record's release (\"state\":\"free\")", "PUT", r"/\.vdsql/[^/?]+/commit(\?|$)", r'"state"\s*:\s*"free"'),
]


def aimed_suite(t, tmp, proxy, rng):
    K = t.kind
    w = Writes(t, tmp, proxy, "aimed", rng)
    if not w.ready:
        return
    for what, methods, url, body in AIMED:
        tx, blobs, const = w.transaction(n_replace=5, n_new=4)
        proxy.arm(rate=1, count=1, kinds="drop", methods=methods, url=url, body=body, seed=1)
        how, err = w.commit(tx)
        st = proxy.stats()
        proxy.off()
        given = st["faults"].get("drop", {}).get("PUT", 0)
        # a COMMIT that succeeded leaves the layer right as it is, before any recovery
        # (vds_repair would set the counts from the pages and hide counts added twice)
        before = LayerState(t, w.name, L, CHUNK)
        early = [] if before.counts_ok()[0] and not before.bad else [
            "right after the COMMIT, before recovery: counts %s (pages say %s), entries disagreeing with objects %s"
            % (before.counts_ok()[1][1], before.counts_ok()[1][0], before.bad[:5])]
        out, rerr, rc = w.recover()
        wrong, whole = w.judge(how, blobs, const)
        wrong = early + wrong
        if rc:
            wrong.append("recovery without faults failed: %s" % rerr[:300])
        # one lost answer is settled by reading back: the COMMIT succeeds, and says so
        ok(given == 1 and how == "success" and not wrong, "%s: the answer to %s dropped (the server did it): COMMIT "
           "succeeds and says so (%s, %s after recovery), counts not doubled, no committed chunk lost" % (
               K, what, how, "whole" if whole else "absent"),
           "\n".join(["the relay dropped %d answers (%d requests matched)" % (given, st["matched"])] + wrong +
                     ["COMMIT: " + err.strip()[-400:]]))


def store_suite(t, tmp, ds, rng):
    proxy = Proxy(t.port())
    try:
        n = upload(t, ds, "ds")
        ok(n > 10, "%s: the read datasets put by the independent client (%d objects)" % (t.kind, n))
        via = Via(t, proxy.port)
        urls = {"vds": t.url("ds/survey"), "small": t.url("ds/lindi/small.lindi.tar"),
                "many": t.url("ds/lindi/many.lindi.tar")}
        read_suite(t.kind, via.env, urls, proxy, rng)
        write_suite(t, tmp, proxy, rng)
        aimed_suite(t, tmp, proxy, rng)
    finally:
        proxy.stop()


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-faults.")
    rng = random.Random(SEED)
    try:
        ds = datasets(tmp)
        if "http" in STORES:
            ng = Nginx(ds, os.path.join(tmp, "nginx"))
            if ok(ng.started, "nginx starts on 127.0.0.1", ng.error):
                proxy = Proxy(int(ng.url.rsplit(":", 1)[1]))
                try:
                    base = "http://127.0.0.1:%d/" % proxy.port
                    read_suite("http", {}, {"vds": base + "survey", "small": base + "lindi/small.lindi.tar",
                                            "many": base + "lindi/many.lindi.tar",
                                            "vtk": base + "vtkhdf/ext_partitions.vtkhdf"}, proxy, rng)
                finally:
                    proxy.stop()
                    ng.stop()
        each_store(tmp, lambda t: store_suite(t, tmp, ds, rng), [s for s in STORES if s in ("s3", "az")])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


sys.exit(main())
