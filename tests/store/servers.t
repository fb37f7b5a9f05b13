#!/usr/bin/python3
"""The object-store test servers themselves, as TAP: Ceph radosgw (S3) and Azurite (Azure
Blob), started by scripts/radosgw-test-server and scripts/azurite-test-server through
tests/taplib.py, checked with independent clients only (no vdsql): curl 7.88's
--aws-sigv4, boto3 and awscli (Debian's python3-boto3, awscli) for S3; Python's hmac for
Azure Shared Key and curl with a SAS for Azure. It proves the servers really check
signatures and shows, as assertions, the server behaviour the S3 and Azure backends are
built on (issue 12). Each "QUIRK" comment is a fact observed here that a backend must
follow. A missing tool fails the suite and names its Debian package.
   env: none (both servers are started and stopped here)"""
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import xml.etree.ElementTree as ET

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from taplib import Azurite, Radosgw, ok, plan  # noqa: E402
from azclient import Az, sas_container  # noqa: E402

AWS = "/usr/bin/aws"  # Debian's awscli (a pip-installed aws earlier on PATH would be another tool)
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
T0 = time.monotonic()


def need_tools():
    """Every client this suite uses; a missing one is a failure naming its package."""
    missing = []
    try:
        v = subprocess.run(["curl", "--version"], capture_output=True, text=True).stdout.split()[1]
        if tuple(int(x) for x in v.split(".")[:2]) < (7, 75):
            missing.append("curl >= 7.75 for --aws-sigv4 (has %s)" % v)
    except (OSError, IndexError, ValueError):
        missing.append("curl (Debian package curl)")
    try:
        import boto3  # noqa: F401
    except ImportError:
        missing.append("boto3 for /usr/bin/python3 (Debian package python3-boto3)")
    if not os.access(AWS, os.X_OK):
        missing.append("%s (Debian package awscli)" % AWS)
    if not shutil.which("openssl"):
        missing.append("openssl (Debian package openssl)")
    return missing


def headers_of(raw):
    """The last response's headers (curl -D, after any 100 Continue), names lowercased."""
    blocks = [b for b in raw.replace("\r\n", "\n").split("\n\n") if b.strip()]
    h = {}
    for line in (blocks[-1].splitlines()[1:] if blocks else []):
        if ":" in line:
            k, v = line.split(":", 1)
            h[k.strip().lower()] = v.strip()
    return h


def xml_code(body):
    m = re.search(rb"<Code>([^<]*)</Code>", body)
    return m.group(1).decode() if m else None


def q(v):
    """RFC 3986 encoding as SigV4 wants it (curl 7.88 signs the query verbatim)."""
    return urllib.parse.quote(v, safe="-_.~")


class S3:
    """curl --aws-sigv4 with the rules of ../shared/spec/object-stores.md section 4:
    always x-amz-content-sha256, an explicit Content-Type on bodies, query sorted and
    encoded by the caller, no header-removal entries."""

    def __init__(self, srv, tmp):
        self.srv, self.tmp = srv, tmp

    def __call__(self, method, path, query="", headers=(), body=None, key=None, secret=None,
                 sha=None, sign=True, rng=None):
        url = self.srv.endpoint + path + ("?" + query if query else "")
        hf, bf = os.path.join(self.tmp, "h"), os.path.join(self.tmp, "b")
        args = ["curl", "-s", "-D", hf, "-o", bf, "-w", "%{http_code}", "--max-time", "20"]
        if method == "HEAD":
            args += ["-I"]
        else:
            args += ["-X", method]
        cfg = ""
        if sign:
            args += ["--aws-sigv4", "aws:amz:%s:s3" % self.srv.region, "-K", "-"]
            # credentials through stdin, not the command line
            cfg = 'user = "%s:%s"\n' % (key or self.srv.key, secret or self.srv.secret)
        hs = list(headers)
        if sign and not any(h.lower().startswith("x-amz-content-sha256:") for h in hs):
            hs.append("x-amz-content-sha256: %s" % (sha or hashlib.sha256(body or b"").hexdigest()))
        if body is not None:
            with open(os.path.join(self.tmp, "in"), "wb") as f:
                f.write(body)
            args += ["--data-binary", "@" + os.path.join(self.tmp, "in")]
            if not any(h.lower().startswith("content-type:") for h in hs):
                hs.append("Content-Type: application/octet-stream")
        for h in hs:
            args += ["-H", h]
        if rng:
            args += ["-r", rng]  # CURLOPT_RANGE: libcurl adds Range unsigned, which S3 accepts
        r = subprocess.run(args + [url], input=cfg, capture_output=True, text=True)
        raw = open(hf).read() if os.path.exists(hf) else ""
        data = open(bf, "rb").read() if os.path.exists(bf) else b""
        for f in (hf, bf):
            if os.path.exists(f):
                os.unlink(f)
        return int(r.stdout or 0), headers_of(raw), data


