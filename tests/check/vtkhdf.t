#!/usr/bin/python3
"""vdsql_check on VTKHDF files (docs/check.md, section VTKHDF), as TAP, on local files,
over http (nginx on 127.0.0.1) and on S3 (Ceph radosgw on 127.0.0.1).

The catalog is tests/gen/mkbroken_vtkhdf.py's: files broken on purpose, with the
generator's record of each fault. Each fault the record lists is first confirmed here
with h5py (a part file gone or not HDF5, a mapped dataset shorter than its mapping, an
external link to nothing, counts that run past the arrays they index, an HDF5 file with
no /VTKHDF), so expectations never come from vdsql. Checked on each store:
  - vdsql_check gives exactly the record's rows (part, item, verdict) and each detail
    holds the record's words (source file, dataset, both extents ...);
  - vdsql_check_summary: items (the step x partitions, from h5py), problems, worst;
  - one query over the catalog does not stop at a broken file;
  - over http and S3, a check (partitions, sources and the arrays' extents in one open)
    costs no more requests than vtkhdf_partitions or vtkhdf_sources alone, each in a
    fresh process (vdsql_stats);
  - vdsql_datasets lists plain.hdf (an HDF5 file with no /VTKHDF) with no error: the
    name rule stands (docs/check.md), and vdsql_check says what it is.
Then real files (../shared/realworld/pyvista: VTK's and pyvista's) check clean, and the hostile files of ../shared/fixtures/hostile-vtkhdf/, checked in place: each is
rows, the sqlite3 process never dies (the HDF5 helper may) and checks on after them.
   env: SO, SQLITE3 (tests/taplib.py), VDSQL_SHARED (../shared); needs /usr/bin/python3 with h5py (python3-h5py)"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "gen"))
from taplib import Nginx, Radosgw, json_sets, ok, plan  # noqa: E402

GEN = os.path.join(top, "tests", "gen", "mkbroken_vtkhdf.py")
SHARED = os.environ.get("VDSQL_SHARED", os.path.join(os.path.dirname(top), "shared"))
HOSTILE = os.path.join(SHARED, "fixtures", "hostile-vtkhdf")
ORDER = ["unreadable", "malformed", "missing", "short", "mismatch", "orphan", "uncommitted"]
STATS = "SELECT coalesce(sum(requests), 0) AS requests FROM vdsql_stats() WHERE backend = '%s';"
RESET = "SELECT vdsql_config('stats', 'reset');\n"

try:
    import h5py
    import numpy as np
except ImportError:
    ok(False, "h5py is needed (apt-get install python3-h5py; run with /usr/bin/python3)")
    plan()
    sys.exit(1)


def q(s):
    return "'" + s.replace("'", "''") + "'"


def confirm(root, rec):
    """The record's faults, seen with h5py and the filesystem (not vdsql)."""
    by = {d["name"]: d for d in rec}
    with h5py.File(os.path.join(root, "clean.vtkhdf")) as f:
        g = f["VTKHDF"]
        ok(g["Points"].shape[0] == int(np.sum(g["NumberOfPoints"][:])) and
           g["Connectivity"].shape[0] == int(np.sum(g["NumberOfConnectivityIds"][:])) and
           g["Steps"].attrs["NSteps"] * 2 == by["clean.vtkhdf"]["items"],
           "h5py: clean.vtkhdf's counts add up to its arrays, 2 steps x 2 partitions")
    with h5py.File(os.path.join(root, "vds_gone.vtkhdf")) as f:
        srcs = {s.file_name for s in f["VTKHDF/Points"].virtual_sources()}
        ok("vds_gone_part1.vtkhdf" in srcs and not os.path.exists(os.path.join(root, "vds_gone_part1.vtkhdf")),
           "h5py: vds_gone.vtkhdf maps Points from vds_gone_part1.vtkhdf, which is gone")
    with open(os.path.join(root, "vds_text_part1.vtkhdf"), "rb") as f:
        ok(not f.read(8).startswith(b"\x89HDF"), "vds_text_part1.vtkhdf has no HDF5 signature")
    with h5py.File(os.path.join(root, "vds_text_part2.vtkhdf")) as f:
        ok("Temp" not in f["VTKHDF/PointData"], "h5py: vds_text_part2.vtkhdf has no /VTKHDF/PointData/Temp")
    with h5py.File(os.path.join(root, "vds_short.vtkhdf")) as f, \
            h5py.File(os.path.join(root, "vds_short_part1.vtkhdf")) as p:
        m = [s for s in f["VTKHDF/Points"].virtual_sources() if s.file_name == "vds_short_part1.vtkhdf"][0]
        lo, hi = m.src_space.get_select_bounds()
        have = p["VTKHDF/Points"].shape[0]
        ok(have == 2 and (lo[0], hi[0]) == (0, 3),
           "h5py: vds_short maps rows %d..%d of vds_short_part1.vtkhdf's Points, which has %d" % (lo[0], hi[0], have))
    with h5py.File(os.path.join(root, "elink_gone.vtkhdf")) as f:
        lk = f["VTKHDF"].get("BlockA", getlink=True)
        ok(isinstance(lk, h5py.ExternalLink) and not os.path.exists(os.path.join(root, lk.filename)),
           "h5py: elink_gone.vtkhdf's BlockA is an external link to %s, which is gone" % lk.filename)
    with h5py.File(os.path.join(root, "counts.vtkhdf")) as f:
        g = f["VTKHDF"]
        npt = list(g["NumberOfPoints"][:])
        ok(g["Points"].shape[0] == 6 and npt == [4, 3, 2] and g["Connectivity"].shape[0] == 15 and
           int(np.sum(g["NumberOfConnectivityIds"][:])) == 12,
           "h5py: counts.vtkhdf: 9 points counted, 6 written; 12 connectivity ids counted, 15 written")
    with h5py.File(os.path.join(root, "steps_past.vtkhdf")) as f:
        g = f["VTKHDF"]
        ok(int(g["Steps/PointOffsets"][1]) + int(g["NumberOfPoints"][1]) > g["Points"].shape[0] == 8,
           "h5py: steps_past.vtkhdf's step 1 starts at row 6 and reads 4 of 8")
    with h5py.File(os.path.join(root, "vds_far.vtkhdf")) as f:
        names = [x.file_name for x in f["VTKHDF/Points"].virtual_sources()]
        ok(names[1].startswith("http://127.0.0.2:9/"), "h5py: vds_far.vtkhdf names part 1 by a URL on 127.0.0.2", str(names))
    with h5py.File(os.path.join(root, "poly.vtkhdf")) as f:
        g = f["VTKHDF/Polygons"]
        nci = list(g["NumberOfConnectivityIds"][:])
        ok(g["Connectivity"].shape[0] == 5 and nci == [4, 3],
           "h5py: poly.vtkhdf's Polygons count 4 + 3 connectivity ids and hold 5")
    with h5py.File(os.path.join(root, "negative.vtkhdf")) as f:
        ok(int(f["VTKHDF/NumberOfPoints"][1]) == -1, "h5py: negative.vtkhdf's NumberOfPoints[1] is -1")
    with h5py.File(os.path.join(root, "plain.hdf")) as f:
        ok("VTKHDF" not in f, "h5py: plain.hdf is HDF5 with no /VTKHDF group")


