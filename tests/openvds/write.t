#!/usr/bin/python3
"""OpenVDS writes, as TAP: vds_create and INSERT INTO a vds_chunks named table, on local
files, on S3 (Ceph radosgw on 127.0.0.1) and on Azure Blob (Azurite on 127.0.0.1; read
back with tests/azclient.py, Shared Key signed in Python, not by vdsql).

Everything vdsql writes is checked by independent readers: LayerStatus with Python's
json against the spec's rules (section 3: keys as in the spec's example, chunk counts by
the section-6 formulas of tests/gen/mkvds.py, 1024-entry pages, a directory of -1);
chunk objects decoded here (the 24-byte descriptor, zlib, RLE compared byte for byte
with mkvds's encoder) with their vdschunkmetadata, read from xattrs or with boto3 and
`aws s3api head-object` (Debian's awscli); pages with the layout of section 4 (mkvds.py
dump for local files). Data read back through vds_chunk_data equals what was inserted.
Constant chunks store no object. Exact request counts from vdsql_stats(): N data chunks
in one transaction of INSERT OR REPLACE over P new pages cost N PUTs into the
transaction's staging folder, then at COMMIT the layer's commit record and LayerStatus
read, the record written (the commit point), N copies into place, P page PUTs, the
LayerStatus PUT, the N staged objects deleted and the record set free (a stored page is
also read, once when a plain INSERT checks it and once at COMMIT; docs/openvds.md, "How
writes stay whole"). Deletes are one request an object on files, and batches on S3
(DeleteObjects, 1,000 keys a request) and Azure (Blob Batch, 256 a request):
2N + D(N) + P + 5. A plain INSERT of chunks no entry names puts each object at its key
(create-only, carrying its transaction's id as vdsqltx), nothing staged: N + P + 5.
A plain INSERT of a written chunk is refused (also twice in one transaction); INSERT OR
REPLACE replaces it. ROLLBACK leaves every object byte-identical (staging deleted); two
writers interleaved keep both entries (the commit record orders them: no lost race);
refused inserts write nothing. tests/openvds/reliability.t kills and races writers.
   env: SO, SQLITE3 (tests/taplib.py)"""
import base64
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "gen"))
import mkvds  # noqa: E402
from taplib import Nginx, ok, plan, shell_args  # noqa: E402
from vdstarget import AWS_VARS, Target, decode_object, each_store, q, run, status_of, write_blob  # noqa: E402

AWS = "/usr/bin/aws"  # Debian's awscli
L0 = "Dimensions_012LOD0"
SPEC_KEYS = None  # the keys of a page-bearing layer in the spec's example LayerStatus



