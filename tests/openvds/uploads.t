#!/usr/bin/python3
"""OpenVDS chunk uploads keep the pipe full, as TAP, on S3 (radosgw on 127.0.0.1) and Azure
Blob (Azurite on 127.0.0.1), each seen through tests/openvds/putgate.py, a relay that holds
the writer's staging PUTs and counts them (no timing is measured, only what arrives while
something is held).

One transaction of N = 272 INSERTs (1 KiB chunks, all data, one page) at max_parallel K = 4:

- window: the relay holds every staging PUT until K are held, then lets the oldest go. A
  writer that keeps K PUTs in flight while it has more to send never leaves a held PUT
  waiting for company (0 stalls) and never has more than K in flight (peak exactly K); one
  that waits for a batch's slowest PUT before sending the next batch stalls at the end of
  every batch.
- slow: the relay holds chunk 0's PUT until every other staging PUT has been answered:
  with an upload queue all N - 1 others are done while it is held; a batch would wait for
  it after its own batch (done_while_held = the batch's size - 1, then a timeout).
- fail: the relay answers chunk 10's PUT with 403 itself: the statements fail naming that
  object's URL, COMMIT is refused with the same message, at most the queue's window
  (2 K) of staging PUTs arrive after the 403 was sent (no new submissions), and afterwards
  nothing is left in the staging folder nor anywhere in the layer.
- drop: the relay reads chunk 20's PUT on a kept-alive connection and closes it without an
  answer (a server's idle timeout racing the request): it is sent again on a new
  connection, the body read again from its start by curl itself (which needs a seek
  callback), and the transaction commits whole.
- Expect: the relay never answers `Expect: 100-continue` (a server need not): on S3, whose
  PUTs carry it (curl adds it to bodies over 1 KiB; Azure's requests drop it), no staging
  PUT's body comes late for a 100 that the client waited for (curl's default is a 1 s
  wait, a round trip per PUT on a real link).

Exact request counts (vdsql_stats()): 2N + D + 1 + 5 as docs/openvds.md gives (D: the
staged objects' deletes in batches, ceil(N / 1000) DeleteObjects on S3, ceil(N / 256) Blob
Batches on Azure), and the relay sees each chunk's staging PUT exactly once.
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
from vdstarget import Target, Via, each_store, q, run, write_blob  # noqa: E402

L = "Dimensions_01LOD0"
K = 4
N = 17 * 16


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

    def arm(self, mode, key=-1):
        self.call("/_gate/arm?mode=%s&k=%d&n=%d&key=%d" % (mode, K, N, key), b"")

    def stats(self):
        return json.loads(self.call("/_gate/stats"))

    def stop(self):
        self.p.kill()
        self.p.wait()


def suite(t, tmp):
    K_ = t.kind
    relay = Relay(t.port())
    via = Via(t, relay.port)
    lp = write_blob(tmp, json.dumps(layout().json()).encode())
    rng = random.Random(21)
    files = []
    for c in range(N):
        b = bytearray(rng.randbytes(1024))
        b[0], b[1] = 1, 2  # never a constant chunk
        files.append(write_blob(tmp, bytes(b)))
    ins = "".join("INSERT INTO t(chunk, data) VALUES (%d, readfile(%s));\n" % (c, q(files[c])) for c in range(N))
    stats = "SELECT 'stats', requests FROM vdsql_stats() WHERE backend = '%s';\n" % K_
    try:
        for mode, key in (("window", -1), ("slow", 0), ("fail", 10), ("drop", 20)):
            name = "up_%s" % mode
            url = t.url(name)
            out, err, rc = run(t, "SELECT vds_create(%s, readfile(%s), 'None');" % (q(url), q(lp)))
            if not ok(rc == 0, "%s %s: vds_create" % (K_, mode), err):
                continue
            relay.arm(mode, key)
            head = ("SELECT vdsql_config('max_parallel', %d);\nCREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\n"
                    "SELECT vdsql_config('stats', 'reset');\nBEGIN;\n" % (K, q(url), q(L)))
            # run() puts ".mode list" on line 1: COMMIT is on this line of the input
            commit_line = 2 + head.count("\n") + N
            out, err, rc = run(via, head + ins + "COMMIT;\n" + stats)
            g = relay.stats()
            reqs = [int(x.split("|")[1]) for x in out if x.startswith("stats|")]
            data = run(t, "SELECT count(*) FROM vds_chunks(%s, %s) WHERE status = 'data';" % (q(url), q(L)))[0]
            if mode != "fail":
                # drop: no answer at all came (not even a 100), so curl sends it again
                # itself on a new connection, which vdsql does not count
                extra = 0
                per = 1000 if K_ == "s3" else 256  # keys one DeleteObjects / Blob Batch takes
                D = (N + per - 1) // per
                ok(rc == 0 and not err.strip() and reqs == [2 * N + D + 1 + 5 + extra],
                   "%s %s: %d chunks in one transaction at max_parallel %d: %d requests (2N + %d + 1 + 5%s)"
                   % (K_, mode, N, K, 2 * N + D + 6 + extra, D, " + vdsql's retry" if extra else ""),
                   [rc, err[-600:], reqs])
                again = [key] if mode == "drop" else []
                ok(g["arrived"] == N + len(again) and sorted(g["chunks"]) == sorted(list(range(N)) + again),
                   "%s %s: the relay saw each chunk's staging PUT exactly once%s" %
                   (K_, mode, ", chunk %d's twice (dropped, then sent again)" % key if again else ""),
                   [g["arrived"], len(set(g["chunks"])), g["dropped"]])
                ok(data == [str(N)], "%s %s: the layer lists %d data chunks after COMMIT" % (K_, mode, N), data)
            if mode == "window":
                ok(g["peak"] == K, "%s window: at most max_parallel = %d staging PUTs in flight, and %d reached"
                   % (K_, K, K), g["peak"])
                ok(g["stalls"] == 0, "%s window: %d PUTs in flight whenever more were queued: no held PUT ever waited "
                   "for company before the last one was sent (stalls)" % (K_, K), g["stalls"])
                want = N if K_ == "s3" else 0
                ok(g["expects"] == want and g["expect_waits"] == 0,
                   "%s window: %d staging PUTs came with Expect: 100-continue and none waited for the 100 the relay "
                   "never sends (the body follows the head at once)" % (K_, want), [g["expects"], g["expect_waits"]])
            if mode == "slow":
                ok(not g["timed_out"] and g["done_while_held"] == N - 1,
                   "%s slow: while chunk 0's PUT was held, the other %d staging PUTs were all answered (no batch "
                   "waits for its slowest)" % (K_, N - 1), [g["done_while_held"], g["timed_out"]])
            if mode == "drop":
                ok(g["dropped"], "%s drop: chunk %d's PUT came on a kept-alive connection, which was closed without "
                   "an answer" % (K_, key), g)
            if mode == "fail":
                named = re.compile(r"/%s/\.vdsql/%s/[0-9a-f]{16}/10: HTTP 403 Forbidden" % (name, L))
                lines = [x for x in err.splitlines() if x.strip()]
                ok(rc != 0 and lines and named.search(lines[0]),
                   "%s fail: the statement that finds the failed upload fails naming chunk 10's staging URL and "
                   "the status" % K_, err[:600])
                last = [x for x in lines if "line %d:" % commit_line in x]
                ok(len(last) == 1 and named.search(last[0]),
                   "%s fail: COMMIT is refused with the same error" % K_, [commit_line, lines[-3:]])
                ok(g["after_fail"] <= 2 * K and g["arrived"] < N,
                   "%s fail: no new uploads after the failure: at most the queue's window (%d) of staging PUTs "
                   "arrived after the 403 (%d), %d of %d in all" % (K_, 2 * K, g["after_fail"], g["arrived"], N),
                   g)
                keys = t.keys(name)
                left = [k for k in keys if k.startswith(".vdsql/") and not k.endswith("/commit")]
                ok(not left, "%s fail: nothing is left in the staging folder" % K_, left[:5])
                ok(not [k for k in keys if k.startswith(L + "/")] and data == ["0"],
                   "%s fail: the layer has no chunk object and no data chunk" % K_, [keys[:8], data])
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
