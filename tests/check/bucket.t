#!/usr/bin/python3
"""The bucket audit of issue 30 (docs/check.md, "A bucket audit"), as TAP, on S3 (Ceph
radosgw on 127.0.0.1): tests/gen/mkbucket.py's bucket of BUCKET_N datasets of every
format (default 400: more files than the 256 files and folders vdsql_datasets judges at a
time; bench/check/ runs 1,000), BUCKET_BROKEN of them broken (default 25, 6%: each
broken template of the generators once; mkbucket.py's docstring says which it leaves
out), uploaded with boto3 at the bucket's top. A VTKHDF template with part files or
link targets is copied into a folder of its own (dsNNNN/), each of its files a dataset
with its own record entry.

  - `SELECT ... FROM vdsql_datasets('s3://BUCKET/') d, vdsql_check(d.url) c` in one query
    lists exactly the faults the generator's record planted, and nothing for the good
    datasets; each OpenVDS row's detail starts with the vds_audit verdict planted;
  - vdsql_datasets alone: every dataset, its format, an error where the record says;
  - vdsql_check_summary over the same join: problems and the worst verdict per dataset;
  - the query's requests, exactly (vdsql_stats): the bucket's listing pages as boto3
    counts them, one GET per entry (a folder's VolumeDataLayout, a file's first bytes),
    for each folder of a VTKHDF copy its listing pages and one GET per file in it,
    and what each check needs: for an OpenVDS dataset, read here from its files
    (spec/openvds.md): its LayerStatus (the layout the walk read stays in the document
    cache; one that does not parse is not kept: the check reads it again and ends there;
    a LayerStatus absent or not parsing ends it too), and per layer one listing page,
    every page the directory lists and a HEAD per chunk object (an object named by a
    chunk number below the layer's chunkCount: not 017, not 84 of 84 chunks); for a
    LINDI or VTKHDF dataset, what the check of one copy of its template costs alone,
    measured here, not derived (those checks have their own suites, which count their
    requests), except a VTKHDF copy's part files and link targets: their main file's
    check, before theirs in the walk's order, read them whole, and the document cache
    keeps them: nothing. The bucket audit costs no more than its datasets' checks, one
    by one.
   env: SO, SQLITE3 (tests/taplib.py), BUCKET_N, BUCKET_BROKEN"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "gen"))
from taplib import Radosgw, json_sets, ok, plan  # noqa: E402

N = int(os.environ.get("BUCKET_N", "400"))
BROKEN = int(os.environ.get("BUCKET_BROKEN", "25"))
ORDER = ["unreadable", "malformed", "missing", "short", "mismatch", "orphan", "uncommitted"]
STATS = "SELECT coalesce(sum(requests), 0) AS requests FROM vdsql_stats() WHERE backend = 's3';"
RESET = "SELECT vdsql_config('stats', 'reset');\n"


def q(s):
    return "'" + s.replace("'", "''") + "'"


def openvds_check_cost(path):
    """The GETs, listing pages and HEADs a check of the OpenVDS dataset at path needs after
    the walk read its VolumeDataLayout, from its files (spec/openvds.md)."""
    try:
        with open(os.path.join(path, "VolumeDataLayout")) as f:
            json.load(f)
    except ValueError:
        return 1  # the cache keeps what parses: the check reads the layout again, and ends there
    try:
        with open(os.path.join(path, "LayerStatus")) as f:
            st = json.load(f)
    except (OSError, ValueError):
        return 1  # LayerStatus asked for, absent or not parsing
    n = 1
    for layer in st:
        n += 1 + sum(1 for p in layer["pageDirectory"] if p >= 0)
        d = os.path.join(path, layer["layerName"])
        if os.path.isdir(d):
            n += sum(1 for x in os.listdir(d) if re.fullmatch(r"0|[1-9][0-9]*", x) and int(x) < layer["chunkCount"])
    return n


def listing_pages(c, bucket, prefix):
    """The pages of a delimited listing of prefix, as boto3 gets them from radosgw."""
    return len(list(c.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix, Delimiter="/")))


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-bucket.")
    try:
        root = os.path.join(tmp, "bucket")
        t0 = time.monotonic()
        p = subprocess.run(["/usr/bin/python3", os.path.join(top, "tests/gen/mkbucket.py"), "bucket", root, str(N),
                            str(BROKEN)], capture_output=True, text=True)
        if not ok(p.returncode == 0, "tests/gen/mkbucket.py builds a bucket of %d datasets, %d broken (%.1f s; "
                  "needs h5py: Debian python3-h5py)" % (N, BROKEN, time.monotonic() - t0), p.stderr):
            return plan()
        rec = json.loads(p.stdout)
        ds = rec["datasets"]
        kinds = sorted({d["source"] for d in ds if d["faults"]})
        copies = {d["copy"] for d in ds}
        ok(len(copies) == N and len({d["copy"] for d in ds if d["faults"]}) == BROKEN and
           {f["verdict"] for d in ds for f in d["faults"]} == set(ORDER) and {d["format"] for d in ds if d["faults"]}
           == {"openvds", "lindi", "vtkhdf"},
           "the record: %d copies (%d datasets: the VTKHDF copies' part files too), %d broken (%d kinds), every "
           "verdict and every format planted" % (N, len(ds), BROKEN, len(kinds)), kinds)
        try:
            import vdsupload
            import boto3  # noqa: F401
        except ImportError:
            ok(False, "boto3 for /usr/bin/python3 (Debian package python3-boto3)")
            return plan()
        with Radosgw() as srv:
            if not ok(srv.started, "radosgw starts on 127.0.0.1", srv.error):
                return plan()
            env = {k: srv.env[k] for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                           "AWS_REGION")}
            c = vdsupload.s3_client(srv.endpoint, srv.key, srv.secret, srv.region, pool=32)
            t0 = time.monotonic()
            n = vdsupload.upload_s3(c, srv.bucket, "", root, threads=32)
            ok(n > N, "boto3 uploads the bucket: %d objects, 32 threads (%.1f s)" % (n, time.monotonic() - t0))
            checks(c, srv.bucket, root, rec, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


def checks(c, bucket, root, rec, env):
    base = "s3://%s/" % bucket
    ds = rec["datasets"]
    t0 = time.monotonic()
    sets, err, rc = json_sets(RESET + "SELECT d.url, c.format, c.part, c.item, c.verdict, c.detail FROM "
                              "vdsql_datasets(%s) d, vdsql_check(d.url) c;\n%s" % (q(base), STATS), env)
    secs = time.monotonic() - t0
    rows = sets[1] if rc == 0 and len(sets) == 3 else []
    got = sorted((r["url"][len(base):], r["part"] or "", r["item"] or "", r["verdict"]) for r in rows)
    want = sorted((d["name"], f["part"] or "", f["item"] or "", f["verdict"]) for d in ds for f in d["faults"])
    ok(rc == 0 and got == want, "vdsql_datasets(%s) x vdsql_check in one query: exactly the %d planted faults of "
       "the %d broken datasets, none of the %d good ones (%.1f s)" % (
           base, len(want), sum(1 for d in ds if d["faults"]), len(ds) - sum(1 for d in ds if d["faults"]), secs),
       err + "\n" + "\n".join("extra %s" % (x,) for x in sorted(set(got) - set(want))) + "\n" +
       "\n".join("lacking %s" % (x,) for x in sorted(set(want) - set(got))))
    fmt = {d["name"]: d["format"] for d in ds}
    ok(rows and all(r["format"] == fmt.get(r["url"][len(base):]) for r in rows),
       "each row's format is its dataset's", [(r["url"], r["format"]) for r in rows
                                             if r["format"] != fmt.get(r["url"][len(base):])][:5])
    audit = {(d["name"], f["part"], f["item"]): f["audit"] for d in ds for f in d["faults"]
             if f["audit"] and d["format"] == "openvds"}
    off = [(r["url"], r["item"], r["detail"]) for r in rows
           if (r["url"][len(base):], r["part"], r["item"]) in audit
           and not r["detail"].startswith(audit[(r["url"][len(base):], r["part"], r["item"])] + ": ")]
    ok(rows and not off, "each OpenVDS row's detail starts with the vds_audit verdict planted (%d rows)" % len(audit),
       off)

    # the requests: the walk, then each check
    pages = listing_pages(c, bucket, "")
    entries = len(os.listdir(root))
    # a VTKHDF copy's folder: no VolumeDataLayout (its GET is one of the entries'), so listed, and each file read
    folders = sorted({d["copy"] for d in ds if "/" in d["name"]})
    entries += sum(listing_pages(c, bucket, f + "/") + len(os.listdir(os.path.join(root, f))) for f in folders)
    cost, alone = {}, {}
    for d in ds:
        if d["format"] == "openvds":
            cost[d["name"]] = openvds_check_cost(os.path.join(root, d["name"]))
        elif d["source"] not in alone:
            # one copy of the template, alone: its walk (a listing page and the file's GET) and its check
            s, e, r = json_sets(RESET + "SELECT count(*) AS n FROM vdsql_datasets(%s) d, vdsql_check(d.url) c;\n%s" % (
                q(base + d["name"]), STATS), env)
            walk = listing_pages(c, bucket, d["name"]) + 1
            alone[d["source"]] = s[2][0]["requests"] - walk if r == 0 and len(s) == 3 else None
            ok(r == 0 and alone[d["source"]] is not None and alone[d["source"]] >= 0,
               "the check of %s alone (a copy of %s): %s requests after its walk" % (
                   d["name"], d["source"], alone[d["source"]]), e)
    for d in ds:
        if d.get("of"):
            # a part file or link target: its main file's check, earlier in the walk's order, read it whole, and
            # whole small files stay in the document cache (cache_ttl, 60 s): its own check asks for nothing
            cost[d["name"]] = 0 if d["of"] < d["name"] else alone[d["source"]] or 0
        elif d["format"] != "openvds":
            cost[d["name"]] = alone[d["source"]] or 0
    n_ovds = sum(cost[d["name"]] for d in ds if d["format"] == "openvds")
    n_other = sum(cost[d["name"]] for d in ds if d["format"] != "openvds")
    want_req = pages + entries + n_ovds + n_other
    got_req = sets[2][0]["requests"] if rc == 0 and len(sets) == 3 else None
    ok(got_req == want_req, "the one query costs %d requests: %d listing page(s) of the bucket, %d for its "
       "entries (a GET each; the %d VTKHDF folders listed and their files read), %d for the OpenVDS checks (LayerStatus, per layer a listing page, its pages, a HEAD per object), "
       "%d for the LINDI and VTKHDF checks" % (want_req, pages, entries, len(folders), n_ovds, n_other), "got %s" % got_req)

    # the OpenVDS datasets' checks alone (SQLite filters the walk's rows before the join)
    s, e, r = json_sets(RESET + "SELECT count(*) AS n FROM vdsql_datasets(%s) d, vdsql_check(d.url) c WHERE d.format "
                        "= 'openvds';\n%s" % (q(base), STATS), env)
    got_o = s[2][0]["requests"] if r == 0 and len(s) == 3 else None
    ok(got_o == pages + entries + n_ovds, "the same walk with the OpenVDS checks only: %d requests" % (
        pages + entries + n_ovds), e or "got %s" % got_o)

    sets, err, rc = json_sets("SELECT url, format, error FROM vdsql_datasets(%s);" % q(base), env)
    got_d = sorted((r["url"][len(base):], r["format"], r["error"] is not None) for r in (sets[0] if rc == 0 and sets else []))
    want_d = sorted((d["name"], d["format"], d["error"]) for d in ds)
    ok(got_d == want_d, "vdsql_datasets alone: the %d datasets, their formats, an error for the %d the record says "
       "cannot be recognised" % (len(want_d), sum(1 for d in ds if d["error"])),
       err + str(sorted(set(got_d) ^ set(want_d))[:10]))

    sets, err, rc = json_sets("SELECT d.url, s.problems, s.worst FROM vdsql_datasets(%s) d, "
                              "vdsql_check_summary(d.url) s;" % q(base), env)
    got_s = {r["url"][len(base):]: (r["problems"], r["worst"]) for r in (sets[0] if rc == 0 and sets else [])}
    want_s = {}
    for d in ds:
        vs = [f["verdict"] for f in d["faults"]]
        want_s[d["name"]] = (len(vs), min(vs, key=ORDER.index) if vs else None)
    ok(got_s == want_s, "vdsql_datasets x vdsql_check_summary: problems and the worst verdict of each of the %d "
       "datasets, as recorded" % len(want_s),
       err + str({n: (got_s.get(n), w) for n, w in want_s.items() if got_s.get(n) != w}))


if __name__ == "__main__":
    sys.exit(main())
