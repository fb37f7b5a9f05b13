#!/usr/bin/python3
"""Catalog discovery, as TAP: store_objects(url) and vds_datasets(url) on local files, on
a real S3 server (Ceph radosgw on 127.0.0.1, scripts/radosgw-test-server) and on Azurite
(scripts/azurite-test-server), both through tests/taplib.py.

A tree of several OpenVDS datasets (tests/gen/mkvds.py), nested prefixes, a malformed
VolumeDataLayout, a dataset without LayerStatus, a key that only ends in
"VolumeDataLayout", names with spaces, UTF-8 and '%', and plain objects with user
metadata. Expected values come from elsewhere: for files os.walk / os.stat / os.getxattr,
for S3 boto3 (Debian's python3-boto3: uploads, list_objects_v2, head_object) and a
listing signed by curl --aws-sigv4, for Azure the Shared Key client of
tests/azclient.py (uploads, HEADs, a listing, a container SAS); datasets'
dimensionality, samples and layer counts from Python's json reading the documents.
Request counts are asserted exactly with vdsql_stats(), each query in a fresh connection
(cold cache): S3 N objects in pages of 1000 cost ceil(N/1000) listings, plus one HEAD per
object only when the metadata column is read (Azure listings carry it: never a HEAD); a
LIMIT sets the page size asked for; vds_datasets walks folders: the prefix is listed (the
delimiter '/'), each folder below it is asked for its VolumeDataLayout, which makes a
dataset (never listed: its second and last request is its LayerStatus) or else a folder
whose listing pages are read and walked. It costs 2 requests per dataset plus, for each
other folder, its listing pages and the one probe, counted by an independent walk of the
same folders (os.listdir, boto3's list_objects_v2 with Delimiter, the Azure client's List
Blobs with delimiter); a join with vds_layers costs nothing more. A folder of more keys than a
page holds (1,100 on S3, 5,100 on files and Azure) before a dataset checks that every
continuation token is followed.
   env: SO, SQLITE3 (tests/taplib.py), VDSQL_TESTDATA (a ready `mkvds.py tests`
        directory, else generated)"""
import concurrent.futures
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.dirname(here))
from taplib import Azurite, Radosgw, ok, plan, shell_args  # noqa: E402

AWS_VARS = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
            "AWS_DEFAULT_REGION", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY",
            "AZURE_STORAGE_SAS_TOKEN")


def q(s):
    return "'" + s.replace("'", "''") + "'"


def run(sql, env=None, backend="file"):
    """(rows as dicts, the backend's [requests, bytes, cache_hits], stderr) of sql in a
    fresh connection (the shell's JSON mode; an empty result prints nothing)."""
    e = {k: v for k, v in os.environ.items() if k not in AWS_VARS}
    e.update(env or {})
    script = ".mode json\n%s\nSELECT requests, bytes, cache_hits FROM vdsql_stats() WHERE backend = '%s';\n" % (sql, backend)
    p = subprocess.run(shell_args(), input=script, text=True, capture_output=True, env=e)
    if p.returncode not in (0, 1) or "Sanitizer" in p.stderr or "runtime error:" in p.stderr:
        return None, None, "exit %d: %s" % (p.returncode, p.stderr)  # a crash or a sanitizer's report
    arrays, dec, s = [], json.JSONDecoder(), p.stdout
    i = 0
    while True:
        while i < len(s) and s[i].isspace():
            i += 1
        if i >= len(s):
            break
        try:
            v, i = dec.raw_decode(s, i)
        except ValueError:
            return None, None, p.stderr + " / unparsable output: " + s[i:i + 200]
        arrays.append(v)
    if not arrays:
        return None, None, p.stderr
    st = arrays[-1][0]
    rows = arrays[0] if len(arrays) == 2 else []
    return rows, [st["requests"], st["bytes"], st["cache_hits"]], p.stderr


def testdata(tmp):
    ds = os.environ.get("VDSQL_TESTDATA")
    if ds:
        return ds
    ds = os.path.join(tmp, "gen")
    subprocess.run(["python3", os.path.join(top, "tests/gen/mkvds.py"), "tests", ds], check=True, capture_output=True)
    return ds


# The tree: relative name -> source dataset of mkvds.py (None: written here)
DATASETS = {"a/survey": "survey", "a/zz": "survey", "a/old": "old", "proj/x y/ü%ds": "wavelet", "proj/deep/er/survey_rle": "survey_rle"}
PLAIN = {"plain/a b%.txt": (b"hello", {"color": "blue", "vdschunkmetadata": "AQIDBAUGBwg=", "quote": 'say "hi" \\ {x}'}),
         "plain/ü.bin": (b"\x00" * 33, {}),
         "proj/notalayoutVolumeDataLayout": (b"{}", {})}


