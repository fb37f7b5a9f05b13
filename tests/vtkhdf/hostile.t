#!/usr/bin/python3
"""Hostile VTKHDF files, as TAP. build/mkvtkhdf writes them, each with the rows it must
give (<stem>.expect.json, from the generator's own counts):
  * virtual-dataset sources that exist but are not usable (a text file, an HDF5 file
    without /VTKHDF, one without NumberOfConnectivityIds, count datasets with no rows) and
    external links to a text file or an HDF5 file without the object: the partitions
    behind them are bad_source with NULL counts, never ok with zeros, and the partitions
    after them keep their true starts;
  * extents of 1e9 entries behind a missing source, a 2-D count dataset of 1e9 rows,
    NSteps = 2^30 (ImageData, and an UnstructuredGrid without Steps datasets): the sqlite3
    process stays under 300 MB and ends at once with rows or a clear error;
  * over http (nginx on 127.0.0.1): sub-files named by URLs on another host (a second
    listener on 127.0.0.2 that counts connections), by an absolute URL on the same host,
    by names that join into malformed URLs: nothing reaches the other host (the listener
    counts 0, and vdsql_stats' requests equal nginx's log), nothing malformed reaches
    nginx, the rows say disallowed_source with the exact reason, and
    vdsql_config('allowed_hosts', ...) lets the other host through;
  * secrets planted in the URL (userinfo, a presigned ?query) never appear in any output
    of any vtkhdf_* relation, rows or errors;
  * a sub-file the server could not serve (tests/faultproxy.py answering 503, resetting
    the connection or sending a wrong Content-Range for that one file, every retry) makes
    every vtkhdf_* relation that needs it fail with the store's error naming that file's
    URL, never bad_source; a 404 stays missing_source, and a 403 (nginx's /forbidden/)
    bad_source with NULL counts and true starts, as the generator says.
Debian's python3 (/usr/bin/python3) runs it.
   env: SO (extension, default ./vdsql), SQLITE3, MKVTKHDF (default build/mkvtkhdf)"""
import http.server
import json
import os
import re
import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
mk = os.environ.get("MKVTKHDF", os.path.join(top, "build", "mkvtkhdf"))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import FaultProxy, Nginx, ok, plan, shell_args  # noqa: E402

RELATIONS = ["vtkhdf_partitions", "vtkhdf_topologies", "vtkhdf_arrays", "vtkhdf_array_starts", "vtkhdf_sources",
             "vtkhdf_blocks"]
COUNTS = ("n_points", "n_cells", "n_connectivity_ids")
STARTS = ("point_offset", "cell_offset", "connectivity_offset", "offsets_offset")
LOCAL_BROKEN = ["src_text", "src_empty", "src_no_nci", "src_short", "elink_text", "elink_empty"]
MAX_RSS_KB = 300 * 1024


def q(s):
    return "'" + s.replace("'", "''") + "'"


def expected(d, stem):
    with open(os.path.join(d, stem + ".expect.json")) as f:
        return json.load(f)


def same_source(got, want):
    if got is None:
        return False
    if "://" in want:
        return got == want
    return os.path.basename(got) == os.path.basename(want)


def compare(rows, want, allowed=False):
    """Problems of vtkhdf_partitions rows against the generator's expectation. allowed:
    the other host is allowed, so the rows it holds are ok with their true counts."""
    bad = []
    if len(rows) != len(want):
        return ["%d rows, expected %d: %s" % (len(rows), len(want), rows)]
    for g, w in zip(rows, want):
        status = w["status"]
        if allowed and status == "disallowed_source" and "://" in w["source_file"] and "/h/" not in w["source_file"]:
            status = "ok"
        key = (w["block"], w["partition"])
        if g["status"] != status:
            bad.append("%s: status %s, expected %s" % (key, g["status"], status))
        if g["block"] != w["block"]:
            bad.append("%s: block %s" % (key, g["block"]))
        if status == "ok":
            for k in COUNTS + STARTS:
                if g[k] != w[k]:
                    bad.append("%s: %s = %s, expected %s" % (key, k, g[k], w[k]))
            if g["step"] != 0 or g["partition"] != (w["partition"] or 0):
                bad.append("%s: step/partition %s/%s" % (key, g["step"], g["partition"]))
        else:
            if any(g[k] is not None for k in COUNTS):
                bad.append("%s: %s with counts %s" % (key, status, [g[k] for k in COUNTS]))
            if w["partition"] is not None:  # a partition of a layout: its starts stay
                for k in STARTS:
                    if g[k] != w[k]:
                        bad.append("%s: %s = %s, expected %s" % (key, k, g[k], w[k]))
        if not same_source(g["source_file"], w["source_file"]):
            bad.append("%s: source_file %s, expected %s" % (key, g["source_file"], w["source_file"]))
        if g["status"] == "ok" and any(g[k] == 0 for k in COUNTS) and any(w[k] for k in COUNTS):
            bad.append("%s: ok with zero counts" % (key,))
    return bad


