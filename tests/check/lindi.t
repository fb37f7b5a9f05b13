#!/usr/bin/python3
"""vdsql_check on LINDI datasets (docs/check.md#lindi), as TAP, on local files, over
http (nginx), on S3 (Ceph radosgw) and on Azure Blob (Azurite), all on 127.0.0.1.

The datasets are tests/gen/mkbroken_lindi.py's, broken on purpose, with its record of
each fault. The record is first checked against an oracle written here from the formats
alone: tarfile walks each archive and reads its .tar_index.json and lindi.json, json
parses the refs and Zarr metadata, os.stat sizes the external files; the oracle derives
every problem row (index against headers, internal and external ranges, absent chunk
keys capped at 10 per array, raw chunks of another size, metadata that does not parse)
and must agree with the record. Then, on each store:
  - one query over the datasets gives exactly the recorded rows (part, item, verdict);
  - each detail names the dataset's or the external object's URL; an array's 10th
    absent-key row says how many more there are;
  - vdsql_check_summary: items = the refs of lindi.json (counted here), problems and
    the worst verdict as recorded;
  - requests, exactly, per backend: one range GET of the dataset (every file here is
    smaller than the 128 KiB prefix, so index, headers and lindi.json come with it),
    one HEAD per distinct external URL (on nginx) and per distinct ./name next to a
    .lindi.json; no chunk is read;
  - allowed_hosts is obeyed: without it a local dataset's external refs are not probed
    (no request to nginx, no row) and a remote dataset's are rows naming the setting.
   env: SO, SQLITE3 (tests/taplib.py)"""
import itertools
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "gen"))
from taplib import Azurite, Nginx, Radosgw, json_sets, ok, plan  # noqa: E402

GEN = os.path.join(top, "tests", "gen", "mkbroken_lindi.py")
ORDER = ["unreadable", "malformed", "missing", "short", "mismatch", "orphan", "uncommitted"]
CAP = 10
PREFIX = 128 << 10


def q(s):
    return "'" + s.replace("'", "''") + "'"


# --- the oracle: what each dataset holds, read with tarfile and json alone ---

def load(path):
    """(index entries or None, tar headers or None, lindi.json document, archive size)."""
    if not path.endswith(".lindi.tar"):
        with open(path) as f:
            return None, None, json.load(f), os.path.getsize(path)
    with tarfile.open(path, format=tarfile.USTAR_FORMAT) as t:
        heads = [(m.name, m.offset, m.offset_data, m.size) for m in t.getmembers()]
        index = json.loads(t.extractfile(".tar_index.json").read())["files"]
        doc = json.loads(t.extractfile("lindi.json").read())
    return index, heads, doc, os.path.getsize(path)


def folder(key):
    return key.rsplit("/", 1)[0] if "/" in key else None


def inline_len(v):
    import base64
    return len(base64.b64decode(v[7:])) if v.startswith("base64:") else len(v.encode())


