#!/usr/bin/python3
"""OpenVDS writes never lose a committed chunk, as TAP, on local files, S3 (radosgw on
127.0.0.1) and Azure Blob (Azurite on 127.0.0.1): ROLLBACK, refused COMMITs, kill -9 at
random moments of COMMIT, and four writer processes at once (docs/openvds.md, "How writes
stay whole"; docs/reliability.md has the long runs).

Every check reads the store with an independent client (os and xattrs, boto3, the tests'
Azure client), never through vdsql: each page entry (section 4) against its chunk
object's vdschunkmetadata (section 5), each object decoded here (section 9), the
LayerStatus counts (section 3) against what the pages and objects add up to, and the
staging folder listed. What a chunk must hold is what this test wrote, tracked here.

kill -9: a writer replaces KILL_CHUNKS chunks of two stored pages (committed ones and new
ones; in one trial of three a plain INSERT of chunks never written, whose objects go
straight to their keys) and is killed at a random moment of its COMMIT (timed on an unkilled run: half the
kills near its start, mostly before the commit point, half anywhere in it). Readers
before any recovery see each chunk's old or new bytes, or an error naming the chunk;
after the next writer opens the layer (two trials in four) or vds_repair (the others)
the transaction is all there or not at all, every entry agrees with its object, the
counts equal the pages, and other chunks are intact. vds_repair with stage_ttl 0 then
leaves nothing staged and no object at a key that no entry names.

env: REL_TRIALS (kill -9 trials per store, default 30), REL_ROUNDS (rounds of four
writers, default 10), REL_STORES (default "file s3 az"); SO, SQLITE3 (tests/taplib.py)."""
import base64
import json
import os
import random
import signal
import struct
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "gen"))
import mkvds  # noqa: E402
import layerkit  # noqa: E402
from layerkit import CHUNK, L, NCHUNKS, data, files_of, insert_script, layout, popen, read_chunks  # noqa: E402
from taplib import ok  # noqa: E402
from vdstarget import q, run, run_stores, write_blob  # noqa: E402

NAME = "rel"
KILL_CHUNKS = 16
TRIALS = int(os.environ.get("REL_TRIALS", "30"))
ROUNDS = int(os.environ.get("REL_ROUNDS", "10"))
STORES = os.environ.get("REL_STORES", "file s3 az").split()


def State(t):
    return layerkit.State(t, NAME)


def staging(t):
    return layerkit.staging(t, NAME)


def leftovers(t):
    return layerkit.leftovers(t, NAME)


def check(t, committed, what):
    return layerkit.check(t, NAME, committed, what)


