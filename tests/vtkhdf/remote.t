#!/usr/bin/python3
"""Requests of remote VTKHDF reads, as TAP: the first request for a file is a range GET of
its first vtkhdf_prefix bytes (1 MiB) whose answer also gives the file's size, so there is
never a HEAD, and a smaller file is read whole with that one request. Counted by
vdsql_stats() and, independently, in the access log of the nginx serving the files
(method and path of every request):
  a 207 KB file cold: 1 request, the file's size in bytes; a warm repeat: none;
  a layout of 100 part files (more than the driver keeps open): the main file and each
    part file exactly one GET, no HEAD, however often HDF5 reopens them;
  a server that ignores Range (200, whole body), on a small and on a big file;
  an empty file, from nginx (200, no body) and from a server answering 416 (bytes */0):
    "not an HDF5 file (it is empty)", one request.
Expected rows come from the generator (build/mkvtkhdf: many_parts.expect.json) and file
sizes from the files themselves.
   env: SO (extension, default ./vdsql), SQLITE3, MKVTKHDF (default build/mkvtkhdf)"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
mk = os.environ.get("MKVTKHDF", os.path.join(top, "build", "mkvtkhdf"))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "http"))
from taplib import Nginx, ok, plan, sql  # noqa: E402
from common import BadServer  # noqa: E402

MIB = 1 << 20
STATS = "SELECT requests || ' ' || bytes FROM vdsql_stats() WHERE backend = 'http';"


def run(script):
    """(stdout lines, stderr, returncode) of script in a fresh connection."""
    p = sql(".mode list\n" + script)
    return p.stdout.split("\n")[:-1], p.stderr, p.returncode


def logged(web, mark):
    """(method, path) of the requests nginx logged after byte offset mark of its log."""
    with open(os.path.join(web.state, "logs", "access.log")) as f:
        f.seek(mark)
        # (not "/": nginx-test-server's probe at start may land in the log late)
        return [r for r in re.findall(r'"([A-Z]+) (\S+) HTTP/[0-9.]+"', f.read()) if r[1] != "/"]


def log_end(web):
    return os.path.getsize(os.path.join(web.state, "logs", "access.log"))


def main():
    if not os.access(mk, os.X_OK):
        print("1..1\nnot ok 1 - %s not built (make)" % mk)
        return 1
    tmp = tempfile.mkdtemp(prefix="vdsql-vtkremote.")
    web = bad = None
    try:
        root = os.path.join(tmp, "www")
        os.mkdir(root)
        for sub, args in (("small", ["bench", "2800", "3"]), ("many", ["many", "100"]), ("big", ["big"])):
            subprocess.run([mk, os.path.join(root, sub)] + args, check=True, stdout=subprocess.DEVNULL)
        open(os.path.join(root, "empty.vtkhdf"), "wb").close()
        web = Nginx(root, os.path.join(tmp, "nginx"))
        if not ok(web.started, "nginx started", web.error):
            return plan()
        url = web.url

        # a file under 1 MiB (2,800 partitions x 3 steps, about the 207 KB of the issue's file)
        small = "/small/bench.vtkhdf"
        size = os.path.getsize(root + small)
        q = "SELECT count(*) FROM vtkhdf_partitions('%s%s');\n" % (url, small)
        mark = log_end(web)
        out, err, rc = run(q + STATS + "\n" + q + STATS + "\n")
        got = logged(web, mark)
        ok(64 << 10 < size < MIB and out[:2] == ["8400", "1 %d" % size] and got == [("GET", small)],
           "a %d-byte file, cold: 1 request (a GET, no HEAD) reads it whole" % size, "%s %s %s" % (out, err, got))
        ok(out[2:] == ["8400", "1 %d" % size], "the same query again on the connection: no request (the file is cached)",
           "%s %s" % (out, err))
        out, err, rc = run("SELECT vdsql_config('cache', 'clear') IS NOT NULL;\n" + q + STATS + "\n")
        ok(out == ["1", "8400", "1 %d" % size], "after vdsql_config('cache', 'clear'): 1 request again", "%s %s" % (out, err))
        # a first request smaller than the file: its Content-Range still gives the size
        mark = log_end(web)
        out, err, rc = run("SELECT vdsql_config('vtkhdf_prefix', 65536);\n" + q + STATS + "\n")
        got = logged(web, mark)
        ok(out[:2] == ["65536", "8400"] and got and all(m == "GET" and p == small for m, p in got) and
           out[2] == "%d %d" % (len(got), size),
           "vtkhdf_prefix 64 KiB: the first 64 KiB first, then the blocks HDF5 needs, every byte once, no HEAD "
           "(%d GETs)" % len(got), "%s %s %s" % (out, err, got))

        # 100 part files: more than the 64 closed files the driver keeps for HDF5's reopens
        with open(os.path.join(root, "many", "many_parts.expect.json")) as f:
            want = json.load(f)
        cols = ["partition", "n_points", "n_cells", "n_connectivity_ids", "point_offset"]
        mark = log_end(web)
        out, err, rc = run("SELECT %s FROM vtkhdf_partitions('%s/many/many_parts.vtkhdf');\n%s\n"
                           "SELECT count(*) FROM vtkhdf_sources('%s/many/many_parts.vtkhdf') WHERE status = 'ok';\n%s\n"
                           % (", ".join(cols), url, STATS, url, STATS))
        got = logged(web, mark)
        rows = [dict(zip(cols, map(int, line.split("|")))) for line in out[:-3]]
        ok(rc == 0 and rows == want, "many_parts: the 100 partitions of 100 part files over http, as the generator wrote them",
           "%s %s" % (err, [r for r, w in zip(rows, want) if r != w][:3]))
        per = {}
        for m, p in got:
            per.setdefault(p, []).append(m)
        parts = ["/many/many_part%d.vtkhdf" % k for k in range(100)]
        bad_ones = {p: per.get(p) for p in parts + ["/many/many_parts.vtkhdf"] if per.get(p) != ["GET"]}
        ok(not bad_ones and len(got) == 101,
           "many_parts: the main file and each of the 100 part files one GET, no HEAD (%d requests in nginx's log)"
           % len(got), json.dumps(dict(list(bad_ones.items())[:5])))
        ok(out[-3] == "101 %d" % sum(os.path.getsize(root + p) for p in parts + ["/many/many_parts.vtkhdf"]),
           "many_parts: vdsql_stats counts those 101 requests and every byte of the 101 files once", out[-3:])
        # 4 mappings per part file: the three count datasets and Points
        ok(out[-2:] == ["400", out[-3]], "many_parts: vtkhdf_sources (400 mappings ok) on the same connection then costs "
           "no request",
           out[-3:])

        # a server that ignores Range: 200 with the whole body (nginx's /norange/ location)
        out, err, rc = run(q.replace(url, url + "/norange") + STATS + "\n")
        ok(out == ["8400", "1 %d" % size], "Range ignored, a small file: the one answer is the whole file",
           "%s %s" % (out, err))
        big = "/big/big_ug.vtkhdf"
        out, err, rc = run("SELECT count(*) FROM vtkhdf_partitions('%s/norange%s');\n" % (url, big))
        ok(out == ["60000"] and rc == 0, "Range ignored, a %d-byte file: its 60,000 rows (the size from Content-Length)"
           % os.path.getsize(root + big), "%s %s" % (out, err))

        # an empty file: nginx answers 200 and no body, badserver.py 416 with bytes */0
        bad = BadServer(root)
        for where, u in (("nginx, 200", url + "/empty.vtkhdf"), ("416", "http://127.0.0.1:%d/ok/empty.vtkhdf" % bad.port)):
            out, err, rc = run("SELECT count(*) FROM vtkhdf_partitions('%s');\n%s\n" % (u, STATS))
            ok(rc != 0 and "%s: not an HDF5 file (it is empty)" % u in err and out == ["1 0"],
               "an empty file (%s): 'not an HDF5 file (it is empty)' after 1 request" % where, "%s %s" % (out, err))
    finally:
        if web:
            web.stop()
        if bad:
            bad.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


if __name__ == "__main__":
    sys.exit(main())