def s3_checks(srv, tmp):
    s3 = S3(srv, tmp)
    b = "/" + srv.bucket
    body = b"0123456789abcdefghijklm"  # 23 bytes, as in the spec's tables

    # -- signatures are really checked
    code, h, data = s3("GET", b, "list-type=2", secret=srv.secret[:-1] + ("A" if srv.secret[-1] != "A" else "B"))
    ok(code == 403 and xml_code(data) == "SignatureDoesNotMatch", "s3: a wrong secret gets 403 SignatureDoesNotMatch",
       "%s %s" % (code, data[:300]))
    code, h, data = s3("GET", b, "list-type=2", key="VDSQLNOSUCHKEY000000")
    ok(code == 403 and xml_code(data) == "InvalidAccessKeyId", "s3: an unknown access key gets 403 InvalidAccessKeyId",
       "%s %s" % (code, data[:300]))
    code, h, data = s3("GET", b, "list-type=2", sign=False)
    ok(code == 403 and xml_code(data) == "AccessDenied", "s3: an anonymous request gets 403 AccessDenied", "%s %s" % (code, data[:300]))
    # QUIRK (curl 7.88): without x-amz-content-sha256 curl hashes an empty payload and the
    # server rejects the signature; with the header the declared hash is checked against the body
    code, h, data = s3("PUT", b + "/obj/a.bin", body=body, sha="0" * 64)
    ok(code == 400 and xml_code(data) == "XAmzContentSHA256Mismatch",
       "s3: a payload hash that is not the body's gets 400 XAmzContentSHA256Mismatch", "%s %s" % (code, data[:300]))
    code, h, data = s3("GET", b + "/obj/a.bin")
    ok(code == 404 and xml_code(data) == "NoSuchKey", "s3: ... and nothing was stored (404 NoSuchKey)", "%s %s" % (code, data[:300]))

    # -- PUT with user metadata, HEAD gives it back
    code, h, data = s3("PUT", b + "/obj/a.bin", body=body,
                       headers=["x-amz-meta-vdschunkmetadata: AAAAAAAAAAA=", "x-amz-meta-Mixed-Case: Value 1"])
    md5 = hashlib.md5(body).hexdigest()
    # QUIRK: the ETag of a single PUT is the body's MD5, quoted
    ok(code == 200 and h.get("etag") == '"%s"' % md5, "s3: a signed PUT with user metadata is accepted, ETag = quoted MD5",
       "%s %s %s" % (code, h, data[:300]))
    code, h, data = s3("HEAD", b + "/obj/a.bin")
    # QUIRK: metadata names come back lowercased (x-amz-meta-mixed-case), values as sent
    ok(code == 200 and h.get("x-amz-meta-vdschunkmetadata") == "AAAAAAAAAAA=" and h.get("x-amz-meta-mixed-case") == "Value 1"
       and h.get("content-length") == "23" and h.get("etag") == '"%s"' % md5
       and h.get("content-type") == "application/octet-stream" and "last-modified" in h,
       "s3: HEAD returns the user metadata (names lowercased), size, ETag, type, Last-Modified", h)
    # QUIRK (curl 7.88): canonical headers are sorted as whole "name:value" strings, so
    # x-amz-meta-a with x-amz-meta-a1 signs in the wrong order: 403 (avoid such name pairs)
    code, h, data = s3("PUT", b + "/obj/prefix.bin", body=body, headers=["x-amz-meta-a: 1", "x-amz-meta-a1: 2"])
    ok(code == 403 and xml_code(data) == "SignatureDoesNotMatch",
       "s3: metadata names a and a1 together fail with curl 7.88's sort (403 SignatureDoesNotMatch)", "%s %s" % (code, data[:200]))

    # -- ranges
    code, h, data = s3("GET", b + "/obj/a.bin", rng="6-10")
    ok(code == 206 and data == body[6:11] and h.get("content-range") == "bytes 6-10/23", "s3: GET bytes=6-10 is 206 with those bytes",
       "%s %s %r" % (code, h.get("content-range"), data))
    code, h, data = s3("GET", b + "/obj/a.bin", rng="-5")
    ok(code == 206 and data == body[-5:] and h.get("content-range") == "bytes 18-22/23", "s3: a suffix range bytes=-5 gives the last 5 bytes",
       "%s %s %r" % (code, h.get("content-range"), data))
    code, h, data = s3("GET", b + "/obj/a.bin", rng="100-200")
    ok(code == 416 and xml_code(data) == "InvalidRange", "s3: a range past the end is 416 InvalidRange", "%s %s" % (code, data[:200]))
    # QUIRK: a multi-range request gets only its first range, as a plain 206
    code, h, data = s3("GET", b + "/obj/a.bin", rng="0-1,6-10")
    ok(code == 206 and data == body[0:2] and h.get("content-range") == "bytes 0-1/23",
       "s3: a multi-range request gets only the first range", "%s %s %r" % (code, h.get("content-range"), data))

    # -- keys that need encoding: curl 7.88 signs the path verbatim, so the URL must
    # carry the key already encoded (every byte outside A-Za-z0-9-._~ and /)
    odd = "obj/odd key+=é(1).bin"
    code, h, data = s3("PUT", b + "/" + q(odd).replace("%2F", "/"), body=b"odd")
    ok(code == 200, "s3: a key with space, + = é ( ) percent-encoded is accepted", "%s %s" % (code, data[:200]))
    code, h, data = s3("PUT", b + "/obj/raw+plus.bin", body=b"x")
    ok(code == 403 and xml_code(data) == "SignatureDoesNotMatch", "s3: QUIRK a raw + in the path fails the signature (403)",
       "%s %s" % (code, data[:200]))

    # -- conditional PUT
    code, h, data = s3("PUT", b + "/obj/a.bin", body=b"other", headers=["If-None-Match: *"])
    ok(code == 412 and xml_code(data) == "PreconditionFailed", "s3: PUT If-None-Match: * on an existing key is 412 PreconditionFailed",
       "%s %s" % (code, data[:200]))
    code, h, data = s3("PUT", b + "/obj/new.bin", body=b"new", headers=["If-None-Match: *"])
    ok(code == 200, "s3: PUT If-None-Match: * on a new key is 200", "%s %s" % (code, data[:200]))
    # QUIRK (radosgw): If-Match must carry the ETag UNQUOTED; the quoted form (what HEAD
    # returns, and what AWS accepts) always fails with 412
    code, h, data = s3("PUT", b + "/obj/a.bin", body=b"other", headers=['If-Match: "%s"' % md5])
    ok(code == 412 and xml_code(data) == "PreconditionFailed", "s3: QUIRK PUT If-Match with the quoted current ETag is 412",
       "%s %s" % (code, data[:200]))
    code, h, data = s3("PUT", b + "/obj/a.bin", body=b"other", headers=["If-Match: " + "0" * 32])
    ok(code == 412 and xml_code(data) == "PreconditionFailed", "s3: PUT If-Match with a stale ETag is 412 PreconditionFailed",
       "%s %s" % (code, data[:200]))
    code, h, data = s3("GET", b + "/obj/a.bin")
    ok(code == 200 and data == body, "s3: ... and neither failed PUT changed the object", "%s %r" % (code, data[:40]))
    # (a PUT replaces all user metadata: send it again)
    code, h, data = s3("PUT", b + "/obj/a.bin", body=body + b"2",
                       headers=["If-Match: " + md5, "x-amz-meta-vdschunkmetadata: AAAAAAAAAAA=", "x-amz-meta-Mixed-Case: Value 1"])
    ok(code == 200 and h.get("etag") == '"%s"' % hashlib.md5(body + b"2").hexdigest(),
       "s3: PUT If-Match with the current ETag unquoted is 200 (new ETag)", "%s %s %s" % (code, h, data[:200]))
    # conditional GET (for cache revalidation)
    etag2 = '"%s"' % hashlib.md5(body + b"2").hexdigest()
    code, h, data = s3("GET", b + "/obj/a.bin", headers=["If-None-Match: " + etag2])
    ok(code == 304, "s3: GET If-None-Match with the current (quoted) ETag is 304", code)
    code, h, data = s3("GET", b + "/obj/a.bin", headers=['If-Match: "%s"' % md5])
    ok(code == 412, "s3: GET If-Match with a stale ETag is 412", code)

    # -- ListObjectsV2 paging
    keys = ["list/k%02d" % i for i in range(7)]
    for k in keys:
        s3("PUT", b + "/" + k, body=k.encode())
    seen, pages, token, tokens = [], 0, None, []
    while pages < 10:
        params = {"list-type": "2", "max-keys": "3", "prefix": "list/"}
        if token:
            params["continuation-token"] = token
        query = "&".join("%s=%s" % (k, q(v)) for k, v in sorted(params.items()))
        code, h, data = s3("GET", b, query)
        if code != 200:
            break
        pages += 1
        x = ET.fromstring(data)
        ns = {"s": x.tag[1:].split("}")[0]} if x.tag.startswith("{") else {}
        p = "s:" if ns else ""
        seen += [c.find(p + "Key", ns).text for c in x.findall(p + "Contents", ns)]
        if x.findtext(p + "IsTruncated", namespaces=ns) != "true":
            break
        token = x.findtext(p + "NextContinuationToken", namespaces=ns)
        tokens.append(token)
    ok(code == 200 and seen == keys and pages == 3,
       "s3: ListObjectsV2 max-keys=3 over 7 keys: 3 pages through continuation tokens, every key once, in order",
       "code %s pages %d seen %s tokens %s" % (code, pages, seen, tokens))
    # QUIRK (radosgw): NextContinuationToken is the page's last key in clear text (AWS's is
    # opaque; treat it so), not encoded even with encoding-type=url, so it must be
    # percent-encoded when sent back (it holds '/' and any byte of a key)
    ok(tokens == ["list/k02", "list/k05"], "s3: QUIRK radosgw's continuation token is the last key of the page", tokens)
    # ETag in listings is quoted like HEAD's; no user metadata in listings
    code, h, data = s3("GET", b, "list-type=2&prefix=obj%2Fa.bin")
    ok(code == 200 and ("&quot;%s&quot;" % hashlib.md5(body + b"2").hexdigest()).encode() in data
       and b"vdschunkmetadata" not in data.lower(),
       "s3: a listing has the quoted ETag and no user metadata (HEAD per object needed)", data[:600])
    # QUIRK (curl 7.88): query parameters are signed verbatim, so they must be sorted and encoded
    code, h, data = s3("GET", b, "prefix=list%2F&list-type=2")
    ok(code == 403 and xml_code(data) == "SignatureDoesNotMatch", "s3: QUIRK unsorted query parameters fail the signature (403)",
       "%s %s" % (code, data[:200]))

    # -- DELETE
    code, h, data = s3("DELETE", b + "/obj/new.bin")
    code2, h, data = s3("DELETE", b + "/obj/new.bin")
    code3, h, data = s3("HEAD", b + "/obj/new.bin")
    ok((code, code2, code3) == (204, 204, 404), "s3: DELETE is 204, again 204 (idempotent), then HEAD 404", (code, code2, code3))

    # -- boto3 and awscli agree with curl's view (independent signers)
    import boto3
    import botocore.config
    import botocore.exceptions
    cfg = botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1})
    c = boto3.client("s3", endpoint_url=srv.endpoint, aws_access_key_id=srv.key, aws_secret_access_key=srv.secret,
                     region_name=srv.region, config=cfg)
    r = c.head_object(Bucket=srv.bucket, Key="obj/a.bin")
    ok(r["Metadata"] == {"vdschunkmetadata": "AAAAAAAAAAA=", "mixed-case": "Value 1"} and r["ContentLength"] == 24,
       "boto3: head_object sees the metadata curl wrote", r.get("Metadata"))
    c.put_object(Bucket=srv.bucket, Key="obj/boto.bin", Body=b"from boto3", Metadata={"vdschunkmetadata": "AQIDBAUGBwg="})
    code, h, data = s3("GET", b + "/obj/boto.bin")
    ok(code == 200 and data == b"from boto3" and h.get("x-amz-meta-vdschunkmetadata") == "AQIDBAUGBwg=",
       "curl: reads back what boto3 wrote, metadata included", "%s %s %r" % (code, h, data))
    got = [o["Key"] for pg in c.get_paginator("list_objects_v2").paginate(Bucket=srv.bucket, Prefix="list/", PaginationConfig={"PageSize": 2})
           for o in pg.get("Contents", [])]
    ok(got == keys, "boto3: list_objects_v2 paginated by 2 gives the same 7 keys", got)
    bad = boto3.client("s3", endpoint_url=srv.endpoint, aws_access_key_id=srv.key, aws_secret_access_key="wrong" + srv.secret,
                       region_name=srv.region, config=cfg)
    try:
        bad.head_object(Bucket=srv.bucket, Key="obj/a.bin")
        err = None
    except botocore.exceptions.ClientError as e:
        err = e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]
    ok(err == ("403", 403), "boto3: a wrong secret is refused (HEAD has no body: code 403 only)", err)
    try:
        bad.get_object(Bucket=srv.bucket, Key="obj/a.bin")
        err = None
    except botocore.exceptions.ClientError as e:
        err = e.response["Error"]["Code"]
    ok(err == "SignatureDoesNotMatch", "boto3: a wrong secret on GET is SignatureDoesNotMatch", err)

    env = dict(os.environ, **srv.env)
    t = time.monotonic()
    r = subprocess.run([AWS, "--endpoint-url", srv.endpoint, "s3api", "head-object", "--bucket", srv.bucket, "--key", "obj/boto.bin"],
                       capture_output=True, text=True, env=env, timeout=60)
    try:
        meta = json.loads(r.stdout).get("Metadata")
    except ValueError:
        meta = None
    ok(r.returncode == 0 and meta == {"vdschunkmetadata": "AQIDBAUGBwg="},
       "awscli: s3api head-object sees boto3's metadata (%.1f s)" % (time.monotonic() - t), r.stdout + r.stderr)