def suite(t, tmp):
    K = t.kind
    rng = random.Random(18)
    url = t.url(NAME)
    lp = write_blob(tmp, json.dumps(layout().json()).encode())
    out, err, rc = run(t, "SELECT vds_create(%s, readfile(%s), 'RLE');" % (q(url), q(lp)))
    ok(rc == 0, "%s: a 2-D RLE dataset of %d chunks over 2 pages" % (K, NCHUNKS), err)
    committed = {}
    first = {c: data(rng) for c in range(0, NCHUNKS, 4)}
    out, err, rc = run(t, insert_script(url, sorted(first), "", files_of(tmp, first)))
    committed.update(first)
    ok(rc == 0, "%s: %d chunks committed on both pages" % (K, len(first)), err)
    check(t, committed, "%s, first commit" % K)

    # ROLLBACK of a transaction that re-inserts 300 committed chunks: a batch of 256 was
    # uploaded before ROLLBACK
    again = {c: data(rng) for c in sorted(committed)[:300]}
    out, err, rc = run(t, insert_script(url, sorted(again), "OR REPLACE", files_of(tmp, again), end="ROLLBACK;"))
    ok(rc == 0, "%s: 300 committed chunks re-inserted, then ROLLBACK" % K, err)
    check(t, committed, "%s, after ROLLBACK" % K)
    ok(not staging(t), "%s: ROLLBACK deleted its staged objects (independent listing)" % K, staging(t)[:5])

    # a COMMIT refused because another writer wrote one of its chunks meanwhile
    marker = os.path.join(tmp, "m-%s" % K)
    new = sorted(set(range(NCHUNKS)) - set(committed))[:300]
    mine = {c: data(rng) for c in new}
    a = popen(t, insert_script(url, new, "", files_of(tmp, mine), marker=marker,
                               end=".shell sleep 1\nCOMMIT;"))
    t0 = time.time()
    while not os.path.exists(marker) and time.time() - t0 < 60:
        time.sleep(0.02)
    b = {new[7]: data(rng)}
    out, err, rc = run(t, insert_script(url, [new[7]], "", files_of(tmp, b)))
    committed.update(b)
    aerr = a.stderr.read()
    a.wait()
    ok(rc == 0 and "1 chunk written by another writer during this transaction (%d)" % new[7] in aerr,
       "%s: a plain INSERT's COMMIT is refused when another writer committed one of its chunks, naming it: %s"
       % (K, aerr.strip()[-200:]), err)
    check(t, committed, "%s, after the refused COMMIT" % K)
    ok(not staging(t), "%s: the refused COMMIT deleted its staged objects" % K, staging(t)[:5])
    ok(not leftovers(t), "%s: and took back the objects it put at its new chunks' keys" % K, leftovers(t)[:5])

    # a writer that rolls back while another open transaction holds the key of the same new
    # chunk (its put at the key was refused: it staged) leaves the other's object alone
    c1 = sorted(set(range(NCHUNKS)) - set(committed))[0]
    bb, ab = {c1: data(rng)}, {c1: data(rng)}
    b = popen(t, insert_script(url, [c1], "", files_of(tmp, bb), marker=marker + "b", end=".shell sleep 3\nCOMMIT;"))
    t0 = time.time()
    while not os.path.exists(marker + "b") and time.time() - t0 < 60:
        time.sleep(0.02)
    out, err, rc = run(t, insert_script(url, [c1], "", files_of(tmp, ab), end="ROLLBACK;"))
    berr = b.stderr.read()
    b.wait()
    committed.update(bb)
    ok(rc == 0 and b.returncode == 0, "%s: a plain INSERT of a new chunk rolled back while another open transaction "
       "had put it at its key; that one commits" % K, [err, berr])
    check(t, committed, "%s, after one writer's ROLLBACK and the other's COMMIT of one new chunk" % K)

    # a constant replacing a data chunk: its key gets an empty object with the constant's hash
    c0 = sorted(committed)[0]
    z = {c0: b"\x07" * CHUNK}
    out, err, rc = run(t, insert_script(url, [c0], "OR REPLACE", files_of(tmp, z)))
    body, meta = t.get(NAME, "%s/%d" % (L, c0))
    h = struct.unpack("<Q", base64.b64decode(meta.get("vdschunkmetadata", "")) or b"\0" * 8)[0] if meta else 0
    ok(rc == 0 and body == b"" and h >> 32 == 0x01010101,
       "%s: a constant replacing a data chunk leaves an empty object with the constant hash, as OpenVDS writes" % K,
       [err, body and len(body), hex(h)])
    out, err, rc = run(t, "SELECT count(*) FROM vds_audit(%s, %s) WHERE verdict <> 'ok';\nSELECT vds_repair(%s, %s);\n"
                          "SELECT status FROM vds_chunks(%s, %s) WHERE chunk = %d;" % (q(url), q(L), q(url), q(L),
                                                                                      q(url), q(L), c0))
    ok(rc == 0 and out == ["0", "0", "constant"], "%s: the audit finds nothing wrong; repair changes nothing" % K,
       out + [err])
    s = State(t)
    committed[c0] = s.data.get(c0)
    ok(s.data.get(c0, ("",))[0] == "constant" and s.counts_ok()[0], "%s: the constant chunk counts as valid, no bytes"
       % K, s.counts_ok()[1])

    # kill -9 during COMMIT
    pool = [c for c in sorted(committed) if c != c0][:200] + sorted(set(range(NCHUNKS)) - set(committed))[:200]
    rows = rng.sample(pool, KILL_CHUNKS)
    blobs = {c: data(rng) for c in rows}
    t0 = time.time()
    p = popen(t, insert_script(url, rows, "OR REPLACE", files_of(tmp, blobs), marker=marker + "c"))
    while not os.path.exists(marker + "c"):
        time.sleep(0.001)
    t1 = time.time()
    p.wait()
    t2 = time.time()
    committed.update(blobs)
    check(t, committed, "%s, an unkilled run" % K)
    start, end = t1 - t0, t2 - t0
    outcomes = {"old": 0, "new": 0}
    seen_errors = 0
    failures = []
    plains = 0
    for trial in range(TRIALS):
        plain = trial % 3 == 2  # new chunks, plain INSERT: objects at their keys, nothing staged
        unwritten = sorted(set(range(NCHUNKS)) - set(committed))
        rows = rng.sample(unwritten if plain else pool, KILL_CHUNKS)
        plains += plain
        blobs = {c: data(rng) for c in rows}
        files = files_of(tmp, blobs)
        # half the kills before COMMIT or around its start (before its commit point: from a
        # fifth of the time COMMIT took to begin in the unkilled run, since a local COMMIT
        # reaches its commit point almost at once and a killed run may go faster than that
        # run), half anywhere in COMMIT (mostly after): both sides are always tried
        delay = rng.uniform(start * 0.2, start + (end - start) * 0.1) if trial % 2 else rng.uniform(start, end * 1.1)
        p = popen(t, insert_script(url, rows, "" if plain else "OR REPLACE", files))
        time.sleep(delay)
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        # readers before any recovery: old or new bytes, or an error naming the chunk
        seen = read_chunks(t, url, rows)
        for c in rows:
            v = seen[c]
            if isinstance(v, str):
                seen_errors += 1
                if "chunk %d" % c not in v and "%s/%d" % (L, c) not in v:
                    failures.append((trial, c, "reader error names no chunk: " + v[:120]))
            elif v != blobs[c] and v != committed.get(c, b"\0" * CHUNK):
                failures.append((trial, c, "reader saw bytes of neither version"))
        if (trial // 2) % 2 == 0:  # a writer opens the layer, or vds_repair (both after both kinds of kill)
            out, err, rc = run(t, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);" % (q(url), q(L)))
        else:
            out, err, rc = run(t, "SELECT vds_repair(%s, %s);" % (q(url), q(L)))
        if rc:
            failures.append((trial, None, "recovery failed (exit %s): %s" % (rc, err[:300])))
        s = State(t)
        got_new = all(s.data.get(c) == blobs[c] for c in rows)
        got_old = all(s.data.get(c) == committed.get(c) for c in rows)
        if got_new:
            committed.update(blobs)
        if not (got_new or got_old):
            failures.append((trial, None, "half a transaction: %s" % sorted(c for c in rows if s.data.get(c) == blobs[c])))
            committed.update({c: s.data.get(c) for c in rows})
        outcomes["new" if got_new else "old"] += 1
        if (trial + 1) % 50 == 0:
            print("# %s: %d kill trials done, %d failures so far" % (K, trial + 1, len(failures)), flush=True)
        lost = [c for c in committed if c not in rows and s.data.get(c) != committed[c]]
        if s.bad or lost or not s.counts_ok()[0]:
            failures.append((trial, None, "bad %s lost %s counts %s" % (s.bad[:5], lost[:5], s.counts_ok()[1])))
    ok(not failures, "%s: %d kill -9 trials (%d of them plain INSERTs of new chunks) between %.0f and %.0f ms after "
       "start (COMMIT from %.0f ms): no committed chunk lost, no half transaction, entries agree with objects, counts "
       "equal the pages; %d rolled forward, %d never committed, %d reads refused by a reader naming the chunk"
       % (K, TRIALS, plains, start * 200, end * 1100, start * 1000, outcomes["new"], outcomes["old"], seen_errors),
       failures[:5])
    ok(outcomes["new"] and outcomes["old"], "%s: the kills fell both before and after the commit point" % K, outcomes)
    out, err, rc = run(t, "SELECT vdsql_config('stage_ttl', '0');\nSELECT vds_repair(%s, %s);" % (q(url), q(L)))
    ok(rc == 0 and not staging(t), "%s: vds_repair deletes what killed transactions staged (stage_ttl 0)" % K,
       [err, staging(t)[:5]])
    ok(not leftovers(t), "%s: and what they put at chunk keys that no entry names (stage_ttl 0)" % K, leftovers(t)[:5])
    check(t, committed, "%s, after the kill trials and a repair" % K)

    # four writers at once, on the same chunks and on different ones
    rounds_bad = []
    for rnd in range(ROUNDS):
        same = rng.sample(pool, 40)
        blobs = [{c: data(rng) for c in same} for _ in range(4)]
        ps = [popen(t, insert_script(url, same, "OR REPLACE", files_of(tmp, b))) for b in blobs]
        res = [(p.wait(), p.stderr.read()) for p in ps]
        s = State(t)
        winners = [i for i in range(4) if all(s.data.get(c) == blobs[i][c] for c in same)]
        if any(r for r, _ in res) or len(winners) != 1 or s.bad or not s.counts_ok()[0]:
            rounds_bad.append(("same", rnd, [(r, e[:150]) for r, e in res], winners, s.bad[:5], s.counts_ok()[1],
                               (t.get(NAME, ".vdsql/%s/commit" % L)[0] or b"")[:300]))
        for i in winners:
            committed.update(blobs[i])
        # different chunks (both pages)
        diff = rng.sample([c for c in pool if c not in same], 40)
        parts = [diff[i::4] for i in range(4)]
        blobs = [{c: data(rng) for c in part} for part in parts]
        ps = [popen(t, insert_script(url, part, "OR REPLACE", files_of(tmp, b))) for part, b in zip(parts, blobs)]
        res = [(p.wait(), p.stderr.read()) for p in ps]
        for b in blobs:
            committed.update(b)
        s = State(t)
        lost = [c for c in committed if s.data.get(c) != committed[c]]
        if any(r for r, _ in res) or lost or s.bad or not s.counts_ok()[0]:
            rounds_bad.append(("different", rnd, [(r, e[:150]) for r, e in res], lost[:5], s.bad[:5], s.counts_ok()[1],
                               (t.get(NAME, ".vdsql/%s/commit" % L)[0] or b"")[:300]))
    ok(not rounds_bad, "%s: %d rounds of 4 writer processes: on the same 40 chunks all commit and every chunk is the "
       "last committer's (object and entry alike); on 10 different chunks each, all are kept" % (K, ROUNDS),
       rounds_bad[:3])
    # plain INSERTs of the same new chunks at once: one writer wins, the others are refused
    fresh = sorted(set(range(NCHUNKS)) - set(committed))[:20]
    blobs = [{c: data(rng) for c in fresh} for _ in range(4)]
    ps = [popen(t, insert_script(url, fresh, "", files_of(tmp, b))) for b in blobs]
    res = [(p.wait(), p.stderr.read()) for p in ps]
    s = State(t)
    winners = [i for i in range(4) if all(s.data.get(c) == blobs[i][c] for c in fresh)]
    refused = [e for r, e in res if r and ("written already" in e or "written by another writer" in e)]
    ok(len(winners) == 1 and res[winners[0]][0] == 0 and len(refused) == 3,
       "%s: 4 plain INSERTs of the same 20 new chunks: one commits, 3 are refused with a constraint error" % K,
       [winners, [e[:160] for _, e in res]])
    if winners:
        committed.update(blobs[winners[0]])
    check(t, committed, "%s, at the end" % K)
    ok(not staging(t), "%s: nothing left in the staging folder" % K, staging(t)[:5])
    ok(not leftovers(t), "%s: no object at a key that no entry names (the refused plain INSERTs took theirs back)"
       % K, leftovers(t)[:5])
    if K == "file":
        left = os.listdir(os.path.join(t.url(NAME), ".vdsql", L))
        ok(left == ["commit"], "file: no transaction's folder is left either, only the commit record", left)


def repair_rules(t, tmp):
    """vds_repair adopts only objects that can be the chunk; LayerStatus counts that
    disagree with the pages are reported by vds_audit and set right by vds_repair."""
    K = t.kind
    rng = random.Random(22)
    lp = write_blob(tmp, json.dumps(layout().json()).encode())
    desc = struct.pack("<6i", 2, 32, 32, 1, 1, 1)  # section 9: 2-D, 32 x 32, U8, 1 component
    datah = lambda: base64.b64encode(rng.randbytes(7) + b"\x05").decode()  # noqa: E731 (never special)
    for method, cases in (
            ("RLE", [(5, rng.randbytes(100), datah(), "bad_object"),
                     (6, desc + mkvds.rle_encode(data(rng), 1), datah(), "orphan_object"),
                     (7, desc + mkvds.rle_encode(data(rng), 1), "//////////8=", "bad_object"),
                     (8, b"", base64.b64encode(struct.pack("<f", 2.0) + b"\x01" * 4).decode(), "orphan_object"),
                     (9, struct.pack("<6i", 2, 16, 32, 1, 1, 1) + mkvds.rle_encode(data(rng)[:512], 1), datah(),
                      "bad_object"),
                     (10, b"", datah(), "bad_object"),
                     (11, desc + mkvds.rle_encode(data(rng), 1), (datah(), datah()), "orphan_object")]),
            ("None", [(5, rng.randbytes(100), datah(), "bad_object"),
                      (6, desc + data(rng), datah(), "orphan_object"),
                      (7, desc + data(rng)[:1000], datah(), "bad_object")])):
        name = "rep" + method
        url = t.url(name)
        one = {0: data(rng)}
        out, err, rc = run(t, "SELECT vds_create(%s, readfile(%s), %s);\n%s" % (
            q(url), q(lp), q(method), insert_script(url, [0], "", files_of(tmp, one))))
        for c, body, meta, _ in cases:  # two values: a second key that ends in vdschunkmetadata too
            m = {"vdschunkmetadata": meta} if isinstance(meta, str) else {"vdschunkmetadata": meta[0],
                                                                           "old_vdschunkmetadata": meta[1]}
            t.put_raw(name, "%s/%d" % (L, c), body, m)
        out, err, rc = run(t, "SELECT chunk, verdict, detail IS NOT NULL FROM vds_audit(%s, %s) WHERE chunk > 0;"
                           % (q(url), q(L)))
        want = ["%d|%s|%d" % (c, v, v == "bad_object" or not isinstance(m, str)) for c, _, m, v in cases]
        ok(rc == 0 and out == want, "%s %s: objects that cannot be their chunk are bad_object, with a detail saying "
           "why (a garbage object, a NoValue hash on data, a descriptor of other dimensions, an empty object with a "
           "data hash%s); two keys ending in vdschunkmetadata that disagree are said in detail, never adopted"
           % (K, method, ", a wrong size" if method == "None" else ""), out + [err])
        adopt = [c for c, _, m, v in cases if v == "orphan_object" and isinstance(m, str)]
        out, err, rc = run(t, "SELECT vds_repair(%s, %s);\nSELECT chunk, verdict FROM vds_audit(%s, %s) "
                              "WHERE verdict <> 'ok';" % (q(url), q(L), q(url), q(L)))
        ok(rc == 0 and out == [str(len(adopt))] + ["%d|%s" % (c, v) for c, _, _, v in cases if c not in adopt],
           "%s %s: vds_repair adopts only chunks %s: %d entries; the others stay bad_object"
           % (K, method, adopt, len(adopt)), out + [err])
        st = json.loads(t.get(name, "LayerStatus")[0])
        lay = [x for x in st if x["layerName"] == L][0]
        ok(lay["validChunkCount"] == 1 + len(adopt), "%s %s: validChunkCount counts the adopted chunks: %d"
           % (K, method, lay["validChunkCount"]), lay)
    # counts that disagree with the pages: reported, then set right
    name = "repRLE"
    url = t.url(name)
    st = json.loads(t.get(name, "LayerStatus")[0])
    good = [x for x in st if x["layerName"] == L][0]
    right = (good["validChunkCount"], good["serializedSize"], good["uncompressedSize"])
    bad = [dict(x, validChunkCount=x["validChunkCount"] + 5, serializedSize=x["serializedSize"] + 7)
           if x["layerName"] == L else x for x in st]
    t.put_raw(name, "LayerStatus", json.dumps(bad).encode())
    out, err, rc = run(t, "SELECT quote(chunk), verdict, detail FROM vds_audit(%s, %s) WHERE verdict = "
                          "'count_mismatch';\nSELECT vds_repair(%s, %s);\nSELECT count(*) FROM vds_audit(%s, %s) "
                          "WHERE verdict = 'count_mismatch';" % (q(url), q(L), q(url), q(L), q(url), q(L)))
    want = ["NULL|count_mismatch|LayerStatus validChunkCount is %d; the pages add up to %d" % (right[0] + 5, right[0]),
            "NULL|count_mismatch|LayerStatus serializedSize is %d; the pages add up to %d" % (right[1] + 7, right[1]),
            "2", "0"]
    st = json.loads(t.get(name, "LayerStatus")[0])
    now = [x for x in st if x["layerName"] == L][0]
    ok(rc == 0 and out == want and (now["validChunkCount"], now["serializedSize"], now["uncompressedSize"]) == right,
       "%s: wrong LayerStatus counts are count_mismatch rows (chunk NULL); vds_repair sets them from the pages" % K,
       out + [err, now])
    # a commit record that is not one: every writer says so, naming it, and writes nothing
    rec = ".vdsql/%s/commit" % L
    good_rec = t.get(name, rec)[0]
    before = State(t).entries
    for bad_rec in (b"{not json", b'{"format":"vdsql-openvds-commit-1","state":"commit","chunks":[[1e300,"x",1]]}'):
        t.put_raw(name, rec, bad_rec)
        out, err, rc = run(t, insert_script(url, [40], "OR REPLACE", files_of(tmp, {40: data(rng)})))
        ok(rc != 0 and "%s/%s: not a vdsql commit record" % (url, rec) in err and State(t).entries == before,
           "%s: a damaged commit record (%r...) is refused by name, nothing written" % (K, bad_rec[:12]), err)
    t.put_raw(name, rec, good_rec)
    out, err, rc = run(t, insert_script(url, [40], "OR REPLACE", files_of(tmp, {40: data(rng)})))
    ok(rc == 0 and 40 in State(t).entries, "%s: with the record restored, writes go on" % K, err)


sys.exit(run_stores("vdsql-rel.", lambda t, tmp: (suite(t, tmp), repair_rules(t, tmp)), STORES))
