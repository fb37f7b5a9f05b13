#!/usr/bin/python3
"""OpenVDS chunks put straight at their keys, as TAP, on local files, S3 (radosgw on
127.0.0.1) and Azure Blob (Azurite on 127.0.0.1): a plain INSERT (or OR IGNORE) of a
chunk no committed entry names puts its object at <dataset>/<layer>/<chunk> create-only,
carrying its transaction's id (vdsqltx); COMMIT publishes it through the pages without a
copy, and whatever such a transaction does not publish is taken back (docs/openvds.md,
"How writes stay whole").

Every check of what is stored reads the store with an independent client (os and
xattrs, boto3, the tests' Azure client), never through vdsql: objects listed and decoded
here (section 9), their vdschunkmetadata against the page entries (section 5), the
LayerStatus counts against the pages (vdstarget.check_layer). Writers are sqlite3 shells
held open before their COMMIT (a marker file, then a wait for a go file), so that two
transactions overlap exactly as each case needs.

Cases: (1) N new chunks: each object at its key with one 16-hex vdsqltx, nothing staged,
N + P + 5 requests (vdsql_stats), every chunk ok in vds_audit; (2) ROLLBACK, and a COMMIT
refused because another writer committed one of its chunks: its objects are gone, the
layer unchanged; (3) two writers of one new chunk (one at the key, one refused there and
staged): whichever commits second is refused, the winner's bytes stay; the one refused
at the key rolls back while the other is open: the other's object stays and commits; (4)
OR IGNORE of a chunk another writer committed as a constant meanwhile: the constant
stays, the object at the key is deleted; (5) kill -9 before COMMIT: uncommitted_object in
vds_audit, never adopted; vds_repair deletes the objects only past stage_ttl; a new
INSERT of such a chunk commits; (6) a direct put replaced in its own transaction by OR
REPLACE with data or a constant, committed or rolled back; (7) on S3 and Azure, a
writer paused past http_timeout with puts in flight: ROLLBACK ends (it once spun
forever) and takes all back, COMMIT publishes all.
   env: DIRECT_STORES (default "file s3 az"); SO, SQLITE3 (tests/taplib.py)"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "gen"))
import mkvds  # noqa: E402
from layerkit import CHUNK, L, State, check, data, files_of, layout, popen  # noqa: E402
from taplib import ok  # noqa: E402
from vdstarget import chunks_script, decode_object, q, run, run_stores, staged, write_blob  # noqa: E402

STORES = os.environ.get("DIRECT_STORES", "file s3 az").split()
TX = re.compile(r"^[0-9a-f]{16}$")
C7 = mkvds.constant_hash(7.0)  # a U8 chunk of 7s (scale 1, offset 0): the constant 7.0


def key(c):
    return "%s/%d" % (L, c)


def new_dataset(t, tmp, name):
    lp = write_blob(tmp, json.dumps(layout().json()).encode())
    out, err, rc = run(t, "SELECT vds_create(%s, readfile(%s), 'RLE');" % (q(t.url(name)), q(lp)))
    ok(rc == 0, "%s: dataset %s created (2-D RLE, 1 KiB chunks, 2 pages)" % (t.kind, name), err)
    return t.url(name)


def leftovers(t, name, data_chunks):
    """Keys that should not be there: anything but the documents, pages, commit record
    and the objects of the committed data chunks."""
    want = {"VolumeDataLayout", "LayerStatus", ".vdsql/%s/commit" % L} | {key(c) for c in data_chunks}
    return sorted(k for k in t.keys(name) if k not in want and not k.startswith(L + "/ChunkMetadata/"))


def at_key(t, name, c):
    """(decoded bytes or None, vdsqltx or None) of what is at chunk c's key."""
    body, meta = t.get(name, key(c))
    if body is None:
        return None, None
    return (decode_object(body, "RLE")[1] if body else b""), meta.get("vdsqltx")


def unchanged(t, name):
    """Every object but the commit record (a clean-up takes and frees it), with metadata."""
    return {k: v for k, v in t.snapshot(name).items() if k != ".vdsql/%s/commit" % L}