def build_tree(src, root):
    for rel, name in DATASETS.items():
        shutil.copytree(os.path.join(src, name), os.path.join(root, rel))
    os.makedirs(os.path.join(root, "proj/bad"))
    with open(os.path.join(root, "proj/bad/VolumeDataLayout"), "w") as f:
        f.write('{"layoutDescriptor": ')  # cut short: malformed JSON
    shutil.copy(os.path.join(src, "old/LayerStatus"), os.path.join(root, "proj/bad/LayerStatus"))
    os.makedirs(os.path.join(root, "proj/nols"))
    shutil.copy(os.path.join(src, "old/VolumeDataLayout"), os.path.join(root, "proj/nols/VolumeDataLayout"))
    for rel, (body, meta) in PLAIN.items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(body)
        for k, v in meta.items():
            os.setxattr(p, "user." + k, v.encode())


def walk(root):
    """Every file under root: relative key -> (size, etag as the file backend makes it
    from stat, ISO mtime, user metadata), keys in byte order."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            st = os.stat(p)
            meta = {k[5:].lower(): os.getxattr(p, k).decode() for k in os.listxattr(p) if k.startswith("user.")}
            etag = '"%x-%x.%x-%x"' % (st.st_ino, st.st_mtime_ns // 10**9, st.st_mtime_ns % 10**9, st.st_size)
            out[os.path.relpath(p, root)] = (st.st_size, etag, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(st.st_mtime)), meta)
    return dict(sorted(out.items(), key=lambda kv: kv[0].encode()))


def expected_datasets(root):
    """Dataset prefix -> (dimensionality, samples text, per-axis list, layer count) from
    Python's json, or None where a document is missing or not JSON."""
    out = {}
    for d, _, files in os.walk(root):
        if "VolumeDataLayout" not in files:
            continue
        rel = os.path.relpath(d, root)
        try:
            lay = json.load(open(os.path.join(d, "VolumeDataLayout")))
            st = json.load(open(os.path.join(d, "LayerStatus")))
            n = [a["numSamples"] for a in lay["axisDescriptors"]]
            out[rel] = (len(n), "x".join(map(str, n)), n, len(st), [l["layerName"] for l in st])
        except (ValueError, OSError):
            out[rel] = None
    return dict(sorted(out.items(), key=lambda kv: kv[0].encode()))


def unaddressable(key):
    """A key with a '.', '..' or empty segment: no URL names it (vds_datasets never asks for it)."""
    return any(seg in ("", ".", "..") for seg in key.split("/"))


def walk_requests(prefix, list_folder):
    """The requests vds_datasets' folder walk of prefix costs besides the two documents
    of each dataset, by an independent walk: list_folder(p) gives a folder's listing
    pages, its sub-folders (full names ending in '/') and whether it holds a
    VolumeDataLayout. The prefix itself is listed; a folder below it is first asked for
    its VolumeDataLayout (1 request, unless no URL can name it), which for a dataset is
    its first document (counted with the two), and any other folder is then listed and
    walked; nothing inside a dataset."""
    cost, todo = 0, [prefix]
    while todo:
        p = todo.pop()
        pages, subs, layout = list_folder(p)
        if p != prefix and not unaddressable(p[len(prefix):] + "VolumeDataLayout"):
            if layout:
                continue
            cost += 1
        cost += pages
        if not layout:
            todo += subs
    return cost


def local_listings(folder, page=5000):
    """walk_requests by os.listdir: a folder's files and sub-directories in pages of `page`."""
    def ls(p):
        names = os.listdir(p)
        dirs = [os.path.join(p, n) + "/" for n in names if os.path.isdir(os.path.join(p, n))]
        return max(1, math.ceil(len(names) / page)), dirs, os.path.isfile(os.path.join(p, "VolumeDataLayout"))
    return walk_requests(folder.rstrip("/") + "/", ls)


def s3_listings(c, bucket, prefix):
    """walk_requests by boto3: list_objects_v2 pages with Delimiter='/' (1000 a page)."""
    def ls(p):
        pages, subs, layout = 0, [], False
        for pg in c.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=p, Delimiter="/"):
            pages += 1
            layout = layout or any(o["Key"] == p + "VolumeDataLayout" for o in pg.get("Contents", []))
            subs += [cp["Prefix"] for cp in pg.get("CommonPrefixes", [])]
        return pages, subs, layout
    return walk_requests(prefix, ls)


