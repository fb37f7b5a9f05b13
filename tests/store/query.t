#!/usr/bin/env python3
"""A ?query on a dataset URL (presigned S3 / Azure SAS) goes with every object derived
from it, as TAP, over nginx (which ignores the query, so its access log is the witness):
OpenVDS documents, pages and chunk objects under a base URL; a LINDI archive; VTKHDF
main files and the sub-files their external links and virtual datasets name, nested ones
included, resolved next to the main file. Two queries: a SAS-like one, and a presigned
one whose X-Amz-Credential holds raw '/' (HDF5 would join sub-file names after that '/').
Every request nginx logged carries the query exactly; the files asked for are those the
datasets name (read here with json and h5py); no output, error or column shows the query
(only vd_url_redact's "?...").
   env: SO, SQLITE3 (see tests/taplib.py), VDSQL_TESTDATA (datasets, else generated)"""
import json
import os
import re
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "http"))
from common import datasets  # noqa: E402
from taplib import Nginx, ok, plan, sql  # noqa: E402

MARK = "QMARK"  # in every query, never in any output
QUERIES = [
    "sv=2024-11-04&sr=c&sp=r&sig=%sx%%2Fy%%2Bz%%3D" % MARK,
    "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%s/20261124/us-east-1/s3/aws4_request"
    "&X-Amz-Signature=%s0123abcd" % (MARK, MARK),
]
LAYER = "Dimensions_012LOD0"
ds = datasets()
vtk = os.path.join(ds, "vtkhdf")