def key(part, item, verdict):
    return (part or "", item or "", verdict)


def faults(d, backend):
    """The record's faults as seen from backend: a remote main file's own verdicts where
    the record gives them ("remote")"""
    out = []
    for f in d["faults"]:
        if backend != "file" and "remote" in f:
            f = dict(f, **f["remote"])
        out.append(f)
    return out


def expected(fs):
    return sorted(key(f["part"], f["item"], f["verdict"]) for f in fs)


def words(f):
    a = f["audit"]
    return a if isinstance(a, list) else [a]


def checks(where, base, rec, env, backend):
    urls = [base + d["name"] for d in rec]
    stmt = "".join("SELECT %s AS url, part, item, verdict, detail FROM vdsql_check(%s);\n" % (q(u), q(u)) for u in urls)
    sets, err, rc = json_sets(stmt, env)
    ok(rc == 0 and not err.strip(), "%s: vdsql_check of every file runs without an error" % where, err[-400:])
    rows = {}
    for s in sets:
        for r in s:
            rows.setdefault(r["url"], []).append(r)
    for d, u in zip(rec, urls):
        got = rows.get(u, [])
        fs = faults(d, backend)
        ok(sorted(key(r["part"], r["item"], r["verdict"]) for r in got) == expected(fs),
           "%s: %s: the record's rows (%d)" % (where, d["name"], len(fs)),
           json.dumps(got, indent=1)[:1500])
        for f in fs:
            r = [x for x in got if (x["part"], x["item"], x["verdict"]) == (f["part"], f["item"], f["verdict"])]
            ok(r and all(w in r[0]["detail"] for w in words(f)),
               "%s: %s %s %s: the detail names %s" % (where, d["name"], f["item"] or f["part"], f["verdict"], words(f)),
               r[0]["detail"] if r else "no row")
    # the summary, and one query over the catalog that does not stop at a broken file
    cat = "CREATE TEMP TABLE cat(url TEXT);\n" + "".join("INSERT INTO cat VALUES (%s);\n" % q(u) for u in urls)
    sets, err, rc = json_sets(cat + "SELECT c.url, s.items, s.problems, s.worst FROM cat c, vdsql_check_summary(c.url) s;\n"
                              "SELECT count(*) AS n FROM cat c, vdsql_check(c.url) k;\n", env)
    summ = {r["url"]: r for r in sets[0]} if sets else {}
    for d, u in zip(rec, urls):
        worst = min((f["verdict"] for f in faults(d, backend)), key=ORDER.index, default=None)
        s = summ.get(u, {})
        ok((s.get("items"), s.get("problems"), s.get("worst")) == (d["items"], len(d["faults"]), worst),
           "%s: %s: summary items %d, problems %d, worst %s" % (where, d["name"], d["items"], len(d["faults"]), worst),
           json.dumps(s))
    total = sum(len(d["faults"]) for d in rec)
    ok(rc == 0 and len(sets) == 2 and sets[1][0]["n"] == total,
       "%s: one query over the catalog gives all %d rows" % (where, total), err[-300:])
    if backend == "file":
        return
    # cost: what the two relations that read the same metadata cost, never more
    for d in rec:
        if d["error"]:
            continue
        u = q(base + d["name"])
        n = []
        for rel in ("vdsql_check", "vtkhdf_partitions", "vtkhdf_sources"):  # each in a process of its own: no cache
            sets, err, rc = json_sets("SELECT count(*) FROM %s(%s);\n" % (rel, u) + STATS % backend, env)
            n += [s[0]["requests"] for s in sets if s and "requests" in s[0]]
        # plain.hdf too: both relations fail on it where the check gives its row, after as many requests
        ok(len(n) == 3 and 0 < n[0] <= max(n[1], n[2]),
           "%s: %s: the check costs %s requests, no more than vtkhdf_partitions or vtkhdf_sources alone %s" %
           (where, d["name"], n[0] if n else None, n[1:] if n else None), err[-300:])