def az_listings(az, container, prefix):
    """walk_requests by the Azure test client: List Blobs with delimiter=/ (5000 a page),
    NextMarker followed."""
    import xml.etree.ElementTree as ET

    def ls(p):
        pages, subs, layout, marker = 0, [], False, None
        while True:
            params = {"restype": "container", "comp": "list", "delimiter": "/", "prefix": p}
            if marker:
                params["marker"] = marker
            code, _, body = az("GET", "%s/%s" % (az.base, container), params=params)
            if code != 200:
                raise RuntimeError("az listing: HTTP %d" % code)
            pages += 1
            root = ET.fromstring(body)
            layout = layout or any(b.findtext("Name") == p + "VolumeDataLayout" for b in root.iter("Blob"))
            subs += [b.findtext("Name") for b in root.iter("BlobPrefix")]
            marker = root.findtext("NextMarker")
            if not marker:
                return pages, subs, layout
    return walk_requests(prefix, ls)


def check_datasets(label, rows, exp, url_of, err_of):
    got = {r["dataset"]: r for r in rows}
    want = {url_of(k): v for k, v in exp.items()}
    ok(list(got) == list(want), "%s: vds_datasets finds every dataset (%d, nested, odd names), in key order, "
       "and not a key that only ends in VolumeDataLayout" % (label, len(want)), "%s\n%s" % (list(got), list(want)))
    bad = []
    for u, v in want.items():
        r = got.get(u)
        if r is None:
            continue
        if v is None:
            if not (r["error"] and err_of(u) in r["error"] and r["dimensionality"] is None and r["samples"] is None
                    and r["layer_count"] is None):
                bad.append((u, r))
            continue
        axes = [r["samples%d" % i] for i in range(6)]
        if (r["error"], r["dimensionality"], r["samples"], axes, r["layer_count"]) != \
                (None, v[0], v[1], v[2] + [None] * (6 - len(v[2])), v[3]):
            bad.append((u, r, v))
    ok(not bad, "%s: dimensionality, samples, samples0..5 and layer_count as Python's json reads them; an unreadable "
       "dataset is a row with its error and NULL counts" % label, bad)


def dataset_checks(kind, S, env, exp, L):
    """vds_datasets under S on a store, and its join with vds_layers (L: the listing pages
    of an independent folder walk); returns the (dataset URL, layer) pairs expected"""
    def enc(k):
        return S + urllib.parse.quote(k, safe="/-_.~")
    rows, st, err = run("SELECT * FROM vds_datasets(%s);" % q(S), env, kind)
    check_datasets(kind, rows or [], exp, enc,
                   lambda u: u + "/VolumeDataLayout: malformed JSON" if u.endswith("bad") else u + ": not an OpenVDS dataset")
    n = len(exp)
    ok(st and st[0] == L + 2 * n, "%s: vds_datasets: %d for the other folders (listing pages + a probe each) + 2 GETs per dataset = %d requests"
       % (kind, L, L + 2 * n), st)
    good = {k: v for k, v in exp.items() if v}
    want = sorted((enc(k), layer) for k, v in good.items() for layer in v[4])
    rows, st, err = run("SELECT d.dataset, l.layer FROM vds_datasets(%s) d, vds_layers(d.dataset) l WHERE d.error IS NULL;"
                        % q(S), env, kind)
    ok(rows is not None and sorted((r["dataset"], r["layer"]) for r in rows) == want,
       "%s: SELECT d.dataset, l.* FROM vds_datasets(...) d, vds_layers(d.dataset) l: every layer (%d)" % (kind, len(want)), err)
    ok(st and st[0] == L + 2 * n and st[2] == 2 * len(good), "%s: ... in the same %d requests (the layers from the cache)"
       % (kind, L + 2 * n), st)
    return want


