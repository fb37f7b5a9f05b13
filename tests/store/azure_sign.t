#!/usr/bin/python3
"""Azure Blob requests made by vdsql's own pieces (issue 12): credentials parsed, az://
URLs mapped and requests Shared-Key-signed by ext/core/store/azure_{auth,sign,xml}.c,
sent by the test driver build/azdrive (plain libcurl, not the backend's transport), to
Azurite 3.35.0 started here (scripts/azurite-test-server, strict mode: it checks every
signature). Every result is checked with an independent client: curl with a service SAS
computed here with Python's hmac (spec 2.2), and Python's ElementTree for listings.
   env: AZDRIVE (default build/azdrive)"""
import base64
import datetime
import hashlib
import hmac
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
import xml.etree.ElementTree as ET

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.dirname(here))
from taplib import Azurite, ok, plan  # noqa: E402

DRIVER = os.environ.get("AZDRIVE", os.path.join(top, "build", "azdrive"))
VERSION = "2021-08-06"
BODY = b"0123456789abcdefghijklm"  # 23 bytes
ODD = "dir/odd key+=\u00e9(1)%20&#.bin"
SECRETS = []  # every secret a driver output must never show


def sas(srv, perms, minutes=60):
    """A container service SAS (spec 2.2: 16 fields for sv 2021-08-06, no trailing newline)."""
    se = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")
    fields = [perms, "", se, "/blob/%s/%s" % (srv.account, srv.container), "", "", "https,http", VERSION, "c", "", "", "", "", "", "", ""]
    sig = base64.b64encode(hmac.new(base64.b64decode(srv.key), "\n".join(fields).encode(), hashlib.sha256).digest()).decode()
    SECRETS.append(sig)
    SECRETS.append(urllib.parse.quote(sig, safe=""))
    return urllib.parse.urlencode([("sv", VERSION), ("spr", "https,http"), ("se", se), ("sr", "c"), ("sp", perms), ("sig", sig)],
                                  quote_via=urllib.parse.quote)


def curl(url, headers=(), method="GET"):
    """The independent reader: curl with a SAS; returns status, lower-cased headers, body."""
    with tempfile.NamedTemporaryFile() as hf, tempfile.NamedTemporaryFile() as bf:
        args = ["curl", "-s", "-D", hf.name, "-o", bf.name, "-w", "%{http_code}", "--max-time", "20"]
        args += ["-I"] if method == "HEAD" else ["-X", method]
        for h in headers:
            args += ["-H", h]
        r = subprocess.run(args + [url], capture_output=True, text=True)
        raw = open(hf.name).read().replace("\r\n", "\n")
        blocks = [b for b in raw.split("\n\n") if b.strip()]
        h = {}
        for line in (blocks[-1].splitlines()[1:] if blocks else []):
            if ":" in line:
                k, v = line.split(":", 1)
                h[k.strip().lower()] = v.strip()
        return int(r.stdout or 0), h, open(bf.name, "rb").read()


class Driver:
    def __init__(self, env, tmp):
        self.env, self.tmp = env, tmp
        self.calls = self.leaks = self.bad_exit = 0

    def __call__(self, *args, body=None, env=None):
        a = [DRIVER]
        if body is not None:
            p = os.path.join(self.tmp, "body")
            with open(p, "wb") as f:
                f.write(body)
            a += ["-d", p]
        e = dict(os.environ)
        for k in ("AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN"):
            e.pop(k, None)
        e.update(env or self.env)
        r = subprocess.run(a + list(args), capture_output=True, text=True, env=e, timeout=60)
        self.calls += 1
        self.bad_exit += r.returncode not in (0, 2)  # 2: refused before any request; else a sanitizer's exit code
        self.leaks += sum(1 for s in SECRETS if s and s in r.stdout + r.stderr)
        try:
            o = json.loads(r.stdout)
        except ValueError:
            o = {"status": 0, "error": "driver output is not JSON: %r %r" % (r.stdout[:300], r.stderr[:300])}
        o["body"] = base64.b64decode(o.get("body_b64", ""))
        o.setdefault("headers", {})
        return o


def independent_list(srv, token, prefix):
    """Every blob under prefix, by curl + SAS, parsed with ElementTree: (name, size, etag, metadata)."""
    out, marker = [], None
    for _ in range(20):
        q = "restype=container&comp=list&include=metadata&prefix=%s&%s" % (urllib.parse.quote(prefix, safe=""), token)
        if marker:
            q += "&marker=" + urllib.parse.quote(marker, safe="")
        code, h, data = curl(srv.endpoint + "/" + srv.container + "?" + q)
        if code != 200:
            return None
        x = ET.fromstring(data)
        for b in x.iter("Blob"):
            md = b.find("Metadata")
            out.append((b.findtext("Name"), int(b.findtext("Properties/Content-Length")), b.findtext("Properties/Etag"),
                        {m.tag.lower(): m.text or "" for m in (md if md is not None else [])}))
        marker = x.findtext("NextMarker")
        if not marker:
            return out
    return None