def curl_get(url, headers=(), method="GET", data=None):
    with tempfile.NamedTemporaryFile() as hf, tempfile.NamedTemporaryFile() as bf:
        args = ["curl", "-s", "-D", hf.name, "-o", bf.name, "-w", "%{http_code}", "--max-time", "20", "-X", method]
        for h in headers:
            args += ["-H", h]
        if data is not None:
            args += ["--data-binary", data]
        r = subprocess.run(args + [url], capture_output=True, text=True)
        return int(r.stdout or 0), headers_of(open(hf.name).read()), open(bf.name, "rb").read()


def az_checks(srv):
    az = Az(srv)
    conn = dict(kv.split("=", 1) for kv in srv.env["AZURE_STORAGE_CONNECTION_STRING"].split(";") if kv)
    ok(conn.get("BlobEndpoint") == srv.endpoint and conn.get("AccountName") == srv.account and conn.get("AccountKey") == srv.key,
       "azure: the connection string carries BlobEndpoint, AccountName and AccountKey", conn)
    c = az.base + "/" + srv.container
    body = b"0123456789abcdefghijklm"

    code, h, data = az("GET", c, {"restype": "container", "comp": "list"},
                       key=base64.b64encode(b"x" * 64).decode())
    ok(code == 403 and h.get("x-ms-error-code") == "AuthorizationFailure", "azure: a wrong key gets 403 AuthorizationFailure",
       "%s %s %s" % (code, h, data[:200]))
    code, h, data = curl_get(srv.endpoint + "/" + srv.container + "?restype=container&comp=list")
    ok(code == 403, "azure: an anonymous listing gets 403", "%s %s" % (code, data[:200]))

    # -- Put Blob with metadata, Get Blob Properties
    code, h, data = az("PUT", c + "/obj/a.bin", body=body,
                       headers={"x-ms-blob-type": "BlockBlob", "x-ms-meta-vdschunkmetadata": "AAAAAAAAAAA=",
                                "x-ms-meta-MixedCase": "Value 1"})
    etag = h.get("etag", "")
    # QUIRK: Azure ETags are opaque "0x..." strings, quoted in headers; If-Match takes them quoted
    ok(code == 201 and re.fullmatch(r'"0x[0-9A-F]+"', etag) is not None, "azure: Put Blob with x-ms-meta-* is 201 with a quoted 0x ETag",
       "%s %s %s" % (code, h, data[:300]))
    code, h, data = az("HEAD", c + "/obj/a.bin")
    # QUIRK: metadata names keep their case on HEAD (x-ms-meta-MixedCase; headers are
    # case-insensitive, so match names case-insensitively)
    ok(code == 200 and h.get("x-ms-meta-vdschunkmetadata") == "AAAAAAAAAAA=" and h.get("x-ms-meta-mixedcase") == "Value 1"
       and h.get("content-length") == "23" and h.get("etag") == etag and h.get("x-ms-blob-type") == "BlockBlob",
       "azure: HEAD returns the metadata, size, ETag and blob type", h)

    # -- ranges
    code, h, data = az("GET", c + "/obj/a.bin", headers={"Range": "bytes=6-10"})
    ok(code == 206 and data == body[6:11] and h.get("content-range") == "bytes 6-10/23", "azure: Get Blob with Range bytes=6-10 is 206",
       "%s %s %r" % (code, h.get("content-range"), data))
    code, h, data = az("GET", c + "/obj/a.bin", headers={"x-ms-range": "bytes=20-"})
    ok(code == 206 and data == body[20:] and h.get("content-range") == "bytes 20-22/23",
       "azure: x-ms-range bytes=20- (signed as an x-ms header, not in the Range slot) is 206", "%s %s %r" % (code, h.get("content-range"), data))
    code, h, data = az("GET", c + "/obj/a.bin", headers={"Range": "bytes=100-200"})
    ok(code == 416 and h.get("x-ms-error-code") == "InvalidRange", "azure: a range past the end is 416 InvalidRange", "%s %s" % (code, h))
    # QUIRK (Azurite 3.35.0): a suffix range bytes=-5 (as Range or x-ms-range) is answered
    # 206 with "Content-Range: bytes NaN-5/23" and the WHOLE blob: a backend never sends
    # suffix ranges to Azure (it asks HEAD for the size first)
    code, h, data = az("GET", c + "/obj/a.bin", headers={"Range": "bytes=-5"})
    ok(code == 206 and h.get("content-range") == "bytes NaN-5/23" and data == body,
       "azure: QUIRK a suffix range bytes=-5 gets the whole blob (206, bytes NaN-5/23)", "%s %s %r" % (code, h.get("content-range"), data[:100]))
    # QUIRK: a multi-range request gets the whole blob with 200 (S3: the first range, 206)
    code, h, data = az("GET", c + "/obj/a.bin", headers={"Range": "bytes=0-1,6-10"})
    ok(code == 200 and data == body, "azure: QUIRK a multi-range request gets the whole blob (200)", "%s %s %r" % (code, h.get("content-range"), data[:100]))

    # -- a blob name that needs encoding: the signed resource is the encoded path as sent
    odd = "obj/odd key+=é(1).bin"
    code, h, data = az("PUT", c + "/" + urllib.parse.quote(odd), body=b"odd", headers={"x-ms-blob-type": "BlockBlob"})
    code2, h, data2 = az("GET", c + "/" + urllib.parse.quote(odd))
    ok(code == 201 and code2 == 200 and data2 == b"odd", "azure: a blob name with space, + = é ( ), percent-encoded, round-trips",
       "%s %s %r" % (code, code2, data[:200] + data2[:200]))

    # -- conditional Put Blob
    code, h, data = az("PUT", c + "/obj/a.bin", body=b"other", headers={"x-ms-blob-type": "BlockBlob", "If-None-Match": "*"})
    # QUIRK: the create-only PUT on an existing blob is 409 BlobAlreadyExists (S3 gives 412)
    ok(code == 409 and h.get("x-ms-error-code") == "BlobAlreadyExists", "azure: Put Blob If-None-Match: * on an existing blob is 409 BlobAlreadyExists",
       "%s %s" % (code, h))
    code, h, data = az("PUT", c + "/obj/a.bin", body=b"other", headers={"x-ms-blob-type": "BlockBlob", "If-Match": '"0x1"'})
    ok(code == 412 and h.get("x-ms-error-code") == "ConditionNotMet", "azure: Put Blob If-Match with a stale ETag is 412 ConditionNotMet",
       "%s %s" % (code, h))
    code, h, data = az("PUT", c + "/obj/a.bin", body=body + b"2", headers={"x-ms-blob-type": "BlockBlob", "If-Match": etag,
                                                                         "x-ms-meta-vdschunkmetadata": "AQIDBAUGBwg="})
    ok(code == 201 and h.get("etag") not in (None, etag), "azure: Put Blob If-Match with the current (quoted) ETag is 201, new ETag",
       "%s %s" % (code, h))
    # QUIRK: Azurite takes If-Match quoted (as the ETag header gives it) or unquoted
    etag = h.get("etag", "")
    code, h, data = az("PUT", c + "/obj/a.bin", body=body + b"2", headers={"x-ms-blob-type": "BlockBlob", "If-Match": etag.strip('"'),
                                                                         "x-ms-meta-vdschunkmetadata": "AQIDBAUGBwg="})
    ok(code == 201, "azure: Put Blob If-Match with the current ETag unquoted is 201 too", "%s %s" % (code, h))
    code, h, data = az("PUT", c + "/obj/new.bin", body=b"new", headers={"x-ms-blob-type": "BlockBlob", "If-None-Match": "*"})
    ok(code == 201, "azure: Put Blob If-None-Match: * on a new blob is 201", "%s %s" % (code, h))

    # -- List Blobs with metadata and marker paging
    keys = ["list/k%02d" % i for i in range(7)]
    for i, k in enumerate(keys):
        az("PUT", c + "/" + k, body=k.encode(), headers={"x-ms-blob-type": "BlockBlob", "x-ms-meta-n": str(i)})
    seen, metas, pages, marker, markers = [], [], 0, None, []
    while pages < 10:
        params = {"restype": "container", "comp": "list", "prefix": "list/", "maxresults": "3", "include": "metadata"}
        if marker:
            params["marker"] = marker
        code, h, data = az("GET", c, params)
        if code != 200:
            break
        pages += 1
        x = ET.fromstring(data)
        for bl in x.iter("Blob"):
            seen.append(bl.findtext("Name"))
            metas.append(bl.findtext("Metadata/n"))
        marker = x.findtext("NextMarker")
        if not marker:
            break
        markers.append(marker)
    # QUIRK (Azurite): NextMarker is the last name of the page; an empty <NextMarker/> ends
    ok(code == 200 and seen == keys and metas == [str(i) for i in range(7)] and pages == 3,
       "azure: List Blobs maxresults=3 include=metadata over 7 blobs: 3 pages by marker, metadata in the listing",
       "code %s pages %d seen %s metas %s markers %s" % (code, pages, seen, metas, markers))
    code, h, data = az("GET", c, {"restype": "container", "comp": "list", "prefix": "obj/a.bin", "include": "metadata"})
    x = ET.fromstring(data) if code == 200 else None
    props = x.find("Blobs/Blob/Properties") if x is not None else None
    # QUIRK: in listings the Etag element is unquoted (0x...), unlike the ETag header; metadata
    # element names keep their case
    ok(props is not None and props.findtext("Etag") == h_etag_unq(az, c) and props.findtext("Content-Length") == "24"
       and x.findtext("Blobs/Blob/Metadata/vdschunkmetadata") == "AQIDBAUGBwg=",
       "azure: a listing entry has the size, the unquoted Etag and the user metadata", data[:800])

    # -- SAS through curl (a second signer: the token goes in the query, nothing else signed)
    sas = sas_container(srv, "rl")
    code, h, data = curl_get(srv.endpoint + "/" + srv.container + "/obj/a.bin?" + sas, ["Range: bytes=6-10"])
    ok(code == 206 and data == body[6:11], "azure: curl with a read SAS gets a range (206)", "%s %s %r" % (code, h, data[:200]))
    code, h, data = curl_get(srv.endpoint + "/" + srv.container + "?restype=container&comp=list&include=metadata&" + sas)
    ok(code == 200 and b"<Name>list/k06</Name>" in data, "azure: curl with a read SAS lists the container", "%s %r" % (code, data[:200]))
    bad = re.sub(r"sig=[^&]+", "sig=" + urllib.parse.quote(base64.b64encode(b"y" * 32).decode(), safe=""), sas)
    code, h, data = curl_get(srv.endpoint + "/" + srv.container + "/obj/a.bin?" + bad)
    ok(code == 403 and h.get("x-ms-error-code") == "AuthorizationFailure", "azure: a tampered SAS signature is 403 AuthorizationFailure",
       "%s %s" % (code, h))
    code, h, data = curl_get(srv.endpoint + "/" + srv.container + "/obj/sas.bin?" + sas, ["x-ms-blob-type: BlockBlob"], "PUT", "x")
    ok(code == 403 and h.get("x-ms-error-code") == "AuthorizationPermissionMismatch",
       "azure: a read-only SAS cannot PUT (403 AuthorizationPermissionMismatch)", "%s %s" % (code, h))

    # -- Delete
    code, h, data = az("DELETE", c + "/obj/new.bin")
    code2, h2, data = az("DELETE", c + "/obj/new.bin")
    code3, h3, data = az("HEAD", c + "/obj/new.bin")
    # QUIRK: unlike S3, deleting a missing blob is an error (404 BlobNotFound)
    ok((code, code2, h2.get("x-ms-error-code"), code3) == (202, 404, "BlobNotFound", 404),
       "azure: Delete Blob is 202, again 404 BlobNotFound, then HEAD 404", (code, code2, h2.get("x-ms-error-code"), code3))