def local_checks(root):
    files = walk(root)
    keys = list(files)
    rows, st, err = run("SELECT * FROM store_objects(%s);" % q(root + "/"))
    got = None if rows is None else [(r["key"], r["size"], r["etag"], r["last_modified"],
                                      json.loads(r["metadata"]) if r["metadata"] is not None else None) for r in rows]
    want = [(k,) + v for k, v in files.items()]
    ok(got == want, "files: store_objects gives every file (%d) in byte order with os.stat's size, etag, mtime "
       "and the user.* xattrs as a JSON object" % len(want), "%s\n%s\n%s" % (err, (got or [])[:4], want[:4]))
    ok(st == [1, 0, 0], "files: ... in one listing (a page holds 5000 keys)", st)
    rows, _, err = run("SELECT key FROM store_objects(%s);" % q(root + "/proj/x"))
    ok(rows is not None and [r["key"] for r in rows] == [k[5:] for k in keys if k.startswith("proj/x")] and rows,
       "files: a directory plus key prefix lists the keys starting with it, relative to the directory", err)
    cases = [("LIMIT 3", keys[:3]), ("LIMIT 2 OFFSET 3", keys[3:5]), ("ORDER BY key DESC LIMIT 2", keys[::-1][:2]),
             ("WHERE size > 1000 LIMIT 2", [k for k in keys if files[k][0] > 1000][:2]),
             ("WHERE key >= 'proj' LIMIT 2", [k for k in keys if k >= "proj"][:2])]
    for tail, exp in cases:
        rows, _, err = run("SELECT key FROM store_objects(%s) %s;" % (q(root + "/"), tail))
        ok(rows is not None and [r["key"] for r in rows] == exp, "files: %s gives the right rows" % tail, "%s %s" % (err, rows))
    rows, st, err = run("SELECT * FROM store_objects(%s);" % q(root + "/nothing/here/"))
    ok(rows == [] and not err, "files: a prefix nothing is stored under: no rows, no error", err)
    rows, st, err = run("SELECT * FROM store_objects(NULL);")
    ok(rows == [] and not err, "files: a NULL url: no rows", err)
    rows, st, err = run("SELECT * FROM store_objects(42);")
    ok("store_objects: the url must be text, not a number" in err, "files: a number as url: an error saying so", err)
    rows, st, err = run("SELECT * FROM store_objects('http://127.0.0.1:9/x/');", backend="http")
    ok("http://127.0.0.1:9/x/: cannot list: http(s) URLs have no listing" in err and st == [0, 0, 0],
       "http: refused with the store's one wording, no request", "%s %s" % (err, st))
    rows, st, err = run("SELECT * FROM vds_datasets('http://127.0.0.1:9/x/');", backend="http")
    ok("http://127.0.0.1:9/x/: cannot list: http(s) URLs have no listing" in err and st == [0, 0, 0],
       "http: vds_datasets refused the same way", "%s %s" % (err, st))

    exp = expected_datasets(root)
    rows, st, err = run("SELECT * FROM vds_datasets(%s);" % q(root + "/"))
    check_datasets("files", rows or [], exp, lambda k: root + "/" + k,
                   lambda u: u + "/VolumeDataLayout: malformed JSON" if u.endswith("bad") else u + ": not an OpenVDS dataset")
    n = len(exp)
    L = local_listings(root)
    ok(st == [L + 2 * n, st and st[1], 0], "files: vds_datasets costs the %d listings and probes of the folders os.listdir "
       "walks (no dataset folder listed, none inside one) + 2 documents per dataset (%d)" % (L, L + 2 * n), st)
    good = {k: v for k, v in exp.items() if v}
    want = sorted((root + "/" + k, layer) for k, v in good.items() for layer in v[4])
    rows, st, err = run("SELECT d.dataset, l.layer FROM vds_datasets(%s) d, vds_layers(d.dataset) l WHERE d.error IS NULL;"
                        % q(root + "/"))
    ok(rows is not None and sorted((r["dataset"], r["layer"]) for r in rows) == want,
       "files: vds_datasets d, vds_layers(d.dataset): every dataset's LayerStatus layers (%d)" % len(want), "%s %s" % (err, rows))
    ok(st and st[0] == L + 2 * n and st[2] == 2 * len(good),
       "files: ... the join reads nothing more: vds_layers finds both documents in the cache (%d hits)" % (2 * len(good)), st)
    rows, st, err = run("SELECT dataset, layer_count FROM vds_datasets(%s);" % q(root + "/a/survey/"))
    ok(rows == [{"dataset": root + "/a/survey/", "layer_count": exp["a/survey"][3]}],
       "files: a dataset's own folder as the prefix: one row, the folder itself", "%s %s" % (err, rows))
    rows, st, err = run("SELECT dataset FROM vds_datasets(%s);" % q(root + "/a/s"))
    ok(rows == [{"dataset": root + "/a/survey"}], "files: a directory plus name prefix: only the datasets it selects",
       "%s %s" % (err, rows))
    return exp


def build_wide(src, root, n):
    """root/wide: n plain files, then (after them in key order) the dataset zz: more keys
    than one listing page before the only dataset."""
    os.makedirs(os.path.join(root, "wide"))
    for i in range(n):
        with open(os.path.join(root, "wide/%05d" % i), "wb") as f:
            f.write(b"%d" % i)
    shutil.copytree(os.path.join(src, "survey"), os.path.join(root, "wide/zz"))