def wait_for(cond, timeout=60):
    t0 = time.time()
    while time.time() - t0 < timeout:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    return cond()


class Held:
    """A sqlite3 shell that runs its inserts, writes a marker, then waits for a go file
    before its end (COMMIT or ROLLBACK). Its puts go one at a time (max_parallel 1: a
    queue of 2), so that each push waits for the one two before it: once the marker is
    written, every chunk but the last two (sure) has landed, also on S3 and Azure, whose
    puts progress only while the writer works (pre: statements run first, which set
    that)."""

    def __init__(self, t, tmp, url, rows, blobs, mode="", end="COMMIT;", pre="SELECT vdsql_config('max_parallel', 1);\n"):
        n = len(os.listdir(tmp))
        self.marker, self.go = os.path.join(tmp, "m%d" % n), os.path.join(tmp, "go%d" % n)
        self.sure = rows[:-2]
        wait = write_blob(tmp, ("while [ ! -e %s ]; do sleep 0.02; done\n" % self.go).encode())
        self.p = popen(t, pre +
                       chunks_script(url, L, rows, mode, files_of(tmp, blobs), marker=self.marker,
                                     end=".shell sh %s\n%s" % (wait, end)))
        self.started = wait_for(lambda: os.path.exists(self.marker) or self.p.poll() is not None) and \
            os.path.exists(self.marker)

    def finish(self, timeout=120):
        """(stdout, stderr, rc); rc None when it did not end within timeout (killed)."""
        open(self.go, "w").close()
        self.p.stdin = None
        try:
            out, err = self.p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
            return out, err + "(did not end within %d s: killed)" % timeout, None
        return out, err, self.p.returncode

    def kill(self):
        self.p.send_signal(signal.SIGKILL)
        self.p.wait()
        open(self.go, "w").close()  # its waiting sh, orphaned, ends


def landed(t, name, chunks):
    """{chunk: vdsqltx} of the chunks whose key holds an object."""
    m = {c: at_key(t, name, c)[1] for c in chunks}
    return {c: x for c, x in m.items() if x}


def audit(t, url):
    out, err, rc = run(t, "SELECT chunk, verdict, coalesce(detail, '') FROM vds_audit(%s, %s);" % (q(url), q(L)))
    rows = {}
    for line in out:
        c, v, d = line.split("|", 2)
        rows[int(c) if c else None] = (v, d)
    return rows, err, rc


def case_new(t, tmp, rng):
    """1: N new chunks over P new pages, one transaction of plain INSERTs."""
    K, name = t.kind, "d1"
    url = new_dataset(t, tmp, name)
    rows = [0, 3, 17, 500, 1023, 1024, 1030, 1100, 1199]
    blobs = {c: data(rng) for c in rows}
    n, pages = len(rows), 2
    out, err, rc = run(t, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\nSELECT vdsql_config('stats', 'reset');\n"
                          "BEGIN;\n%sCOMMIT;\nSELECT 'stats', requests FROM vdsql_stats() WHERE backend = '%s';"
                       % (q(url), q(L), "".join("INSERT INTO t(chunk, data) VALUES (%d, readfile(%s));\n"
                                                % (c, q(f)) for c, f in sorted(files_of(tmp, blobs).items())), K))
    reqs = [int(x.split("|")[1]) for x in out if x.startswith("stats|")]
    want = n + pages + 5
    ok(rc == 0 and reqs == [want],
       "%s: %d new chunks over %d new pages: %d requests = %d create-only PUTs at their keys + the commit record and "
       "LayerStatus read + the record written + %d page PUTs + LayerStatus PUT + the record freed (no staging, copy "
       "or delete)" % (K, n, pages, want, n, pages), out + [err])
    got = {c: at_key(t, name, c) for c in rows}
    ok(all(got[c][0] == blobs[c] for c in rows), "%s: each object at its key decodes to its chunk's bytes" % K,
       [c for c in rows if got[c][0] != blobs[c]])
    txs = {got[c][1] for c in rows}
    ok(len(txs) == 1 and all(x and TX.match(x) for x in txs),
       "%s: every object carries the same vdsqltx, 16 hex digits: %s" % (K, sorted(map(str, txs))))
    vd = [k for k in t.keys(name) if k.startswith(".vdsql/")]
    ok(vd == [".vdsql/%s/commit" % L], "%s: nothing under .vdsql/ but the commit record" % K, vd)
    check(t, name, blobs, "%s, new chunks" % K)
    ok(not leftovers(t, name, rows), "%s: no other key" % K, leftovers(t, name, rows))
    a, err, rc = audit(t, url)
    ok(rc == 0 and a == {c: ("ok", "") for c in rows}, "%s: vds_audit reports every chunk ok" % K, [a, err])