def h_etag_unq(az, c):
    code, h, data = az("HEAD", c + "/obj/a.bin")
    return h.get("etag", "").strip('"')


def alive(pid):
    """Running and not a zombie (the servers are reparented to PID 1, which may reap late)."""
    try:
        return open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def main():
    missing = need_tools()
    ok(not missing, "the independent clients are installed", "missing: " + "; ".join(missing))
    if missing:
        return plan()
    tmp = tempfile.mkdtemp(prefix="vdsql-servers.")
    try:
        pids = []
        t = time.monotonic()
        with Radosgw() as rgw:
            ok(rgw.started, "radosgw-test-server starts (%.1f s)" % (time.monotonic() - t), rgw.error)
            if rgw.started:
                pids += open(os.path.join(rgw.state, "pids")).read().split()
                ok(all(rgw.env.get(k) for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "S3_BUCKET"))
                   and rgw.endpoint.startswith("http://127.0.0.1:"), "radosgw: endpoint on 127.0.0.1, keys, region, bucket", rgw.env)
                s3_checks(rgw, tmp)
        t = time.monotonic()
        with Azurite() as azs:
            ok(azs.started, "azurite-test-server starts (%.1f s)" % (time.monotonic() - t), azs.error)
            if azs.started:
                pids += open(os.path.join(azs.state, "pid")).read().split()
                az_checks(azs)
        ok(pids and not [p for p in pids if alive(p)], "no server process (mon, osd, radosgw, azurite) is left after stop", pids)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("# whole suite %.1f s" % (time.monotonic() - T0))
    return plan()


sys.exit(main())