def wide_check(kind, url, env, pages, first_pages, layers):
    """vds_datasets(url) under the wide folder finds zz past the first page: the walk's
    pages (an independent walk's count, first_pages of them the wide folder's own) + 2."""
    rows, st, err = run("SELECT dataset, layer_count FROM vds_datasets(%s);" % q(url), env, {"files": "file"}.get(kind, kind))
    ok(rows == [{"dataset": url + "zz", "layer_count": layers}] and first_pages > 1 and st and st[0] == pages + 2,
       "%s: vds_datasets finds the dataset after a folder's first listing page (%d pages there; %d listings + 2 GETs)"
       % (kind, first_pages, pages), "%s %s %s" % (rows, st, err))


FLAT = 6  # datasets side by side under flat/, beside one plain folder


def build_flat(src, root):
    """root/flat: FLAT copies of a dataset and a folder misc/ of one plain file."""
    for i in range(FLAT):
        shutil.copytree(os.path.join(src, "survey"), os.path.join(root, "flat/d%02d" % i))
    os.makedirs(os.path.join(root, "flat/misc"))
    with open(os.path.join(root, "flat/misc/readme.txt"), "w") as f:
        f.write("not a dataset")


def flat_files(root):
    """The files of root/flat a store needs for the flat check: relative key -> path
    (the datasets' documents, not their chunks, which nothing lists)."""
    out = {}
    for d, _, files in os.walk(os.path.join(root, "flat")):
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), root)
            if rel.count("/") <= 2:
                out[rel] = os.path.join(d, f)
    return out


def flat_check(kind, url, env, layers):
    """The issue's count without a model: datasets side by side cost 2 requests each (the
    probe that finds the VolumeDataLayout, then the LayerStatus), the prefix 1 listing,
    and the plain folder its probe and its listing."""
    rows, st, err = run("SELECT dataset, layer_count FROM vds_datasets(%s);" % q(url), env, {"files": "file"}.get(kind, kind))
    want = [{"dataset": url + "d%02d" % i, "layer_count": layers} for i in range(FLAT)]
    ok(rows == want and st and st[0] == 1 + 2 * FLAT + 2,
       "%s: %d datasets side by side and a plain folder: 1 listing + 2 GETs per dataset + 2 for the folder (probe, "
       "listing) = %d requests" % (kind, FLAT, 1 + 2 * FLAT + 2), "%s %s %s" % (rows, st, err))


def files_with(files, name):
    return sorted(k for k in files if k.endswith("/" + name))[0]