def case_rollback(t, tmp, rng):
    """2: ROLLBACK after plain INSERTs, and a COMMIT refused by another writer's commit."""
    K, name = t.kind, "d2"
    url = new_dataset(t, tmp, name)
    committed = {c: data(rng) for c in (1, 2, 1025)}
    out, err, rc = run(t, chunks_script(url, L, sorted(committed), "", files_of(tmp, committed)))
    ok(rc == 0, "%s: 3 chunks committed on both pages" % K, err)
    before = unchanged(t, name)
    rows = [5, 6, 7, 1026, 1050]
    h = Held(t, tmp, url, rows, {c: data(rng) for c in rows}, end="ROLLBACK;")
    txs = landed(t, name, rows)
    ok(h.started and set(h.sure) <= set(txs) and len(set(txs.values())) == 1 and all(TX.match(x) for x in txs.values()),
       "%s: before ROLLBACK, the plain INSERTs' objects are at their keys with one vdsqltx (%d of %d landed)"
       % (K, len(txs), len(rows)), txs)
    out, err, rc = h.finish()
    ok(rc == 0 and not [c for c in rows if at_key(t, name, c)[0] is not None],
       "%s: ROLLBACK takes every object at its key back (listing)" % K, [err] + leftovers(t, name, committed))
    after = unchanged(t, name)
    ok(after == before and after.get("LayerStatus") == before.get("LayerStatus"),
       "%s: the layer is byte-identical after ROLLBACK (LayerStatus, pages, objects)" % K,
       sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k)))
    ok(not staged(t, name), "%s: no staging left" % K, staged(t, name))

    # a COMMIT refused: B commits one of A's chunks while A is open
    rows = [10, 11, 12, 1040, 1041]
    h = Held(t, tmp, url, rows, {c: data(rng) for c in rows})
    ok(h.started and 11 in landed(t, name, h.sure), "%s: A's object of chunk 11 is at its key" % K)
    theirs = {11: data(rng)}
    out, err, rc = run(t, chunks_script(url, L, [11], "", files_of(tmp, theirs)))
    ok(rc == 0, "%s: writer B commits chunk 11 while A is open" % K, err)
    committed.update(theirs)
    out, aerr, arc = h.finish()
    ok(arc != 0 and "1 chunk written by another writer during this transaction (11)" in aerr,
       "%s: A's COMMIT is refused, naming chunk 11: %s" % (K, aerr.strip()[-160:]))
    gone = [c for c in rows if c != 11 and at_key(t, name, c)[0] is not None]
    ok(not gone, "%s: the refused writer's other objects are gone" % K, gone)
    ok(at_key(t, name, 11)[0] == theirs[11], "%s: chunk 11's key holds B's bytes (decoded here)" % K)
    check(t, name, committed, "%s, after the refused COMMIT" % K)
    ok(not staged(t, name) and not leftovers(t, name, committed), "%s: no staging, no other key left" % K,
       staged(t, name) + leftovers(t, name, committed))


