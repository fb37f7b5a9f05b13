#!/usr/bin/env python3
"""Round trips over HTTP, as TAP: the test server (badserver.py, delay/) holds every answer
for 0.25 s and counts in how many rounds the requests came (a round: requests that
overlap), which is what a slow link makes a user wait for. Request counts come from
vdsql_stats().
  vds_chunk_data, cold: the two documents together, then the page and the chunk object
  together (the object's key is known from the chunk index): 2 rounds, 4 requests; for a
  constant chunk the object fetched beside the page is dropped.
  vtkhdf_partitions, cold, on a 208 KB file (mkvtkhdf bench 2800 3, about the size of the
  issue's 207 KB file): 1 round, 1 request (a range GET of the first MiB, whose answer is
  the whole file and says its size; no HEAD). On a 1.8 MB file (mkvtkhdf bench 25000 3):
  3 rounds, 4 requests: the first MiB, the block of the Steps datasets at the file's end,
  then the count windows past the head of NumberOfCells and NumberOfConnectivityIds
  together (one window after another before: 12 rounds); on a 2.9 MB file (bench 40000
  3) 4 rounds, 6 requests: the windows read ahead at most as many bytes as the file gave
  before, so in two rounds (29 before); rows against the local file's. On a multi-file
  layout: the main file, then
  the part files' first requests together, max_parallel (16) at a time: 3 part files 2
  rounds, 100 part files 1 + 7.
  lindi_refs count(*) of 100,100 refs (mklindi.py, as lindi writes chunk refs), cold: a
  .lindi.json 3 rounds, 33 requests (the prefix, whose answer says the size; 16 probes,
  the last at the file's end, which settles it; the rest in 16 ranges at once: 5 rounds
  before, its size read with a first range and the ranges ramped); a .lindi.tar whose
  lindi.json is padded to 32 MiB 5 rounds, 63 requests (the prefix; three rounds of
  probes, each narrowing the end 16-fold to 16 KiB; the text in 16 ranges: 6 rounds
  before). The archive's floor: 16 probes a round (max_parallel) need three rounds to
  find the end in 32 MiB to the 16 KiB the read may run past it.
   env: SO, SQLITE3 (as tests/taplib.py), VDSQL_TESTDATA (optional)"""
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BadServer, datasets, shell  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import ok, plan  # noqa: E402

ds = datasets()
srv = BadServer(ds)
base = "http://127.0.0.1:%d" % srv.port


def rounds(query, base=base):
    urllib.request.urlopen(base + "/rounds/reset").read()
    out, err, rc, _, secs = shell(query + "\nSELECT requests FROM vdsql_stats() WHERE backend = 'http';\n")
    n = int(urllib.request.urlopen(base + "/rounds/count").read())
    return n, out.split(), err, secs


survey = base + "/delay/survey"
# chunk 0 of the survey's LOD0 layer is data, chunk 3 constant (tests/gen/mkvds.py survey_status)
n, out, err, secs = rounds("SELECT length(vds_chunk_data('%s', 'Dimensions_012LOD0', 0));" % survey)
ok(n == 2 and len(out) == 2 and out[1] == "4" and not err,
   "vds_chunk_data of a data chunk, cold: 2 rounds, 4 requests (documents; page and object together)",
   "rounds %d, output %s, %s, %.2f s" % (n, out, err, secs))
n, out, err, secs = rounds("SELECT length(vds_chunk_data('%s', 'Dimensions_012LOD0', 3));" % survey)
ok(n == 2 and len(out) == 2 and not err,
   "vds_chunk_data of a constant chunk, cold: 2 rounds (the object asked for beside the page is dropped)",
   "rounds %d, output %s, %s" % (n, out, err))
n, out, err, secs = rounds("SELECT length(vds_chunk_data('%s', 'Dimensions_012LOD0', 0));\n"
                           "SELECT length(vds_chunk_data('%s', 'Dimensions_012LOD0', 1));" % (survey, survey))
ok(n == 3 and len(out) == 3 and out[2] == "5" and not err,
   "a second chunk on a cached page: 1 more round, 1 more request (the object alone)",
   "rounds %d, output %s, %s" % (n, out, err))

