#!/usr/bin/env python3
"""Round trips over HTTP, as TAP: the test server (badserver.py, delay/) holds every answer
for 0.25 s and counts in how many rounds the requests came (a round: requests that
overlap), which is what a slow link makes a user wait for. Request counts come from
vdsql_stats().
  vds_chunk_data, cold: the two documents together, then the page and the chunk object
  together (the object's key is known from the chunk index): 2 rounds, 4 requests; for a
  constant chunk the object fetched beside the page is dropped.
   env: SO, SQLITE3 (as tests/taplib.py), VDSQL_TESTDATA (optional)"""
import os
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BadServer, datasets, shell  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import ok, plan  # noqa: E402

ds = datasets()
srv = BadServer(ds)
base = "http://127.0.0.1:%d" % srv.port


def rounds(query):
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
srv.stop()
sys.exit(plan())
