#!/usr/bin/python3
"""Deletes in batches (vd_delete_many, through build/storetool delmany) against real
services on 127.0.0.1, checked with independent clients, as TAP:

- S3 on radosgw (boto3): 0, 1, 999, 1000, 1001 and 2500 objects, every 7th deleted by boto3
  before (a key already gone counts as deleted), others of the same prefix left alone;
  boto3's listing afterwards holds exactly the others, unchanged, and vdsql_stats counts
  ceil(n / 1000) requests (DeleteObjects). Keys that XML must escape, and one with a
  control character XML cannot carry (sent alone, as a DELETE). A key a bucket policy
  refuses to delete: the error names that object and AccessDenied, the others of its
  batch are deleted, it is not.
- Through a relay in front of radosgw that checks what AWS checks and radosgw 16.2 does
  not: each DeleteObjects carries a Content-MD5 equal to its body's (Python's hashlib).
- Azure on Azurite (tests/azclient.py, Shared Key by hand): the same counts with
  ceil(n / 256) requests (Blob Batch), through Shared Key and through a container SAS; a
  SAS without the delete permission: every blob's error names it, nothing is deleted.
- Local files: each deleted, the missing ones too, one request each.
No output holds a secret.
   env: STORETOOL (default build/storetool), DELMANY_COUNTS (the counts, default
        "0 1 999 1000 1001 2500"; the planted bugs run "1 1001": a fifth of the time)"""
import base64
import concurrent.futures
import hashlib
import http.client
import http.server
import threading
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import xml.etree.ElementTree as ET

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.dirname(here))
from taplib import Azurite, Radosgw, ok, plan  # noqa: E402
from azclient import Az, sas_container  # noqa: E402

STORETOOL = os.environ.get("STORETOOL", os.path.join(top, "build", "storetool"))
VD_IO = 4  # ext/core/vd_err.h
COUNTS = tuple(int(x) for x in os.environ.get("DELMANY_COUNTS", "0 1 999 1000 1001 2500").split())
SECRETS = []
CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "AZURE_"))}


def delmany(url, names, env):
    """(one "ok" / "error<TAB>msg" per name, requests counted, exit status, seconds)"""
    t = time.time()
    e = dict(CLEAN)
    e.update(env)
    p = subprocess.run([STORETOOL, "delmany", url], input="".join(n + "\n" for n in names), env=e,
                       capture_output=True, text=True, timeout=600)
    secs = time.time() - t
    for s in SECRETS:
        if s and (s in p.stdout or s in p.stderr):
            ok(False, "no secret in storetool's output", url)
    req = [ln for ln in p.stderr.splitlines() if ln.startswith("requests ")]
    return p.stdout.splitlines(), int(req[-1].split()[1]) if req else -1, p.returncode, secs


def ceil(a, b):
    return (a + b - 1) // b


def parallel(fn, items):
    with concurrent.futures.ThreadPoolExecutor(12) as ex:
        return list(ex.map(fn, items))


