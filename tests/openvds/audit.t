#!/usr/bin/python3
"""vds_objects, vds_audit, vds_repair, vds_levels and vds_chunk_bytes, as TAP, on local
files, on S3 (Ceph radosgw on 127.0.0.1) and on Azure Blob (Azurite on 127.0.0.1).

The dataset (tests/gen/mkvds.py audit) is built with every verdict made on purpose: the
generator says, from the fault it put in each chunk, what the audit must report and
what a repair must write (shared/spec/openvds.md sections 4 and 5); vdsql's rows are
compared with that. The S3 copy is uploaded with boto3 (metadata as x-amz-meta-*), the
Azure copy with tests/azclient.py (x-ms-meta-*), and repaired pages are read back with
those clients and decoded here. Request counts are exact (vdsql_stats): documents +
listing pages + stored pages (+ one HEAD per chunk object on S3, whose listings carry no
metadata; none on Azure, whose listings do). vds_levels against the level rule computed here;
vds_chunk_bytes against the object's bytes, with one range GET. A repair over http is
refused and writes nothing. Progress lines on stderr: their shape, their rate, the
final line.
   env: SO, SQLITE3 (tests/taplib.py)"""
import base64
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "gen"))
from taplib import Nginx, Radosgw, json_sets, ok, plan  # noqa: E402

MKVDS = os.path.join(top, "tests", "gen", "mkvds.py")
L0, L1 = "Dimensions_012LOD0", "Dimensions_012LOD1"
COLS = ("chunk", "page_status", "page_hash", "object_hash", "object_size", "verdict")


run = json_sets  # (result sets, stderr, rc) of a script


def q(s):
    return "'" + s.replace("'", "''") + "'"


STATS = "SELECT requests, bytes FROM vdsql_stats() WHERE backend = '%s';"
RESET = "SELECT vdsql_config('stats', 'reset');\n"


def want_rows(exp, layer, after_repair=False):
    rows = []
    for c, r in sorted(exp["layers"][layer]["rows"].items(), key=lambda x: int(x[0])):
        r = dict(r, chunk=int(c))
        if after_repair and r["fixed"]:
            h = int(r["fixed"][0], 16)
            r["page_hash"] = h - (1 << 64) if h >= 1 << 63 else h
            r["page_status"] = "novalue" if h == (1 << 64) - 1 else "constant" if h >> 32 == 0x01010101 else "data"
            r["verdict"] = "ok"
        rows.append({k: r[k] for k in COLS})
    return rows


def stored_pages(root, layer):
    with open(os.path.join(root, "LayerStatus")) as f:
        st = [x for x in json.load(f) if x["layerName"] == layer][0]
    return [p for p in st["pageDirectory"] if p >= 0]


