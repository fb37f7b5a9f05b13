#!/usr/bin/python3
"""OpenVDS chunk uploads keep the pipe full, as TAP, on S3 (radosgw on 127.0.0.1) and Azure
Blob (Azurite on 127.0.0.1), each seen through tests/openvds/putgate.py, a relay that holds
the writer's chunk PUTs of one kind and counts them (no timing is measured, only what
arrives while something is held). Both kinds of upload go through the same queue
(ext/core/store/putq.c): staging PUTs (.vdsql/<layer>/<tx>/<chunk>: every INSERT OR
REPLACE) and direct ones (a plain INSERT of a chunk no committed entry names: a
create-only PUT, If-None-Match: *, at the chunk's key <dataset>/<layer>/<chunk>, staged
only when something is there already).

Each scenario is one transaction of N = 272 INSERTs (1 KiB chunks, all data, one page, into
an empty layer) at max_parallel K = 4, first as INSERT OR REPLACE with the relay watching
the staging PUTs, then as plain INSERTs with it watching the PUTs at the chunks' keys:

- window: the relay holds every watched PUT until K are held, then lets the oldest go. A
  writer that keeps K PUTs in flight while it has more to send never leaves a held PUT
  waiting for company (0 stalls) and never has more than K in flight (peak exactly K); one
  that waits for a batch's slowest PUT before sending the next batch stalls at the end of
  every batch.
- slow: the relay holds chunk 0's PUT until every other watched PUT has been answered:
  with an upload queue all N - 1 others are done while it is held; a batch would wait for
  it after its own batch (done_while_held = the batch's size - 1, then a timeout).
- fail: the relay answers chunk 10's PUT with 403 itself: the statements fail naming that
  object's URL (its staging URL, or its key's) and the status, COMMIT is refused with the
  same message, at most the queue's window (2 K) of watched PUTs arrive after the 403 was
  sent (no new submissions), and afterwards nothing is left in the staging folder nor
  anywhere in the layer: the objects the plain INSERTs put at their keys before the failure
  are taken back.
- drop: the relay reads chunk 20's PUT on a kept-alive connection and closes it without an
  answer (a server's idle timeout racing the request): it is sent again on a new
  connection, the body read again from its start by curl itself (which needs a seek
  callback), and the transaction commits whole.
- Expect: the relay never answers `Expect: 100-continue` (a server need not): on S3, whose
  PUTs carry it (curl adds it to bodies over 1 KiB; Azure's requests drop it), no watched
  PUT's body comes late for a 100 that the client waited for (curl's default is a 1 s
  wait, a round trip per PUT on a real link). A writer that waits fails fast: the store's
  other scenarios are left out, as a failure.
- refused (plain INSERTs only): chunks 5, 6 and 7 already have an object at their keys (put
  by boto3 / the tests' Azure client before the transaction, other bytes, no vdsqltx):
  their create-only PUTs are refused (S3 412; Azure 409 BlobAlreadyExists or 412) and the
  same bodies go to the staging folder on the same queue (the relay sees, for each of them,
  the refused PUT at the key and then its staging PUT, and for every other chunk one PUT
  at its key and none staged); COMMIT copies the three over the old objects, and the layer
  reads back every chunk's bytes (objects decoded here from the spec, LayerStatus counts
  checked against them).

Exact request counts (vdsql_stats(), docs/openvds.md): staged, 2N + D(N) + 1 + 5 (N staging
PUTs; the commit record and LayerStatus read, the record written, N copies, the page and
LayerStatus put, D(n) the staged objects' deletes in batches, ceil(n / 1000) DeleteObjects
on S3 and ceil(n / 256) Blob Batches on Azure, the record freed); direct, N + 1 + 5 (no
copies, no deletes); refused, N + 3 + 3 + D(3) + 1 + 5 (N PUTs at the keys of which 3
refused, the 3 staging PUTs, the 5 of the commit, 3 copies, the page, one delete batch).
The relay sees each chunk's watched PUT exactly once (a dropped one twice), every PUT at a
key create-only, and no PUT of the other kind.
   env: SO, SQLITE3 (tests/taplib.py)"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "gen"))
import mkvds  # noqa: E402
from taplib import ok, plan  # noqa: E402
from vdstarget import Via, check_layer, each_store, q, run, staged, write_blob  # noqa: E402

L = "Dimensions_01LOD0"
K = 4
N = 17 * 16
REFUSED = (5, 6, 7)


def layout():
    """1 KiB chunks (32 x 32 U8, no margins), 272 of them on one page."""
    return mkvds.Layout([32 * 17, 32 * 16], brick=32, neg=0, pos=0, mult2d=1,
                        channels=[mkvds.channel("Amplitude", "U8")])


class Relay:
    def __init__(self, upstream_port):
        self.p = subprocess.Popen([sys.executable, os.path.join(here, "putgate.py"), str(upstream_port), "900"],
                                  stdout=subprocess.PIPE, text=True)
        self.port = int(self.p.stdout.readline())

    def call(self, path, data=None):
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.port, path), data=data, timeout=30) as r:
            return r.read()

    def arm(self, mode, key, watch):
        self.call("/_gate/arm?mode=%s&k=%d&n=%d&key=%d&layer=%s&watch=%s" % (mode, K, N, key, L, watch), b"")

    def stats(self):
        return json.loads(self.call("/_gate/stats"))

    def stop(self):
        self.p.kill()
        self.p.wait()


def deletes(kind, n):
    """Requests deleting n staged objects: DeleteObjects takes 1,000 keys, a Blob Batch 256."""
    per = 1000 if kind == "s3" else 256
    return (n + per - 1) // per


def check_counts(t, watch, mode, reqs, rc, err, g, key):
    """The request count of a committed scenario, and the PUTs the relay saw."""
    K_ = t.kind
    if mode == "refused":
        R = len(REFUSED)
        want = N + R + R + deletes(K_, R) + 1 + 5
        ok(rc == 0 and not err.strip() and reqs == [want],
           "%s key refused: %d chunks, %d of them at keys holding an object: %d requests (N PUTs at the keys, %d "
           "refused; %d staging PUTs; %d copies over the old objects; %d delete request; the page; the 5 of a commit)"
           % (K_, N, R, want, R, R, R, deletes(K_, R)), [rc, err[-600:], reqs])
        return
    # drop: no answer at all came (not even a 100), so curl sends it again itself on a
    # new connection, which vdsql does not count
    want = 2 * N + deletes(K_, N) + 1 + 5 if watch == "stage" else N + 1 + 5
    formula = "2N + %d + 1 + 5" % deletes(K_, N) if watch == "stage" else "N + 1 + 5: no copies, no deletes"
    ok(rc == 0 and not err.strip() and reqs == [want],
       "%s %s %s: %d chunks in one transaction at max_parallel %d: %d requests (%s)"
       % (K_, watch, mode, N, K, want, formula), [rc, err[-600:], reqs])
    again = [key] if mode == "drop" else []
    ok(g["arrived"] == N + len(again) and sorted(g["chunks"]) == sorted(list(range(N)) + again),
       "%s %s %s: the relay saw each chunk's %s PUT exactly once%s" %
       (K_, watch, mode, "staging" if watch == "stage" else "key", ", chunk %d's twice (dropped, then sent again)"
        % key if again else ""), [g["arrived"], len(set(g["chunks"])), g["dropped"]])


def check_kinds(t, watch, mode, g):
    """Plain INSERTs into an empty layer put at the keys only, create-only; INSERT OR
    REPLACE stages every chunk."""
    K_ = t.kind
    other = [p for p in g["puts"] if p[0] != watch]
    if watch == "stage":
        ok(not other, "%s stage %s: INSERT OR REPLACE put no chunk at its key (every one staged)" % (K_, mode),
           other[:5])
        return
    ok(not other and g["create_only"] == g["arrived"] - g["dropped"],
       "%s key %s: every PUT at a key came with If-None-Match: * (%d), and none was staged"
       % (K_, mode, g["arrived"] - g["dropped"]), [g["create_only"], g["arrived"], other[:5]])


def check_refused(t, name, g, datas):
    K_ = t.kind
    refused = (412,) if K_ == "s3" else (409, 412)
    done = 200 if K_ == "s3" else 201
    by = {}
    for kind, c, st, co in g["puts"]:
        by.setdefault(c, []).append((kind, st, co))
    bad = {}
    for c in range(N):
        got = by.get(c, [])
        if c in REFUSED:  # in the order answered: the refusal came before its staging PUT was sent
            good = (len(got) == 2 and got[0][0] == "key" and got[0][1] in refused and got[0][2] == 1
                    and got[1] == ("stage", done, 0))
        else:
            good = got == [("key", done, 1)]
        if not good:
            bad[c] = got
    ok(not bad, "%s key refused: chunks %s: a create-only PUT at the key refused (%s), then the same chunk's "
       "staging PUT; every other chunk one create-only PUT at its key, nothing staged"
       % (K_, ", ".join(map(str, REFUSED)), sorted({by[c][0][1] for c in REFUSED if by.get(c)})),
       sorted(bad.items())[:6])
    left = staged(t, name)
    ok(not left, "%s key refused: nothing is left in the staging folder after COMMIT" % K_, left[:5])
    check_layer(t, name, L, 1024, dict(enumerate(datas)), "%s key refused" % K_, method="None")


def check_failed(t, watch, name, g, out, err, rc, commit_line, data):
    K_ = t.kind
    where = "/%s/\\.vdsql/%s/[0-9a-f]{16}/10" % (name, L) if watch == "stage" else "/%s/%s/10" % (name, L)
    named = re.compile(where + ": HTTP 403 Forbidden")
    what = "staging URL" if watch == "stage" else "key's URL"
    lines = [x for x in err.splitlines() if x.strip()]
    ok(rc != 0 and lines and named.search(lines[0]),
       "%s %s fail: the statement that finds the failed upload fails naming chunk 10's %s and the status"
       % (K_, watch, what), err[:600])
    last = [x for x in lines if "line %d:" % commit_line in x]
    ok(len(last) == 1 and named.search(last[0]),
       "%s %s fail: COMMIT is refused with the same error" % (K_, watch), [commit_line, lines[-3:]])
    ok(g["after_fail"] <= 2 * K and g["arrived"] < N,
       "%s %s fail: no new uploads after the failure: at most the queue's window (%d) of watched PUTs "
       "arrived after the 403 (%d), %d of %d in all" % (K_, watch, 2 * K, g["after_fail"], g["arrived"], N),
       {k: v for k, v in g.items() if k != "puts"})
    keys = t.keys(name)
    left = [k for k in keys if k.startswith(".vdsql/") and not k.endswith("/commit")]
    ok(not left, "%s %s fail: nothing is left in the staging folder" % (K_, watch), left[:5])
    landed = sum(1 for p in g["puts"] if p[0] == watch and 200 <= p[2] < 300)
    at_keys = [k for k in keys if k.startswith(L + "/")]
    if watch == "stage":
        ok(not at_keys and data == ["0"], "%s stage fail: the layer has no chunk object and no data chunk" % K_,
           [keys[:8], data])
    else:
        ok(landed > 0 and not at_keys and data == ["0"],
           "%s key fail: the %d objects put at their keys before the failure are taken back: the layer has no chunk "
           "object and no data chunk" % (K_, landed), [landed, keys[:8], data])


def suite(t, tmp):
    K_ = t.kind
    relay = Relay(t.port())
    via = Via(t, relay.port)
    lp = write_blob(tmp, json.dumps(layout().json()).encode())
    rng = random.Random(21)
    files, datas = [], []
    for c in range(N):
        b = bytearray(rng.randbytes(1024))
        b[0], b[1] = 1, 2  # never a constant chunk
        datas.append(bytes(b))
        files.append(write_blob(tmp, bytes(b)))
    stats = "SELECT 'stats', requests FROM vdsql_stats() WHERE backend = '%s';\n" % K_
    scenarios = [("stage", m, c) for m, c in (("window", -1), ("slow", 0), ("fail", 10), ("drop", 20))]
    scenarios += [("key", m, c) for m, c in (("window", -1), ("slow", 0), ("fail", 10), ("drop", 20), ("refused", -1))]
    try:
        for watch, mode, key in scenarios:
            name = "up_%s" % mode if watch == "stage" else "direct_%s" % mode
            url = t.url(name)
            out, err, rc = run(t, "SELECT vds_create(%s, readfile(%s), 'None');" % (q(url), q(lp)))
            if not ok(rc == 0, "%s %s %s: vds_create" % (K_, watch, mode), err):
                continue
            if mode == "refused":
                for c in REFUSED:  # other bytes, no vdsqltx: not this transaction's
                    t.put_raw(name, "%s/%d" % (L, c), b"an object put before the transaction %d" % c)
            relay.arm("off" if mode == "refused" else mode, key, watch)
            verb = "INSERT OR REPLACE" if watch == "stage" else "INSERT"
            ins = "".join("%s INTO t(chunk, data) VALUES (%d, readfile(%s));\n" % (verb, c, q(files[c]))
                          for c in range(N))
            head = ("SELECT vdsql_config('max_parallel', %d);\nCREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\n"
                    "SELECT vdsql_config('stats', 'reset');\nBEGIN;\n" % (K, q(url), q(L)))
            # run() puts ".mode list" on line 1: COMMIT is on this line of the input
            commit_line = 2 + head.count("\n") + N
            out, err, rc = run(via, head + ins + "COMMIT;\n" + stats)
            g = relay.stats()
            reqs = [int(x.split("|")[1]) for x in out if x.startswith("stats|")]
            data = run(t, "SELECT count(*) FROM vds_chunks(%s, %s) WHERE status = 'data';" % (q(url), q(L)))[0]
            if mode == "fail":
                check_failed(t, watch, name, g, out, err, rc, commit_line, data)
                check_kinds(t, watch, mode, g)
                continue
            check_counts(t, watch, mode, reqs, rc, err, g, key)
            if mode == "refused":
                check_refused(t, name, g, datas)
                continue
            check_kinds(t, watch, mode, g)
            ok(data == [str(N)], "%s %s %s: the layer lists %d data chunks after COMMIT" % (K_, watch, mode, N), data)
            if mode == "window":
                ok(g["peak"] == K, "%s %s window: at most max_parallel = %d watched PUTs in flight, and %d reached"
                   % (K_, watch, K, K), g["peak"])
                ok(g["stalls"] == 0, "%s %s window: %d PUTs in flight whenever more were queued: no held PUT ever "
                   "waited for company before the last one was sent (stalls)" % (K_, watch, K), g["stalls"])
                want = N if K_ == "s3" else 0
                ok(g["expects"] == want and g["expect_waits"] == 0,
                   "%s %s window: %d watched PUTs came with Expect: 100-continue and none waited for the 100 the "
                   "relay never sends (the body follows the head at once)" % (K_, watch, want),
                   [g["expects"], g["expect_waits"]])
                if g["expect_waits"]:  # each PUT waits a second: the other scenarios would take minutes
                    ok(False, "%s: the other scenarios left out, their PUTs would each wait for a 100 Continue" % K_)
                    break
            if mode == "slow":
                ok(not g["timed_out"] and g["done_while_held"] == N - 1,
                   "%s %s slow: while chunk 0's PUT was held, the other %d watched PUTs were all answered (no batch "
                   "waits for its slowest)" % (K_, watch, N - 1), [g["done_while_held"], g["timed_out"]])
            if mode == "drop":
                ok(g["dropped"], "%s %s drop: chunk %d's PUT came on a kept-alive connection, which was closed "
                   "without an answer" % (K_, watch, key), {k: v for k, v in g.items() if k != "puts"})
    finally:
        relay.stop()


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-uploads.")
    try:
        each_store(tmp, lambda t: suite(t, tmp), stores=("s3", "az"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


if __name__ == "__main__":
    sys.exit(main())