def case_two_writers(t, tmp, rng):
    """3: A and B both plain-INSERT new chunk c (A at the key, B refused there: staged),
    and one chunk of their own each."""
    K = t.kind
    for order in ("A first", "B first", "B rolls back"):
        name = "d3" + order[0].lower() + ("r" if "rolls" in order else "")
        url = new_dataset(t, tmp, name)
        c, ra, rb = 3, [4, 6, 8], [5, 7, 9]  # c and each writer's own chunks
        ba, bb = {x: data(rng) for x in [c] + ra}, {x: data(rng) for x in [c] + rb}
        a = Held(t, tmp, url, [c] + ra, ba)
        txa = landed(t, name, [c]).get(c)
        b = Held(t, tmp, url, [c] + rb, bb, end="ROLLBACK;" if "rolls" in order else "COMMIT;")
        st = staged(t, name)
        ok(a.started and b.started and at_key(t, name, c) == (ba[c], txa) and len(st) == 1 and st[0].endswith("/%d" % c),
           "%s, %s: A's object at c's key, B's put of c refused there and staged" % (K, order), st)
        first, second = (a, b) if order == "A first" else (b, a)
        out, err1, rc1 = first.finish()
        out, err2, rc2 = second.finish()
        if "rolls" in order:
            ok(rc1 == 0 and rc2 == 0, "%s: B rolls back while A is open, then A commits" % K, err1 + err2)
            win = ba
            ok(at_key(t, name, c) == (ba[c], txa), "%s: B's ROLLBACK leaves A's object at c's key (it is A's: "
               "vdsqltx), A's COMMIT publishes it" % K)
        else:
            ok(rc1 == 0 and rc2 != 0 and "1 chunk written by another writer during this transaction (%d)" % c in err2,
               "%s, %s: the second COMMIT is refused as written by another writer: %s"
               % (K, order, err2.strip()[-160:]), err1)
            win = ba if order == "A first" else bb
            ok(at_key(t, name, c)[0] == win[c], "%s, %s: the winner's bytes are at c's key" % (K, order))
        check(t, name, win, "%s, %s" % (K, order))
        ok(not staged(t, name) and not leftovers(t, name, win), "%s, %s: no staging, no leftover key" % (K, order),
           staged(t, name) + leftovers(t, name, win))


def case_ignore(t, tmp, rng):
    """4: A OR IGNOREs c (at its key); B commits c as a constant; A commits."""
    K, name = t.kind, "d4"
    url = new_dataset(t, tmp, name)
    c, others = 8, [9, 1030, 1031]
    blobs = {x: data(rng) for x in [c] + others}
    a = Held(t, tmp, url, [c] + others, blobs, mode="OR IGNORE")
    txa = landed(t, name, [c]).get(c)
    out, err, rc = run(t, chunks_script(url, L, [c], "", files_of(tmp, {c: b"\x07" * CHUNK})))
    s = State(t, name)
    ok(rc == 0 and s.entries.get(c) == C7 and at_key(t, name, c) == (blobs[c], txa),
       "%s: B commits c as the constant 7 (entry %#x); a constant over unwritten writes no object: A's is still at "
       "the key" % (K, C7), [err, hex(s.entries.get(c, 0))])
    out, err, rc = a.finish()
    committed = {c: ("constant", C7)}
    committed.update({x: blobs[x] for x in others})
    ok(rc == 0, "%s: A's OR IGNORE COMMIT succeeds" % K, err)
    ok(t.get(name, key(c))[0] is None, "%s: A's object at c's key is deleted (nothing there)" % K)
    check(t, name, committed, "%s, c keeps B's constant, A's other chunks published" % K)
    ok(not staged(t, name) and not leftovers(t, name, others), "%s: no staging, no other key" % K,
       staged(t, name) + leftovers(t, name, others))