def datasets_rule(root):
    """plain.hdf is listed (its first bytes are HDF5's); the check says what it is."""
    sets, err, rc = json_sets("SELECT url, format, error FROM vdsql_datasets(%s);\n" % q(root + "/"))
    got = {os.path.basename(r["url"]): r for r in (sets[0] if sets else [])}
    files = sorted(n for n in os.listdir(root) if n.endswith((".vtkhdf", ".hdf")))
    ok(sorted(got) == files, "vdsql_datasets lists every *.vtkhdf and *.hdf of the folder (%d)" % len(files),
       str(sorted(got)))
    ok(got.get("plain.hdf", {}).get("format") == "vtkhdf" and got["plain.hdf"]["error"] is None,
       "vdsql_datasets: plain.hdf (HDF5, no /VTKHDF) is listed as vtkhdf with no error: one GET cannot tell",
       json.dumps(got.get("plain.hdf")))
    bad = sorted(n for n, r in got.items() if r["error"])
    ok(bad == ["text.vtkhdf", "vds_text_part1.vtkhdf"], "vdsql_datasets: an error exactly for the files that are not HDF5",
       str(bad))


REAL = os.path.join(SHARED, "realworld", "pyvista")


def realworld():
    """VTKHDF files from other tools check clean; items from h5py (one per count entry:
    the step x partitions)."""
    for n in ("can_1.hdf", "can_2.hdf", "warping_spheres.vtkhdf"):
        path = os.path.join(REAL, n)
        if not os.path.exists(path):
            ok(False, "realworld: %s is there (../shared/realworld/pyvista)" % path)
            continue
        with h5py.File(path) as f:
            g = f["VTKHDF"]
            items = int(np.sum(g["Steps/NumberOfParts"][:])) if "Steps" in g else g["NumberOfPoints"].shape[0]
        sets, err, rc = json_sets("SELECT items, problems FROM vdsql_check_summary(%s);\n" % q(path))
        got = sets[0][0] if sets and sets[0] else {}
        ok((got.get("items"), got.get("problems")) == (items, 0),
           "realworld: %s checks clean, %d partitions (h5py)" % (n, items), json.dumps(got) + err[-200:])


