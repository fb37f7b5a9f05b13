#!/usr/bin/env python3
"""The http(s) backend against a hostile server (tests/http/badserver.py), as TAP.

lindi_read, lindi_files and vds_layers are read through every fault the server has:
answers that ignore Range, wrong or missing Content-Range, short bodies, bodies longer
than promised, huge bodies (vdsql must stop early: bytes in vdsql_stats() and the
shell's peak RSS stay small), redirects to another port or scheme (refused unless
vdsql_config('allowed_hosts') lists them), redirect loops, a server that drips one byte
a second and one that never answers (both end with the http_timeout error). Every
error is checked word for word, with the URL it names; requests and bytes are checked
through vdsql_stats(). Each case runs in a fresh sqlite3 process (a cold cache).
  env: SO, SQLITE3 (see tests/taplib.py), VDSQL_TESTDATA (datasets, else generated)"""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BadServer, datasets, errors, quote, shell  # noqa: E402
from taplib import ok, plan  # noqa: E402

KB = 1024
MB = 1024 * KB
SLACK = 64 * KB          # what curl may read past a limit before its callback stops it (one buffer, and then some)
HUGE = 64 * MB

ds = datasets()
srv = BadServer(ds)
P, Q = srv.port, srv.port2
small = open(os.path.join(ds, "lindi/small.lindi.tar"), "rb").read()
SAMPLE_OFF, SAMPLE_LEN = 23552, 3008          # sample.h5 in small.lindi.tar (mklindi.py)
sample_hex = small[SAMPLE_OFF:SAMPLE_OFF + SAMPLE_LEN].hex().upper()
VDL = len(open(os.path.join(ds, "survey/VolumeDataLayout"), "rb").read())


def L(fault, name="small.lindi.tar", port=None):
    return "http://127.0.0.1:%d/%s/lindi/%s" % (port or P, fault, name)


def V(fault, port=None):
    return "http://127.0.0.1:%d/%s/survey" % (port or P, fault)


def files(url):
    return "SELECT count(*) FROM lindi_files(%s);" % quote(url)


def read(url):
    return "SELECT hex(lindi_read(%s, 'sample.h5'));" % quote(url)


def layers(url):
    return "SELECT count(*) FROM vds_layers(%s);" % quote(url)


STATS = "SELECT 'stats', requests, bytes, retries FROM vdsql_stats() WHERE backend = 'http';"


def case(name, setup, query, rows=None, errs=(), requests=None, max_bytes=None, max_secs=None, retries=None):
    """Runs setup + query + STATS in a fresh shell and checks the rows printed (the
    stats row apart), the error messages (regular expressions when given as re
    patterns, else exact), the requests made, the bytes received, the time taken."""
    out, err, rc, rss, secs = shell(setup + "\n" + query + "\n" + STATS)
    lines = [x for x in out.splitlines() if not x.startswith("stats|")]
    st = [x for x in out.splitlines() if x.startswith("stats|")]
    stats = tuple(int(v) for v in st[0].split("|")[1:]) if st else (-1, -1, -1)
    got = errors(err)
    detail = "stdout:\n%s\nstderr:\n%s\nstats (requests, bytes, retries): %s, %.2f s" % (out, err, stats, secs)
    good = rc not in (-9, 99) and len(got) == len(errs)
    for g, e in zip(got, errs):
        good = good and (e.fullmatch(g) is not None if hasattr(e, "fullmatch") else g == e)
    if rows is not None:
        good = good and lines == rows
    if requests is not None:
        good = good and stats[0] == requests
    if max_bytes is not None:
        good = good and 0 <= stats[1] <= max_bytes
    if retries is not None:
        good = good and stats[2] == retries
    if max_secs is not None:
        good = good and secs <= max_secs
    if errs:
        detail = "expected error: %s\n%s" % ("\n".join(getattr(e, "pattern", e) for e in errs), detail)
    ok(good, name, detail)
    return stats, rss


TO = "SELECT vdsql_config('http_timeout', 0.5), vdsql_config('http_retries', 0);"
TOR = ["0.5|0"]
NORETRY = "SELECT vdsql_config('http_retries', 0) IS NULL;"  # prints 0
NR = ["0"]

# --- a correct server: the reference answers, request counts and peak RSS
case("ok: lindi_files", NORETRY, files(L("ok")), NR + ["6"], requests=1)
case("ok: lindi_read", NORETRY, read(L("ok")), NR + [sample_hex], requests=2)
_, base_rss = case("ok: vds_layers", NORETRY, layers(V("ok")), NR + ["5"], requests=2)