def case_kill(t, tmp, rng):
    """5: kill -9 before COMMIT; audit, repair (default and zero stage_ttl), a new INSERT."""
    K, name = t.kind, "d5"
    url = new_dataset(t, tmp, name)
    committed = {c: data(rng) for c in (0, 1024)}
    run(t, chunks_script(url, L, sorted(committed), "", files_of(tmp, committed)))
    h = Held(t, tmp, url, [20, 21, 22, 1060, 1061, 1062], {c: data(rng) for c in (20, 21, 22, 1060, 1061, 1062)})
    h.kill()
    time.sleep(1)  # a put the server had whole when the writer died lands meanwhile
    txs = landed(t, name, [20, 21, 22, 1060, 1061, 1062])
    rows = sorted(txs)  # what it left
    tx = txs.get(rows[0])
    ok(h.started and set(h.sure) <= set(rows) and len(set(txs.values())) == 1,
       "%s: a writer killed (-9) before COMMIT left its objects at their keys (%d)" % (K, len(rows)), txs)
    a, err, rc = audit(t, url)
    ok(rc == 0 and all(a.get(c, ("",))[0] == "uncommitted_object" and tx in a[c][1] for c in rows),
       "%s: vds_audit: each is uncommitted_object, the detail naming transaction %s" % (K, tx), [a, err])
    ok(all(a.get(c) == ("ok", "") for c in committed) and len(a) == len(rows) + len(committed),
       "%s: the committed chunks are ok, nothing else listed" % K, a)
    out, err, rc = run(t, "SELECT chunk, status FROM vds_chunks(%s, %s) WHERE chunk IN (%s);"
                       % (q(url), q(L), ", ".join(map(str, rows))))
    ok(rc == 0 and out == ["%d|unwritten" % c for c in rows], "%s: readers see those chunks unwritten" % K, out + [err])
    before = unchanged(t, name)
    out, err, rc = run(t, "SELECT vds_repair(%s, %s);" % (q(url), q(L)))
    ok(rc == 0 and out == ["0"] and unchanged(t, name) == before,
       "%s: vds_repair with the default stage_ttl changes nothing (entries unwritten, objects kept, none adopted)" % K,
       out + [err])
    # a new plain INSERT of one: refused at its key, staged, published
    c = rows[0]
    mine = {x: data(rng) for x in (c, 40, 41)}
    b = Held(t, tmp, url, [c, 40, 41], mine)
    st = staged(t, name)
    ok(b.started and st and st[0].endswith("/%d" % c) and at_key(t, name, c)[1] == tx,
       "%s: a new plain INSERT of chunk %d: its put is refused at the key (the killed writer's object stays) and "
       "staged" % (K, c), st)
    out, err, rc = b.finish()
    committed.update(mine)
    got = at_key(t, name, c)
    ok(rc == 0 and got[0] == mine[c] and got[1] not in (None, tx), "%s: its COMMIT publishes the new bytes" % K, err)
    ok(all(at_key(t, name, x)[1] == tx for x in rows[1:]), "%s: the other uncommitted objects are still there" % K)
    check(t, name, committed, "%s, after the new INSERT" % K)
    before = unchanged(t, name)
    out, err, rc = run(t, "SELECT vdsql_config('stage_ttl', 0);\nSELECT vds_repair(%s, %s);" % (q(url), q(L)))
    after = unchanged(t, name)
    ok(rc == 0 and set(before) - set(after) == {key(x) for x in rows[1:]}
       and all(after[k] == before[k] for k in after) and not set(after) - set(before),
       "%s: vds_repair with stage_ttl 0 deletes the other %d uncommitted objects and nothing else"
       % (K, len(rows) - 1), [out, err, sorted(set(before) ^ set(after))])
    check(t, name, committed, "%s, after the repair" % K)
    ok(not leftovers(t, name, committed) and not staged(t, name), "%s: no other key left" % K,
       leftovers(t, name, committed) + staged(t, name))
    a, err, rc = audit(t, url)
    ok(rc == 0 and a == {x: ("ok", "") for x in committed}, "%s: vds_audit: every chunk ok" % K, [a, err])
    # an object with a vdsqltx at the key of a data entry it is not: never deleted (the
    # entry needs its key), whatever its age
    body, meta = t.get(name, key(0))
    t.put_raw(name, key(0), body, dict(meta, vdsqltx="0123456789abcdef", vdschunkmetadata="AQIDBAUGBwg="))
    planted = t.get(name, key(0))
    a, err, rc = audit(t, url)
    out, err2, rc2 = run(t, "SELECT vdsql_config('stage_ttl', 0);\nSELECT vds_repair(%s, %s);" % (q(url), q(L)))
    ok(rc == 0 and a.get(0, ("",))[0] == "uncommitted_object" and "0123456789abcdef" in a[0][1] and rc2 == 0
       and t.get(name, key(0)) == planted, "%s: a vdsqltx object at a data entry's key (other hash): "
       "uncommitted_object, and vds_repair with stage_ttl 0 keeps it" % K, [a.get(0), err, err2])