class Md5Relay(http.server.ThreadingHTTPServer):
    """Relays every request, Host header and all (radosgw checks the signature), to the
    upstream port; notes each POST's Content-MD5 against its body's MD5."""

    def __init__(self, upstream):
        self.upstream, self.posts = upstream, []
        relay = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def any(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.command == "POST":
                    relay.posts.append((self.path, self.headers.get("Content-MD5"),
                                        base64.b64encode(hashlib.md5(body).digest()).decode()))
                c = http.client.HTTPConnection("127.0.0.1", relay.upstream, timeout=60)
                c.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for k, v in self.headers.items():
                    if k.lower() not in ("connection", "expect"):
                        c.putheader(k, v)
                c.endheaders(body)
                r = c.getresponse()
                data = r.read()
                self.send_response_only(r.status, r.reason)
                for k, v in r.getheaders():
                    if k.lower() not in ("connection", "transfer-encoding", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                c.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = any

        super().__init__(("127.0.0.1", 0), H)
        threading.Thread(target=self.serve_forever, daemon=True).start()


def s3_suite(srv):
    import boto3
    import botocore.config
    SECRETS.append(srv.secret)
    c = boto3.client("s3", endpoint_url=srv.endpoint, aws_access_key_id=srv.key, aws_secret_access_key=srv.secret,
                     region_name=srv.region,
                     config=botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3},
                                                   max_pool_connections=16))
    B = srv.bucket
    env = {k: srv.env[k] for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")}

    def keys(prefix):
        out = []
        for page in c.get_paginator("list_objects_v2").paginate(Bucket=B, Prefix=prefix):
            out += [o["Key"] for o in page.get("Contents", [])]
        return sorted(out)

    for n in COUNTS:
        pre = "dm%d/" % n
        names = ["o%05d" % i for i in range(n)]
        keep = ["keep%d" % i for i in range(3)]
        parallel(lambda k: c.put_object(Bucket=B, Key=pre + k, Body=k.encode()), names + keep)
        gone = names[::7]
        parallel(lambda k: c.delete_object(Bucket=B, Key=pre + k), gone)
        lines, req, rc, secs = delmany("s3://%s/%s" % (B, pre), names, env)
        ok(rc == 0 and lines == ["ok"] * n, "s3: %d deletes (%d gone already) each answered ok" % (n, len(gone)),
           (rc, [ln for ln in lines if ln != "ok"][:3]))
        left = keys(pre)
        ok(left == sorted(pre + k for k in keep), "s3: boto3 lists exactly the %d others afterwards" % len(keep), left[:5])
        bodies = [c.get_object(Bucket=B, Key=pre + k)["Body"].read() for k in keep]
        ok(bodies == [k.encode() for k in keep], "s3: the others are unchanged")
        ok(req == ceil(n, 1000), "s3: %d deletes cost %d requests (ceil(n / 1000), DeleteObjects) in %.2f s" %
           (n, ceil(n, 1000), secs), req)

    # the checksum the service requires (AWS: Content-MD5 or another; radosgw takes none)
    relay = Md5Relay(int(srv.endpoint.rsplit(":", 1)[1]))
    nm = ["m%04d" % i for i in range(1001)]
    parallel(lambda k: c.put_object(Bucket=B, Key="md5/" + k, Body=b"x"), nm)
    renv = dict(env, AWS_ENDPOINT_URL="http://127.0.0.1:%d" % relay.server_address[1])
    lines, req, rc, _ = delmany("s3://%s/md5/" % B, nm, renv)
    relay.shutdown()
    ok(rc == 0 and not keys("md5/") and len(relay.posts) == 2 and
       all(p.startswith("/%s?delete" % B) and got == want for p, got, want in relay.posts),
       "s3: each DeleteObjects carries the Content-MD5 of its body", (rc, relay.posts))

    # keys XML must escape go in a batch; a control character XML 1.0 cannot carry goes alone
    odd = ["a&b <c>", "sp ace/\u00fc.txt", "q\"uo'te", "tab\there", "ctl\x01x"]
    parallel(lambda k: c.put_object(Bucket=B, Key="odd/" + k, Body=b"x"), odd + ["keep"])
    lines, req, rc, _ = delmany("s3://%s/odd/" % B, odd, env)
    ok(rc == 0 and lines == ["ok"] * len(odd) and keys("odd/") == ["odd/keep"],
       "s3: keys with & < > \" ' a space, UTF-8, a tab and a control character are deleted", (rc, lines, keys("odd/")))
    ok(req == 2, "s3: one DeleteObjects for the keys XML carries, one DELETE for the control character", req)

    # a key the service refuses: a bucket policy denies deleting dmlock/locked*
    import json
    parallel(lambda k: c.put_object(Bucket=B, Key="dmlock/" + k, Body=b"x"), ["locked1", "free1", "free2"])
    c.put_bucket_policy(Bucket=B, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObject", "Resource": "arn:aws:s3:::%s/dmlock/locked*" % B}]}))
    try:
        lines, req, rc, _ = delmany("s3://%s/dmlock/" % B, ["free1", "locked1", "free2"], env)
    finally:
        c.delete_bucket_policy(Bucket=B)
    want = "error\ts3://%s/dmlock/locked1: not deleted: DeleteObjects answers AccessDenied for it" % B
    ok(rc == 10 + VD_IO and lines == ["ok", want, "ok"], "s3: a refused key: its error names it and AccessDenied, "
       "the others of its batch are deleted", (rc, lines))
    ok(keys("dmlock/") == ["dmlock/locked1"] and req == 1, "s3: boto3 still lists the refused object, and only it "
       "(one request)", (keys("dmlock/"), req))


def az_suite(srv):
    SECRETS.append(srv.key)
    az = Az(srv)
    C, A = srv.container, srv.account
    base = "/%s/%s/" % (A, C)
    env = {"AZURE_STORAGE_CONNECTION_STRING": srv.env["AZURE_STORAGE_CONNECTION_STRING"]}

    def put(name):
        st = az("PUT", base + urllib.parse.quote(name), headers={"x-ms-blob-type": "BlockBlob"}, body=name.encode())[0]
        if st != 201:
            raise RuntimeError("put %s: HTTP %d" % (name, st))

    def delete(name):
        az("DELETE", base + urllib.parse.quote(name))

    def names(prefix):
        out, marker = [], None
        while True:
            p = {"restype": "container", "comp": "list", "prefix": prefix}
            if marker:
                p["marker"] = marker
            st, _, body = az("GET", "/%s/%s" % (A, C), params=p)
            doc = ET.fromstring(body)
            out += [b.findtext("Name") for b in doc.iter("Blob")]
            marker = doc.findtext("NextMarker")
            if not marker:
                return sorted(out)

    def body(name):
        return az("GET", base + urllib.parse.quote(name))[2]

    sas_rwdl, sas_rl = sas_container(srv, "rwdl"), sas_container(srv, "rl")
    # the settings hold a read-only SAS: the URL's own SAS (read-write) is what deletes
    ro_env = {"AZURE_STORAGE_CONNECTION_STRING": "BlobEndpoint=%s;SharedAccessSignature=%s" % (srv.endpoint, sas_rl)}
    for n in COUNTS:
        for how in ("key", "sas"):
            if how == "sas" and n not in (1, 1001):
                continue
            pre = "dm%d%s/" % (n, how)
            nm = ["o%05d" % i for i in range(n)]
            keep = ["keep%d" % i for i in range(3)]
            parallel(put, [pre + k for k in nm + keep])
            gone = nm[::7]
            parallel(delete, [pre + k for k in gone])
            url = "az://%s/%s" % (C, pre) + ("?" + sas_rwdl if how == "sas" else "")
            lines, req, rc, secs = delmany(url, nm, env if how == "key" else ro_env)
            ok(rc == 0 and lines == ["ok"] * n, "az (%s): %d deletes (%d gone already) each answered ok" %
               ("Shared Key" if how == "key" else "SAS", n, len(gone)), (rc, [ln for ln in lines if ln != "ok"][:3]))
            ok(names(pre) == sorted(pre + k for k in keep) and [body(pre + k) for k in keep] == [(pre + k).encode() for k in keep],
               "az (%s): the independent client lists exactly the %d others afterwards, unchanged" % (how, len(keep)),
               names(pre)[:5])
            ok(req == ceil(n, 256), "az (%s): %d deletes cost %d requests (ceil(n / 256), Blob Batch) in %.2f s" %
               (how, n, ceil(n, 256), secs), req)

    odd = ["a&b <c>", "sp ace/\u00fc.txt", "pl+us=%41"]
    parallel(put, ["odd/" + k for k in odd + ["keep"]])
    lines, req, rc, _ = delmany("az://%s/odd/" % C, odd, env)
    ok(rc == 0 and lines == ["ok"] * len(odd) and names("odd/") == ["odd/keep"] and req == 1,
       "az: blobs whose names need encoding are deleted in one batch", (rc, lines, names("odd/"), req))

    # a SAS without the delete permission: every subrequest refused, each error names its blob
    parallel(put, ["ro/a", "ro/b"])
    lines, req, rc, _ = delmany("az://%s/ro/" % C, ["a", "b"], ro_env)
    good = all(ln.startswith("error\taz://%s/ro/%s: HTTP 403 Forbidden (" % (C, x)) for ln, x in zip(lines, "ab"))
    ok(rc == 10 + VD_IO and len(lines) == 2 and good, "az: a SAS without delete permission: each blob's error names "
       "it and the 403", lines)
    ok(names("ro/") == ["ro/a", "ro/b"], "az: the refused blobs are still there", names("ro/"))
    sig = urllib.parse.parse_qs(sas_rl)["sig"][0]
    ok(all(sig not in ln and urllib.parse.quote(sig, safe="") not in ln for ln in lines), "az: no SAS signature in "
       "the errors")


def file_suite():
    d = tempfile.mkdtemp(prefix="vdsql-delmany.")
    try:
        nm = ["f%03d" % i for i in range(20)]
        for k in nm[1:] + ["keep"]:
            open(os.path.join(d, k), "wb").write(b"x")
        lines, req, rc, _ = delmany(d + "/", nm, {})
        ok(rc == 0 and lines == ["ok"] * len(nm) and sorted(os.listdir(d)) == ["keep"],
           "file: 20 deletes (one missing) leave only the other file", (rc, lines[:3], os.listdir(d)))
        ok(req == len(nm), "file: one request per file", req)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    if not os.path.exists(STORETOOL):
        ok(False, "%s is built (make all)" % STORETOOL)
        return plan()
    try:
        import boto3  # noqa: F401
    except ImportError:
        ok(False, "boto3 for /usr/bin/python3 (Debian package python3-boto3)")
        return plan()
    file_suite()
    with Radosgw() as srv:
        if ok(srv.started, "radosgw starts on 127.0.0.1", srv.error):
            s3_suite(srv)
    with Azurite() as srv:
        if ok(srv.started, "Azurite starts on 127.0.0.1", srv.error):
            az_suite(srv)
    return plan()


if __name__ == "__main__":
    sys.exit(main())