# --- a server that ignores Range: the slice is kept while it lies within http_max_excess
case("norange: lindi_files", NORETRY, files(L("norange")), NR + ["6"], requests=1)
case("norange: lindi_read keeps the member's bytes (not those at offset 0)", NORETRY, read(L("norange")),
     NR + [sample_hex], requests=2)
case("norange: vds_layers", NORETRY, layers(V("norange")), NR + ["5"], requests=2)
MANY = os.path.getsize(os.path.join(ds, "lindi/many.lindi.tar"))
case("norange: an archive larger than the first read (many.lindi.tar): each answer is read up to its slice only",
     NORETRY, files(L("norange", "many.lindi.tar")), NR + ["203"], requests=2, max_bytes=128 * KB + MANY + 2 * SLACK)
EXC0 = NORETRY + " SELECT vdsql_config('http_max_excess', 0);"
case("norange, http_max_excess 0: lindi_read refuses the whole object (Content-Length known up front)", EXC0,
     read(L("norange")), NR + ["0"],
     ["%s: HTTP 200 ignores the Range (bytes 23552-26559) and sends the whole object (27648 bytes): more than "
      "http_max_excess (0) bytes beyond the 3008 asked for (see vdsql_config('http_max_excess'))" % L("norange")],
     requests=2)
case("norange, http_max_excess 0: a slice at offset 0 is still read (lindi_files)", EXC0, files(L("norange")),
     NR + ["0", "6"], requests=1)

