#!/usr/bin/env python3
"""No secret of a URL ever reaches vdsql's output, as TAP.

Every relation and function that takes a URL is given URLs carrying a password
(userinfo) and a presigned query (X-Amz-Signature, X-Amz-Credential), all spelled
with "s3cret", against tests/http/badserver.py under faults: 404, bodies that are no
document, a refused redirect (whose Location carries credentials too), a redirect
followed to a 404, a wrong Content-Range, a body over max_alloc, a slow drip and a
silent server (timeouts), a refused connection, an unresolvable host, a malformed port,
https spoken to an http port, unsupported schemes, file URLs naming a host; plus the
datasets' own faults (bad pages, bad chunks, bad JSON, unsupported codecs...) behind a
secret URL, and plain local paths. Everything the shell prints (stdout and stderr) is
searched for "s3cret"; each fault must also have ended its statement with an error, so
the fault paths were really taken.
  env: SO, SQLITE3 (see tests/taplib.py), VDSQL_TESTDATA (datasets, else generated)"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BadServer, datasets, quote, shell  # noqa: E402
from taplib import ok, plan  # noqa: E402

ds = datasets()
srv = BadServer(ds)
P, Q = srv.port, srv.port2
CRED = "user:s3cretPW@"
QUERY = "?X-Amz-Signature=s3cretSIG&X-Amz-Credential=s3cretCRED"


def url(fault, path, host="127.0.0.1:%d" % P, scheme="http"):
    return "%s://%s%s/%s/%s%s" % (scheme, CRED, host, fault, path, QUERY)


def variants(path):
    """(name, url, fails) for one dataset path under every fault."""
    v = [("ok", url("ok", path), False)]
    for f in ["notfound", "bad", "redir-port", "redir-cred", "to-notfound", "crstart", "slow", "hang"]:
        v.append((f, url(f, path), True))
    # a huge answer ends in an error unless all the relation reads is a slice at offset 0
    v.append(("huge", url("huge", path), None))
    v += [("refused connection", url("ok", path, host="127.0.0.1:9"), True),
          ("unresolvable host", url("ok", path, host="nonexistent.invalid"), True),
          ("malformed port", url("ok", path, host="127.0.0.1:notaport"), True),
          ("https to an http port", url("ok", path, scheme="https"), True),
          ("s3 scheme", url("ok", path, scheme="s3"), True),
          ("file URL naming a host", url("ok", path, scheme="file", host="host"), True),
          ("local path", "/nonexistent/vdsql-test/" + path, True)]
    return v


SETUP = ("SELECT vdsql_config('http_retries', 0), vdsql_config('http_timeout', 0.5), "
         "vdsql_config('http_connect_timeout', 1), vdsql_config('max_alloc', 1048576), "
         "vdsql_config('http_max_excess', 0);")

survey, layer = "survey", "Dimensions_012LOD0"
archive = "lindi/small.lindi.tar"
vtk = "vtkhdf/ext_partitions.vtkhdf"
have_vtk = os.path.exists(os.path.join(ds, vtk))

# (what, statement template ({u} = the URL, quoted), dataset path, extra (name, path, fails) variants)
TARGETS = [
    ("vds_layout", "SELECT * FROM vds_layout({u});", survey),
    ("vds_axes", "SELECT * FROM vds_axes({u});", survey),
    ("vds_channels", "SELECT * FROM vds_channels({u});", survey),
    ("vds_layers", "SELECT * FROM vds_layers({u});", survey),
    ("vds_metadata", "SELECT * FROM vds_metadata({u});", survey),
    ("vds_pages", "SELECT * FROM vds_pages({u}, '%s');" % layer, survey),
    ("vds_chunks", "SELECT * FROM vds_chunks({u}, '%s');" % layer, survey),
    ("vds_samples", "SELECT count(*) FROM vds_samples({u}, '%s', 0);" % layer, survey),
    ("vds_chunk_data", "SELECT length(vds_chunk_data({u}, '%s', 0));" % layer, survey),
    ("lindi_files", "SELECT * FROM lindi_files({u});", archive),
    ("lindi_read", "SELECT length(lindi_read({u}, 'sample.h5'));", archive),
    ("lindi_refs", "SELECT * FROM lindi_refs({u});", archive),
    ("tar_members", "SELECT * FROM tar_members({u});", archive),
    # a writable table reaches its archive at the first write (connecting touches nothing)
    ("lindi_tar (CREATE VIRTUAL TABLE)", "DROP TABLE IF EXISTS temp.t; CREATE VIRTUAL TABLE temp.t USING lindi_tar({u}); "
     "INSERT INTO temp.t(name, data) VALUES ('n', 'x');", archive),
    ("lindi_refs (CREATE VIRTUAL TABLE)", "DROP TABLE IF EXISTS temp.t; CREATE VIRTUAL TABLE temp.t USING lindi_refs({u}); "
     "INSERT INTO temp.t(key, value) VALUES ('k', 'v');", archive),
]
VTK = [
    ("vtkhdf_partitions", "SELECT * FROM vtkhdf_partitions({u});", vtk),
    ("vtkhdf_sources", "SELECT * FROM vtkhdf_sources({u});", vtk),
    ("vtkhdf_arrays", "SELECT * FROM vtkhdf_arrays({u});", vtk),
    ("vtkhdf_array_starts", "SELECT * FROM vtkhdf_array_starts({u});", vtk),
    ("vtkhdf_blocks", "SELECT * FROM vtkhdf_blocks({u});", "vtkhdf/ext_composite.vtkhdf"),
    ("vtkhdf_topologies", "SELECT * FROM vtkhdf_topologies({u});", vtk),
    ("vtkhdf_amr_boxes", "SELECT * FROM vtkhdf_amr_boxes({u});", vtk),
    ("vtkhdf_trees", "SELECT * FROM vtkhdf_trees({u});", vtk),
]
# the datasets' own faults, behind a secret URL on a correct server
DATA_FAULTS = {
    "vds": ["bad_chunks", "bad_pages", "bad_json", "bad_count", "wavelet", "nothing"],
    "lindi": ["lindi/badentry.lindi.tar", "lindi/badindex.lindi.tar", "lindi/badchecksum.lindi.tar",
              "lindi/notar.lindi.tar", "lindi/truncated.lindi.tar", "lindi/nothing.lindi.tar"],
    "vtkhdf": ["vtkhdf/not_hdf5.vtkhdf", "vtkhdf/truncated.vtkhdf", "vtkhdf/ext_missing.vtkhdf",
               "vtkhdf/steps_short.vtkhdf", "vtkhdf/bad_type.vtkhdf", "vtkhdf/nothing.vtkhdf"],
}


def check(what, template, path):
    vs = variants(path)
    family = "vds" if what.startswith("vds") else "vtkhdf" if what.startswith("vtkhdf") else "lindi"
    for p in DATA_FAULTS[family]:
        if not (what.startswith("lindi_tar") or what.startswith("lindi_refs (")):
            vs.append(("ok/" + p, url("ok", p), None))  # may or may not be an error: only the secrets matter
    lines = [SETUP] + [template.format(u=quote(u)) for _, u, _ in vs]
    out, err, rc, _, secs = shell("\n".join(lines) + "\n", timeout=300)
    text = out + err
    failed_lines = {int(m.group(1)) for m in re.finditer(r"error near line (\d+):", err)}
    missing = [name for i, (name, _, fails) in enumerate(vs) if fails and (i + 2) not in failed_lines]
    leaks = [ln for ln in text.splitlines() if "s3cret" in ln.lower()]
    ok(not leaks and rc not in (-9, 99), "%s: no secret in %d statements' output (%.1f s)" % (what, len(vs), secs),
       "leaks:\n" + "\n".join(leaks[:20]) + "\nexit status %d" % rc)
    ok(not missing, "%s: every fault ended its statement with an error" % what,
       "no error for: %s\nstderr:\n%s" % (", ".join(missing), err))


for what, template, path in TARGETS:
    check(what, template, path)
for what, template, path in VTK:
    if have_vtk:
        check(what, template, path)
    else:
        ok(False, "%s: VTKHDF test files missing (build/mkvtkhdf)" % what)

# The writable tables on a local path containing no secret: the path is named as it is.
out, err, rc, _, _ = shell("CREATE VIRTUAL TABLE temp.w USING lindi_tar('/nonexistent/dir/a.lindi.tar');\n"
                           "INSERT INTO temp.w(name, data) VALUES ('n', 'x');\n")
ok("/nonexistent/dir/a.lindi.tar" in err and rc not in (-9, 99), "lindi_tar on a missing local directory names the path",
   err)
srv.stop()
sys.exit(plan())
