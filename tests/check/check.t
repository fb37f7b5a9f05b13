#!/usr/bin/python3
"""vdsql_datasets, vdsql_check and vdsql_check_summary (docs/check.md), as TAP, on local
files, on S3 (Ceph radosgw on 127.0.0.1) and on Azure Blob (Azurite on 127.0.0.1).

The catalog is tests/gen/mkbroken.py's: datasets of the three formats, broken on purpose,
with the generator's record of each fault. What vdsql must say comes from that record
and from independent readers: the folders walked here (os.walk), each file's first
bytes read with tarfile, json and h5py, each VolumeDataLayout parsed with json, stored
pages counted from LayerStatus read here. Checked on each store:
  - vdsql_datasets finds every dataset and nothing else, with its format, its size as
    the filesystem gives it, and an error exactly where the readers here fail;
  - its requests, exactly: one listing page per folder that is no dataset, one GET per
    sub-folder (its VolumeDataLayout), one range GET per file (vdsql_stats);
  - one query over the catalog (the datasets found plus paths that name nothing) gives
    exactly the record's problem rows and does not stop at a broken one; each OpenVDS
    row's detail starts with the vds_audit verdict the generator planted;
  - vdsql_check_summary: problems and the worst verdict per dataset, from the record;
  - vdsql_check of a clean and a broken dataset costs what vds_audit costs per layer
    plus the two documents (listing, stored pages, one HEAD per chunk object on S3);
  - bad arguments and a refused store (a wrong S3 secret) raise; nothing else does.
   env: SO, SQLITE3 (tests/taplib.py)"""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "gen"))
from taplib import Azurite, Radosgw, json_sets, ok, plan  # noqa: E402

MKBROKEN = os.path.join(top, "tests", "gen", "mkbroken.py")
ORDER = ["unreadable", "malformed", "missing", "short", "mismatch", "orphan", "uncommitted"]
SUFFIX = ((".lindi.tar", "lindi"), (".lindi.json", "lindi"), (".vtkhdf", "vtkhdf"), (".hdf", "vtkhdf"))


def q(s):
    return "'" + s.replace("'", "''") + "'"


STATS = "SELECT coalesce(sum(requests), 0) AS requests FROM vdsql_stats() WHERE backend = '%s';"
RESET = "SELECT vdsql_config('stats', 'reset');\n"


def readable_by_others(path, fmt):
    """Does a reader that is not vdsql take the file (or OpenVDS folder) for what its
    name says? tarfile (and lindi's ustar header), json, h5py."""
    try:
        if fmt == "openvds":
            with open(os.path.join(path, "VolumeDataLayout")) as f:
                json.load(f)
            return True
        if path.endswith(".lindi.tar"):
            with open(path, "rb") as f:
                head = f.read(512)
            with tarfile.open(path, format=tarfile.USTAR_FORMAT):
                pass
            return head[257:262] == b"ustar"
        if path.endswith(".lindi.json"):
            with open(path) as f:
                return f.read().lstrip()[:1] == "{"
        import h5py
        return h5py.is_hdf5(path)
    except Exception:
        return False


def walk(root):
    """What vdsql_datasets must find under root (a folder), read here: {name: (format,
    size or None)}, and the requests a walk costs (listed folders, sub-folders probed,
    files probed)."""
    found, listed, probed, files = {}, 0, 0, 0
    todo = [""]
    while todo:
        rel = todo.pop()
        listed += 1
        d = os.path.join(root, rel)
        for n in sorted(os.listdir(d)):
            p = os.path.join(d, n)
            if os.path.isdir(p):
                probed += 1
                if os.path.exists(os.path.join(p, "VolumeDataLayout")):
                    found[os.path.join(rel, n)] = ("openvds", None)
                else:
                    todo.append(os.path.join(rel, n))
                continue
            fmt = next((f for s, f in SUFFIX if n.lower().endswith(s)), None)
            if fmt:
                files += 1
                found[os.path.join(rel, n)] = (fmt, os.path.getsize(p))
    return found, listed + probed + files