def parts(url, pre=""):
    return query(pre + "SELECT * FROM vtkhdf_partitions(%s);" % q(url))


def problems(url, pre=""):
    return {(r["object"], os.path.basename(r["resolved_path"] or "")): (r["status"], r["problem"], r["exists"])
            for r in query(pre + "SELECT * FROM vtkhdf_sources(%s);" % q(url))}


def check_local(d):
    for stem in LOCAL_BROKEN:
        path = os.path.join(d, stem + ".vtkhdf")
        try:
            bad = compare(parts(path), expected(d, stem))
        except Exception as e:
            bad = [str(e)]
        ok(not bad, "%s: the partition behind the broken sub-file is bad_source (NULL counts), the others keep "
           "their counts and true starts" % stem, "\n".join(bad))
    # the reasons, exactly, in vtkhdf_sources
    want = {
        "src_text": ("/VTKHDF/NumberOfPoints", "src_text_part1.vtkhdf", "%s/src_text_part1.vtkhdf: not an HDF5 file"),
        "src_empty": ("/VTKHDF/NumberOfPoints", "src_empty_part1.vtkhdf",
                      "%s/src_empty_part1.vtkhdf: has no dataset /VTKHDF/NumberOfPoints"),
        "src_no_nci": ("/VTKHDF/NumberOfConnectivityIds", "src_no_nci_part1.vtkhdf",
                       "%s/src_no_nci_part1.vtkhdf: has no dataset /VTKHDF/NumberOfConnectivityIds"),
        "src_short": ("/VTKHDF/NumberOfCells", "src_short_part1.vtkhdf",
                      "%s/src_short_part1.vtkhdf: /VTKHDF/NumberOfCells has 0 rows, the virtual dataset maps rows 0..0"),
        "elink_text": ("/VTKHDF/BlockA", "elink_text_BlockA.vtkhdf", "%s/elink_text_BlockA.vtkhdf: not an HDF5 file"),
        "elink_empty": ("/VTKHDF/BlockA", "elink_empty_BlockA.vtkhdf", "%s/elink_empty_BlockA.vtkhdf: has no /VTKHDF"),
    }
    for stem, (obj, fname, msg) in want.items():
        try:
            got = problems(os.path.join(d, stem + ".vtkhdf")).get((obj, fname))
        except Exception as e:
            got = str(e)
        ok(got == ("bad_source", msg % d, 1), "%s: vtkhdf_sources names %s of %s: bad_source, '%s'"
           % (stem, obj, fname, msg % "DIR"), got)
    # the other relations read the broken files without an error
    for stem in LOCAL_BROKEN:
        errs = [r for r in RELATIONS
                if sql("SELECT count(*) FROM %s(%s);" % (r, q(os.path.join(d, stem + ".vtkhdf")))).returncode]
        ok(not errs, "%s: every vtkhdf_* relation reads it" % stem, errs)


# Runs the sqlite3 shell in a fresh Python child, which reports that shell's peak RSS
# (resource.getrusage(RUSAGE_CHILDREN) there sees it alone, not the generator's)
PEAK = ("import resource, subprocess, sys\n"
        "p = subprocess.run(sys.argv[1:], input=sys.stdin.read(), text=True, capture_output=True)\n"
        "sys.stdout.write(p.stdout)\n"
        "sys.stderr.write(p.stderr + '\\nMAXRSS_KB=%d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.exit(p.returncode)\n")
peaks = []