def checks(srv, tmp):
    SECRETS.append(srv.key)
    env = {"AZURE_STORAGE_CONNECTION_STRING": srv.env["AZURE_STORAGE_CONNECTION_STRING"]}
    az = Driver(env, tmp)
    ro, rw = sas(srv, "rl"), sas(srv, "racwdl")
    base = srv.endpoint + "/" + srv.container + "/"
    c = "az://" + srv.container + "/"

    # -- Put Blob with metadata (Shared Key from Azurite's connection string, path style)
    r = az("-m", "vdschunkmetadata=AAAAAAAAAAA=", "-m", "MixedCase=Value 1", "PUT", c + "obj/a.bin", body=BODY)
    etag = r["headers"].get("etag", "")
    ok(r["status"] == 201 and r["signed"] == "shared key" and etag.startswith('"0x'),
       "Put Blob with x-ms-meta-*, signed by vd_az_sign, is 201 with a quoted ETag", r)
    code, h, data = curl(base + "obj/a.bin?" + ro)
    ok(code == 200 and data == BODY and h.get("x-ms-meta-vdschunkmetadata") == "AAAAAAAAAAA="
       and h.get("x-ms-meta-mixedcase") == "Value 1" and h.get("etag") == etag,
       "curl with a SAS reads the body, both metadata and the ETag back", "%s %s %r" % (code, h, data[:60]))

    # -- an empty blob (Content-Length 0 signed as empty)
    r = az("PUT", c + "obj/empty.bin", body=b"")
    code, h, data = curl(base + "obj/empty.bin?" + ro)
    ok(r["status"] == 201 and code == 200 and data == b"" and h.get("content-length") == "0",
       "an empty Put Blob (Content-Length 0, signed empty) is 201 and reads back empty", (r["status"], code, h))

    # -- Get Blob ranges and HEAD
    r = az("-H", "Range: bytes=6-10", "GET", c + "obj/a.bin")
    ok(r["status"] == 206 and r["body"] == BODY[6:11] and r["headers"].get("content-range") == "bytes 6-10/23",
       "Get Blob with Range bytes=6-10 (signed in the Range slot) is 206 with those bytes", r)
    r = az("-H", "x-ms-range: bytes=20-", "GET", c + "obj/a.bin")
    ok(r["status"] == 206 and r["body"] == BODY[20:], "Get Blob with x-ms-range bytes=20- (a canonicalized header) is 206", r)
    r = az("-H", "Range: bytes=100-200", "GET", c + "obj/a.bin")
    ok(r["status"] == 416 and r["error_code"] == "InvalidRange"
       and r["error"] == "%sobj/a.bin: HTTP 416 Range Not Satisfiable (InvalidRange)" % c,
       "a range past the end: 416, code InvalidRange in vdsql's one wording", r.get("error"))
    r = az("HEAD", c + "obj/a.bin")
    ok(r["status"] == 200 and r["headers"].get("content-length") == "23" and r["headers"].get("x-ms-meta-vdschunkmetadata") == "AAAAAAAAAAA=",
       "Get Blob Properties (HEAD) signed: size and metadata", r["headers"])
    r = az("HEAD", c + "obj/none.bin")
    ok(r["status"] == 404 and r["error_code"] == "BlobNotFound", "HEAD of a missing blob: 404, the code from x-ms-error-code (no body)",
       (r["status"], r.get("error_code")))

    # -- a hostile blob name: mapped by vd_az_blob_url, read back by name through curl
    r = az("PUT", c + ODD, body=b"odd")
    code, h, data = curl(base + urllib.parse.quote(ODD, safe="/") + "?" + ro)
    ok(r["status"] == 201 and code == 200 and data == b"odd",
       "a name with space + = \u00e9 ( ) %20 & # is written under exactly that name (curl reads it)", (r["status"], code, r.get("url")))
    r = az("GET", c + "dir/../" + ODD)
    ok(r["status"] == 0 and "'.' or '..' segment" in r.get("error", ""), "a '..' segment is refused before any request", r.get("error"))

    # -- conditional Put Blob
    r = az("-H", "If-None-Match: *", "PUT", c + "obj/a.bin", body=b"other")
    ok(r["status"] == 409 and r["error_code"] == "BlobAlreadyExists" and "HTTP 409 Conflict (BlobAlreadyExists)" in r["error"],
       "If-None-Match: * over an existing blob: 409 BlobAlreadyExists", r.get("error"))
    r = az("-H", 'If-Match: "0x1"', "PUT", c + "obj/a.bin", body=b"other")
    ok(r["status"] == 412 and r["error_code"] == "ConditionNotMet", "If-Match with a stale ETag: 412 ConditionNotMet", r.get("error"))
    code, h, data = curl(base + "obj/a.bin?" + ro)
    ok(data == BODY, "... and neither failed put changed the blob", data[:40])
    r = az("-H", "If-Match: " + etag, "-m", "vdschunkmetadata=AQIDBAUGBwg=", "PUT", c + "obj/a.bin", body=BODY + b"2")
    code, h, data = curl(base + "obj/a.bin?" + ro)
    ok(r["status"] == 201 and data == BODY + b"2" and h.get("x-ms-meta-vdschunkmetadata") == "AQIDBAUGBwg=" and h.get("etag") != etag,
       "If-Match with the current ETag: 201, curl sees the new body and metadata", (r["status"], h.get("etag"), etag))
    r = az("-H", "If-None-Match: *", "PUT", c + "obj/new.bin", body=b"new")
    ok(r["status"] == 201, "If-None-Match: * on a new blob: 201", r["status"])

    # -- List Blobs with include=metadata, paged by marker (vd_az_list_url + vd_az_parse_list)
    keys = ["list/k%02d" % i for i in range(7)]
    for i, k in enumerate(keys):
        az("-m", "N=%d" % i, "PUT", c + k, body=k.encode() * (i + 1))
    az("PUT", c + "list/" + ODD, body=b"x")
    pages, seen, marker, markers = 0, [], None, []
    while pages < 10:
        r = az("-l", "-n", "3", *(["-k", marker] if marker else []), c + "list/")
        if r["status"] != 200 or "blobs" not in r.get("list", {}):
            break
        pages += 1
        seen += [(b["name"], b["size"], b["etag"], b["metadata"]) for b in r["list"]["blobs"]]
        marker = r["list"].get("next_marker")
        if not marker:
            break
        markers.append(marker)
    ind = independent_list(srv, ro, "list/")
    want = [(n, s, '"%s"' % e, m) for n, s, e, m in ind] if ind else None
    ok(pages == 3 and seen == want and [s[0] for s in seen] == sorted(keys + ["list/" + ODD]),
       "List Blobs maxresults=3 over 8 blobs: 3 pages by NextMarker; names (the odd one too), sizes, ETags (quoted) and "
       "metadata equal ElementTree's reading of curl's listing", "pages %d markers %s\nseen %s\nwant %s" % (pages, markers, seen, want))
    ok([s[3].get("n") for s in seen if s[0] in keys] == [str(i) for i in range(7)],
       "metadata N=... comes back under the lower-cased name n", [s[3] for s in seen])
    r = az("-l", c + "list/k0")
    code, h, data = curl(base.rstrip("/") + "?restype=container&comp=list&prefix=list%2Fk03&" + ro)
    lm = ET.fromstring(data).findtext("Blobs/Blob/Properties/Last-Modified") if code == 200 else None
    mt = [b["mtime"] for b in r["list"]["blobs"] if b["name"] == "list/k03"] if r.get("list", {}).get("blobs") else []
    want_mt = int(datetime.datetime.strptime(lm, "%a, %d %b %Y %H:%M:%S GMT").replace(tzinfo=datetime.timezone.utc).timestamp()) if lm else None
    ok(r["status"] == 200 and len(r["list"]["blobs"]) == 7 and "next_marker" not in r["list"] and mt == [want_mt],
       "one page without maxresults has no next marker; Last-Modified parsed to the epoch Python computes", (mt, want_mt))

    # -- wrong key: 403 AuthorizationFailure, the key never shown
    wrong = base64.b64encode(b"w" * 64).decode()
    SECRETS.append(wrong)
    bad = srv.env["AZURE_STORAGE_CONNECTION_STRING"].replace(srv.key, wrong)
    r = az("GET", c + "obj/a.bin", env={"AZURE_STORAGE_CONNECTION_STRING": bad})
    ok(r["status"] == 403 and r["error_code"] == "AuthorizationFailure" and r["error"] == "%sobj/a.bin: HTTP 403 Forbidden (AuthorizationFailure)" % c,
       "a wrong key: 403 AuthorizationFailure in one wording (no key in any output)", r.get("error"))
    r = az("PUT", c + "obj/forged.bin", body=b"x", env={"AZURE_STORAGE_CONNECTION_STRING": bad})
    code, h, data = curl(base + "obj/forged.bin?" + ro)
    ok(r["status"] == 403 and code == 404, "... and a PUT with it writes nothing", (r["status"], code))
    r = az("GET", c + "obj/a.bin", env={"AZURE_STORAGE_CONNECTION_STRING": srv.env["AZURE_STORAGE_CONNECTION_STRING"].replace(srv.key, "not-base64!")})
    ok(r["status"] == 0 and "AccountKey that is not base64" in r.get("error", "") and "not-base64!" not in r.get("error", ""),
       "a key that is not base64: refused before any request, without echoing it", r.get("error"))

    # -- SAS credentials: the connection string's SharedAccessSignature goes in every URL, nothing signed
    sas_env = {"AZURE_STORAGE_CONNECTION_STRING": "BlobEndpoint=%s;SharedAccessSignature=%s" % (srv.endpoint, rw)}
    r = az("-m", "vdschunkmetadata=AAECAwQFBgc=", "PUT", c + "sas/a.bin", body=b"via sas", env=sas_env)
    code, h, data = curl(base + "sas/a.bin?" + ro)
    ok(r["status"] == 201 and r["signed"] == "sas" and data == b"via sas" and h.get("x-ms-meta-vdschunkmetadata") == "AAECAwQFBgc=",
       "a SAS connection string: Put Blob with metadata is 201 and curl reads it back", (r["status"], r.get("error"), code))
    ok("sig=" not in r.get("url", "") and "?..." in r.get("url", ""), "the SAS never shows in the redacted URL", r.get("url"))
    r = az("-H", "Range: bytes=0-2", "GET", c + "sas/a.bin", env=sas_env)
    ok(r["status"] == 206 and r["body"] == b"via", "a SAS: Get Blob range is 206", r["status"])
    r = az("-l", c + "sas/", env=sas_env)
    ok(r["status"] == 200 and [b["name"] for b in r["list"].get("blobs", [])] == ["sas/a.bin"]
       and r["list"]["blobs"][0]["metadata"] == {"vdschunkmetadata": "AAECAwQFBgc="}, "a SAS: List Blobs with metadata", r.get("list"))
    ro_env = {"AZURE_STORAGE_CONNECTION_STRING": "BlobEndpoint=%s;SharedAccessSignature=%s" % (srv.endpoint, ro)}
    r = az("PUT", c + "sas/b.bin", body=b"x", env=ro_env)
    ok(r["status"] == 403 and r["error_code"] == "AuthorizationPermissionMismatch",
       "a read-only SAS cannot put: 403 AuthorizationPermissionMismatch", r.get("error"))
    r = az("GET", c + "sas/a.bin?" + ro.replace("sig=", "sig=AAAA"), env=sas_env)
    ok(r["status"] == 403 and r["error_code"] == "AuthorizationFailure" and r["error"].endswith("sas/a.bin?...: HTTP 403 Forbidden (AuthorizationFailure)"),
       "a query on the az:// URL replaces the configured SAS (a tampered one: 403 AuthorizationFailure; the error shows no query)", r.get("error"))

    # -- Delete Blob
    r1 = az("DELETE", c + "obj/new.bin")
    r2 = az("DELETE", c + "obj/new.bin")
    code, h, data = curl(base + "obj/new.bin?" + ro)
    ok((r1["status"], r2["status"], r2.get("error_code"), code) == (202, 404, "BlobNotFound", 404),
       "Delete Blob: 202, again 404 BlobNotFound (VD_NOTFOUND), curl then 404", (r1["status"], r2["status"], r2.get("error_code"), code))
    # the key, the wrong key and every SAS signature, raw and URL-encoded
    ok(az.bad_exit == 0, "the driver exited 0 (or 2 for a refusal) every time: no sanitizer report", "%d other exits" % az.bad_exit)
    ok(az.leaks == 0 and az.calls >= 30, "no secret in any of the driver's %d outputs (%d secrets looked for)" % (az.calls, len(SECRETS)),
       "%d leak(s)" % az.leaks)


def main():
    ok(os.access(DRIVER, os.X_OK), "the test driver is built (%s)" % DRIVER)
    tmp = tempfile.mkdtemp(prefix="vdsql-azsign.")
    t = time.monotonic()
    try:
        with Azurite() as srv:
            ok(srv.started, "azurite-test-server starts (%.1f s)" % (time.monotonic() - t), srv.error)
            if srv.started:
                checks(srv, tmp)
    finally:
        subprocess.run(["rm", "-rf", tmp])
    return plan()


sys.exit(main())