def level_rows(exp_layer_rows, root, layer):
    """vds_levels as the spec computes it, from the page entries read here."""
    with open(os.path.join(root, "LayerStatus")) as f:
        st = [x for x in json.load(f) if x["layerName"] == layer][0]
    out = []
    size = st["chunkMetadataPageSize"]
    for p, name in enumerate(st["pageDirectory"]):
        if name < 0:
            continue
        with open(os.path.join(root, layer, "ChunkMetadata", str(name)), "rb") as f:
            body = f.read()
        for i in range(len(body) // 28):
            osize, h = struct.unpack("<IQ", body[i * 28:i * 28 + 12])
            lv = body[i * 28 + 12:i * 28 + 28]
            if h == 0 or h == (1 << 64) - 1 or h >> 32 == 0x01010101:
                continue
            n = osize
            out.append({"chunk": p * size + i, "level": -1, "bytes": n})
            for k in range(16):
                if lv[k] == 0:
                    break
                n = n * lv[k] // 255
                out.append({"chunk": p * size + i, "level": k, "bytes": n})
    return out


def audit_checks(where, url, exp, root, env, backend, heads):
    """The audit and vds_objects of url (a copy of root) against the generator's word."""
    for layer in (L0, L1):
        sets, err, rc = run(RESET + "SELECT %s FROM vds_audit(%s, %s);\n%s" % (", ".join(COLS), q(url), q(layer),
                                                                                STATS % backend), env)
        got = sets[1] if rc == 0 and len(sets) == 3 else None
        want = want_rows(exp, layer)
        ok(got == want, "%s: vds_audit of %s: %d rows, every verdict as built (%s)" % (
            where, layer, len(want), ", ".join(sorted({r["verdict"] for r in want}))),
           err + "\n" + "\n".join("got  %s\nwant %s" % (g, w) for g, w in zip(got or [], want) if g != w))
        nobj = len(exp["objects"][layer])
        nchunk_obj = sum(1 for o in exp["objects"][layer] if o["chunk"] is not None)
        want_req = 2 + 1 + len(stored_pages(root, layer)) + (nchunk_obj if heads else 0)
        got_req = sets[2][0]["requests"] if got is not None else None
        ok(got_req == want_req, "%s: %s audited with %d requests: 2 documents, 1 listing page, %d stored pages%s" % (
            where, layer, want_req, len(stored_pages(root, layer)),
            ", %d HEADs (one per chunk object; %d objects listed)" % (nchunk_obj, nobj) if heads else ", no HEAD"),
           "got %s" % got_req)
    # vds_objects: every object under the layer but its pages, chunk NULL for the others
    sets, err, rc = run(RESET + "SELECT chunk, key, size, metadata, hash FROM vds_objects(%s, %s);\n%s" % (
        q(url), q(L0), STATS % backend), env)
    got = sets[1] if rc == 0 and len(sets) == 3 else []
    want = sorted(exp["objects"][L0], key=lambda o: o["key"].encode())

    def hash_of(o):  # decoded here: base64 of 8 bytes, hash 0 is no hash
        try:
            raw = base64.b64decode(o["metadata"], validate=True)
        except Exception:
            return None
        if len(raw) != 8 or raw == bytes(8):
            return None
        h = struct.unpack("<Q", raw)[0]
        return h - (1 << 64) if h >= 1 << 63 else h
    want = [dict(o, hash=hash_of(o) if o["metadata"] else None) for o in want]
    if heads:  # no HEAD for a key that is no chunk: S3 listings give no metadata
        want = [dict(o, metadata=None, hash=None) if o["chunk"] is None else o for o in want]
    ok(got == want, "%s: vds_objects of %s: %d objects in key order, metadata raw, hash decoded, %d non-chunk keys "
       "with chunk NULL" % (where, L0, len(want), sum(o["chunk"] is None for o in want)),
       err + "\n" + "\n".join("got  %s\nwant %s" % (g, w) for g, w in zip(got, want) if g != w))
    nchunk_obj = sum(1 for o in want if o["chunk"] is not None)
    want_req = 3 + (nchunk_obj if heads else 0)
    ok(sets and sets[-1][0]["requests"] == want_req,
       "%s: vds_objects: %d requests (2 documents, 1 listing page%s)" % (
           where, want_req, ", %d HEADs" % nchunk_obj if heads else ""), sets[-1] if sets else err)
    # etag and time: present on every row
    sets, err, rc = run("SELECT count(*) AS n FROM vds_objects(%s, %s) WHERE etag LIKE '\"%%\"' AND "
                        "last_modified GLOB '20[0-9][0-9]-[01][0-9]-[0-3][0-9]T*Z';" % (q(url), q(L0)), env)
    ok(rc == 0 and sets[0][0]["n"] == len(want), "%s: vds_objects: a quoted etag and an ISO 8601 UTC time on every "
       "row" % where, err or sets)
    # the join: arguments reach vds_audit through the join with vds_layers
    sets, err, rc = run("SELECT l.layer, a.chunk, a.verdict FROM vds_layers(%s) l, vds_audit(%s, l.layer) a "
                        "WHERE a.verdict <> 'ok' ORDER BY 1, 2;" % (q(url), q(url)), env)
    want = [{"layer": layer, "chunk": r["chunk"], "verdict": r["verdict"]} for layer in (L0, L1)
            for r in want_rows(exp, layer) if r["verdict"] != "ok"]
    ok(rc == 0 and sets and sets[0] == want, "%s: vds_layers(u) l, vds_audit(u, l.layer) a WHERE verdict <> 'ok': "
       "%d rows over both layers" % (where, len(want)), err or sets)


def repair_checks(where, url, exp, env, read_page, read_status):
    """vds_repair of url; the pages read back by read_page(layer, name) (independent of
    vdsql) hold the entries the generator says a repair writes; a re-audit shows only
    what cannot be repaired; a second repair changes nothing."""
    before = {x["layerName"]: x for x in read_status()}
    sets, err, rc = run("SELECT vds_repair(%s, %s) AS a, vds_repair(%s, %s) AS b;" % (q(url), q(L0), q(url), q(L1)),
                        env)
    fixes = {layer: {int(c): r for c, r in exp["layers"][layer]["rows"].items() if r["fixed"]} for layer in (L0, L1)}
    got = (sets[0][0]["a"], sets[0][0]["b"]) if rc == 0 and sets else None
    ok(got == (len(fixes[L0]), len(fixes[L1])), "%s: vds_repair returns the entries changed: %d and %d" % (
        where, len(fixes[L0]), len(fixes[L1])), err or got)
    after = {x["layerName"]: x for x in read_status()}
    for layer in (L0, L1):
        st = after[layer]
        es, ps = st["chunkMetadataByteSize"], st["chunkMetadataPageSize"]
        bad = []
        for c, r in sorted(fixes[layer].items()):
            name = st["pageDirectory"][c // ps]
            body = read_page(layer, name) if name >= 0 else b""
            e = body[(c % ps) * es:(c % ps + 1) * es]
            got = ("%016x" % struct.unpack("<Q", e[-8:] if es == 8 else e[4:12])[0],
                   struct.unpack("<I", e[:4])[0] if es == 28 else None) if len(e) == es else None
            if got != tuple(r["fixed"]):
                bad.append((c, got, r["fixed"]))
        ok(not bad, "%s: %s: the repaired entries, read back here, hold the objects' metadata%s" % (
            where, layer, " and sizes" if layer == L1 else ""), bad)
        orphans = sum(1 for r in fixes[layer].values() if r["verdict"] == "orphan_object")
        ok(st["validChunkCount"] == before[layer]["validChunkCount"] + orphans,
           "%s: %s: LayerStatus validChunkCount %d + %d repaired orphans" % (
               where, layer, before[layer]["validChunkCount"], orphans), (st["validChunkCount"]))
    # the wavelet layer's sizes (issue 22): serializedSize is the sum of its 28-byte entries'
    # object sizes, read back and decoded here, after repairs that changed sizes too
    st = after[L1]
    es, ps = st["chunkMetadataByteSize"], st["chunkMetadataPageSize"]
    total = 0
    for name in st["pageDirectory"]:
        body = read_page(L1, name) if name >= 0 else b""
        for i in range(len(body) // es):
            size, h = struct.unpack("<IQ", body[i * es:i * es + 12])
            total += size if h else 0
    changed = [c for c, r in fixes[L1].items() if r["verdict"] in ("size_mismatch", "orphan_object")]
    ok(st["serializedSize"] == total and before[L1]["serializedSize"] != total and changed,
       "%s: %s: LayerStatus serializedSize is the sum of the entries' sizes after the repair (%d; %d before; chunks "
       "%s got new sizes)" % (where, L1, total, before[L1]["serializedSize"], changed), st["serializedSize"])
    ok(after[L0]["pageDirectory"][2] == 2 and before[L0]["pageDirectory"][2] == -1,
       "%s: the orphan on a page listed as not stored: the page is written, the directory names it" % where,
       after[L0]["pageDirectory"])
    for layer in (L0, L1):
        sets, err, rc = run("SELECT %s FROM vds_audit(%s, %s);" % (", ".join(COLS), q(url), q(layer)), env)
        want = want_rows(exp, layer, after_repair=True)
        left = sorted({r["verdict"] for r in want} - {"ok"})
        ok(rc == 0 and sets and sets[0] == want, "%s: %s re-audited: only %s left" % (where, layer, ", ".join(left)),
           err + "\n".join("got  %s\nwant %s" % (g, w) for g, w in zip(sets[0] if sets else [], want) if g != w))
    sets, err, rc = run("SELECT vds_repair(%s, %s) AS a, vds_repair(%s, %s) AS b;" % (q(url), q(L0), q(url), q(L1)),
                        env)
    ok(rc == 0 and sets and sets[0] == [{"a": 0, "b": 0}], "%s: a second repair changes nothing" % where, err or sets)


def local_file_checks(tmp, exp, root):
    audit_checks("file", root, exp, root, None, "file", heads=False)
    # vds_levels: every data chunk of the wavelet layer, level -1 then each level up to a zero byte
    sets, err, rc = run("SELECT chunk, level, bytes FROM vds_levels(%s, %s);" % (q(root), q(L1)))
    want = level_rows(exp, root, L1)
    ok(rc == 0 and sets and sets[0] == want, "vds_levels: %d rows, bytes by section 4's rule computed here "
       "(e.g. %s)" % (len(want), want[1] if want else None), err or sets)
    sets, err, rc = run("SELECT * FROM vds_levels(%s, %s);" % (q(root), q(L0)))
    with open(os.path.join(root, "LayerStatus")) as f:
        es = {x["layerName"]: x["chunkMetadataByteSize"] for x in json.load(f)}
    ok(rc == 0 and sets == [] and err == "" and es[L0] == 8, "vds_levels of a layer without levels (8-byte entries, read here from "
       "LayerStatus): no rows, not an error (issue 30)", err or sets)
    sets, err, rc = run("SELECT l.layer, count(v.chunk) AS n FROM vds_layers(%s) l LEFT JOIN vds_levels(%s, l.layer) v "
                        "GROUP BY 1 ORDER BY 1;" % (q(root), q(root)))
    ok(rc == 0 and sets and sets[0] == [{"layer": L0, "n": 0}, {"layer": L1, "n": len(want)}],
       "vds_layers x vds_levels over every layer: the non-wavelet one gives 0 rows, the wavelet one %d" % len(want),
       err or sets)
    # vds_chunk_bytes: the prefix, with one range GET after the page
    with open(os.path.join(root, L1, "0"), "rb") as f:
        obj = f.read()
    page = os.path.getsize(os.path.join(root, L1, "ChunkMetadata", "0"))
    for level, n in ((0, 2000 * 200 // 255), (1, 2000 * 200 // 255 * 180 // 255), (None, 2000)):
        arg = "" if level is None else ", %d" % level
        sets, err, rc = run(RESET + "SELECT hex(vds_chunk_bytes(%s, %s, 0%s)) AS b;\n%s" % (
            q(root), q(L1), arg, STATS % "file"))
        got = sets[1][0]["b"] if rc == 0 and len(sets) == 3 else None
        ok(got == obj[:n].hex().upper(), "vds_chunk_bytes(chunk 0%s): the first %d bytes of the object" % (
            arg, n), err or (got or "")[:40])
        st = sets[2][0] if rc == 0 and len(sets) == 3 else None
        want = {"requests": 2 + 1 + 1, "bytes": os.path.getsize(os.path.join(root, "VolumeDataLayout")) +
                os.path.getsize(os.path.join(root, "LayerStatus")) + page + n}
        ok(st == want, "vds_chunk_bytes(chunk 0%s): 2 documents, the page, ONE range GET of %d bytes" % (arg, n),
           "got %s want %s" % (st, want))
    for args, msg in (("5, 99", "%s/%s/5: no adaptive level 99" % (root, L1)),
                      ("1, 1", "%s/%s/1: no adaptive level 1" % (root, L1)),
                      ("7", "%s/%s/7: no object to read (its page entry says constant)" % (root, L1)),
                      ("9", "%s/%s/9: no object to read (its page entry says unwritten)" % (root, L1))):
        sets, err, rc = run("SELECT vds_chunk_bytes(%s, %s, %s);" % (q(root), q(L1), args))
        ok(rc != 0 and msg in err, "vds_chunk_bytes(%s): %s" % (args, msg), err)
    sets, err, rc = run("SELECT vds_chunk_bytes(%s, %s, 2);" % (q(root), q(L1)))
    ok(rc != 0 and "%s/%s/2: 4000 bytes, but its page entry says the object holds 5000" % (root, L1) in err,
       "vds_chunk_bytes of an object shorter than its entry says: a clear error", err)
    sets, err, rc = run("SELECT vds_chunk_bytes(%s, %s, 5);" % (q(root), q(L1)))
    ok(rc != 0 and "no such file" in err.lower() and "%s/5" % L1 in err, "vds_chunk_bytes of a missing object: the "
       "store's error naming it", err)
    sets, err, rc = run("SELECT vds_chunk_bytes(%s, %s, 0);" % (q(root), q(L0)))
    ok(rc != 0 and "is not wavelet-compressed" in err, "vds_chunk_bytes on a layer without levels: a clear error", err)

    # repair on a copy
    rep = os.path.join(tmp, "repaired")
    shutil.copytree(root, rep)

    def read_page(layer, name):
        with open(os.path.join(rep, layer, "ChunkMetadata", str(name)), "rb") as f:
            return f.read()

    def read_status():
        with open(os.path.join(rep, "LayerStatus")) as f:
            return json.load(f)
    repair_checks("file", rep, exp, None, read_page, read_status)
    # progress: off by default (stderr empty), on: lines of the documented shape
    sets, err, rc = run("SELECT count(*) FROM vds_audit(%s, %s);" % (q(root), q(L0)))
    ok(rc == 0 and err == "", "progress off: nothing on stderr", err)
    sets, err, rc = run("SELECT vdsql_config('progress', 'on');\nSELECT count(*) FROM vds_audit(%s, %s);" % (
        q(root), q(L0)))
    n = len(exp["objects"][L0])
    ok(rc == 0 and re.fullmatch(r"vdsql: vds_audit %s: %d / %d objects, \d+/s, done in \d+\.\d s\n" % (L0, n, n), err),
       "progress on: a final line 'vdsql: vds_audit <layer>: N / N objects, R/s, done in S s'", err)


def http_refusal(tmp, root):
    ng = Nginx(tmp, os.path.join(tmp, "nginx"))
    if not ok(ng.started, "nginx started", ng.error):
        return
    try:
        rel = os.path.relpath(root, tmp)
        before = {os.path.join(d, f): os.path.getmtime(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs}
        url = "%s/%s" % (ng.url, rel)
        sets, err, rc = run(RESET + "SELECT vds_repair(%s, %s);\n%s" % (q(url), q(L0), STATS % "http"))
        ok(rc != 0 and "%s: cannot write: http(s) URLs are read-only" % url in err,
           "vds_repair over http: the store's refusal, naming the URL", err)
        after = {os.path.join(d, f): os.path.getmtime(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs}
        ok(before == after, "vds_repair over http: nothing written")
        with open(os.path.join(tmp, "nginx", "logs", "access.log")) as f:
            methods = {line.split('"')[1].split()[0] for line in f if '"' in line}
        ok(methods <= {"GET", "HEAD"}, "nginx saw no write request (%s)" % sorted(methods))
    finally:
        ng.stop()


def s3_checks(tmp, exp, root):
    try:
        import vdsupload
        import boto3  # noqa: F401
    except ImportError:
        ok(False, "boto3 for /usr/bin/python3 (Debian package python3-boto3)")
        return
    with Radosgw() as srv:
        if not ok(srv.started, "radosgw starts on 127.0.0.1", srv.error):
            return
        env = {k: srv.env[k] for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")}
        c = vdsupload.s3_client(srv.endpoint, srv.key, srv.secret, srv.region)
        B = srv.bucket
        n = vdsupload.upload_s3(c, B, "audit/", root)
        ok(n > 40, "boto3 uploads the dataset (%d objects, metadata as x-amz-meta-*)" % n)
        url = "s3://%s/audit" % B
        audit_checks("s3", url, exp, root, env, "s3", heads=True)
        sets, err, rc = run(RESET + "SELECT hex(vds_chunk_bytes(%s, %s, 0, 0)) AS b;\n%s" % (q(url), q(L1),
                                                                                          STATS % "s3"), env)
        with open(os.path.join(root, L1, "0"), "rb") as f:
            want = f.read()[:2000 * 200 // 255].hex().upper()
        ok(rc == 0 and sets[1][0]["b"] == want and sets[2][0]["requests"] == 4,
           "s3: vds_chunk_bytes(chunk 0, level 0): the prefix; 2 documents, the page, one range GET",
           err or sets[2:])

        def read_page(layer, name):
            return c.get_object(Bucket=B, Key="audit/%s/ChunkMetadata/%d" % (layer, name))["Body"].read()

        def read_status():
            return json.loads(c.get_object(Bucket=B, Key="audit/LayerStatus")["Body"].read())
        repair_checks("s3", url, exp, env, read_page, read_status)

        # many objects: two listing pages, a HEAD each, progress lines while it runs
        many = os.path.join(tmp, "many")
        N = 1500
        subprocess.run([sys.executable, MKVDS, "many", str(N), many], check=True)
        vdsupload.upload_s3(c, B, "many/", many)
        murl = "s3://%s/many" % B
        sets, err, rc = run(RESET + "SELECT vdsql_config('progress', 'on');\nSELECT vdsql_config('max_parallel', 1);\n"
                            "SELECT verdict, count(*) AS n FROM vds_audit(%s, %s) GROUP BY 1;\n%s" % (
                                q(murl), q(L0), STATS % "s3"), env)
        ok(rc == 0 and sets[3] == [{"verdict": "ok", "n": N}], "s3: %d objects audited ok" % N, err[-500:])
        want_req = 2 + 2 + 2 + N
        ok(rc == 0 and sets[4][0]["requests"] == want_req,
           "s3: %d requests: 2 documents, 2 listing pages (1000 keys each at most), 2 stored pages, %d HEADs" % (
               want_req, N), sets[4:] if rc == 0 else err)
        lines = err.splitlines()
        shape = re.compile(r"vdsql: vds_audit %s: (\d+) / %d objects, (\d+)/s(, done in (\d+\.\d) s)?" % (L0, N))
        m = [shape.fullmatch(x) for x in lines]
        final = m[-1] if m and m[-1] else None
        secs = float(final.group(4)) if final and final.group(4) else 0
        ok(lines and all(m) and final and final.group(3) and int(final.group(1)) == N,
           "progress: every stderr line 'vdsql: vds_audit <layer>: done / total objects, rate/s', the last "
           "one 'done in S s' with done = total", err[-800:])
        dones = [int(x.group(1)) for x in m if x]
        ok(len(lines) >= 2 and dones == sorted(dones) and len(lines) <= 4 * secs + 2,
           "progress: %d lines over %.1f s (at most 4 a second, and more than the final one), done counts rising"
           % (len(lines), secs), err[-800:])


def az_checks(tmp, exp, root):
    """The same on Azure Blob (Azurite): listings carry the metadata, so no HEAD at all."""
    import urllib.parse
    import vdsupload
    from azclient import Az
    from taplib import Azurite
    with Azurite() as srv:
        if not ok(srv.started, "Azurite starts on 127.0.0.1", srv.error):
            return
        env = {"AZURE_STORAGE_CONNECTION_STRING": srv.env["AZURE_STORAGE_CONNECTION_STRING"]}
        n = vdsupload.upload_az(srv, "audit/", root)
        ok(n > 40, "the independent client (tests/azclient.py) uploads the dataset (%d blobs, x-ms-meta-*)" % n)
        url = "az://%s/audit" % srv.container
        audit_checks("az", url, exp, root, env, "az", heads=False)
        az, base = Az(srv), "/%s/%s/audit/" % (srv.account, srv.container)

        def get(key):
            code, _, body = az("GET", base + urllib.parse.quote(key))
            if code != 200:
                raise RuntimeError("GET %s: HTTP %d" % (key, code))
            return body

        def read_page(layer, name):
            return get("%s/ChunkMetadata/%d" % (layer, name))

        def read_status():
            return json.loads(get("LayerStatus"))
        sets, err, rc = run(RESET + "SELECT hex(vds_chunk_bytes(%s, %s, 0, 0)) AS b;\n%s" % (q(url), q(L1),
                                                                                          STATS % "az"), env)
        want = get("%s/0" % L1)[:2000 * 200 // 255].hex().upper()
        ok(rc == 0 and sets[1][0]["b"] == want and sets[2][0]["requests"] == 4,
           "az: vds_chunk_bytes(chunk 0, level 0): the prefix; 2 documents, the page, one range GET",
           err or sets[2:])
        repair_checks("az", url, exp, env, read_page, read_status)
        # many objects: the listing alone (pages of 5,000 with metadata), no HEAD
        many = os.path.join(tmp, "many")
        N = 1500
        if not os.path.exists(many):
            subprocess.run([sys.executable, MKVDS, "many", str(N), many], check=True)
        vdsupload.upload_az(srv, "many/", many)
        murl = "az://%s/many" % srv.container
        sets, err, rc = run(RESET + "SELECT verdict, count(*) AS n FROM vds_audit(%s, %s) GROUP BY 1;\n%s" % (
            q(murl), q(L0), STATS % "az"), env)
        ok(rc == 0 and sets[1] == [{"verdict": "ok", "n": N}], "az: %d objects audited ok" % N, err[-500:])
        pages = (N - 1) // 1024 + 1
        want_req = 2 + 1 + pages
        got = sets[2][0]["requests"] if rc == 0 else None
        ok(got == want_req and got - pages <= math.ceil(N / 5000) + 2,
           "az: %d requests: 2 documents, ONE listing page (metadata included), %d stored pages, no HEAD "
           "(without the pages: at most ceil(N/5000) + 2)" % (want_req, pages), got)


def nopages_checks(tmp):
    """A layer without pages (issue 22): the objects' metadata is all there is; every
    chunk gets the verdict the generator planned (ok for an object with valid metadata,
    missing_metadata, missing_object: without pages every chunk must have an object),
    none is an orphan; a repair has no page to write and changes nothing."""
    root = os.path.join(tmp, "nopages")
    p = subprocess.run([sys.executable, MKVDS, "nopages", root], check=True, capture_output=True, text=True)
    want = {int(c): v for c, v in json.loads(p.stdout).items()}
    sets, err, rc = run("SELECT chunk, verdict FROM vds_audit(%s, %s);\nSELECT vds_repair(%s, %s) AS n;" % (
        q(root), q(L0), q(root), q(L0)))
    got = {r["chunk"]: r["verdict"] for r in sets[0]} if rc == 0 and sets else {}
    counts = {v: list(want.values()).count(v) for v in set(want.values())}
    ok(got == want and counts.get("ok") == 59, "files: a layer without pages: each chunk's verdict is the generator's "
       "(%s), no orphan_object" % ", ".join("%d %s" % (n, v) for v, n in sorted(counts.items())),
       err + repr(sorted((c, got.get(c), v) for c, v in want.items() if got.get(c) != v)[:10]))
    ok(rc == 0 and sets[1] == [{"n": 0}], "files: vds_repair of a layer without pages changes nothing", err or sets)


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-audit.")
    try:
        root = os.path.join(tmp, "ds")
        p = subprocess.run([sys.executable, MKVDS, "audit", root], check=True, capture_output=True, text=True)
        exp = json.loads(p.stdout)
        verdicts = {r["verdict"] for layer in exp["layers"].values() for r in layer["rows"].values()}
        ok(verdicts == {"ok", "mismatch", "missing_object", "missing_metadata", "orphan_object", "size_mismatch",
                        "bad_object"},
           "the dataset holds every verdict: %s" % ", ".join(sorted(verdicts)))
        local_file_checks(tmp, exp, root)
        nopages_checks(tmp)
        http_refusal(tmp, root)
        s3_checks(tmp, exp, root)
        az_checks(tmp, exp, root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


if __name__ == "__main__":
    sys.exit(main())