def case_replaced(t, tmp, rng):
    """6: plain INSERT of c, then INSERT OR REPLACE of c in the same transaction."""
    K, name = t.kind, "d6"
    url = new_dataset(t, tmp, name)
    committed = {}
    for end in ("COMMIT;", "ROLLBACK;"):
        for what in ("data", "constant"):
            c = 30 + len(committed) + (0 if end == "COMMIT;" else 10) + (what == "constant")
            first, second = data(rng), data(rng) if what == "data" else b"\x07" * CHUNK
            f1, f2 = files_of(tmp, {0: first, 1: second}).values()
            out, err, rc = run(t, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\nBEGIN;\n"
                                  "INSERT INTO t(chunk, data) VALUES (%d, readfile(%s));\n"
                                  "INSERT OR REPLACE INTO t(chunk, data) VALUES (%d, readfile(%s));\n%s\n"
                               % (q(url), q(L), c, q(f1), c, q(f2), end))
            label = "%s: plain INSERT of %d then OR REPLACE with %s, %s" % (K, c, what, end[:-1])
            if end == "COMMIT;":
                committed[c] = second if what == "data" else ("constant", C7)
                ok(rc == 0, label, err)
                if what == "data":
                    ok(at_key(t, name, c)[0] == second, "%s: c's key holds the second data" % label)
                else:
                    ok(t.get(name, key(c))[0] is None, "%s: nothing is left at c's key" % label)
            else:
                ok(rc == 0 and t.get(name, key(c))[0] is None, "%s: nothing at c's key" % label, err)
    check(t, name, committed, "%s, replaced in their transaction" % K)
    data_chunks = [c for c, v in committed.items() if isinstance(v, bytes)]
    ok(not staged(t, name) and not leftovers(t, name, data_chunks), "%s: no staging, no other key" % K,
       staged(t, name) + leftovers(t, name, data_chunks))


def case_timeout(t, tmp, rng):
    """7: a writer that pauses past http_timeout with puts in flight: they are sent again
    when it goes on, and a create-only put whose first attempt landed is refused at its
    own object (412) and goes to staging. ROLLBACK still ends and takes all back (it
    once spun forever there); COMMIT publishes every chunk."""
    K, name = t.kind, "d7"
    if K == "file":  # local puts are made in the caller's time: nothing is in flight
        return
    url = new_dataset(t, tmp, name)
    committed = {}
    for end, rows in (("ROLLBACK;", [50, 51, 52, 53, 54, 55]), ("COMMIT;", [60, 61, 62, 63, 64, 65])):
        blobs = {c: data(rng) for c in rows}
        h = Held(t, tmp, url, rows, blobs, end=end, pre="SELECT vdsql_config('http_timeout', 1);\n")
        time.sleep(2.5)
        n = len(landed(t, name, rows))
        out, err, rc = h.finish(timeout=60)
        what = "%s: %s after a pause past http_timeout (%d of %d puts had landed)" % (K, end[:-1], n, len(rows))
        ok(h.started and rc == 0, "%s ends" % what, err)
        if end == "COMMIT;":
            committed.update(blobs)
        ok(sorted(landed(t, name, rows)) == (rows if end == "COMMIT;" else []),
           "%s: the chunks' keys hold %s" % (what, "their objects" if committed else "nothing"))
        check(t, name, committed, what)
        ok(not staged(t, name) and not leftovers(t, name, committed), "%s: no staging, no other key" % what,
           staged(t, name) + leftovers(t, name, committed))


def suite(t, tmp):
    rng = random.Random(27)
    t0 = time.time()
    for case in (case_new, case_rollback, case_two_writers, case_ignore, case_kill, case_replaced, case_timeout):
        t1 = time.time()
        case(t, tmp, rng)
        print("# %s, %s: %.1f s" % (t.kind, case.__name__, time.time() - t1), flush=True)
    print("# %s: %.1f s" % (t.kind, time.time() - t0), flush=True)


sys.exit(run_stores("vdsql-direct.", suite, STORES))