def layer_cost(root, name, heads):
    """vds_audit's requests for every layer of dataset name, read here: one listing page,
    each page the directory lists, and on S3 one HEAD per chunk object (the survey writes
    objects only at chunk keys)."""
    with open(os.path.join(root, name, "LayerStatus")) as f:
        st = json.load(f)
    n = 0
    for layer in st:
        n += 1 + sum(1 for p in layer["pageDirectory"] if p >= 0)
        if heads:
            d = os.path.join(root, name, layer["layerName"])
            n += sum(1 for x in os.listdir(d) if re.fullmatch(r"0|[1-9][0-9]*", x)) if os.path.isdir(d) else 0
    return n


def checks(where, base, root, rec, env, backend, heads):
    """Every check of the catalog under base (its URL prefix, ending in '/'); root is the
    local copy the readers here look at."""
    found, want_req = walk(root)
    names = {d["name"]: d for d in rec["datasets"]}
    sets, err, rc = json_sets(RESET + "SELECT url, format, size, error FROM vdsql_datasets(%s);\n%s" % (
        q(base), STATS % backend), env)
    got = {r["url"][len(base):]: r for r in sets[1]} if rc == 0 and len(sets) == 3 else {}
    want_formats = {n: f for n, (f, _) in found.items()}
    ok(set(got) == set(names) == set(found) and {n: r["format"] for n, r in got.items()} == want_formats,
       "%s: vdsql_datasets finds the %d datasets of the catalog and nothing else, each with its format (%s)" % (
           where, len(found), ", ".join("%d %s" % (list(want_formats.values()).count(f), f)
                                        for f in sorted(set(want_formats.values())))),
       err + "\ngot %s\nwant %s" % (sorted(got), sorted(found)))
    ok(got and all(got[n]["size"] == s for n, (_, s) in found.items() if n in got),
       "%s: vdsql_datasets: each file's size as the filesystem gives it, NULL for OpenVDS folders" % where,
       [(n, got.get(n, {}).get("size"), s) for n, (_, s) in found.items()])
    bad = [n for n in found if readable_by_others(os.path.join(root, n), found[n][0]) == names[n]["error"]]
    if where == "file":
        import h5py
        for d in rec["datasets"]:
            if d["format"] == "vtkhdf":
                try:
                    h5py.File(os.path.join(root, d["name"]), "r").close()
                    opens = True
                except Exception:
                    opens = False
                if opens == bool(d["faults"]):
                    bad.append(d["name"] + ": h5py says otherwise of whether it opens")
    ok(not bad, "%s: the generator's record of what cannot be recognised agrees with tarfile, json and h5py" % where, bad)
    wrong = [(n, r["error"]) for n, r in got.items() if (r["error"] is not None) != names[n]["error"]]
    ok(got and not wrong, "%s: vdsql_datasets: an error exactly for the %d the readers here cannot take (%s)" % (
        where, sum(d["error"] for d in rec["datasets"]), ", ".join(n for n in sorted(names) if names[n]["error"])), wrong)
    ok(got and all(base + n in r["error"] for n, r in got.items() if r["error"]),
       "%s: each error names the dataset's URL" % where, [r["error"] for r in got.values() if r["error"]])
    n_req = sets[2][0]["requests"] if rc == 0 and len(sets) == 3 else None
    ok(n_req == want_req, "%s: vdsql_datasets costs %d requests: a listing page per folder that is no dataset, a GET "
       "per sub-folder, a range GET per file" % (where, want_req), "got %s" % n_req)

    # one query over a catalog with paths that name nothing: it does not stop
    urls = [base + d["name"] for d in rec["datasets"]] + [base + m for m in rec["missing"]]
    cat = "CREATE TEMP TABLE catalog(url TEXT);\nINSERT INTO catalog VALUES %s;\n" % ", ".join(
        "(%s)" % q(u) for u in urls)
    sets, err, rc = json_sets(cat + "SELECT c.url, k.format, k.part, k.item, k.verdict, k.detail FROM catalog c, "
                              "vdsql_check(c.url) k;\nSELECT c.url, s.format, s.items, s.problems, s.worst FROM "
                              "catalog c, vdsql_check_summary(c.url) s;", env)
    rows = sets[0] if rc == 0 and len(sets) == 2 else []
    got = sorted((r["url"][len(base):], r["part"], r["item"], r["verdict"]) for r in rows)
    want = sorted([(d["name"], f["part"], f["item"], f["verdict"]) for d in rec["datasets"] for f in d["faults"]] +
                  [(m, None, None, "unreadable") for m in rec["missing"]])
    ok(rc == 0 and got == want, "%s: catalog x vdsql_check in one query: exactly the %d planted problems over %d "
       "datasets (%d paths that name nothing among them), no error" % (where, len(want), len(urls), len(rec["missing"])),
       err + "\n" + "\n".join("extra %s" % (x,) for x in sorted(set(got) - set(want))) + "\n" +
       "\n".join("lacking %s" % (x,) for x in sorted(set(want) - set(got))))
    audit = {(d["name"], f["part"], f["item"]): f["audit"] for d in rec["datasets"] for f in d["faults"] if f["audit"]}
    off = [(r["url"], r["item"], r["detail"]) for r in rows
           if (r["url"][len(base):], r["part"], r["item"]) in audit
           and not r["detail"].startswith(audit[(r["url"][len(base):], r["part"], r["item"])] + ": ")]
    ok(rows and not off, "%s: each OpenVDS row's detail starts with the vds_audit verdict planted (%d rows: %s)" % (
        where, len(audit), ", ".join(sorted(set(audit.values())))), off)
    formats = {n: f for n, (f, _) in found.items()}
    ok(rows and all(r["format"] == formats.get(r["url"][len(base):], "openvds") for r in rows),
       "%s: format on every row: the dataset's, and openvds for a path that names nothing" % where)
    unr = [r for r in rows if r["verdict"] == "unreadable"]
    ok(unr and all(r["part"] is None and r["item"] is None and r["url"] in r["detail"] for r in unr),
       "%s: %d unreadable rows, part and item NULL, the error naming the URL as detail" % (where, len(unr)),
       [(r["url"], r["detail"]) for r in unr])
    summ = {r["url"][len(base):]: r for r in (sets[1] if rc == 0 and len(sets) == 2 else [])}
    want_s = {}
    for d in rec["datasets"]:
        vs = [f["verdict"] for f in d["faults"]]
        want_s[d["name"]] = (len(vs), min(vs, key=ORDER.index) if vs else None)
    for m in rec["missing"]:
        want_s[m] = (1, "unreadable")
    got_s = {n: (r["problems"], r["worst"]) for n, r in summ.items()}
    ok(got_s == want_s, "%s: vdsql_check_summary: problems and the worst verdict of each of the %d datasets, as "
       "recorded" % (where, len(want_s)), {n: (got_s.get(n), w) for n, w in want_s.items() if got_s.get(n) != w})
    clean = summ.get("clean", {})
    ok(clean.get("items", 0) > 0 and summ.get("sub/audit", {}).get("items", 0) > 0,
       "%s: items checked: the chunks judged (clean %s, sub/audit %s)" % (
           where, clean.get("items"), summ.get("sub/audit", {}).get("items")))

    # the cost of one check: what vds_audit costs per layer, plus the two documents
    for name in ("clean", "sub/nopage"):
        want_n = 2 + layer_cost(root, name, heads)
        sets, err, rc = json_sets(RESET + "SELECT count(*) AS n FROM vdsql_check(%s);\n%s" % (
            q(base + name), STATS % backend), env)
        got_n = sets[2][0]["requests"] if rc == 0 and len(sets) == 3 else None
        ok(got_n == want_n, "%s: vdsql_check(%s): %d requests: 2 documents, per layer a listing page and every page "
           "the directory lists%s" % (where, name, want_n, ", one HEAD per chunk object" if heads else ""),
           err or "got %s" % got_n)