# --- 206 answers whose Content-Range is missing, malformed or wrong
for fault, msg in [
        ("nocr", "HTTP 206 without a Content-Range header (asked for %s)"),
        ("crbad", "HTTP 206 with a malformed Content-Range header (asked for %s)"),
        ("crstart", "HTTP 206 answers bytes 512-%(end)d/%(size)d, asked for %%s (another start)"),
        ("crshort", "short read: HTTP 206 answers bytes 0-%(short)d/%(size)d, asked for %%s, and the object does not end there"),
        ("crtotal", "HTTP 206 with Content-Range bytes 0-%(end)d/%(end)d: the range ends past the object's total"),
        ("short206", "short read: %(half)d of the %(size)d bytes its Content-Range (bytes 0-%(end)d/%(size)d) promised"),
        ("huge206", "the body is longer than the %(size)d bytes its Content-Range (bytes 0-%(end)d/%(size)d) promised; "
                    "transfer aborted")]:
    for what, url, q, size in [("lindi_files", L(fault), files, len(small)), ("lindi_read", L(fault), read, len(small)),
                               ("vds_layers", V(fault) + "/VolumeDataLayout", layers, VDL)]:
        m = msg % {"end": size - 1, "size": size, "short": size - 101, "half": size // 2} if "%(" in msg else msg
        m = m.replace("%%", "%")
        want = "bytes 0-131071" if what != "vds_layers" else "bytes 0- (to the end)"
        m = m % want if "%s" in m else m
        qurl = url if what != "vds_layers" else V(fault)
        case("%s: %s fails: %s" % (fault, what, m.split(":")[0] if ":" in m else m[:40]), NORETRY, q(qurl), NR,
             ["%s: %s" % (url, m)], requests=1 if what != "vds_layers" else 2,
             max_bytes=size + SLACK if what != "vds_layers" else 2 * (size + SLACK))
case("crlong: lindi_files reads (the answer ends at the object's end)", NORETRY, files(L("crlong")), NR + ["6"],
     requests=1)
case("crlong: lindi_read fails: more bytes than asked", NORETRY, read(L("crlong")), NR,
     ["%s: HTTP 206 answers bytes 23552-26659/27648, asked for bytes 23552-26559 (more than asked)" % L("crlong")],
     requests=2)
case("short206 is retried like any cut transfer", "SELECT vdsql_config('http_retries', 1), "
     "vdsql_config('http_retry_delay_ms', 1);", files(L("short206")), ["1|1"],
     ["%s: short read: 13824 of the 27648 bytes its Content-Range (bytes 0-27647/27648) promised after 1 retries"
      % L("short206")], requests=2, retries=1)

# --- bodies longer than their Content-Length: curl keeps the promised bytes and drops
#     the rest that came with them; what came later spoils the next answer on that
#     connection, which is retried once on a new connection and then right
case("longer: lindi_files gets the promised bytes (the excess arrives after curl's first buffer)", NORETRY,
     files(L("longer")), NR + ["6"], requests=1)
case("longer: vds_layers gets the promised bytes (the excess arrives with the body)", NORETRY, layers(V("longer")),
     NR + ["5"], requests=2)
case("longer: after a kept-alive connection's first answer too", NORETRY, files(L("ok")) + "\n" + files(L("longer")),
     NR + ["6", "6"], requests=2)
case("longer: a later request on that connection is retried on a new one, and right",
     "SELECT vdsql_config('http_retries', 1), vdsql_config('http_retry_delay_ms', 1);",
     "SELECT count(*) FROM lindi_files(%s);\n%s\n%s" % (quote(L("longer")), read(L("ok")), files(L("ok"))),
     ["1|1", "6", sample_hex, "6"], requests=4, retries=1)
case("longer: with no retries allowed, that request fails with an error (never wrong bytes)", NORETRY,
     "SELECT count(*) FROM lindi_files(%s);\n%s" % (quote(L("longer")), read(L("ok"))), NR + ["6"],
     [re.compile(re.escape(L("ok")) + r": Unsupported protocol.*")], requests=2)

# --- huge bodies: vdsql stops early, memory stays small
LIM = NORETRY + " SELECT vdsql_config('http_max_excess', 4096), vdsql_config('max_alloc', 1048576);"
LR = NR + ["4096|1048576"]
_, rss = case("huge: lindi_files stops once it holds the 128 KiB it asked for", LIM, files(L("huge")), LR + ["6"],
              requests=1, max_bytes=128 * KB + SLACK)
ok(rss < base_rss + 24 * 1024, "huge: lindi_files peak RSS %d KiB (a correct server: %d KiB)" % (rss, base_rss))
_, rss = case("huge: lindi_read aborts the member read past http_max_excess", LIM, read(L("huge")), LR,
              ["%s: HTTP 200 ignores the Range (bytes 23552-26559) and sends the whole object: more than http_max_excess "
               "(4096) bytes beyond the 3008 asked for; transfer aborted (see vdsql_config('http_max_excess'))" % L("huge")],
              requests=2, max_bytes=(128 * KB + SLACK) + (SAMPLE_LEN + 4096 + SLACK))
ok(rss < base_rss + 24 * 1024, "huge: lindi_read peak RSS %d KiB (a correct server: %d KiB)" % (rss, base_rss))
_, rss = case("huge: vds_layers aborts each document past max_alloc", LIM, layers(V("huge")), LR,
              ["%s/VolumeDataLayout: the object is larger than max_alloc (1048576 bytes; see vdsql_config('max_alloc')); "
               "transfer aborted" % V("huge")], requests=2, max_bytes=2 * (1 * MB + SLACK))
ok(rss < base_rss + 24 * 1024, "huge: vds_layers peak RSS %d KiB (a correct server: %d KiB)" % (rss, base_rss))
case("huge: with the default http_max_excess lindi_read keeps working (reads the slice, stops)", NORETRY,
     read(L("huge")), NR + [sample_hex], requests=2, max_bytes=2 * (128 * KB + SLACK))
case("hugecl: vds_layers refuses a Content-Length over max_alloc before any body byte", LIM, layers(V("hugecl")), LR,
     ["%s/VolumeDataLayout: the object is %d bytes, more than max_alloc (1048576 bytes; see vdsql_config('max_alloc'))"
      % (V("hugecl"), HUGE)], requests=2, max_bytes=2 * SLACK)
case("hugecl: lindi_read refuses a whole-object answer whose slice lies past the cap", LIM, read(L("hugecl")), LR,
     ["%s: HTTP 200 ignores the Range (bytes 23552-26559) and sends the whole object (%d bytes): more than "
      "http_max_excess (4096) bytes beyond the 3008 asked for (see vdsql_config('http_max_excess'))" % (L("hugecl"), HUGE)],
     requests=2, max_bytes=128 * KB + 2 * SLACK)

# --- the same bound on local files: a whole document over max_alloc is refused unread
big = os.path.join(tempfile.mkdtemp(prefix="vdsql-big."), "ds")
os.makedirs(big)
with open(os.path.join(big, "VolumeDataLayout"), "wb") as f:
    f.truncate(2 * MB)  # sparse: no disk used
shutil.copy(os.path.join(ds, "survey/LayerStatus"), big)
case("a local VolumeDataLayout over max_alloc is refused (the file backend)", LIM, layers(big), LR,
     ["%s/VolumeDataLayout: the object is %d bytes, more than max_alloc (1048576 bytes; see vdsql_config('max_alloc'))"
      % (big, 2 * MB)], requests=0)
shutil.rmtree(os.path.dirname(big))

# --- redirects
case("redir-same: a relative redirect on the same origin is followed (each hop is a request)", NORETRY,
     files(L("redir-same")) + read(L("redir-same")), NR + ["6", sample_hex], requests=4)
case("redir-abs: an absolute redirect to the same scheme, host and port is followed", NORETRY,
     layers(V("redir-abs")), NR + ["5"], requests=4)
REFUSED = "%s: refers to %s, another scheme, host or port (allow it with vdsql_config('allowed_hosts', '%s'))"
case("redir-port: a redirect to another port is refused (lindi_files)", NORETRY, files(L("redir-port")), NR,
     [REFUSED % (L("redir-port"), L("ok", port=Q), "127.0.0.1:%d" % Q)], requests=1)
case("redir-port: refused (lindi_read)", NORETRY, read(L("redir-port")), NR,
     [REFUSED % (L("redir-port"), L("ok", port=Q), "127.0.0.1:%d" % Q)], requests=1)
case("redir-port: refused (vds_layers)", NORETRY, layers(V("redir-port")), NR,
     [REFUSED % (V("redir-port") + "/VolumeDataLayout", V("ok", port=Q) + "/VolumeDataLayout", "127.0.0.1:%d" % Q)],
     requests=2)
allow = NORETRY + " SELECT vdsql_config('allowed_hosts', '127.0.0.1:%d');" % Q
case("redir-port: followed once allowed_hosts lists 127.0.0.1:PORT2", allow,
     files(L("redir-port")) + read(L("redir-port")) + layers(V("redir-port")),
     NR + ["127.0.0.1:%d" % Q, "6", sample_hex, "5"], requests=8)
case("redir-port: allowed_hosts with the host alone allows any of its ports", NORETRY +
     " SELECT vdsql_config('allowed_hosts', 'example.org, 127.0.0.1');", files(L("redir-port")),
     NR + ["example.org, 127.0.0.1", "6"], requests=2)
case("redir-port: allowed_hosts listing another port does not", NORETRY +
     " SELECT vdsql_config('allowed_hosts', '127.0.0.1:%d');" % P, files(L("redir-port")),
     NR + ["127.0.0.1:%d" % P], [REFUSED % (L("redir-port"), L("ok", port=Q), "127.0.0.1:%d" % Q)], requests=1)
# a signed store's request (s3:// here, az:// alike) is never re-sent elsewhere: a redirect
# is refused at once, naming where it pointed, even to a host allowed_hosts lists
S3 = "s3://redir-port/lindi/small.lindi.tar"
case("redir-port over s3://: refused at once (one request), even with allowed_hosts", NORETRY +
     " SELECT vdsql_config('s3_endpoint', 'http://127.0.0.1:%d'), vdsql_config('allowed_hosts', '127.0.0.1');" % P,
     files(S3) + "\nSELECT requests FROM vdsql_stats() WHERE backend = 's3';",
     NR + ["http://127.0.0.1:%d|127.0.0.1" % P, "1"],
     ["%s: HTTP 302 redirect to %s, not followed (requests of this store are signed for its endpoint; set the "
      "endpoint the service names)" % (S3, L("ok", port=Q))], requests=0)
case("redir-https: a redirect to another scheme (http -> https) is refused", NORETRY, files(L("redir-https")), NR,
     [REFUSED % (L("redir-https"), L("ok").replace("http:", "https:"), "127.0.0.1:%d" % P)], requests=1)
case("redir-file: a redirect to a file URL is refused", NORETRY, layers(V("redir-file")), NR,
     ["%s/VolumeDataLayout: refers to file:///etc/passwd, which is not an http(s) URL on its host" % V("redir-file")],
     requests=2)
case("redir-noloc: a redirect without Location is an error", NORETRY, files(L("redir-noloc")), NR,
     ["%s: HTTP 302 redirect without a usable Location" % L("redir-noloc")], requests=1)
case("redir-loop: a redirect loop ends after 5 hops", NORETRY, files(L("redir-loop")), NR,
     ["%s (redirected to %s): more than 5 redirects (the last to %s)" % ((L("redir-loop"),) * 3)], requests=6)
case("chain5: five redirects are followed", NORETRY, files(L("chain5")), NR + ["6"], requests=6)
case("chain6: six are not", NORETRY, files(L("chain6")), NR,
     ["%s (redirected to %s): more than 5 redirects (the last to %s)" % (L("chain6"), L("chain1"), L("ok"))],
     requests=6)
case("a redirect to a 503: retries and backoff go on at the redirect's target",
     "SELECT vdsql_config('http_retries', 2), vdsql_config('http_retry_delay_ms', 1);", files(L("to-fail503")), ["2|1"],
     ["%s (redirected to %s): HTTP 503 Service Unavailable after 2 retries" % (L("to-fail503"), L("fail503"))],
     requests=4, retries=2)
case("a redirect to a slow drip: the timeout applies to the hop", TO, files(L("to-slow")), TOR,
     [re.compile(re.escape("%s (redirected to %s): Timeout was reached (" % (L("to-slow"), L("slow"))) + ".*")],
     requests=2, max_secs=5)

# --- credentials of the URL (Basic auth) go to its own origin only, redirects included
AUTH = "http://user:pw@127.0.0.1:%d/%%s/lindi/small.lindi.tar" % P
case("auth: the URL's userinfo is sent as Basic auth", NORETRY, files(AUTH % "auth"), NR + ["6"], requests=1)
case("auth: without it the server refuses", NORETRY, files(L("auth")), NR, ["%s: HTTP 401 Unauthorized" % L("auth")],
     requests=1)
case("auth: a relative same-origin redirect keeps the credentials", NORETRY, files(AUTH % "to-auth"), NR + ["6"],
     requests=2)
case("auth: an absolute same-origin redirect keeps them too", NORETRY, files(AUTH % "absto-auth"), NR + ["6"],
     requests=2)
case("auth: a redirect to another (allowed) port does not carry them", NORETRY +
     " SELECT vdsql_config('allowed_hosts', '127.0.0.1:%d');" % Q, files(AUTH % "port2-noauth"),
     NR + ["127.0.0.1:%d" % Q, "6"], requests=2)

# --- the URL in every message is redacted: no userinfo, no query values
SECRET = "http://user:pw@127.0.0.1:%d/%%s/lindi/small.lindi.tar?X-Amz-Signature=sig" % P
RED = "http://127.0.0.1:%d/%%s/lindi/small.lindi.tar?..." % P
case("nocr, a URL with userinfo and query: the message names it redacted", NORETRY, files(SECRET % "nocr"), NR,
     ["%s: HTTP 206 without a Content-Range header (asked for bytes 0-131071)" % (RED % "nocr")], requests=1)
case("redir-cred: credentials in a refused Location are not shown", NORETRY, files(SECRET % "redir-cred"), NR,
     [REFUSED % (RED % "redir-cred", ("http://127.0.0.1:%d/ok/lindi/small.lindi.tar?..." % Q), "127.0.0.1:%d" % Q)],
     requests=1)

# --- errors that are final, and retried ones
case("notfound: 404 is final", "", files(L("notfound")), [], ["%s: HTTP 404 Not Found" % L("notfound")], requests=1,
     retries=0)
case("fail503: retried, then named", "SELECT vdsql_config('http_retries', 1), vdsql_config('http_retry_delay_ms', 1);",
     layers(V("fail503")), ["1|1"],
     ["%s/VolumeDataLayout: HTTP 503 Service Unavailable after 1 retries" % V("fail503")], requests=4, retries=2)

# --- slow drip and silence: http_timeout ends both
case("slow: one byte a second ends with the timeout (vds_layers)", TO, layers(V("slow")), TOR,
     [re.compile(re.escape(V("slow")) + r"/VolumeDataLayout: Timeout was reached \(Operation timed out after \d+ "
                 r"milliseconds with \d+ out of %d bytes received\)" % VDL)], requests=2, max_secs=5)
case("slow: lindi_read too", TO, read(L("slow")), TOR,
     [re.compile(re.escape(L("slow")) + r": Timeout was reached \(Operation timed out after \d+ milliseconds with \d+ "
                 r"out of \d+ bytes received\)")], requests=1, max_secs=5)
case("slow: retried once, then named with the retry", "SELECT vdsql_config('http_timeout', 0.3), "
     "vdsql_config('http_retries', 1), vdsql_config('http_retry_delay_ms', 1);", files(L("slow")), ["0.3|1|1"],
     [re.compile(re.escape(L("slow")) + r": Timeout was reached \(.*\) after 1 retries")], requests=2, retries=1,
     max_secs=5)
case("hang: a server that never answers ends with the timeout (lindi_files)", TO, files(L("hang")), TOR,
     [re.compile(re.escape(L("hang")) + r": Timeout was reached \(Operation timed out after \d+ milliseconds with 0 "
                 r"bytes received\)")], requests=1, max_secs=5)
case("hang: vds_layers", TO, layers(V("hang")), TOR,
     [re.compile(re.escape(V("hang")) + r"/VolumeDataLayout: Timeout was reached \(Operation timed out after \d+ "
                 r"milliseconds with 0 bytes received\)")], requests=2, max_secs=5)

srv.stop()
sys.exit(plan())