# Under ASan, freed blocks wait in its quarantine (up to 256 MB by default) and count in
# the RSS: keep it small, so the peak is what the process holds
ENV = dict(os.environ)
if ENV.get("ASAN_OPTIONS") is not None:
    ENV["ASAN_OPTIONS"] = ENV["ASAN_OPTIONS"] + ":quarantine_size_mb=16"


def sql(script, env=None, check=False):
    """taplib.sql, with the shell's peak RSS kept in peaks"""
    p = subprocess.run([sys.executable, "-c", PEAK] + shell_args(), input=script, text=True, capture_output=True,
                       env=ENV)
    err, _, kb = p.stderr.rpartition("\nMAXRSS_KB=")
    peaks.append(int(kb) if kb.strip().isdigit() else 0)
    p.stderr = err
    return p


def query(script):
    """taplib.query through sql above"""
    p = sql(".mode json\n" + script)
    if p.returncode != 0 or "rror" in p.stderr:
        raise RuntimeError("sqlite3 failed: " + p.stderr.strip())
    return json.loads(p.stdout) if p.stdout.strip() else []


def check_huge(h):
    del peaks[:]
    m = os.path.join(h, "huge_missing.vtkhdf")
    try:
        rows = query("SELECT * FROM vtkhdf_partitions(%s) LIMIT 3;" % q(m))  # the first rows of 1e9
    except Exception as e:
        rows = [str(e)]
    want = [(0, None, 0, "missing_source"), (1, None, None, "missing_source"), (2, None, None, "missing_source")]
    got = [(r["partition"], r["n_points"], r["point_offset"], r["status"]) for r in rows] if rows and isinstance(
        rows[0], dict) else rows
    ok(got == want and all(os.path.basename(r["source_file"]) == "huge_gone.vtkhdf" for r in rows),
       "huge_missing: 1e9 partitions from one missing source: missing_source, NULL counts, starts unknown after the "
       "first", got)
    p = sql("SELECT status, count(*) FROM (SELECT status FROM vtkhdf_partitions(%s) LIMIT 300000) GROUP BY 1;" % q(m))
    ok(p.returncode == 0 and p.stdout.strip() == "missing_source|300000",
       "huge_missing: 300,000 rows streamed, all missing_source", p.stdout + p.stderr)
    for rel in ("vtkhdf_topologies", "vtkhdf_array_starts"):  # no rows to make: the leaf is skipped unread
        p = sql("SELECT count(*) FROM %s(%s);" % (rel, q(m)))
        ok(p.returncode == 0 and p.stdout.strip() == "0", "huge_missing: %s has no rows (and does not walk 1e9)" % rel,
           p.stdout + p.stderr)
    p = sql("SELECT count(*), sum(status = 'missing_source') FROM vtkhdf_sources(%s);" % q(m))
    ok(p.returncode == 0 and p.stdout.strip() == "7|7", "huge_missing: vtkhdf_sources lists its 7 missing mappings",
       p.stdout + p.stderr)
    p = sql("SELECT name, tuples FROM vtkhdf_arrays(%s);" % q(m))
    ok(p.returncode == 0, "huge_missing: vtkhdf_arrays reads it", p.stderr)
    for name, msg in (
            ("huge_2d", "%s/huge_2d.vtkhdf: /VTKHDF: reading NumberOfPoints whole needs 8000000000 bytes, more than "
                        "vdsql_config('max_alloc') (268435456): refused"),
            # 2^30 steps x 136 bytes a row (sizeof(vh_part), n_trees included)
            ("huge_steps", "%s/huge_steps.vtkhdf: /VTKHDF: a row per step (Steps/NSteps) needs 146028888064 bytes, "
                           "more than vdsql_config('max_alloc') (268435456): refused")):
        p = sql("SELECT count(*) FROM vtkhdf_partitions(%s);" % q(os.path.join(h, name + ".vtkhdf")))
        ok(p.returncode != 0 and (msg % h) in p.stderr, "%s: refused with '%s'" % (name, msg % "DIR"), p.stderr)
    t0 = time.time()
    p = sql("SELECT count(*) FROM vtkhdf_partitions(%s);" % q(os.path.join(h, "huge_nsteps.vtkhdf")))
    took = time.time() - t0
    ok(p.returncode == 0 and p.stdout.strip() == "0" and took < 5,
       "huge_nsteps: NSteps 2^30 without Steps datasets: no partitions, in %.2f s (not 2^30 empty steps walked)" % took,
       p.stdout + p.stderr)
    # a lower bound applies too
    p = sql("SELECT vdsql_config('max_alloc', '1048576');\nSELECT count(*) FROM vtkhdf_partitions(%s);"
            % q(os.path.join(h, "huge_2d.vtkhdf")))
    ok(p.returncode != 0 and "more than vdsql_config('max_alloc') (1048576)" in p.stderr,
       "huge_2d: the bound is vdsql_config('max_alloc')", p.stderr)
    # 1000 part files: the count datasets are read from each source in turn, not through
    # HDF5's virtual dataset (which keeps every source open: about 640 MB here)
    try:
        rows = query("SELECT partition, n_points, n_cells, n_connectivity_ids, point_offset, status FROM "
                     "vtkhdf_partitions(%s);" % q(os.path.join(h, "many_parts.vtkhdf")))
        want = expected(h, "many_parts")
        bad = [("got", r, "want", w) for r, w in zip(rows, want)
               if r["status"] != "ok" or any(r[k] != w[k] for k in w)] + ([len(rows)] if len(rows) != len(want) else [])
    except Exception as e:
        bad = [str(e)]
    ok(not bad, "many_parts: the 1000 partitions of 1000 part files, as the generator wrote them", bad[:5])
    ok(peaks and 0 < max(peaks) < MAX_RSS_KB, "huge files: the largest of %d sqlite3 processes peaked at %d MB (< 300 MB)"
       % (len(peaks), max(peaks or [0]) // 1024), [x // 1024 for x in peaks])


class Counter(http.server.BaseHTTPRequestHandler):
    """A tiny range-serving HTTP server for the 'other host' (127.0.0.2): counts every
    connection and request."""
    root = "."
    counts = {"connections": 0, "requests": 0}
    lock = threading.Lock()

    def setup(self):
        with self.lock:
            self.counts["connections"] += 1
        super().setup()

    def log_message(self, *a):
        pass

    def _file(self):
        with self.lock:
            self.counts["requests"] += 1
        path = os.path.join(self.root, self.path.split("?")[0].lstrip("/"))
        if not os.path.isfile(path):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        with open(path, "rb") as f:
            return f.read()

    def do_HEAD(self):
        body = self._file()
        if body is not None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()

    def do_GET(self):
        body = self._file()
        if body is None:
            return
        rng = self.headers.get("Range", "")
        if rng.startswith("bytes="):
            a, b = rng[6:].split("-")
            a = int(a)
            b = min(int(b) if b else len(body) - 1, len(body) - 1)
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (a, b, len(body)))
            body = body[a:b + 1]
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def log_lines(state):
    with open(os.path.join(state, "logs", "access.log")) as f:
        return f.read().splitlines()


def run_counted(state, pre, sel):
    """Runs pre (settings) and the query sel in one sqlite3 process; returns (its rows,
    stderr, requests vdsql counted, the requests nginx logged, connections and requests
    the other host saw)."""
    n0, c0 = len(log_lines(state)), dict(Counter.counts)
    p = sql(pre + ".mode json\n" + sel + "\n.mode list\nSELECT 'requests=' || requests FROM vdsql_stats() "
            "WHERE backend = 'http';\n")
    lines = p.stdout.splitlines()
    req = int(lines[-1].split("=")[1]) if lines and lines[-1].startswith("requests=") else -1
    body = [x for x in lines[:-1] if x.startswith("[") or x.startswith("{") or x.startswith("]") or x.startswith(" ")]
    try:
        rows = json.loads("\n".join(body)) if body else []
    except ValueError:
        rows = body
    logged = log_lines(state)[n0:]
    return (rows, p.stderr, req, logged, Counter.counts["connections"] - c0["connections"],
            Counter.counts["requests"] - c0["requests"])


def check_remote(www, state, base, other):
    d = os.path.join(www, "vtkhdf")
    otherhost = other.split("://")[1]
    # the hostile local layouts read the same over http
    for stem in LOCAL_BROKEN:
        try:
            bad = compare(parts("%s/%s.vtkhdf" % (base, stem)), expected(d, stem))
        except Exception as e:
            bad = [str(e)]
        ok(not bad, "http %s: the same rows as on files (bad_source, true starts after it)" % stem, "\n".join(bad))
    # sub-files named by URLs: nothing reaches the other host, nothing malformed is asked
    for stem in ("url_other", "url_same", "url_joined", "url_elink"):
        url = "%s/%s.vtkhdf" % (base, stem)
        rows, err, req, logged, conns, oreq = run_counted(state, "", "SELECT * FROM vtkhdf_partitions(%s);" % q(url))
        try:
            bad = compare(rows, expected(d, stem))
        except Exception as e:
            bad = [str(e), err]
        ok(not bad, "http %s: rows as the generator says (%s)" % (stem, ", ".join(sorted({w["status"] for w in expected(
            d, stem)}))), "\n".join(bad))
        ok(conns == 0 and oreq == 0 and req == len(logged) and req > 0,
           "http %s: no connection to %s; vdsql's %d requests are nginx's %d" % (stem, otherhost, req, len(logged)),
           "other host: %d connections, %d requests" % (conns, oreq))
        joined = [x for x in logged if "/http:" in x or "/h/" in x]
        ok(not joined, "http %s: no malformed joined URL requested" % stem, "\n".join(joined))
    # the exact reasons
    for stem, obj, fname, msg in (
            ("url_other", "/VTKHDF/NumberOfPoints", "url_other_part1.vtkhdf",
             "{base}/url_other.vtkhdf: refers to {other}/url_other_part1.vtkhdf, another scheme, host or port (allow it "
             "with vdsql_config('allowed_hosts', '{oh}'))"),
            ("url_joined", "/VTKHDF/NumberOfPoints", "url_joined_part1.vtkhdf",
             "{base}/url_joined.vtkhdf: refers to {base}/h/{other}/url_joined_part1.vtkhdf, which is not a well-formed "
             "URL (a URL inside a URL, or a name joined after a ?query): not requested"),
            ("url_elink", "/VTKHDF/BlockA", "url_elink_BlockA.vtkhdf",
             "{base}/url_elink.vtkhdf: refers to {other}/url_elink_BlockA.vtkhdf, another scheme, host or port (allow it "
             "with vdsql_config('allowed_hosts', '{oh}'))")):
        want = msg.format(base=base, other=other, oh=otherhost)
        try:
            got = problems("%s/%s.vtkhdf" % (base, stem)).get((obj, fname))
        except Exception as e:
            got = str(e)
        ok(got == ("disallowed_source", want, None), "http %s: vtkhdf_sources says disallowed_source, '%s'"
           % (stem, msg), got)
    # the setting lets the other host through (and only it: the malformed one stays out)
    allow = "SELECT vdsql_config('allowed_hosts', %s);\n" % q(otherhost)
    for stem in ("url_other", "url_elink", "url_joined"):
        url = "%s/%s.vtkhdf" % (base, stem)
        rows, err, req, logged, conns, oreq = run_counted(state, allow, "SELECT * FROM vtkhdf_partitions(%s);" % q(url))
        try:
            bad = compare(rows, expected(d, stem), allowed=True)
        except Exception as e:
            bad = [str(e), rows, err]
        ok(not bad, "http %s with allowed_hosts '%s': the other host's rows are ok" % (stem, otherhost), "\n".join(bad))
        reaches = stem != "url_joined"
        ok((oreq > 0) == reaches and req == len(logged) + oreq,
           "http %s with allowed_hosts: %s (%d requests there, vdsql counted %d = nginx %d + other %d)"
           % (stem, "the other host is asked" if reaches else "the malformed URL still is not", oreq, req, len(logged),
              oreq))


def check_secrets(base, huge_base):
    """Every relation on every kind of file, through a URL with userinfo and a presigned
    query: the secrets never show, in rows or errors."""
    host = base.split("://")[1]
    files = ["ug3", "poly", "ext_partitions", "ext_missing", "ext_composite", "ext_steps", "src_text", "src_no_nci",
             "elink_text", "url_other", "url_joined", "url_elink", "nothing", "not_hdf5", "truncated", "steps_short",
             "bad_type", "no_counts"]
    script = [".mode list", ".headers on"]
    for f in files:
        for rel in RELATIONS:
            script.append("SELECT * FROM %s('http://user:s3cretPW@%s/%s.vtkhdf?X-Amz-Signature=s3cretSIG');"
                          % (rel, host, f))
    for rel in RELATIONS:
        script.append("SELECT * FROM %s('http://user:s3cretPW@%s/huge_missing.vtkhdf?X-Amz-Signature=s3cretSIG') LIMIT 3;"
                      % (rel, huge_base.split("://")[1]))
    p = sql("\n".join(script) + "\n")
    out = p.stdout + p.stderr
    leaks = [x for x in out.splitlines() if "s3cret" in x or "user:" in x]
    ok(not leaks, "secrets: none of %d queries (6 relations x %d files) shows the userinfo or the ?query"
       % (len(script) - 2, len(files) + 1), "\n".join(leaks[:20]))
    shown = "http://%s/ug3.vtkhdf?..." % host
    ok(shown + "|ok" in out, "secrets: the queries did read (source_file shown as %s)" % shown, out[:2000])
    ok("http://%s/nothing.vtkhdf?...: HTTP 404 Not Found" % host in out,
       "secrets: an error names the URL redacted (%s/nothing.vtkhdf?...: HTTP 404 Not Found)" % base,
       [x for x in out.splitlines() if "nothing" in x])
    ok("|http://%s/url_other.vtkhdf?...: refers to http://127.0.0.2:" % host in out,
       "secrets: the disallowed-host reason names the main URL redacted", [x for x in out.splitlines()
                                                                           if "refers to" in x][:3])


# what the store's error says of each fault the relay makes (its own words, or curl's)
FAULT_SAYS = {"503": "HTTP 503 Service Unavailable after 3 retries",
              "reset": ("Connection reset by peer", "Empty reply", "Server returned nothing", "Recv failure"),
              "bad_range": "HTTP 206 answers bytes 1-"}
FAULTED = [("ext_partitions", "ext_partitions_part1.vtkhdf", RELATIONS[:2] + ["vtkhdf_topologies",
                                                                                  "vtkhdf_array_starts"]),
           ("ext_composite", "ext_composite_BlockA.vtkhdf", RELATIONS),
           ("ext_steps", "ext_steps_1.vtkhdf", ["vtkhdf_partitions", "vtkhdf_sources"]),
           ("ext_partitions", "ext_partitions.vtkhdf", RELATIONS)]


def check_faults(www, ngurl):
    """Faults on one named file, through the relay: an error naming it, for each relation;
    the 404 and the 403 of a real server: statuses."""
    d = os.path.join(www, "vtkhdf")
    proxy = FaultProxy(int(ngurl.rsplit(":", 1)[1]))
    base = "http://127.0.0.1:%d/vtkhdf" % proxy.port
    fast = "SELECT vdsql_config('http_retry_delay_ms', '10');\n"
    try:
        for kind, says in FAULT_SAYS.items():
            for stem, fname, rels in FAULTED:
                proxy.arm(rate=1, kinds=kind, url=re.escape("/" + fname), seed=1)
                bad = []
                for rel in rels:
                    p = sql(fast + "SELECT * FROM %s(%s);" % (rel, q("%s/%s.vtkhdf" % (base, stem))))
                    err = [x for x in p.stderr.splitlines() if x.strip()]
                    want = "%s/%s: " % (base, fname)
                    words = (says,) if isinstance(says, str) else says
                    if p.returncode == 0 or not err or want not in err[0] or not any(w in err[0] for w in words):
                        bad.append("%s: rc %d, error %s, rows %s" % (rel, p.returncode, err[:1], p.stdout[:300]))
                    elif "_source" in p.stdout:
                        bad.append("%s: rows with a status before the error: %s" % (rel, p.stdout[:300]))
                st = proxy.stats()
                ok(not bad and st["faults"].get(kind), "http %s with every request for %s answered %s: %d relations "
                   "fail with the store's error naming it (%d faults given), no bad_source" % (
                       stem, fname, kind, len(rels), sum(st["faults"].get(kind, {}).values())), "\n".join(bad))
        # a read past the first request (a 64 KiB head of a 448 KB main file): HDF5's error
        # carries the store's words, not its own "driver read request failed"
        big = "http://127.0.0.1:%d/huge/many_parts.vtkhdf" % proxy.port
        proxy.arm(rate=1, kinds="503", url=re.escape("/many_parts.vtkhdf"), skip=1, seed=1)
        p = sql(fast + "SELECT vdsql_config('vtkhdf_prefix', '65536');\nSELECT count(*) FROM vtkhdf_partitions(%s);"
                % q(big))
        err = [x for x in p.stderr.splitlines() if x.strip()]
        ok(p.returncode != 0 and err and "(HDF5: %s: HTTP 503 Service Unavailable after 3 retries)" % big in err[0],
           "http many_parts, its blocks past the head answered 503: the error carries the store's words", err[:2])
        proxy.off()
        # a 404 is a fact: missing_source, the reason the store's
        got = problems("%s/ext_missing.vtkhdf" % base)
        want = ("missing_source", "%s/ext_missing_part1.vtkhdf: HTTP 404 Not Found" % base, 0)
        ok(got.get(("/VTKHDF/NumberOfPoints", "ext_missing_part1.vtkhdf")) == want,
           "http ext_missing (404): vtkhdf_sources says %s" % (want,), got)
    except Exception as e:
        ok(False, "http faults on one sub-file", str(e))
    finally:
        proxy.stop()
    # a 403 is a fact too: bad_source (the generator's rows for a part1 that is unusable)
    fb = ngurl + "/forbidden/vtkhdf"
    for stem in LOCAL_BROKEN[:4]:
        try:
            bad = compare(parts("%s/%s.vtkhdf" % (fb, stem)), expected(d, stem))
            got = problems("%s/%s.vtkhdf" % (fb, stem))
        except Exception as e:
            bad, got = [str(e)], {}
        why = "%s/%s_part1.vtkhdf: HTTP 403 Forbidden" % (fb, stem)
        refused = {k: v for k, v in got.items() if k[1] == stem + "_part1.vtkhdf"}
        ok(not bad and refused and all(v == ("bad_source", why, None) for v in refused.values()),
           "http %s with %s_part1 refused (403): bad_source, NULL counts, true starts, '%s'"
           % (stem, stem, why.replace(fb, "DIR")), "\n".join(bad) + str(refused))


def main():
    if not os.access(mk, os.X_OK):
        print("1..1\nnot ok 1 - %s not built (make)" % mk)
        return 1
    tmp = tempfile.mkdtemp(prefix="vdsql-hostile.")
    state = os.path.join(tmp, "nginx")
    web = other = None
    try:
        www = os.path.join(tmp, "www")
        d = os.path.join(www, "vtkhdf")
        h = os.path.join(www, "huge")
        os.makedirs(www)
        subprocess.run([mk, d], check=True)
        subprocess.run([mk, h, "huge"], check=True)
        check_huge(h)
        check_local(d)
        web = Nginx(www, state)
        if not ok(web.started, "http: nginx started", web.error):
            return plan()
        base = web.url + "/vtkhdf"
        Counter.root = d
        other = Server(("127.0.0.2", 0), Counter)
        threading.Thread(target=other.serve_forever, daemon=True).start()
        otherurl = "http://127.0.0.2:%d" % other.server_address[1]
        subprocess.run([mk, d, "urls", base, otherurl], check=True)
        check_remote(www, state, base, otherurl)
        check_huge_http = sql("SELECT partition, status FROM vtkhdf_partitions(%s) LIMIT 2;"
                              % q("%s/../huge/huge_missing.vtkhdf" % base))
        ok(check_huge_http.returncode == 0 and check_huge_http.stdout.split() == ["0|missing_source", "1|missing_source"],
           "http huge_missing: rows stream as missing_source", check_huge_http.stdout + check_huge_http.stderr)
        check_secrets(base, base.rsplit("/", 1)[0] + "/huge")
        check_faults(www, web.url)
        ok(Counter.counts["requests"] > 0, "the other host did serve when it was allowed (%d requests in all)"
           % Counter.counts["requests"])
    finally:
        if other:
            other.shutdown()
        if web:
            web.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


if __name__ == "__main__":
    sys.exit(main())