def prefix_is_dataset(root):
    """The prefix itself an OpenVDS dataset's folder: one row, that folder, no error; a
    prefix that is no folder's whole name takes the folders it begins."""
    for arg, want in ((root + "/clean/", [{"url": root + "/clean/", "format": "openvds", "error": None}]),
                      (root + "/sub/t", [{"url": root + "/sub/table.vtkhdf", "format": "vtkhdf", "error": None},
                                         {"url": root + "/sub/txleft", "format": "openvds", "error": None}])):
        sets, err, rc = json_sets("SELECT url, format, error FROM vdsql_datasets(%s);" % q(arg))
        ok(rc == 0 and sets and sets[0] == want, "vdsql_datasets(%s): %s" % (
            arg[len(root):], ", ".join(w["url"][len(root):] for w in want)), err or sets)


def argument_checks(root):
    for arg, msg in (("NULL", "vdsql_check: the url is NULL"),
                     ("42", "vdsql_check: the url must be text, not a number"),
                     ("'ftp://h/x'", "ftp://h/x: unsupported URL scheme")):
        sets, err, rc = json_sets("SELECT * FROM vdsql_check(%s);" % arg)
        ok(rc != 0 and msg in err, "vdsql_check(%s): an error, '%s'" % (arg, msg), err or sets)
    sets, err, rc = json_sets("SELECT * FROM vdsql_check_summary(NULL);")
    ok(rc != 0 and "vdsql_check_summary: the url is NULL" in err, "vdsql_check_summary(NULL): an error", err)
    # a layer of the clean dataset made unreadable to us: the store refuses, which is no finding
    if os.geteuid() != 0:
        d = os.path.join(root, "clean", "LayerStatus")
        os.chmod(d, 0)
        sets, err, rc = json_sets("SELECT * FROM vdsql_check(%s);" % q(os.path.join(root, "clean")))
        os.chmod(d, 0o644)
        ok(rc != 0 and "Permission denied" in err, "a LayerStatus we may not read: an error, not a row", err or sets)