def deletes(kind, n):
    """Requests that delete n staged objects: one each on files, batches on S3 and Azure."""
    return n if kind == "file" else -(-n // (1000 if kind == "s3" else 256))

def layout3d():
    return mkvds.Layout([90, 70, 50], brick=32, neg=4, pos=4, lod_levels=1,
                        channels=[dict(mkvds.channel("Amplitude", "R32"), allowLossyCompression=True),
                                  mkvds.channel("Trace", "U8", mapping="PerTrace")])


def layout2d():
    """1 KiB chunks (32 x 32 U8, no margins): a batch of 256 inserts is cheap."""
    return mkvds.Layout([32 * 17, 32 * 16], brick=32, neg=0, pos=0, mult2d=1, channels=[mkvds.channel("Amplitude", "U8")])


def stats_sql(t):
    return "SELECT 'stats', requests FROM vdsql_stats() WHERE backend = '%s';" % t.kind


def stat_of(lines):
    return [int(x.split("|")[1]) for x in lines if x.startswith("stats|")]


def page_entries(t, name, st):
    """{chunk: hash} of every non-zero entry, pages decoded here (section 4)."""
    out = {}
    for p, stored in enumerate(st["pageDirectory"]):
        if stored < 0:
            continue
        body, _ = t.get(name, "%s/ChunkMetadata/%d" % (st["layerName"], stored))
        ok(len(body) == st["chunkMetadataPageSize"] * 8, "%s: page %d is full-size (%d bytes)" % (t.kind, p, len(body)))
        for i in range(len(body) // 8):
            (h,) = struct.unpack_from("<Q", body, i * 8)
            if h:
                out[p * st["chunkMetadataPageSize"] + i] = h
    return out


def chunk_bytes(lay, chan, lod, chunk, fmt_bytes):
    g = lay.grid((0, 1, 2), lod, chan)
    sizes, nd = lay.chunk_size(g, lay.position(g, chunk), lod)
    return sizes, nd, sizes[0] * sizes[1] * sizes[2] * fmt_bytes


def expected_status(lay, method):
    """LayerStatus by the spec: sections 1 (which layers), 3 (fields), 6 (chunk counts)."""
    out = []
    for ci, ch in enumerate(lay.channels):
        lods = lay.lod_levels + 1 if ch["renderable"] else 1
        for lod in range(lods):
            g = lay.grid((0, 1, 2), lod, ch)
            count = 1
            for (_, _, c, _, _, _) in g:
                count *= c
            lossy = ch["allowLossyCompression"] and ch["renderable"] and ch["format"] == "Format_R32"
            tol = 0.0 if not lossy else struct.unpack("<f", struct.pack("<f", 0.01))[0] if lod == 0 else 2.0 * 2 ** min(lod, 2)
            out.append({"adaptiveLevelSizes": [0] * 16, "channelName": ch["name"], "chunkCount": count,
                        "chunkMetadataByteSize": 8, "chunkMetadataPageSize": 1024, "compressionMethod": method,
                        "compressionTolerance": tol, "dimensionGroup": "Dimensions_012",
                        "hasChunkMetadataPages": True,
                        "layerName": ("" if ci == 0 else ch["name"]) + "Dimensions_012LOD%d" % lod, "lod": lod,
                        "pageDirectory": [-1] * ((count - 1) // 1024 + 1), "produceStatus": "Normal",
                        "serializedSize": 0, "uncompressedSize": 0, "validChunkCount": 0})
    return out


def suite(t, tmp):
    K = t.kind
    lay = layout3d()
    lay_text = json.dumps(lay.json(), indent=4, sort_keys=True)
    lp = write_blob(tmp, lay_text.encode())
    rng = random.Random(7)

    for method in ("Zip", "RLE", "None"):
        name = "w%s" % method
        url = t.url(name)
        out, err, rc = run(t, "SELECT vds_create(%s, readfile(%s), %s);" % (q(url), q(lp), q(method)))
        want = expected_status(lay, method)
        ok(rc == 0 and out == [str(len(want))], "%s %s: vds_create returns the layer count %d" % (K, method, len(want)),
           out + [err])
        st = status_of(t, name)
        ok(st == want, "%s %s: LayerStatus (Python json) is what the spec's sections 1, 3 and 6 give" % (K, method),
           json.dumps(st)[:1500])
        ok(all(set(x) == SPEC_KEYS for x in st), "%s %s: every layer has the keys of the spec's example" % (K, method),
           [sorted(set(x) ^ SPEC_KEYS) for x in st])
        body, meta = t.get(name, "VolumeDataLayout")
        ok(body == lay_text.encode(), "%s %s: VolumeDataLayout is the layout as given" % (K, method))
        out, err, rc = run(t, "SELECT layer, chunk_count, compression FROM vds_layers(%s);" % q(url))
        ok(rc == 0 and out == ["%s|%d|%s" % (x["layerName"], x["chunkCount"], method) for x in want],
           "%s %s: vds_layers reads it" % (K, method), out + [err])

        # N chunks in one transaction: data, one constant, one chunk twice (the last wins)
        ch = lay.channels[0]
        g = lay.grid((0, 1, 2), 0, ch)
        total = want[0]["chunkCount"]
        chunks = list(range(total))
        const_chunk, twice = chunks[3], chunks[5]
        datas, files = {}, {}
        for c in chunks:
            sizes, nd, nbytes = chunk_bytes(lay, ch, 0, c, 4)
            if c == const_chunk:
                datas[c] = struct.pack("<f", 1.5) * (nbytes // 4)
            elif c % 2:
                datas[c] = mkvds.samples("R32", nbytes // 4, c)  # runs and literals (RLE)
            else:
                datas[c] = rng.randbytes(nbytes)
            files[c] = write_blob(tmp, datas[c])
        first = write_blob(tmp, b"\0" * len(datas[twice]))
        ins = "".join("INSERT OR REPLACE INTO t(chunk, data) VALUES (%d, readfile(%s));\n" % (c, q(files[c]))
                      for c in chunks)
        script = ("CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\nSELECT vdsql_config('stats', 'reset');\n"
                  "BEGIN;\nINSERT INTO t(chunk, data) VALUES (%d, readfile(%s));\n%sCOMMIT;\n%s"
                  % (q(url), q(L0), twice, q(first), ins, stats_sql(t)))
        out, err, rc = run(t, script)
        ndata = total - 1
        pages = 1
        nreq = 2 * ndata + deletes(K, ndata) + pages + 5
        ok(rc == 0 and stat_of(out) == [nreq],
           "%s %s: %d chunks (one constant) in one transaction: %d requests = %d staged PUTs + the commit record and "
           "LayerStatus read + the record written + %d copies + %d page PUT (new: create-only, no read) + LayerStatus "
           "PUT + %d requests deleting the %d staged objects + the record freed"
           % (K, method, total, nreq, ndata, ndata, pages, deletes(K, ndata), ndata), out + [err])
        stage = [k for k in t.keys(name) if k.startswith(".vdsql/") and not k.endswith("/commit")]
        ok(not stage, "%s %s: nothing is left in the staging folder after COMMIT" % (K, method), stage[:5])
        st = status_of(t, name)
        ents = page_entries(t, name, st[0])
        ok(sorted(ents) == chunks, "%s %s: every chunk has a page entry" % (K, method), sorted(ents))
        ok(ents.get(const_chunk) == mkvds.constant_hash(1.5),
           "%s %s: the constant chunk's entry is the constant hash of 1.5" % (K, method), hex(ents.get(const_chunk, 0)))
        objs = {int(k.split("/")[1]): k for k in t.keys(name) if k.startswith(L0 + "/") and "ChunkMetadata" not in k}
        ok(sorted(objs) == [c for c in chunks if c != const_chunk], "%s %s: objects for the data chunks only "
           "(the constant chunk has none)" % (K, method), sorted(objs))
        hashes = [h for c, h in ents.items() if c != const_chunk]
        ok(len(set(hashes)) == len(hashes) and all(h not in (0, 2 ** 64 - 1) and h >> 32 != 0x01010101 for h in hashes),
           "%s %s: data hashes are distinct and none is special" % (K, method))
        bad, serialized, uncompressed = [], 0, 0
        for c in sorted(objs):
            body, meta = t.get(name, objs[c])
            serialized += len(body)
            uncompressed += len(datas[c])
            sizes, nd, nbytes = chunk_bytes(lay, ch, 0, c, 4)
            desc, raw = decode_object(body, method)
            m = meta.get("vdschunkmetadata")
            if desc != (nd, sizes[0], sizes[1], sizes[2], 3, 1) or raw != datas[c]:
                bad.append((c, "content", desc))
            if m is None or base64.b64decode(m) != struct.pack("<Q", ents[c]):
                bad.append((c, "metadata", m))
            if method == "RLE" and body[24:] != mkvds.rle_encode(datas[c], 4):
                bad.append((c, "rle differs from mkvds's encoder"))
        ok(not bad, "%s %s: every object decoded here (descriptor, %s) equals its data; vdschunkmetadata is base64 of "
           "its page entry" % (K, method, method), bad[:5])
        ok(st[0]["validChunkCount"] == total and st[0]["serializedSize"] == serialized
           and st[0]["uncompressedSize"] == uncompressed and st[0]["pageDirectory"] == [0],
           "%s %s: LayerStatus counts: valid %d, serialized %d, uncompressed %d, pageDirectory [0]"
           % (K, method, total, serialized, uncompressed), json.dumps(st[0]))
        ok(st[1:] == want[1:], "%s %s: the other layers are untouched" % (K, method))
        back = os.path.join(tmp, "back")
        os.makedirs(back, exist_ok=True)
        rd = "".join("SELECT writefile(%s, vds_chunk_data(%s, %s, %d));\n" % (q(os.path.join(back, str(c))), q(url),
                                                                             q(L0), c) for c in chunks)
        out, err, rc = run(t, rd)
        diff = [c for c in chunks if open(os.path.join(back, str(c)), "rb").read() != datas[c]]
        ok(rc == 0 and not diff, "%s %s: vds_chunk_data reads every chunk back as inserted" % (K, method), [err, diff])
        out, err, rc = run(t, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\n"
                              "SELECT count(*), sum(status = 'data'), sum(status = 'constant'), "
                              "sum(length(data) = %d) FROM t;" % (q(url), q(L0), len(datas[0])), )
        ok(rc == 0 and out == ["%d|%d|1|%d" % (total, total - 1, sum(len(datas[c]) == len(datas[0]) for c in chunks))],
           "%s %s: SELECT on the named table: statuses and the data column" % (K, method), out + [err])
        if K == "file" and method == "Zip":
            d = json.loads(subprocess.run(["/usr/bin/python3", os.path.join(top, "tests/gen/mkvds.py"), "dump", url],
                                          capture_output=True, text=True, check=True).stdout)
            ok({int(k): int(v[0], 16) for k, v in d[L0]["entries"].items()} == ents and d[L0]["pages"] == {"0": 8192},
               "file: mkvds.py dump reads the same entries and one 8192-byte page")
        if K == "s3" and method == "Zip":
            c = min(objs)
            e = {k: v for k, v in os.environ.items() if k not in AWS_VARS}
            e.update(t.srv.env)
            r = subprocess.run([AWS, "--endpoint-url", t.srv.endpoint, "s3api", "head-object", "--bucket", t.bucket, "--key", "%s/%s" % (name, objs[c])],
                               capture_output=True, text=True, env=e)
            try:
                h = json.loads(r.stdout)
            except ValueError:
                h = {}
            ok(r.returncode == 0 and h.get("Metadata", {}).get("vdschunkmetadata") == base64.b64encode(
                struct.pack("<Q", ents[c])).decode() and h.get("ContentLength") == len(t.get(name, objs[c])[0]),
               "s3: aws s3api head-object (Debian awscli) shows the object's size and vdschunkmetadata", r.stdout + r.stderr)

    # ROLLBACK: pages and LayerStatus byte-identical
    name = "wZip"
    url = t.url(name)
    before = t.snapshot(name)
    f = write_blob(tmp, mkvds.samples("R32", len(datas[0]) // 4, 99))
    out, err, rc = run(t, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\nBEGIN;\n"
                          "INSERT OR REPLACE INTO t(chunk, data) VALUES (0, readfile(%s));\nROLLBACK;\n"
                          % (q(url), q(L0), q(f)))
    after = t.snapshot(name)
    ok(rc == 0 and after == before, "%s: ROLLBACK leaves every object (chunks, pages, LayerStatus) byte-identical, "
       "its staged object deleted" % K, [err, sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))])
    # SQL semantics: a plain INSERT of a written chunk is a constraint error, OR IGNORE keeps it
    out, err, rc = run(t, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\n"
                          "INSERT INTO t(chunk, data) VALUES (0, readfile(%s));\n" % (q(url), q(L0), q(f)))
    ok(rc != 0 and "chunk 0 of layer %s is written already (INSERT OR REPLACE overwrites it" % L0 in err
       and t.snapshot(name) == before, "%s: a plain INSERT of a written chunk is refused, nothing written: %s"
       % (K, err.strip()[:160]))
    out, err, rc = run(t, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\n"
                          "INSERT OR IGNORE INTO t(chunk, data) VALUES (0, readfile(%s));\nSELECT changes();\n"
                          % (q(url), q(L0), q(f)))
    ok(rc == 0 and out == ["0"] and t.snapshot(name) == before,
       "%s: INSERT OR IGNORE of a written chunk keeps it: 0 rows changed, nothing written" % K, out + [err])

    # refused inserts: a clear error, nothing written
    n0 = len(datas[0])
    cases = [("data of the wrong length", "INSERT INTO t(chunk, data) VALUES (0, zeroblob(%d));" % (n0 - 4),
              "chunk 0 of layer %s takes %d bytes" % (L0, n0)),
             ("a chunk out of range", "INSERT INTO t(chunk, data) VALUES (%d, zeroblob(%d));" % (total, n0),
              "layer %s has chunks 0 to %d, not %d" % (L0, total - 1, total)),
             ("a negative chunk", "INSERT INTO t(chunk, data) VALUES (-1, zeroblob(%d));" % n0, "has chunks 0 to"),
             ("a text data", "INSERT INTO t(chunk, data) VALUES (0, 'abc');", "data must be a blob"),
             ("a derived column", "INSERT INTO t(chunk, status, data) VALUES (0, 'data', zeroblob(%d));" % n0,
              "INSERT takes chunk and data only"),
             ("a good row then a bad one in one statement",
              "INSERT OR REPLACE INTO t(chunk, data) VALUES (1, readfile(%s)), (2, zeroblob(3));" % q(f), "takes")]
    for what, ins, msg in cases:
        out, err, rc = run(t, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\n%s\n" % (q(url), q(L0), ins))
        ok(rc != 0 and msg in err and t.snapshot(name) == before,
           "%s: %s is refused (%s), nothing written" % (K, what, err.strip()[:160]))
    out, err, rc = run(t, "BEGIN;\nCREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\n"
                          "INSERT OR REPLACE INTO t(chunk, data) VALUES (1, readfile(%s)), (2, zeroblob(3));\n"
                          "COMMIT;\n" % (q(url), q(L0), q(f)))
    errs = [x for x in err.split("\n") if x]
    ok(rc != 0 and len(errs) == 1 and "takes" in errs[0] and t.snapshot(name) == before,
       "%s: in a transaction, a statement failing after a good row is taken back whole (its staged object "
       "deleted), COMMIT succeeds: nothing written, nothing left" % K, err)
    out, err, rc = run(t, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, 'NoSuchLayer');" % q(url))
    ok(rc != 0 and 'no layer "NoSuchLayer"' in err, "%s: a missing layer is refused: %s" % (K, err.strip()[:120]))
    out, err, rc = run(t, "SELECT vds_create(%s, readfile(%s), 'Zip');" % (q(url), q(lp)))
    ok(rc != 0 and "a dataset exists there already" in err and t.snapshot(name) == before,
       "%s: vds_create over an existing dataset is refused, nothing changed: %s" % (K, err.strip()[:120]))
    for comp, msg in (("Wavelet", "vdsql writes None, RLE or Zip"), ("zstd", "vdsql writes None, RLE or Zip")):
        out, err, rc = run(t, "SELECT vds_create(%s, readfile(%s), %s);" % (q(t.url("wbad")), q(lp), q(comp)))
        ok(rc != 0 and msg in err and not t.keys("wbad"), "%s: compression %s refused, nothing written" % (K, comp), err)
    bad_layout = json.dumps(dict(lay.json(), layoutDescriptor=dict(lay.json()["layoutDescriptor"], negativeMargin=16)))
    bl = write_blob(tmp, bad_layout.encode())
    out, err, rc = run(t, "SELECT vds_create(%s, readfile(%s), 'None');" % (q(t.url("wbad")), q(bl)))
    ok(rc != 0 and "margins" in err and not t.keys("wbad"), "%s: a bad layout is refused, nothing written: %s"
       % (K, err.strip()[:120]))
    # a wavelet layer (LayerStatus edited here): refused
    wl = "wWave"
    out, err, rc = run(t, "SELECT vds_create(%s, readfile(%s), 'None');" % (q(t.url(wl)), q(lp)))
    st = status_of(t, wl)
    st[0].update(compressionMethod="Wavelet", chunkMetadataByteSize=28)
    t.put_raw(wl, "LayerStatus", json.dumps(st).encode())
    wbefore = t.snapshot(wl)
    out, err, rc = run(t, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\nINSERT INTO t(chunk, data) VALUES "
                          "(0, zeroblob(%d));" % (q(t.url(wl)), q(L0), n0))
    ok(rc != 0 and "Wavelet-compressed" in err and t.snapshot(wl) == wbefore,
       "%s: a wavelet layer is refused, nothing written: %s" % (K, err.strip()[:140]))

    # two writers interleaved on one page: both keep their entries, the lost race retried
    lay2 = layout2d()
    l2 = write_blob(tmp, json.dumps(lay2.json()).encode())
    name2 = "wRace"
    url2 = t.url(name2)
    run(t, "SELECT vds_create(%s, readfile(%s), 'RLE');" % (q(url2), q(l2)))
    L2 = "Dimensions_01LOD0"
    st = status_of(t, name2)
    ok(st[0]["layerName"] == L2 and st[0]["chunkCount"] == 17 * 16 and st[0]["dimensionGroup"] == "Dimensions_01",
       "%s: a 2D layout gets one Dimensions_01 layer of 17 x 16 chunks" % K, json.dumps(st)[:300])
    blobs2 = {c: rng.randbytes(1024) for c in range(257)}
    f2 = {c: write_blob(tmp, b) for c, b in blobs2.items()}
    marker = os.path.join(tmp, "marker-%s" % K)
    e = {k: v for k, v in os.environ.items() if k not in AWS_VARS}
    e.update(t.env)
    a = subprocess.Popen(shell_args(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=e)
    # 256 inserts fill one upload batch: A uploads them and reads page 0 and LayerStatus
    a.stdin.write(".mode list\nCREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\n"
                  "SELECT vdsql_config('stats', 'reset');\nBEGIN;\n%sSELECT writefile(%s, 'x');\n"
                  % (q(url2), q(L2), "".join("INSERT INTO t(chunk, data) VALUES (%d, readfile(%s));\n" % (c, q(f2[c]))
                                             for c in range(256)), q(marker)))
    a.stdin.flush()
    t0 = time.time()
    while not os.path.exists(marker) and time.time() - t0 < 60:
        time.sleep(0.05)
    # B commits chunk 256 (same page) meanwhile
    out, err, rc = run(t, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\n"
                          "INSERT INTO t(chunk, data) VALUES (256, readfile(%s));\n" % (q(url2), q(L2), q(f2[256])))
    ok(rc == 0, "%s: writer B commits while A's transaction is open" % K, err)
    aout, aerr = a.communicate("COMMIT;\n%s" % stats_sql(t), timeout=120)
    st = status_of(t, name2)
    ents = page_entries(t, name2, st[0])
    ok(a.returncode == 0 and sorted(ents) == list(range(257)),
       "%s: after both commits the page holds A's 256 entries and B's" % K, [aerr, len(ents)])
    ok(st[0]["validChunkCount"] == 257, "%s: LayerStatus counts both writers: validChunkCount 257" % K,
       st[0]["validChunkCount"])
    # A: 256 create-only PUTs at the chunks' keys (plain INSERTs of chunks no entry names;
    # its page was new when it opened: nothing read); at COMMIT the commit record,
    # LayerStatus and B's page are read fresh, so nothing races: the record written, the
    # page and LayerStatus put, the record freed. Nothing staged, copied or deleted.
    nreq = 256 + 7
    ok(stat_of(aout.split("\n")) == [nreq],
       "%s: writer A read B's commit under the commit record, no lost race: %d requests (256 objects put at their "
       "keys, nothing staged)" % (K, nreq), aout + aerr)
    metas = [t.get(name2, "%s/%d" % (L2, c))[1] for c in (0, 255)]
    ok(all(m and m.get("vdsqltx") and len(m["vdsqltx"]) == 16 for m in metas),
       "%s: an object a plain INSERT put at its key carries its transaction's id (vdsqltx)" % K, metas)
    # a second transaction of the same kind on the now stored page: the page is read
    out, err, rc = run(t, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\nSELECT vdsql_config('stats', 'reset');\n"
                          "INSERT INTO t(chunk, data) VALUES (257, readfile(%s)), (258, readfile(%s));\n%s"
                          % (q(url2), q(L2), q(f2[0]), q(f2[1]), stats_sql(t)))
    nreq = 2 + 7 + 1
    ok(rc == 0 and stat_of(out) == [nreq],
       "%s: 2 new chunks into a stored page: %d requests (the page read by INSERT's check, 2 PUTs at their keys, the "
       "record, LayerStatus and the page read at COMMIT, the record written, the page and LayerStatus put, the "
       "record freed)" % (K, nreq), out + [err])
    out, err, rc = run(t, "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\nBEGIN;\n"
                          "INSERT INTO t(chunk, data) VALUES (270, readfile(%s));\n"
                          "INSERT INTO t(chunk, data) VALUES (270, readfile(%s));\nCOMMIT;\n"
                          "SELECT hex(vds_chunk_data(%s, %s, 270)) = %s;\n"
                          % (q(url2), q(L2), q(f2[2]), q(f2[3]), q(url2), q(L2), q(blobs2[2].hex().upper())))
    ok("chunk 270 of layer %s is written already in this transaction" % L2 in err and out == ["1"],
       "%s: a plain INSERT of a chunk inserted earlier in the same transaction is refused; the first one commits"
       % K, out + [err])
    out, err, rc = run(t, "".join("SELECT %d, hex(vds_chunk_data(%s, %s, %d)) = %s;\n" % (c, q(url2), q(L2), c,
                                                                                         q(blobs2[c].hex().upper()))
                                  for c in (0, 100, 255, 256)))
    ok(rc == 0 and all(x.endswith("|1") for x in out) and len(out) == 4,
       "%s: both writers' chunks read back identically" % K, out + [err])


def constants(t, tmp):
    """Constant chunks (section 4) in other formats: the U8 NoValue marker gives the NoValue
    hash, another U8 value its dequantized float, an R64 value a float cannot hold is
    stored as data (a constant would not read back bit for bit)."""
    K = t.kind
    lay = mkvds.Layout([40, 30, 20], brick=32, neg=4, pos=4,
                       channels=[mkvds.channel("Amplitude", "U8", use_no_value=True, no_value=-1.0, scale=0.5,
                                               offset=10.0),
                                 dict(mkvds.channel("Depth", "R64"), renderable=False)])
    name = "wConst"
    url = t.url(name)
    lp = write_blob(tmp, json.dumps(lay.json()).encode())
    out, err, rc = run(t, "SELECT vds_create(%s, readfile(%s), 'RLE');" % (q(url), q(lp)))
    ok(rc == 0 and out == ["2"], "%s: a U8 + R64 layout: 2 layers" % K, out + [err])
    n8 = 32 * 30 * 20
    g = lay.grid((0, 1, 2), 0, lay.channels[1])
    sizes, nd = lay.chunk_size(g, lay.position(g, 0), 0)
    n64 = sizes[0] * sizes[1] * sizes[2] * 8
    script = ("CREATE VIRTUAL TABLE a USING vds_chunks(%s, %s);\n"
              "CREATE VIRTUAL TABLE d USING vds_chunks(%s, 'DepthDimensions_012LOD0');\nBEGIN;\n"
              "INSERT INTO a(chunk, data) VALUES (0, readfile(%s)), (1, readfile(%s));\n"
              "INSERT INTO d(chunk, data) VALUES (0, readfile(%s)), (1, readfile(%s));\nCOMMIT;\n"
              "SELECT chunk, status, constant_value FROM a;\nSELECT chunk, status, constant_value FROM d;\n"
              % (q(url), q(L0), q(url), q(write_blob(tmp, b"\xff" * n8)),
                 q(write_blob(tmp, b"\x07" * (16 * 30 * 20))),
                 q(write_blob(tmp, struct.pack("<d", 0.1) * (n64 // 8))),
                 q(write_blob(tmp, struct.pack("<d", 0.5) * (16 * 30 * 20)))))
    out, err, rc = run(t, script)
    ok(rc == 0 and out == ["0|novalue|", "1|constant|13.5", "0|data|", "1|constant|0.5"],
       "%s: U8 255 with NoValue -> novalue; U8 7 -> constant 10 + 0.5 * 7; R64 0.1 -> data; R64 0.5 -> constant"
       % K, out + [err])
    keys = [k for k in t.keys(name) if "ChunkMetadata" not in k and "/" in k and not k.startswith(".vdsql/")]
    ok(keys == ["DepthDimensions_012LOD0/0"], "%s: only the R64 0.1 chunk has an object" % K, keys)
    out, err, rc = run(t, "SELECT hex(vds_chunk_data(%s, 'DepthDimensions_012LOD0', 0)) = %s, "
                          "hex(vds_chunk_data(%s, %s, 1)) = %s;" %
                       (q(url), q((struct.pack("<d", 0.1) * (n64 // 8)).hex().upper()), q(url), q(L0),
                        q(("07" * (16 * 30 * 20)).upper())))
    ok(rc == 0 and out == ["1|1"], "%s: both read back bit for bit" % K, out + [err])


def main():
    global SPEC_KEYS
    shared = os.environ.get("VDSQL_SHARED") or os.path.join(top, "..", "shared")
    try:  # the example of section 3 of the spec, and the real LayerStatus of the fixtures
        md = open(os.path.join(shared, "spec", "openvds.md"), encoding="utf-8").read()
        block = md[md.index("### Example (consistent with the VolumeDataLayout example above"):]
        ex = json.loads(block[block.index("```json") + 7:block.index("```", block.index("```json") + 7)])
        fixture = json.load(open(os.path.join(shared, "fixtures", "openvds", "example_LayerStatus.json")))
    except (OSError, ValueError) as e:
        ok(False, "the spec (../shared/spec/openvds.md) and fixtures (../shared/fixtures/openvds)", e)
        return plan()
    SPEC_KEYS = set(ex[0])
    ok(all(set(x) <= SPEC_KEYS for x in fixture) and all(set(x) == SPEC_KEYS for x in ex),
       "the spec's example layers all have the same keys, a superset of the fixture's (OpenVDS 2.0.x has fewer)")
    tmp = tempfile.mkdtemp(prefix="vdsql-write.")
    try:
        suite(Target("file", tmp), tmp)
        constants(Target("file", tmp), tmp)
        # http: read-only, refused before anything is sent
        root = os.path.join(tmp, "local")
        ng = Nginx(root, os.path.join(tmp, "nginx"))
        try:
            if ok(ng.started, "nginx starts", ng.error):
                before = Target("file", tmp).snapshot("wZip")
                out, err, rc = run(Target("file", tmp), "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\n"
                                   "INSERT INTO t(chunk, data) VALUES (0, zeroblob(16));" % (q(ng.url + "/wZip"), q(L0)))
                ok(rc != 0 and "http(s) URLs are read-only" in err and Target("file", tmp).snapshot("wZip") == before,
                   "http: INSERT is refused by the store, nothing written: %s" % err.strip()[:140])
                out, err, rc = run(Target("file", tmp), "SELECT vds_create(%s, '{}', 'None');" % q(ng.url + "/new"))
                ok(rc != 0 and "http(s) URLs are read-only" in err, "http: vds_create is refused: %s" % err.strip()[:120])
        finally:
            ng.stop()
        each_store(tmp, lambda t: suite(t, tmp), ("s3", "az"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


sys.exit(main())
