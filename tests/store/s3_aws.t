#!/usr/bin/python3
"""s3:// as AWS users meet it, without the internet: no endpoint setting, so vdsql
addresses AWS itself (https://<bucket>.s3.<region>.amazonaws.com/<key>, path style
https://s3.<region>.amazonaws.com/<bucket>/<key> for bucket names that are no DNS
label), and the bucket lives in another region than AWS_REGION says. AWS's host names
reach tests/aws_proxy.py on 127.0.0.1 through vdsql_config('connect_to') (curl's
CONNECT_TO; TLS still checks the AWS host name, against a certificate made here and
given as ca_file); the proxy answers as AWS does for the wrong region (301
PermanentRedirect with x-amz-bucket-region, 400 AuthorizationHeaderMalformed with
<Region>) and forwards the rest to radosgw, which reads the same host names
(RGW_DNS_NAME) and checks every signature. Asserted: rows equal the local copy's, exact
request counts in vdsql_stats() and in the proxy's log (host, path, region signed for,
status), the region remembered per bucket (the next request goes right first time), and
a 301 whose Location points to another host is not followed, and a bucket that names yet
another region after the first is asked once more, not again.
   env: SO, SQLITE3 (tests/taplib.py), VDSQL_TESTDATA (datasets, else generated),
        STORETOOL (default build/storetool)"""
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.dirname(here))
from taplib import Radosgw, datasets, ok, plan, shell_args  # noqa: E402

STORETOOL = os.environ.get("STORETOOL", os.path.join(top, "build", "storetool"))
AWS_VARS = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
            "AWS_DEFAULT_REGION")
HOME = "eu-west-1"      # where every bucket lives (radosgw's host names)
WRONG = "us-east-1"     # what AWS_REGION says
B, DOTTED, MOVED, FLIP = "vdsql-test", "vdsql.dotted", "vdsql-moved", "vdsql-flip"
V_HOME, V_WRONG = "%s.s3.%s.amazonaws.com" % (B, HOME), "%s.s3.%s.amazonaws.com" % (B, WRONG)
STATS = "SELECT 'stats', requests FROM vdsql_stats() WHERE backend = 's3';"


def q(s):
    return "'" + s.replace("'", "''") + "'"


def certificate(tmp):
    """A self-signed certificate for AWS's S3 host names in both regions: curl checks the
    proxy's TLS against the name it was asked for, as it would at AWS."""
    crt, key = os.path.join(tmp, "aws.crt"), os.path.join(tmp, "aws.key")
    names = ",".join("DNS:%s" % n for r in (HOME, WRONG) for n in ("*.s3.%s.amazonaws.com" % r, "s3.%s.amazonaws.com" % r))
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=s3.amazonaws.com",
                    "-addext", "subjectAltName=" + names, "-keyout", key, "-out", crt], check=True, capture_output=True)
    return crt, key


class Proxy:
    def __init__(self, tmp, upstream, crt, key):
        self.log = os.path.join(tmp, "proxy.log")
        open(self.log, "w").close()
        self.p = subprocess.Popen([sys.executable, os.path.join(top, "tests", "aws_proxy.py"), "--upstream", upstream,
                                   "--cert", crt, "--key", key, "--home", HOME, "--elsewhere", MOVED, "--flip", FLIP, "--log", self.log],
                                  stdout=subprocess.PIPE, text=True)
        self.port = int(self.p.stdout.readline())
        self.seen = 0

    def new(self):
        """The requests logged since the last call: (method, host, path, signed, status)."""
        with open(self.log) as f:
            lines = f.read().splitlines()
        out = [json.loads(x) for x in lines[self.seen:]]
        self.seen = len(lines)
        return [(r["method"], r["host"], r["path"], r["signed"], r["status"]) for r in out]

    def stop(self):
        self.p.kill()
        self.p.wait()


