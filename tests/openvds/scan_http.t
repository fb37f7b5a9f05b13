#!/usr/bin/env python3
"""A full scan of a layer over HTTP, as TAP: every stored page is fetched once, several at
once, and nothing else. The layer (tests/gen/mkvds.py holes) has 400 pages of 128
chunks, about a fifth of them listed as not stored (-1), alone and in a run of ten.
Expected values come from the files on disk, read here with Python: the statuses
decoded from the pages, the request count (stored pages + VolumeDataLayout +
LayerStatus) and the bytes (their sizes). nginx's access log shows each page asked for
once; badserver.py's delay/ (0.25 s per answer) shows the pages come in rounds of at
most max_parallel requests in flight, not one after another, for a range, a box of
chunk positions and a list of chunks alike. A LIMIT that SQLite leaves to the scan
fetches the pages up to the one holding its last row and none after (issue 21), exact
request counts and nginx's log again; a LIMIT kept back by a filter SQLite checks
still gives the rows of the full scan.
   env: SO, SQLITE3 (as tests/taplib.py)"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import urllib.request

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "http"))
from common import BadServer  # noqa: E402
from taplib import TOP, Nginx, ok, plan, sql  # noqa: E402

NPAGES, PAGE = 400, 128
LAYER = "Dimensions_012LOD0"

tmp = tempfile.mkdtemp(prefix="vdsql-scan.")
ng = None
try:
    ds = os.path.join(tmp, "ds", "holes")
    subprocess.run([sys.executable, os.path.join(TOP, "tests/gen/mkvds.py"), "holes", str(NPAGES), ds], check=True)
    with open(os.path.join(ds, "LayerStatus")) as f:
        st = json.load(f)[0]
    directory = st["pageDirectory"]
    stored = [p for p in range(NPAGES) if directory[p] >= 0]
    mdir = os.path.join(ds, LAYER, "ChunkMetadata")
    docs = os.path.getsize(os.path.join(ds, "VolumeDataLayout")) + os.path.getsize(os.path.join(ds, "LayerStatus"))

    def page_bytes(pages):
        return sum(os.path.getsize(os.path.join(mdir, str(p))) for p in pages)

    # statuses from the page bytes (spec section 4: 8-byte hashes), unstored pages all unwritten
    want = {"unwritten": 0, "data": 0, "constant": 0, "novalue": 0}
    status_of = []  # per chunk, in chunk order
    for p in range(NPAGES):
        if directory[p] < 0:
            want["unwritten"] += PAGE
            status_of += ["unwritten"] * PAGE
            continue
        with open(os.path.join(mdir, str(p)), "rb") as f:
            for (h,) in struct.iter_unpack("<Q", f.read()):
                k = ("unwritten" if h == 0 else "novalue" if h == 2 ** 64 - 1 else
                     "constant" if h >> 32 == 0x01010101 else "data")
                want[k] += 1
                status_of.append(k)
    want_rows = "\n".join("%s|%d" % (k, v) for k, v in sorted(want.items()))
    ok(len(stored) > 200 and NPAGES - len(stored) > 40, "the layer: %d pages stored, %d listed as not stored"
       % (len(stored), NPAGES - len(stored)))

    ng = Nginx(os.path.join(tmp, "ds"), os.path.join(tmp, "nginx"))
    if not ok(ng.started, "nginx started", ng.error):
        sys.exit(plan())
    url = ng.url + "/holes"
    log = os.path.join(tmp, "nginx", "logs", "access.log")
    scan = "SELECT status, count(*) FROM vds_chunks('%s', '%s') GROUP BY status;" % (url, LAYER)
    stats = "SELECT 'stats', requests, bytes FROM vdsql_stats() WHERE backend = 'http';"

    def run(script):
        p = sql(script)
        rows = [line for line in p.stdout.splitlines() if not line.startswith(("stats|", "ok"))]
        got = [line.split("|")[1:] for line in p.stdout.splitlines() if line.startswith("stats|")]
        return p, "\n".join(rows), [tuple(map(int, g)) for g in got]

    open(log, "w").close()
    p, rows, got = run("SELECT vdsql_config('stats', 'reset');\n%s\n%s\n%s\n%s\n" % (scan, stats, scan, stats))
    ok(p.returncode == 0 and rows == want_rows + "\n" + want_rows, "GROUP BY status equals the pages decoded here",
       "got:\n%s\nwant:\n%s\n%s" % (rows, want_rows, p.stderr))
    n_req, n_bytes = len(stored) + 2, page_bytes(stored) + docs
    ok(got[:1] == [(n_req, n_bytes)], "cold: %d requests (%d stored pages + 2 documents), %d bytes (their sizes)"
       % (n_req, len(stored), n_bytes), "got %s" % got)
    ok(got[1:] == [(n_req, n_bytes)], "a repeat on the same connection: 0 more (the %d KiB of pages stay cached)"
       % (page_bytes(stored) // 1024), "got %s" % got)
    with open(log) as f:
        # (nginx may log the start script's probe of "/" after it answered it)
        paths = [x for x in (line.split('"')[1].split()[1] for line in f if '"' in line) if x != "/"]
    want_paths = sorted(["/holes/VolumeDataLayout", "/holes/LayerStatus"] +
                        ["/holes/%s/ChunkMetadata/%d" % (LAYER, p) for p in stored])
    ok(sorted(paths) == want_paths, "nginx's log: each stored page asked for once, nothing else (%d lines)" % len(paths),
       "extra %s, missing %s" % (sorted(set(paths) - set(want_paths))[:5] +
                                 sorted(x for x in set(paths) if paths.count(x) > 1)[:5],
                                 sorted(set(want_paths) - set(paths))[:5]))

    # LIMIT left to the scan: the pages up to the one holding the last row taken, each
    # once, nothing after (before issue 21 a window of 16 pages went out ahead)
    def logged():
        with open(log) as f:
            return sorted(x for x in (line.split('"')[1].split()[1] for line in f if '"' in line) if x != "/")

    def limit_case(clause, first, count, pages, what):
        open(log, "w").close()
        p, rows, got = run("SELECT chunk, status FROM vds_chunks('%s', '%s') %s;\n%s\n" % (url, LAYER, clause, stats))
        want_rows = "\n".join("%d|%s" % (c, status_of[c]) for c in range(first, first + count))
        n_req, n_bytes = len(pages) + 2, page_bytes(pages) + docs
        ok(p.returncode == 0 and rows == want_rows and got == [(n_req, n_bytes)],
           "%s: its %d rows, %d requests (%d pages + 2 documents), %d bytes" % (what, count, n_req, len(pages), n_bytes),
           "got %s, rows %s, %s" % (got, rows.splitlines()[:3], p.stderr))
        want_paths = sorted(["/holes/VolumeDataLayout", "/holes/LayerStatus"] +
                            ["/holes/%s/ChunkMetadata/%d" % (LAYER, q) for q in pages])
        paths = logged()
        ok(paths == want_paths, "... nginx's log: those pages once, no other", "got %s" % paths[:20])

    ok(directory[0] >= 0 and directory[1] >= 0 and directory[2] >= 0, "pages 0-2 are stored")
    limit_case("LIMIT 1", 0, 1, [0], "LIMIT 1")
    limit_case("LIMIT %d" % (2 * PAGE + 5), 0, 2 * PAGE + 5, [0, 1, 2], "LIMIT %d (ends on page 2)" % (2 * PAGE + 5))
    # a LIMIT that fills a page exactly, the next one stored: that one is not fetched
    last = min(q for q in stored if q + 1 in stored and any(directory[x] < 0 for x in range(q)))
    part = [q for q in stored if q <= last]
    limit_case("LIMIT %d" % ((last + 1) * PAGE), 0, (last + 1) * PAGE, part,
               "LIMIT %d (fills page %d, %d not fetched; %d pages before it not stored)"
               % ((last + 1) * PAGE, last, last + 1, last + 1 - len(part)))
    # SQLite reads no column of the rows OFFSET skips: page 2 alone
    limit_case("LIMIT 10 OFFSET %d" % (2 * PAGE + 3), 2 * PAGE + 3, 10, [2], "LIMIT 10 OFFSET %d" % (2 * PAGE + 3))
    # a LIMIT past the last row: every stored page, as the full scan
    open(log, "w").close()
    p, rows, got = run("SELECT count(status) FROM (SELECT status FROM vds_chunks('%s', '%s') LIMIT %d);\n%s\n"
                       % (url, LAYER, NPAGES * PAGE + 1, stats))
    ok(p.returncode == 0 and rows == str(NPAGES * PAGE) and got == [(len(stored) + 2, page_bytes(stored) + docs)],
       "LIMIT past the last row: %d rows, %d requests as the full scan" % (NPAGES * PAGE, len(stored) + 2),
       "rows %s, got %s, %s" % (rows, got, p.stderr))
    # a filter SQLite checks keeps the LIMIT from the scan: the same rows as the full scan
    # filtered and cut here; the pages go out ahead as without LIMIT (16, then the ones
    # the first pages' slots free before SQLite's cut on page 0 or 1)
    nd = 10
    data = [c for c in range(NPAGES * PAGE) if status_of[c] == "data"][:nd]
    p, rows, got = run("SELECT chunk FROM vds_chunks('%s', '%s') WHERE status = 'data' LIMIT %d;\n%s\n"
                       % (url, LAYER, nd, stats))
    # How many of the window's refills go out before SQLite's cut races the transfers (a
    # slow ASan build on a fresh machine fetched another page than a quick one): what is
    # certain is the window's 16 pages and at most two refills, where the hint would have
    # fetched the page holding row 10 alone
    lo, hi = len(stored[:16]) + 2, len(stored[:18]) + 2
    ok(p.returncode == 0 and rows == "\n".join(map(str, data)) and len(got) == 1 and lo <= got[0][0] <= hi,
       "WHERE status = 'data' LIMIT %d (not the scan's): the first %d data chunks, %d to %d requests (the window "
       "ahead as without LIMIT, not the hint's 3)" % (nd, nd, lo, hi), "rows %s, got %s, %s" % (rows.splitlines(), got, p.stderr))

    # a cache too small for the layer's pages: a scan bypasses it, a point lookup keeps
    # its page, and the scan does not push that page out
    c = stored[len(stored) // 2] * PAGE + 5
    point = "SELECT status FROM vds_chunks('%s', '%s') WHERE chunk = %d;" % (url, LAYER, c)
    reset = "SELECT vdsql_config('stats', 'reset');"
    p, rows, got = run("SELECT vdsql_config('cache_size', 65536);\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n"
                       % (reset, point, stats, reset, point, stats, reset, scan, stats, reset, point, stats))
    one = page_bytes([c // PAGE])
    ok(p.returncode == 0 and [g[0] for g in got] == [3, 0, len(stored) - 1, 0],
       "cache_size 64 KiB: point lookup cold 3, warm 0; a scan %d (all but that page); the point again 0"
       % (len(stored) - 1), "got %s %s" % (got, p.stderr))
    ok(len(got) == 4 and got[0][1] == docs + one and got[2][1] == page_bytes(stored) - one,
       "... and their bytes: the documents and one page, then the other pages", "got %s" % got)

    # through a server that holds each answer 0.25 s: pages in rounds of up to 16
    srv = BadServer(os.path.join(tmp, "ds"))
    base = "http://127.0.0.1:%d" % srv.port

    def rounds(script):
        urllib.request.urlopen(base + "/rounds/reset").read()
        p, rows, got = run(script + "\n" + stats + "\n")
        n = int(urllib.request.urlopen(base + "/rounds/count").read())
        top = int(urllib.request.urlopen(base + "/rounds/peak").read())
        return p, rows, got, n, top

    last = 63
    part = [q for q in stored if q <= last]
    p, rows, got, n, top = rounds("SELECT count(status) FROM vds_chunks('%s/delay/holes', '%s') WHERE chunk <= %d;"
                                  % (base, LAYER, (last + 1) * PAGE - 1))
    most = 1 + math.ceil(len(part) / 16) + 1
    ok(p.returncode == 0 and rows == str((last + 1) * PAGE) and got == [(len(part) + 2, page_bytes(part) + docs)],
       "pages 0-%d over the slow server: %d requests (%d pages + 2 documents)" % (last, len(part) + 2, len(part)),
       "rows %s, got %s, %s" % (rows, got, p.stderr))
    ok(n <= most and top <= 16, "... in %d rounds (at most %d; one by one would be %d), at most 16 at once (%d)"
       % (n, most, len(part) + 1, top))
    # a box (i0 = 3: one chunk on each page) and a list of chunks on many pages read
    # their pages through the same window
    p, rows, got, n, top = rounds("SELECT count(status) FROM vds_chunks('%s/delay/holes', '%s') WHERE i0 = 3 AND "
                                  "i2 <= %d;" % (base, LAYER, last))
    ok(p.returncode == 0 and rows == str((last + 1) * 16) and got == [(len(part) + 2, page_bytes(part) + docs)]
       and n <= most and top <= 16, "a box (i0 = 3, pages 0-%d): %d requests, %d rounds (at most %d), %d at once"
       % (last, len(part) + 2, n, most, top), "rows %s, got %s, %s" % (rows, got, p.stderr))
    wanted = [q * PAGE + 7 for q in range(64, 128, 2)]
    lpages = [q for q in stored if 64 <= q < 128 and q % 2 == 0]
    p, rows, got, n, top = rounds("SELECT count(status) FROM vds_chunks('%s/delay/holes', '%s') WHERE chunk IN (%s);"
                                  % (base, LAYER, ", ".join(map(str, wanted))))
    most_l = 1 + math.ceil(len(lpages) / 16) + 1
    ok(p.returncode == 0 and rows == str(len(wanted)) and got == [(len(lpages) + 2, page_bytes(lpages) + docs)]
       and n <= most_l and top <= 16, "a list of %d chunks on %d stored pages: %d requests, %d rounds (at most %d)"
       % (len(wanted), len(lpages), len(lpages) + 2, n, most_l), "rows %s, got %s, %s" % (rows, got, p.stderr))
    first = [q for q in stored if q <= 15]
    p, rows, got, n, top = rounds("SELECT vdsql_config('max_parallel', 4);\n"
                                  "SELECT count(status) FROM vds_chunks('%s/delay/holes', '%s') WHERE chunk < %d;"
                                  % (base, LAYER, 16 * PAGE))
    ok(p.returncode == 0 and got == [(len(first) + 2, page_bytes(first) + docs)] and top <= 4 and
       n <= 1 + math.ceil(len(first) / 4) + 1,
       "max_parallel 4: %d requests, at most 4 at once (%d), %d rounds" % (len(first) + 2, top, n),
       "got %s, %s" % (got, p.stderr))
    srv.stop()
finally:
    if ng:
        ng.stop()
    shutil.rmtree(tmp, True)
sys.exit(plan())