def named_files(main):
    """The main file and every file its external links and virtual datasets name,
    recursively through those that exist (h5py, run by the system python)."""
    import subprocess
    prog = r"""
import h5py, os, sys, json
seen, todo = [], [sys.argv[1]]
while todo:
    n = todo.pop()
    if n in seen: continue
    seen.append(n)
    p = os.path.join(sys.argv[2], n)
    if not os.path.exists(p): continue
    with h5py.File(p, 'r') as f:
        def walk(g):
            for k in g:
                l = g.get(k, getlink=True)
                if isinstance(l, h5py.ExternalLink):
                    todo.append(l.filename); continue
                o = g.get(k)
                if isinstance(o, h5py.Group): walk(o)
                elif o is not None and o.is_virtual:
                    todo.extend(s.file_name for s in o.virtual_sources() if s.file_name != '.')
        walk(f)
print(json.dumps(sorted(seen)))
"""
    r = subprocess.run(["/usr/bin/python3", "-c", prog, main, vtk], capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else None


tmp = tempfile.mkdtemp(prefix="vdsql-query.")
ng = Nginx(ds, os.path.join(tmp, "nginx"))
if not ok(ng.started, "nginx started", ng.error):
    sys.exit(plan())
log = os.path.join(tmp, "nginx", "logs", "access.log")


def logged(mark):
    with open(log) as f:
        f.seek(mark)
        return [u for u in re.findall(r'"[A-Z]+ (\S+) HTTP/[0-9.]+"', f.read()) if u != "/"]


with open(os.path.join(ds, "survey", "LayerStatus")) as f:
    n_layers = len(json.load(f))
with open(os.path.join(ds, "lindi", "small.lindi.tar"), "rb") as f:
    pass

for qi, q in enumerate(QUERIES):
    what = "query %d (%s)" % (qi + 1, "a '/' in X-Amz-Credential" if "/" in q else "SAS-like")

    def u(path):
        return "%s/%s?%s" % (ng.url, path, q)

    # OpenVDS: documents, pages, a chunk object
    mark = os.path.getsize(log)
    p = sql(".mode list\nSELECT count(*) FROM vds_layers('%s');\n"
            "SELECT count(*) FROM vds_chunks('%s', '%s');\n"
            "SELECT length(vds_chunk_data('%s', '%s', 0)) > 0;\n" % (u("survey"), u("survey"), LAYER, u("survey"), LAYER))
    lines = p.stdout.split("\n")
    reqs = logged(mark)
    ok(p.returncode == 0 and lines[0] == str(n_layers) and lines[2] == "1",
       "%s: OpenVDS layers (%d, as LayerStatus holds), chunks and a chunk's data read" % (what, n_layers),
       p.stdout + p.stderr)
    paths = {r.split("?")[0] for r in reqs}
    ok(all(r.endswith("?" + q) and r.count("?") == 1 for r in reqs) and len(reqs) >= 4 and
       {"/survey/VolumeDataLayout", "/survey/LayerStatus"} <= paths and
       any("/ChunkMetadata/" in x for x in paths) and any(x.startswith("/survey/%s/" % LAYER) and "ChunkMetadata" not in x
                                                         for x in paths),
       "%s: all %d OpenVDS requests (documents, page, chunk object) carry the query" % (what, len(reqs)),
       "\n".join(reqs))

    # LINDI
    mark = os.path.getsize(log)
    p = sql(".mode list\nSELECT count(*) > 0 FROM lindi_files('%s');\n" % u("lindi/small.lindi.tar"))
    reqs = logged(mark)
    ok(p.returncode == 0 and p.stdout.strip() == "1" and reqs and all(r == "/lindi/small.lindi.tar?" + q for r in reqs),
       "%s: LINDI archive requests (%d) carry the query" % (what, len(reqs)), p.stderr + "\n".join(reqs))

    # VTKHDF: sub-files next to the main file, nested ones too, and a missing one
    for main in ["ext_partitions.vtkhdf", "ext_composite.vtkhdf", "ext_missing.vtkhdf"]:
        want = named_files(main)
        mark = os.path.getsize(log)
        p = sql(".mode list\nSELECT count(*), group_concat(DISTINCT status) FROM vtkhdf_partitions('%s');\n"
                "SELECT DISTINCT source_file FROM vtkhdf_partitions('%s') WHERE source_file IS NOT NULL;\n"
                % (u("vtkhdf/" + main), u("vtkhdf/" + main)))
        reqs = logged(mark)
        asked = sorted({r.split("?")[0].rsplit("/", 1)[-1] for r in reqs})
        first = p.stdout.split("\n")[0]
        good = p.returncode == 0 and first.split("|")[0] not in ("", "0")
        if main == "ext_missing.vtkhdf":
            good = good and "missing_source" in first
        ok(good, "%s: vtkhdf_partitions on %s (%s)" % (what, main, first), p.stderr)
        ok(want is not None and asked == want and all(r.endswith("?" + q) and r.count("?") == 1 for r in reqs),
           "%s: %s: every file it names (%d, by h5py) asked for next to it, each of the %d requests with the query"
           % (what, main, len(want or []), len(reqs)), "asked %s\nwant %s\n%s" % (asked, want, "\n".join(reqs)))
        shown = [x for x in p.stdout.split("\n")[1:] if x]
        ok(shown and all(x.endswith("?...") for x in shown) and MARK not in p.stdout + p.stderr,
           "%s: %s: source files shown redacted (%s)" % (what, main, ", ".join(x.rsplit("/", 1)[-1] for x in shown)),
           p.stdout + p.stderr)

    # errors name the URL without its query
    p = sql(".mode list\nSELECT * FROM vds_layers('%s');\n" % u("nothing"))
    p2 = sql(".mode list\nSELECT * FROM vtkhdf_partitions('%s');\n" % u("vtkhdf/nothing.vtkhdf"))
    p3 = sql(".mode list\nSELECT * FROM vds_chunks('%s', 'NoSuchLayer');\n" % u("survey"))
    errs = p.stderr + p2.stderr + p3.stderr
    ok(p.returncode and p2.returncode and p3.returncode and errs.count("?...") >= 3 and MARK not in errs + p.stdout,
       "%s: errors name the URLs as %s/...?..., never the query" % (what, ng.url), errs)

ng.stop()
sys.exit(plan())