def oracle(root, name, ext_base):
    path = os.path.join(root, name)
    index, heads, doc, size = load(path)
    rows = set()
    if index is not None:
        by_off = {(n, o): (d, s) for n, o, d, s in heads}
        names = {n for n, _, _, _ in heads}
        listed = {e["n"] for e in index}
        for e in index:
            if (e["n"], e["o"]) in by_off:
                if by_off[(e["n"], e["o"])] != (e["d"], e["s"]):
                    rows.add((e["n"], None, "mismatch"))
            else:
                rows.add((e["n"], None, "mismatch" if e["n"] in names else "missing"))
        rows |= {(n, None, "orphan") for n in names - listed if not n.startswith(".trash/")}
        members = {e["n"]: e for e in index}
    refs, tpl = doc["refs"], doc.get("templates", {})
    arrays, chunks = {}, {}
    for k, v in refs.items():
        base = k.rsplit("/", 1)[-1]
        if isinstance(v, list):
            target = v[0]
            for t, val in tpl.items():
                target = target.replace("{{%s}}" % t, val)
            off, n = v[1], v[2]
            if index is not None and target.startswith("./"):
                m = members.get(target[2:])
                if m is None:
                    rows.add((folder(k), k, "missing"))
                elif m["d"] + off + n > size:
                    rows.add((folder(k), k, "missing" if m["d"] + off >= size else "short"))
                elif off + n > m["s"]:
                    rows.add((folder(k), k, "short"))
            else:
                local = (os.path.join(os.path.dirname(path), target[2:]) if target.startswith("./") else
                         os.path.join(root, "ext", target[len(ext_base) + 1:]))
                if not os.path.exists(local):
                    rows.add((folder(k), k, "missing"))
                elif os.path.getsize(local) < off + n:
                    rows.add((folder(k), k, "short"))
            if not base.startswith("."):
                chunks[k] = n
            continue
        if base in (".zarray", ".zattrs", ".zgroup"):
            try:
                meta = json.loads(v) if isinstance(v, str) else v
                good = isinstance(meta, dict) and (base != ".zarray" or all(x in meta for x in ("shape", "chunks", "dtype")))
            except ValueError:
                good = False
            if not good:
                rows.add((folder(k), k, "malformed"))
            elif base == ".zarray":
                arrays[folder(k)] = meta
        elif isinstance(v, str):
            chunks[k] = inline_len(v)
    for a, z in arrays.items():
        sep = z.get("dimension_separator", ".")
        grid = [range((s + c - 1) // c) for s, c in zip(z["shape"], z["chunks"])]
        absent = [a + "/" + sep.join(map(str, ix)) for ix in itertools.product(*grid)]
        absent = [k for k in absent if k not in refs]
        rows |= {(a, k, "missing") for k in absent[:CAP]}
        item = int(z["dtype"][2:]) * (4 if z["dtype"][1] == "U" else 1)
        want = item
        for c in z["chunks"]:
            want *= c
        if z.get("compressor", 0) is None and not z.get("filters"):
            for k, n in chunks.items():
                if folder(k) == a and n != want:
                    rows.add((a, k, "mismatch"))
    return rows


def distinct_heads(root, name, ext_base):
    """(HEADs to the external store, HEADs next to the dataset) the check must make."""
    _, _, doc, _ = load(os.path.join(root, name))
    tpl = doc.get("templates", {})
    ext, near = set(), set()
    for v in doc["refs"].values():
        if isinstance(v, list):
            t = v[0]
            for k, val in tpl.items():
                t = t.replace("{{%s}}" % k, val)
            if t.startswith(ext_base):
                ext.add(t)
            elif t.startswith("./") and not name.endswith(".lindi.tar"):
                near.add(t)
    return len(ext), len(near)


# --- the checks on one store ---

def check_store(where, base, root, rec, env, backend, ext_base, ext_host):
    names = [d["name"] for d in rec["datasets"]]
    allow = "SELECT vdsql_config('allowed_hosts', %s);\n" % q(ext_host)
    script = allow + "".join(
        "SELECT json_group_array(json_array(part, item, verdict, detail)) AS j FROM vdsql_check(%s);\n"
        "SELECT items, problems, worst FROM vdsql_check_summary(%s);\n" % (q(base + n), q(base + n)) for n in names)
    sets, err, rc = json_sets(script, env)
    ok(rc == 0 and len(sets) == 1 + 2 * len(names), "%s: vdsql_check and vdsql_check_summary of the %d LINDI datasets, "
       "no error" % (where, len(names)), err)
    if rc or len(sets) != 1 + 2 * len(names):
        return
    got, summ = {}, {}
    for i, n in enumerate(names):
        got[n] = json.loads(sets[1 + 2 * i][0]["j"])
        summ[n] = sets[2 + 2 * i][0]
    bad = []
    for d in rec["datasets"]:
        g = sorted((r[0], r[1], r[2]) for r in got[d["name"]])
        w = sorted((f["part"], f["item"], f["verdict"]) for f in d["faults"])
        if g != w:
            bad.append((d["name"], "extra", sorted(set(g) - set(w)), "lacking", sorted(set(w) - set(g))))
    total = sum(len(d["faults"]) for d in rec["datasets"])
    ok(not bad, "%s: exactly the %d planted problems, row by row (part, item, verdict)" % (where, total), bad)
    unnamed = [(n, r[3]) for n in names for r in got[n] if base + n not in r[3] and ext_base not in r[3]
               and base + "nofile.bin" not in r[3]]
    ok(not unnamed, "%s: every detail names the dataset's URL or the object's" % where, unnamed)
    big = [r[3] for n in names for r in got[n] if r[1] == "big/%d" % (CAP - 1)]
    want_more = "and %d more absent chunk keys" % (rec["big_absent"] - CAP)
    ok(big and all(want_more in b for b in big), "%s: an array's %dth absent-key row says '%s'" % (where, CAP, want_more),
       big)
    wrong = []
    for d in rec["datasets"]:
        _, _, doc, _ = load(os.path.join(root, d["name"]))
        vs = [f["verdict"] for f in d["faults"]]
        want = {"items": len(doc["refs"]), "problems": len(vs), "worst": min(vs, key=ORDER.index) if vs else None}
        if summ[d["name"]] != want:
            wrong.append((d["name"], summ[d["name"]], want))
    ok(not wrong, "%s: vdsql_check_summary: items = the refs of lindi.json (read here), problems and worst as recorded"
       % where, wrong)

    # the cost, per dataset and per backend
    big_files = [n for n in names if os.path.getsize(os.path.join(root, n)) >= PREFIX]
    ok(not big_files, "%s: every dataset is smaller than the 128 KiB prefix" % where, big_files)
    wrong = []
    for n in names:
        n_ext, n_near = distinct_heads(root, n, ext_base)
        want = {backend: 1 + n_near}
        want["http"] = want.get("http", 0) + n_ext
        sets, err, rc = json_sets(allow + "SELECT vdsql_config('stats', 'reset');\nSELECT count(*) FROM vdsql_check(%s);\n"
                                  "SELECT backend, requests FROM vdsql_stats() WHERE requests > 0;" % q(base + n), env)
        g = {r["backend"]: r["requests"] for r in sets[-1]} if rc == 0 else err
        if g != {k: v for k, v in want.items() if v}:
            wrong.append((n, g, want))
    ok(not wrong, "%s: requests per dataset: one range GET of it, one HEAD per distinct external URL and per ./name "
       "next to a .lindi.json (%s)" % (where, ", ".join("%s %d+%d" % ((n,) + distinct_heads(root, n, ext_base))
                                                        for n in names)), wrong)

    # allowed_hosts not naming nginx: the external store is never asked, those refs are
    # not judged (no row) nor counted in items; the rest is checked as before
    if backend == "http":
        return
    sets, err, rc = json_sets("SELECT vdsql_config('stats', 'reset');\nSELECT json_group_array(json_array(item, verdict)) "
                              "AS j FROM vdsql_check(%s);\nSELECT items FROM vdsql_check_summary(%s);\n"
                              "SELECT coalesce(sum(requests), 0) AS n FROM vdsql_stats() WHERE backend = 'http';"
                              % (q(base + "refs.lindi.tar"), q(base + "refs.lindi.tar")), env)
    good = rc == 0 and len(sets) == 4
    rows = sorted((tuple(r) for r in json.loads(sets[1][0]["j"])), key=str) if good else []
    d = [x for x in rec["datasets"] if x["name"] == "refs.lindi.tar"][0]
    want = sorted(((f["item"], f["verdict"]) for f in d["faults"] if not (f["item"] or "").startswith("x/")), key=str)
    _, _, doc, _ = load(os.path.join(root, "refs.lindi.tar"))
    n_ext = sum(1 for k in doc["refs"] if k.startswith("x/"))
    items = sets[2][0]["items"] if good else None
    nhttp = sets[3][0]["n"] if good else None
    ok(good and rows == want and nhttp == 0 and items == len(doc["refs"]) - n_ext,
       "%s: allowed_hosts not naming nginx: the %d external refs are not asked (no request), not judged (no row), "
       "not counted in items; the other %d problems as before" % (where, n_ext, len(want)),
       (err, rows, want, nhttp, items))


def offsets(tmp):
    """An external ref's end is its offset plus its size: a 100-byte file read at 80 for 40
    bytes is short, at 10 for 40 is not (apart from the generator's record)."""
    d = os.path.join(tmp, "offsets")
    os.makedirs(d)
    ext = os.path.join(d, "ext.bin")
    with open(ext, "wb") as f:
        f.write(bytes(100))
    doc = {"generationMetadata": {"generatedBy": "lindi.t"},
           "refs": {".zgroup": {"zarr_format": 2}, "a/0": [ext, 80, 40], "a/1": [ext, 10, 40]}}
    path = os.path.join(d, "offsets.lindi.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    sets, err, rc = json_sets("SELECT part, item, verdict FROM vdsql_check(%s);\n" % q(path))
    rows = sets[0] if sets else []
    ok(rc == 0 and rows == [{"part": "a", "item": "a/0", "verdict": "short"}],
       "file: an external ref's end is offset + size: [80, 40) of a 100-byte file is short, [10, 40) is not",
       json.dumps(rows) + err)


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-checklindi.")
    web = None
    try:
        root = os.path.join(tmp, "cat")
        os.makedirs(root)
        web = Nginx(root, os.path.join(tmp, "nginx"))
        if not ok(web.started, "nginx serves the catalog and its external files on 127.0.0.1", web.error):
            return plan()
        ext_base = web.url + "/ext"
        ext_host = web.url[len("http://"):]
        p = subprocess.run(["/usr/bin/python3", GEN, "catalog", root, ext_base], capture_output=True, text=True)
        if not ok(p.returncode == 0, "tests/gen/mkbroken_lindi.py builds the datasets", p.stderr):
            return plan()
        rec = json.loads(p.stdout)
        verdicts = {f["verdict"] for d in rec["datasets"] for f in d["faults"]}
        ok(verdicts == {"malformed", "missing", "short", "mismatch", "orphan"},
           "the datasets hold every LINDI verdict: %s" % ", ".join(sorted(verdicts, key=ORDER.index)))
        bad = []
        for d in rec["datasets"]:
            want = {(f["part"], f["item"], f["verdict"]) for f in d["faults"]}
            got = oracle(root, d["name"], ext_base)
            if got != want:
                bad.append((d["name"], sorted(got ^ want, key=str)))
        ok(not bad, "the generator's record agrees with the oracle here (tarfile, json, os.stat) on all %d datasets"
           % len(rec["datasets"]), bad)
        check_store("file", root + "/", root, rec, None, "file", ext_base, ext_host)
        offsets(tmp)
        check_store("http", web.url + "/", root, rec, None, "http", ext_base, ext_host)
        try:
            import vdsupload
            import boto3  # noqa: F401
        except ImportError:
            ok(False, "boto3 for /usr/bin/python3 (Debian package python3-boto3)")
            return plan()
        with Radosgw() as srv:
            if ok(srv.started, "radosgw starts on 127.0.0.1", srv.error):
                env = {k: srv.env[k] for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                               "AWS_REGION")}
                c = vdsupload.s3_client(srv.endpoint, srv.key, srv.secret, srv.region)
                vdsupload.upload_s3(c, srv.bucket, "cat/", root)
                check_store("s3", "s3://%s/cat/" % srv.bucket, root, rec, env, "s3", ext_base, ext_host)
        with Azurite() as srv:
            if ok(srv.started, "Azurite starts on 127.0.0.1", srv.error):
                env = {"AZURE_STORAGE_CONNECTION_STRING": srv.env["AZURE_STORAGE_CONNECTION_STRING"]}
                vdsupload.upload_az(srv, "cat/", root)
                check_store("az", "az://%s/cat/" % srv.container, root, rec, env, "az", ext_base, ext_host)
    finally:
        if web:
            web.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


if __name__ == "__main__":
    sys.exit(main())