def s3_checks(tmp, root, rec):
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
        n = vdsupload.upload_s3(c, srv.bucket, "cat/", root)
        ok(n > 100, "boto3 uploads the catalog (%d objects, metadata as x-amz-meta-*)" % n)
        checks("s3", "s3://%s/cat/" % srv.bucket, root, rec, env, "s3", heads=True)
        bad = dict(env, AWS_SECRET_ACCESS_KEY="wrong" + env["AWS_SECRET_ACCESS_KEY"])
        for sql in ("SELECT * FROM vdsql_check('s3://%s/cat/clean');" % srv.bucket,
                    "SELECT * FROM vdsql_datasets('s3://%s/cat/');" % srv.bucket):
            sets, err, rc = json_sets(sql, bad)
            ok(rc != 0 and "403" in err, "s3: a wrong secret: the store's refusal is an error, not a row (%s)" % sql[14:27],
               err or sets)


def az_checks(tmp, root, rec):
    import vdsupload
    with Azurite() as srv:
        if not ok(srv.started, "Azurite starts on 127.0.0.1", srv.error):
            return
        env = {"AZURE_STORAGE_CONNECTION_STRING": srv.env["AZURE_STORAGE_CONNECTION_STRING"]}
        n = vdsupload.upload_az(srv, "cat/", root)
        ok(n > 100, "tests/azclient.py uploads the catalog (%d blobs, x-ms-meta-*)" % n)
        checks("az", "az://%s/cat/" % srv.container, root, rec, env, "az", heads=False)


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-check.")
    try:
        root = os.path.join(tmp, "cat")
        p = subprocess.run(["/usr/bin/python3", MKBROKEN, "catalog", root], capture_output=True, text=True)
        if not ok(p.returncode == 0, "tests/gen/mkbroken.py builds the catalog (needs h5py: Debian python3-h5py)",
                  p.stderr):
            return plan()
        rec = json.loads(p.stdout)
        verdicts = {f["verdict"] for d in rec["datasets"] for f in d["faults"]}
        ok(verdicts == set(ORDER), "the catalog holds every verdict: %s" %
           ", ".join(sorted(verdicts, key=ORDER.index)))
        checks("file", root + "/", root, rec, None, "file", heads=False)
        prefix_is_dataset(root)
        argument_checks(root)
        s3_checks(tmp, root, rec)
        az_checks(tmp, root, rec)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


if __name__ == "__main__":
    sys.exit(main())