# VTKHDF: the driver's first request for a file is its first MiB, which for a smaller file
# is all of it, and its answer says the size
mk = os.environ.get("MKVTKHDF", os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "build", "mkvtkhdf"))
tmp = tempfile.mkdtemp(prefix="vdsql-rounds.")
try:
    subprocess.run([mk, tmp, "bench", "2800", "3"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([mk, tmp, "many", "100"], check=True, stdout=subprocess.DEVNULL)
    size = os.path.getsize(os.path.join(tmp, "bench.vtkhdf"))
    bsize = {}
    for nparts in ("25000", "40000"):
        big = os.path.join(tmp, "big" + nparts)
        subprocess.run([mk, big, "bench", nparts, "3"], check=True, stdout=subprocess.DEVNULL)
        os.rename(os.path.join(big, "bench.vtkhdf"), os.path.join(tmp, "bench%s.vtkhdf" % nparts))
        bsize[nparts] = os.path.getsize(os.path.join(tmp, "bench%s.vtkhdf" % nparts))
    srv2 = BadServer(tmp)
    base2 = "http://127.0.0.1:%d" % srv2.port
    n, out, err, secs = rounds("SELECT count(*) FROM vtkhdf_partitions('%s/delay/bench.vtkhdf');" % base2, base2)
    ok(n == 1 and out == ["8400", "1"] and not err and 64 << 10 < size < 1 << 20,
       "vtkhdf_partitions on a %d-byte file, cold: 1 round, 1 request (%.2f s at 0.25 s per round)" % (size, secs),
       "rounds %d, output %s, %s" % (n, out, err))
    # the same rows and starts as the local file's (the sum of every row's seven numbers)
    q = ("SELECT count(*), sum(n_points + n_cells + n_connectivity_ids + point_offset + cell_offset"
         " + connectivity_offset + offsets_offset) FROM vtkhdf_partitions('%s');")
    for nparts, want_rounds, want_req, why in (
            ("25000", 3, 4, "the count windows past the head, of two datasets, together"),
            ("40000", 4, 6, "the count windows past the head in two rounds, each at most what the file gave before")):
        lout, lerr, _, _, _ = shell(q % os.path.join(tmp, "bench%s.vtkhdf" % nparts))
        n, out, err, secs = rounds(q % (base2 + "/delay/bench%s.vtkhdf" % nparts), base2)
        ok(n == want_rounds and len(out) == 2 and out[0] == lout.strip() and out[1] == str(want_req) and not err
           and not lerr and 1 << 20 < bsize[nparts] < 3 << 20,
           "vtkhdf_partitions on a %d-byte file, cold: %d rounds, %d requests (the first MiB; the block of Steps; "
           "%s) (%.2f s)" % (bsize[nparts], want_rounds, want_req, why, secs),
           "rounds %d, output %s, local %s, %s%s" % (n, out, lout, err, lerr))
    n, out, err, secs = rounds("SELECT count(*) FROM vtkhdf_partitions('%s/delay/many_parts.vtkhdf');" % base2, base2)
    ok(n == 8 and out == ["100", "101"] and not err,
       "vtkhdf_partitions on a main file and 100 part files: 8 rounds (1 + 100 / 16), 101 requests (%.2f s)" % secs,
       "rounds %d, output %s, %s" % (n, out, err))
    srv2.stop()
finally:
    shutil.rmtree(tmp, ignore_errors=True)
# lindi_refs count(*) of 100,000 refs (as lindi writes them for a remote HDF5 file: chunk
# refs on a template, a .zarray per 1000), spec-built by tests/gen/mklindi.py: the JSON
# form, and an archive whose lindi.json member is padded to 32 MiB (the growth rule)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gen"))
import mklindi  # noqa: E402
ltmp = tempfile.mkdtemp(prefix="vdsql-rounds-lindi.")
try:
    refs = {}
    for i in range(100000):
        g = "es%03d/data" % (i // 1000)
        if i % 1000 == 0:
            refs[g + "/.zarray"] = {"chunks": [1000, 32], "dtype": "<i2", "fill_value": 0, "shape": [1000000, 32],
                                    "zarr_format": 2}
        refs[g + "/%d.0" % (i % 1000)] = ["{{u1}}", 4096 + 64000 * i, 64000]
    rfs = {"refs": refs, "templates": {"u1": "https://example.org/blobs/1d7"}, "version": 1}
    a = mklindi.Archive(os.path.join(ltmp, "refs.lindi.tar"))
    a.write_refs(rfs)
    a.close()
    lj = a.find("lindi.json")
    with open(os.path.join(ltmp, "refs.lindi.json"), "w") as f:
        f.write(mklindi.dumps(rfs))
    srv3 = BadServer(ltmp)
    base3 = "http://127.0.0.1:%d" % srv3.port
    for name, want_rounds, want_req, why in (
            ("refs.lindi.json", 3, 33, "the first 128 KiB, which say the size; the end probed (16 probes: it is the "
             "file's); the rest in 16 ranges at once"),
            ("refs.lindi.tar", 5, 63, "the prefix (entry, index, text's start); three rounds of 16, 15 and 15 "
             "probes into the 32 MiB member; the rest of the text in 16 ranges at once")):
        n, out, err, secs = rounds("SELECT count(*) FROM lindi_refs('%s/delay/%s');" % (base3, name), base3)
        ok(n == want_rounds and len(out) == 2 and out[0] == str(len(refs)) and out[1] == str(want_req)
           and not err and lj["s"] == 32 << 20,
           "lindi_refs count(*) of %d refs in %s, cold: %d rounds, %s requests (%s) (%.2f s)"
           % (len(refs), name, want_rounds, want_req, why, secs), "rounds %d, output %s, %s" % (n, out, err))
    srv3.stop()
finally:
    shutil.rmtree(ltmp, ignore_errors=True)
# ext_partitions: the main file, then its three part files as HDF5 opens them
n, out, err, secs = rounds("SELECT count(*) FROM vtkhdf_partitions('%s/delay/vtkhdf/ext_partitions.vtkhdf');" % base)
ok(n == 2 and out == ["3", "4"] and not err, "vtkhdf_partitions on a main file and 3 part files: 2 rounds, 4 requests",
   "rounds %d, output %s, %s" % (n, out, err))
srv.stop()
sys.exit(plan())