def hostile():
    files = sorted(n for n in os.listdir(HOSTILE) if n.endswith(".vtkhdf")) if os.path.isdir(HOSTILE) else []
    ok(len(files) >= 2, "hostile fixtures found in %s (%d)" % (HOSTILE, len(files)))
    stmt = "".join("SELECT %s AS f, verdict, detail FROM vdsql_check(%s);\n" % (q(n), q(os.path.join(HOSTILE, n)))
                   for n in files)
    stmt += "SELECT 'after' AS f, count(*) AS n FROM vdsql_check_summary(%s);\n" % q(os.path.join(HOSTILE, files[0]))
    sets, err, rc = json_sets(stmt)
    ok(rc == 0, "hostile: the sqlite3 process lives through every file (rc %d)" % rc, err[-300:])
    got = {r["f"]: r for s in sets for r in s}
    for n in files:
        r = got.get(n)
        ok(r and r["verdict"] in ORDER and n in r["detail"], "hostile: %s is a row naming the file" % n, json.dumps(r))
    ok(got.get("after", {}).get("n") == 1, "hostile: the process checks on after them")


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-checkvtk.")
    root = os.path.join(tmp, "cat")
    p = subprocess.run(["/usr/bin/python3", GEN, "catalog", root], capture_output=True, text=True)
    ok(p.returncode == 0, "tests/gen/mkbroken_vtkhdf.py writes the catalog", p.stderr[-300:])
    # every file the folder holds, the parts and link targets too: each is a dataset
    rec = [f for d in json.loads(p.stdout)["datasets"] for f in [d] + d.get("files", [])]
    confirm(root, rec)
    checks("file", root + "/", rec, {}, "file")
    datasets_rule(root)
    ng = Nginx(root, os.path.join(tmp, "nginx"))
    try:
        ok(ng.started, "nginx serves the catalog on 127.0.0.1 (install nginx)", ng.error)
        if ng.started:
            checks("http", ng.url + "/", rec, {}, "http")
    finally:
        ng.stop()
    with Radosgw() as srv:
        ok(srv.started, "radosgw starts on 127.0.0.1 (scripts/radosgw-test-server)", srv.error)
        if srv.started:
            import vdsupload
            env = {k: srv.env[k] for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")}
            c = vdsupload.s3_client(srv.endpoint, srv.key, srv.secret, srv.region)
            n = vdsupload.upload_s3(c, srv.bucket, "cat/", root)
            ok(n == len(os.listdir(root)), "boto3 uploads the catalog (%d objects)" % n)
            checks("s3", "s3://%s/cat/" % srv.bucket, rec, env, "s3")
    realworld()
    hostile()
    shutil.rmtree(tmp, ignore_errors=True)
    plan()


if __name__ == "__main__":
    main()