def s3_checks(srv, root, exp, tmp):
    import boto3
    import botocore.config
    env = {k: srv.env[k] for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")}
    cfg = botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2}, max_pool_connections=16)
    c = boto3.client("s3", endpoint_url=srv.endpoint, aws_access_key_id=srv.key, aws_secret_access_key=srv.secret,
                     region_name=srv.region, config=cfg)
    B = srv.bucket
    files = walk(root)
    for k in files:
        meta = files[k][3]
        c.upload_file(os.path.join(root, k), B, "cat/" + k, ExtraArgs={"Metadata": meta} if meta else None)
    N = 2500
    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        list(ex.map(lambda i: c.put_object(Bucket=B, Key="many/%05d" % i, Body=b"%d" % i), range(N)))
    listed = []
    for pg in c.get_paginator("list_objects_v2").paginate(Bucket=B, Prefix="cat/"):
        listed += pg.get("Contents", [])
    ok(len(listed) == len(files), "s3: boto3 uploads the tree (%d objects, metadata on %d) and %d more under many/"
       % (len(files), sum(1 for v in files.values() if v[3]), N), len(listed))
    S = "s3://%s/cat/" % B

    def iso(o):
        return o["LastModified"].astimezone(__import__("datetime").timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    want = [(o["Key"][4:], o["Size"], o["ETag"], iso(o)) for o in listed]
    rows, st, err = run("SELECT key, size, etag, last_modified FROM store_objects(%s);" % q(S), env, "s3")
    got = None if rows is None else [(r["key"], r["size"], r["etag"], r["last_modified"]) for r in rows]
    ok(got == want, "s3: store_objects gives boto3's keys (relative to the prefix), sizes, ETags and LastModified (ISO UTC)",
       "%s\n%s\n%s" % (err, (got or [])[:3], want[:3]))
    ok(st and st[0] == 1, "s3: ... without the metadata column: 1 listing request, no HEAD", st)
    heads = {o["Key"][4:]: c.head_object(Bucket=B, Key=o["Key"])["Metadata"] for o in listed}
    rows, st, err = run("SELECT key, metadata FROM store_objects(%s);" % q(S), env, "s3")
    got = None if rows is None else {r["key"]: json.loads(r["metadata"]) for r in rows}
    ok(got == heads and any(heads.values()), "s3: the metadata column is boto3's head_object Metadata, as JSON objects",
       "%s %s" % (err, got and [(k, v, heads.get(k)) for k, v in got.items() if v != heads.get(k)][:3]))
    ok(st and st[0] == 1 + len(listed), "s3: ... 1 listing + %d HEADs (S3 listings carry no metadata)" % len(listed), st)

    M = "s3://%s/many/" % B
    keys = ["%05d" % i for i in range(N)]
    pages = math.ceil(N / 1000)
    rows, st, err = run("SELECT key, size FROM store_objects(%s);" % q(M), env, "s3")
    ok(rows is not None and [(r["key"], r["size"]) for r in rows] == [(k, len(str(int(k)))) for k in keys],
       "s3: %d objects through continuation tokens, in key order" % N, err)
    ok(st and st[0] == pages, "s3: ... ceil(%d/1000) = %d listing requests" % (N, pages), st)
    rows, st, err = run("SELECT count(*) AS n FROM store_objects(%s);" % q(M), env, "s3")
    ok(rows == [{"n": N}] and st and st[0] == pages, "s3: count(*): %d listings, no HEAD" % pages, "%s %s %s" % (rows, st, err))
    # the listing body of max-keys=3, signed by curl (the query sorted and encoded as SigV4 wants)
    body = curl_list(srv, tmp, "list-type=2&max-keys=3&prefix=many%2F")
    rows, st, err = run("SELECT key FROM store_objects(%s) LIMIT 3;" % q(M), env, "s3")
    ok(rows == [{"key": k} for k in keys[:3]], "s3: LIMIT 3 gives the first 3 keys", "%s %s" % (rows, err))
    ok(st and st[0] == 1 and body and st[1] == len(body) and b"<MaxKeys>3</MaxKeys>" in body,
       "s3: ... with 1 listing request asking for 3 keys (its %s bytes are those of curl's max-keys=3 listing)" % (st and st[1]),
       "%s %d" % (st, len(body or b"")))
    rows, st, err = run("SELECT key FROM store_objects(%s) LIMIT 1500;" % q(M), env, "s3")
    ok(rows == [{"key": k} for k in keys[:1500]] and st and st[0] == 2, "s3: LIMIT 1500: 2 listings (1000 + 500)",
       "%s %s" % (st, err))
    rows, st, err = run("SELECT key, metadata FROM store_objects(%s) LIMIT 5;" % q(M), env, "s3")
    ok(rows == [{"key": k, "metadata": "{}"} for k in keys[:5]] and st and st[0] == 1 + 5,
       "s3: LIMIT 5 with metadata: 1 listing + 5 HEADs", "%s %s %s" % (rows, st, err))
    rows, st, err = run("SELECT key FROM store_objects(%s) WHERE key > '02490';" % q(M), env, "s3")
    ok(rows == [{"key": k} for k in keys if k > "02490"], "s3: a WHERE on key is applied on top", err)

    dataset_checks("s3", S, env, exp, s3_listings(c, B, "cat/"))
    # keys with '.' or '..' segments (legal on S3) name other objects once in a URL: such a
    # dataset is a row with its error, never opened (its documents are not read)
    lay = open(os.path.join(root, files_with(files, "VolumeDataLayout")), "rb").read()
    for k in ("dots/a/../b/VolumeDataLayout", "dots/x/./VolumeDataLayout", "dots/b/VolumeDataLayout"):
        c.put_object(Bucket=B, Key=k, Body=lay)
    rows, st, err = run("SELECT dataset, error FROM vds_datasets('s3://%s/dots/');" % B, env, "s3")
    bad = "%s: the key has a '.', '..' or empty segment, which a URL cannot name (it would read other objects); not opened"
    want = [("s3://%s/dots/a/../b" % B, bad % ("s3://%s/dots/a/../b" % B)),
            ("s3://%s/dots/b" % B, "s3://%s/dots/b: not an OpenVDS dataset: s3://%s/dots/b/LayerStatus: HTTP 404 Not "
             "Found (NoSuchKey)" % (B, B)),
            ("s3://%s/dots/x/." % B, bad % ("s3://%s/dots/x/." % B))]
    L = s3_listings(c, B, "dots/")
    ok(rows is not None and [(r["dataset"], r["error"]) for r in rows] == want and st and st[0] == L + 2,
       "s3: vds_datasets reports datasets under keys with '.' or '..' segments in error, reads nothing of them "
       "(%d listings and probes of its folders + 2 GETs for the one addressable dataset)" % L, "%s %s %s" % (rows, st, err))
    first = [o["Key"] for o in c.list_objects_v2(Bucket=B, MaxKeys=2)["Contents"]]
    rows, st, err = run("SELECT key, metadata FROM store_objects('s3://%s') LIMIT 2;" % B, env, "s3")
    ok(rows is not None and [(r["key"], json.loads(r["metadata"])) for r in rows] ==
       [(k, c.head_object(Bucket=B, Key=k)["Metadata"]) for k in first] and st and st[0] == 3,
       "s3: a bucket URL without '/' lists the whole bucket, keys in full, HEADs on the right objects (1 + 2 requests)",
       "%s %s %s" % (rows, st, err))
    rows, st, err = run("SELECT key FROM store_objects('s3://%s/no/such/prefix/');" % B, env, "s3")
    ok(rows == [] and not err and st and st[0] == 1, "s3: an empty prefix: no rows, one listing", "%s %s" % (st, err))
    wroot = os.path.join(tmp, "w")
    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        list(ex.map(lambda i: c.put_object(Bucket=B, Key="wide/%05d" % i, Body=b"%d" % i), range(1100)))
    for f in os.listdir(os.path.join(wroot, "wide/zz")):
        if os.path.isfile(os.path.join(wroot, "wide/zz", f)):
            c.upload_file(os.path.join(wroot, "wide/zz", f), B, "wide/zz/" + f)
    first = len(list(c.get_paginator("list_objects_v2").paginate(Bucket=B, Prefix="wide/", Delimiter="/")))
    wide_check("s3", "s3://%s/wide/" % B, env, s3_listings(c, B, "wide/"), first, exp["a/survey"][3])
    for k, fp in flat_files(wroot).items():
        c.upload_file(fp, B, k)
    flat_check("s3", "s3://%s/flat/" % B, env, exp["a/survey"][3])


def az_checks(srv, root, exp, tmp):
    """The same on Azurite: uploads by tests/azclient.py (Shared Key signed by hand from the
    spec), expected values from its HEADs; listings carry metadata (include=metadata), so
    no HEAD is ever sent."""
    from azclient import Az
    import email.utils
    az = Az(srv)
    C = srv.container
    env = {"AZURE_STORAGE_CONNECTION_STRING": srv.env["AZURE_STORAGE_CONNECTION_STRING"]}
    files = walk(root)

    def path(k):
        return "%s/%s/%s" % (az.base, C, urllib.parse.quote(k))

    def put(k, body, meta):
        hdrs = {"x-ms-blob-type": "BlockBlob"}
        hdrs.update({"x-ms-meta-" + m: v for m, v in meta.items()})
        st, _, text = az("PUT", path(k), headers=hdrs, body=body)
        if st != 201:
            raise RuntimeError("%s: HTTP %d %s" % (k, st, text[:200]))
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        list(ex.map(lambda k: put("cat/" + k, open(os.path.join(root, k), "rb").read(), files[k][3]), files))
    N = 5200
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        list(ex.map(lambda i: put("many/%05d" % i, b"%d" % i, {}), range(N)))

    def head(k):
        st, h, _ = az("HEAD", path(k))
        t = email.utils.parsedate_to_datetime(h["last-modified"]).strftime("%Y-%m-%dT%H:%M:%SZ")
        return (k[4:], int(h["content-length"]), h["etag"], t, {m[10:]: v for m, v in h.items() if m.startswith("x-ms-meta-")})
    want = [head("cat/" + k) for k in files]
    S = "az://%s/cat/" % C
    rows, st, err = run("SELECT * FROM store_objects(%s);" % q(S), env, "az")
    got = None if rows is None else [(r["key"], r["size"], r["etag"], r["last_modified"], json.loads(r["metadata"])) for r in rows]
    ok(got == want, "az: store_objects gives every blob (%d) with the size, ETag, Last-Modified and x-ms-meta-* of "
       "its HEAD (Shared Key client of tests/azclient.py)" % len(want), "%s\n%s\n%s" % (err, (got or [])[:3], want[:3]))
    ok(st and st[0] == 1, "az: ... metadata included: 1 listing request, no HEAD", st)
    M = "az://%s/many/" % C
    keys = ["%05d" % i for i in range(N)]
    rows, st, err = run("SELECT key, metadata FROM store_objects(%s);" % q(M), env, "az")
    ok(rows == [{"key": k, "metadata": "{}"} for k in keys] and st and st[0] == math.ceil(N / 5000),
       "az: %d blobs through NextMarker in ceil(%d/5000) = %d listings" % (N, N, math.ceil(N / 5000)), "%s %s" % (st, err))
    code, _, body = az("GET", "%s/%s" % (az.base, C), params={"restype": "container", "comp": "list", "include": "metadata",
                                                             "maxresults": "3", "prefix": "many/"})
    rows, st, err = run("SELECT key FROM store_objects(%s) LIMIT 3;" % q(M), env, "az")
    ok(rows == [{"key": k} for k in keys[:3]] and st and st[0] == 1 and code == 200 and st[1] == len(body)
       and b"<MaxResults>3</MaxResults>" in body,
       "az: LIMIT 3: 1 listing request asking for 3 blobs (its %s bytes are those of the Shared Key client's "
       "maxresults=3 listing)" % (st and st[1]), "%s %d %s" % (st, len(body), err))

    want = dataset_checks("az", S, env, exp, az_listings(az, C, "cat/"))
    # a read-only container SAS on the URL (the environment's own SAS is not valid): it goes
    # with the listing, every document and every dataset URL given back, never into an error
    from azclient import sas_container
    ro = sas_container(srv, "rl")
    sas_env = {"AZURE_STORAGE_CONNECTION_STRING": "BlobEndpoint=%s;SharedAccessSignature=%s"
               % (srv.endpoint, "sv=2021-08-06&sig=bm90LXZhbGlk")}
    rows, st, err = run("SELECT d.dataset, l.layer FROM vds_datasets(%s) d, vds_layers(d.dataset) l WHERE d.error IS NULL;"
                        % q(S + "?" + ro), sas_env, "az")
    got = None if rows is None else sorted((r["dataset"], r["layer"]) for r in rows)
    rows, _, err2 = run("SELECT error FROM vds_datasets(%s) WHERE error IS NOT NULL;" % q(S + "?" + ro), sas_env, "az")
    errs = [] if rows is None else [r["error"] for r in rows]
    err += err2
    ok(got == sorted((u + "?" + ro, layer) for u, layer in want) and len(errs) == 2
       and not any("sig=" in e for e in errs) and all("?..." in e for e in errs),
       "az: a SAS on the prefix URL goes with every request and every dataset URL (the join reads all %d layers); "
       "errors show it as ?..." % len(want), "%s %s %s" % (err, errs, (got or [])[:2]))
    wroot = os.path.join(tmp, "w")
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        list(ex.map(lambda i: put("wide/%05d" % i, b"%d" % i, {}), range(5100)))
    for f in os.listdir(os.path.join(wroot, "wide/zz")):
        if os.path.isfile(os.path.join(wroot, "wide/zz", f)):
            put("wide/zz/" + f, open(os.path.join(wroot, "wide/zz", f), "rb").read(), {})
    wide_check("az", "az://%s/wide/" % C, env, az_listings(az, C, "wide/"), 2, exp["a/survey"][3])
    for k, fp in flat_files(wroot).items():
        put(k, open(fp, "rb").read(), {})
    flat_check("az", "az://%s/flat/" % C, env, exp["a/survey"][3])


def curl_list(srv, tmp, query):
    """A ListObjectsV2 answer fetched by curl --aws-sigv4 (credentials through stdin)."""
    out = os.path.join(tmp, "list.xml")
    args = ["curl", "-s", "-o", out, "-w", "%{http_code}", "--max-time", "20", "--aws-sigv4", "aws:amz:%s:s3" % srv.region,
            "-K", "-", "-H", "x-amz-content-sha256: %s" % hashlib.sha256(b"").hexdigest(),
            "%s/%s?%s" % (srv.endpoint, srv.bucket, query)]
    r = subprocess.run(args, input='user = "%s:%s"\n' % (srv.key, srv.secret), capture_output=True, text=True)
    return open(out, "rb").read() if r.stdout == "200" and os.path.exists(out) else None


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-catalog.")
    try:
        root = os.path.join(tmp, "root")
        src = testdata(tmp)
        build_tree(src, root)
        exp = local_checks(root)
        wroot = os.path.join(tmp, "w")
        build_wide(src, wroot, 5100)
        layers = exp["a/survey"][3]
        wide_check("files", wroot + "/wide/", None, local_listings(os.path.join(wroot, "wide")),
                   math.ceil((5100 + 1) / 5000), layers)
        build_flat(src, wroot)
        flat_check("files", wroot + "/flat/", None, layers)
        try:
            import boto3  # noqa: F401
        except ImportError:
            ok(False, "boto3 for /usr/bin/python3 (Debian package python3-boto3)")
            return plan()
        with Radosgw() as srv:
            if ok(srv.started, "radosgw starts on 127.0.0.1", srv.error):
                s3_checks(srv, root, exp, tmp)
        with Azurite() as srv:
            if ok(srv.started, "azurite starts on 127.0.0.1", srv.error):
                az_checks(srv, root, exp, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


sys.exit(main())