def main():
    try:
        import boto3
        import botocore.config
    except ImportError:
        ok(False, "boto3 for /usr/bin/python3 (Debian package python3-boto3)")
        return plan()
    tmp = tempfile.mkdtemp(prefix="vdsql-s3aws.")
    ds = datasets(tmp, vtkhdf=False)
    crt, key = certificate(tmp)
    os.environ["RGW_DNS_NAME"] = "s3.%s.amazonaws.com" % HOME
    with Radosgw() as srv:
        if not ok(srv.started, "radosgw starts on 127.0.0.1, reading s3.%s.amazonaws.com host names" % HOME, srv.error):
            return plan()
        c = boto3.client("s3", endpoint_url=srv.endpoint, aws_access_key_id=srv.key, aws_secret_access_key=srv.secret,
                         region_name=srv.region,
                         config=botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
        n = 0
        for root, _, files in os.walk(os.path.join(ds, "survey")):
            for f in files:
                p = os.path.join(root, f)
                c.upload_file(p, B, "ds/" + os.path.relpath(p, ds))
                n += 1
        lt = os.path.join(ds, "lindi/small.lindi.tar")
        c.create_bucket(Bucket=DOTTED)
        c.upload_file(lt, DOTTED, "small.lindi.tar")
        proxy = Proxy(tmp, srv.endpoint, crt, key)
        try:
            run_tests(c, srv, proxy, ds, lt, crt)
        finally:
            proxy.stop()
    return plan()


def run_tests(c, srv, proxy, ds, lt, crt):
    # no AWS_ENDPOINT_URL: AWS itself; the wrong region; AWS's names on the proxy
    env = {"AWS_ACCESS_KEY_ID": srv.key, "AWS_SECRET_ACCESS_KEY": srv.secret, "AWS_REGION": WRONG}
    conf = (("connect_to", "::127.0.0.1:%d" % proxy.port), ("ca_file", crt))
    setup = "".join("SELECT vdsql_config('%s', %s);\n" % (k, q(v)) for k, v in conf)
    tool_env = {k: v for k, v in os.environ.items() if k not in AWS_VARS}
    tool_env.update(env, STORETOOL_CONFIG=";".join("%s=%s" % kv for kv in conf))

    def run(script, ev=env):
        e = {k: v for k, v in os.environ.items() if k not in AWS_VARS}
        e.update(ev)
        try:  # bounded: a client that asks for ever fails here instead of stalling the suite
            p = subprocess.run(shell_args(), input=".mode list\n" + setup + script, text=True, capture_output=True,
                               env=e, timeout=60)
        except subprocess.TimeoutExpired:
            return [], "timed out after 60 s", -9
        return p.stdout.split("\n")[len(conf):-1], p.stderr, p.returncode

    def tool(*args, body=None):
        r = subprocess.run([STORETOOL] + list(args), input=body, capture_output=True, env=tool_env, timeout=60)
        return r.returncode, r.stdout.decode(), r.stderr.decode()

    survey, loc = "s3://%s/ds/survey" % B, os.path.join(ds, "survey")
    lay = "Dimensions_012LOD0"
    want_layers = run("SELECT * FROM vds_layers(%s);" % q(loc))[0]
    want_status = run("SELECT status, count(*) FROM vds_chunks(%s, '%s') GROUP BY status ORDER BY 1;" % (q(loc), lay))[0]

    # -- one connection: the first query learns the region, the next go right first time
    out, err, rc = run("SELECT * FROM vds_layers(%s);\n%s\n" % (q(survey), STATS) +
                       "SELECT vdsql_config('stats', 'reset');\n"
                       "SELECT status, count(*) FROM vds_chunks(%s, '%s') GROUP BY status ORDER BY 1;\n%s\n"
                       % (q(survey), lay, STATS))
    nl, ns = len(want_layers), len(want_status)
    ok(rc == 0 and not err and nl > 1 and out[:nl] == want_layers,
       "AWS, wrong region: vds_layers over virtual-hosted-style URLs equals the local copy's (%d rows)" % nl,
       "%s\n%s\n%s" % (err, out[:nl], want_layers))
    # VolumeDataLayout and LayerStatus go out together to us-east-1, both answered 301,
    # both sent again to eu-west-1: 4 requests, none a retry of a fault
    ok(out[nl:nl + 1] == ["stats|4"], "... in 4 requests: the 2 documents in parallel, each 301 and sent again once",
       out[nl:])
    log = proxy.new()
    first = sorted(log[:2]), sorted(log[2:4])
    ok(len(log) >= 4 and [h[1:] for h in first[0]] ==
       [(V_WRONG, "/ds/survey/LayerStatus", WRONG, 301), (V_WRONG, "/ds/survey/VolumeDataLayout", WRONG, 301)]
       and [h[1:] for h in first[1]] ==
       [(V_HOME, "/ds/survey/LayerStatus", HOME, 200), (V_HOME, "/ds/survey/VolumeDataLayout", HOME, 200)],
       "the proxy saw both at %s signed for %s (301), then at %s signed for %s (200)" % (V_WRONG, WRONG, V_HOME, HOME),
       "\n".join(map(str, log)))
    ok(out[nl + 2:nl + 2 + ns] == want_status and out[nl + 2 + ns:] == ["stats|3"],
       "the region is remembered: vds_chunks's 3 pages (documents cached) in exactly 3 requests, right first time",
       "%s\n%s" % (out[nl + 1:], want_status))
    ok([h[1] for h in log[4:]] == [V_HOME] * 3 and all(h[3] == HOME and h[4] == 200 for h in log[4:]),
       "... all three to %s, signed for %s" % (V_HOME, HOME), "\n".join(map(str, log[4:])))

    # -- a setting changed forgets the region (the endpoint may be another): learnt again
    out, err, rc = run("SELECT count(*) FROM vds_layers(%s);\nSELECT vdsql_config('http_retries', 3);\n"
                       "SELECT vdsql_config('cache', 'clear');\nSELECT vdsql_config('stats', 'reset');\n"
                       "SELECT count(*) FROM vds_layers(%s);\n%s" % (q(survey), q(survey), STATS))
    ok(rc == 0 and out[-1:] == ["stats|4"] and len(proxy.new()) == 8,
       "after vdsql_config changes a setting, the region is asked again (4 requests, as the first time)",
       "%s %s" % (out, err))

    # -- a bucket name with a dot: path style on the region's host (the certificate's
    # wildcard covers one label); it is its own bucket, so its region is learnt on its own
    lindi = "s3://%s/small.lindi.tar" % DOTTED
    want = run("SELECT * FROM lindi_files(%s) ORDER BY 1;" % q(lt))[0]
    proxy.new()
    out, err, rc = run("SELECT * FROM vds_layers(%s);\nSELECT vdsql_config('stats', 'reset');\n"
                       "SELECT * FROM lindi_files(%s) ORDER BY 1;\n%s" % (q(survey), q(lindi), STATS))
    log = proxy.new()
    ok(rc == 0 and not err and out[nl + 1:-1] == want and out[-1] == "stats|2" and len(want) > 1,
       "a dotted bucket (%s): lindi_files equals the local copy's, in 2 requests (301, then its region)" % DOTTED,
       "%s %s %s" % (err, out, want))
    ok([h[1:] for h in log[4:]] == [("s3.%s.amazonaws.com" % WRONG, "/%s/small.lindi.tar" % DOTTED, WRONG, 301),
                                    ("s3.%s.amazonaws.com" % HOME, "/%s/small.lindi.tar" % DOTTED, HOME, 206)],
       "... path style: s3.%s.amazonaws.com/%s/..., then s3.%s.amazonaws.com" % (WRONG, DOTTED, HOME),
       "\n".join(map(str, log)))

    # -- names no host can carry (upper case, '_'): path style as well
    rc, o, e = tool("head", "s3://Vdsql_Legacy/x")
    log = proxy.new()
    ok([h[1:3] for h in log] == [("s3.%s.amazonaws.com" % WRONG, "/Vdsql_Legacy/x"), ("s3.%s.amazonaws.com" % HOME, "/Vdsql_Legacy/x")]
       and e.strip().endswith("requests 2"),
       "a bucket name with upper case and '_': path style, HEAD 301 then its region (2 requests)", "%s\n%s" % (e, log))

    # -- 400 AuthorizationHeaderMalformed: the endpoint set to the region's own host,
    # signed for the wrong region; retried on the same host, signed for the one named
    ev = dict(env, AWS_ENDPOINT_URL="https://s3.%s.amazonaws.com" % HOME)
    out, err, rc = run("SELECT * FROM vds_layers(%s);\n%s\nSELECT vdsql_config('stats', 'reset');\n"
                       "SELECT status, count(*) FROM vds_chunks(%s, '%s') GROUP BY status;\n%s" % (q(survey), STATS, q(survey), lay, STATS), ev)
    log = proxy.new()
    host = "s3.%s.amazonaws.com" % HOME
    ok(rc == 0 and not err and out[:nl] == want_layers and out[nl] == "stats|4" and out[-1] == "stats|3",
       "AWS_ENDPOINT_URL, wrong AWS_REGION: 400 AuthorizationHeaderMalformed's <Region> is taken: 4 requests, then 3",
       "%s %s" % (err, out))
    ok(all(h[1] == host for h in log) and [h[3:] for h in log[:4]] == [(WRONG, 400)] * 2 + [(HOME, 200)] * 2
       and all(h[3] == HOME for h in log[4:]) and len(log) == 7,
       "... path style on the endpoint throughout (%s/%s/...): the host never changes, only the region signed for"
       % (host, B), "\n".join(map(str, log)))
    tev = dict(tool_env, AWS_ENDPOINT_URL=ev["AWS_ENDPOINT_URL"])
    r = subprocess.run([STORETOOL, "head", survey + "/LayerStatus"], capture_output=True, text=True, env=tev)
    log = proxy.new()
    ok(r.returncode == 0 and r.stderr.strip().endswith("requests 2") and [h[3:] for h in log] == [(WRONG, 400), (HOME, 200)],
       "a HEAD's 400 has no body: its x-amz-bucket-region header is taken (2 requests)", "%s %s" % (r.stderr, log))

    # -- writes and listings go the same way: a PUT's body is sent again whole
    body = bytes(range(256)) * 8
    rc, o, e = tool("put", "s3://%s/w/a.bin" % B, "vdschunkmetadata=AQIDBAUGBwg=", body=body)
    log = proxy.new()
    try:
        got = c.get_object(Bucket=B, Key="w/a.bin")
        got = got["Body"].read(), got["Metadata"]
    except Exception as ex:  # not written: the check below fails and says why
        got = str(ex), None
    ok(rc == 0 and e.strip().endswith("requests 2") and got == (body, {"vdschunkmetadata": "AQIDBAUGBwg="}) and [h[3:] for h in log] == [(WRONG, 301), (HOME, 200)],
       "a PUT: 301, then the whole body (signed hash, metadata) to %s; boto3 reads it back" % V_HOME, "%s %s" % (e, log))
    rc, o, e = tool("list", "s3://%s/ds/survey/Dim" % B, "7")
    pages = sum(1 for x in o.splitlines() if x.startswith("page "))
    keys = sum(1 for x in o.splitlines() if not x.startswith("page "))
    log = proxy.new()
    ok(rc == 0 and keys > 14 and e.strip().endswith("requests %d" % (pages + 1)) and log[0][4] == 301
       and all(h[1] == V_HOME and h[4] == 200 for h in log[1:]),
       "a listing (%d keys, %d pages): its first page 301, then every page right (%d requests)" % (keys, pages, pages + 1),
       "%s %s" % (e, log))

    # -- a 301 to another host that names no region: not followed, even when allowed_hosts
    # lists that host (a signed request goes nowhere but the bucket's own host)
    for allow in ("", "elsewhere.example.net"):
        out, err, rc = run("SELECT vdsql_config('allowed_hosts', %s);\nSELECT count(*) FROM lindi_files('s3://%s/x.tar');\n%s"
                           % (q(allow), MOVED, STATS))
        log = proxy.new()
        ok(rc != 0 and err.strip() == "Runtime error near line 5: s3://%s/x.tar: HTTP 301 redirect to "
           "https://elsewhere.example.net/x.tar, not followed (requests of this store are signed for its endpoint; set the "
           "endpoint the service names)" % MOVED and out[-1:] == ["stats|1"] and len(log) == 1,
           "a 301 with a Location to another host%s: refused after 1 request, nothing sent there"
           % (" (allowed_hosts lists it)" if allow else ""), "%s %s %s" % (err, out, log))

    # -- unsigned requests (no key, no secret: public buckets) learn the region the same way;
    # this bucket is not public, so radosgw refuses the second one
    out, err, rc = run("SELECT count(*) FROM lindi_files('s3://%s/ds/none.tar');\n%s" % (B, STATS), {"AWS_REGION": WRONG})
    log = proxy.new()
    ok(rc != 0 and err.strip() == "Runtime error near line 4: s3://%s/ds/none.tar: HTTP 403 Forbidden (AccessDenied)" % B
       and out[-1:] == ["stats|2"] and [h[1:] for h in log] == [(V_WRONG, "/ds/none.tar", None, 301), (V_HOME, "/ds/none.tar", None, 403)],
       "unsigned: 301 from %s, then %s (radosgw: AccessDenied), 2 requests" % (V_WRONG, V_HOME), "%s %s %s" % (err, out, log))

    # -- connect_to that libcurl would skip silently (requests to the real host) is refused
    out, err, rc = run("SELECT vdsql_config('connect_to', 'vdsql-test.s3.eu-west-1.amazonaws.com:443');\n"
                       "SELECT vdsql_config('connect_to');\n")
    ok(rc != 0 and err.strip() == "Runtime error near line 4: vdsql_config('connect_to', 'vdsql-test.s3.eu-west-1."
       "amazonaws.com:443'): expected host:port:to-host:to-port entries, comma-separated (an IPv6 address in [])"
       and out == ["::127.0.0.1:%d" % proxy.port], "connect_to without a target is refused, the setting kept", "%s %s" % (err, out))

    # -- a region named, then another: asked once more, not for ever
    out, err, rc = run("SELECT count(*) FROM lindi_files('s3://%s/x.tar');\n%s" % (FLIP, STATS))
    log = proxy.new()
    ok(rc != 0 and err.strip() == "Runtime error near line 4: s3://%s/x.tar: HTTP 301 redirect, not followed (requests "
       "of this store are signed for its endpoint; set the endpoint the service names)" % FLIP and out[-1:] == ["stats|2"]
       and [(h[1], h[4]) for h in log] == [("%s.s3.%s.amazonaws.com" % (FLIP, r), 301) for r in (WRONG, HOME)],
       "a bucket naming one region, then another: asked there once (2 requests), then the 301 stands",
       "%s %s %s" % (err, out, log))


if __name__ == "__main__":
    sys.exit(main())
