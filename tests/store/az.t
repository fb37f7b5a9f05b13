#!/usr/bin/python3
"""The az:// backend against a real Azure Blob service (Azurite 3.35.0 on 127.0.0.1 in
strict mode, which checks every Shared Key signature and SAS; scripts/azurite-test-server
through tests/taplib.py), as TAP.

The test datasets (tests/gen: an OpenVDS dataset, a LINDI archive, a multi-file VTKHDF
layout) are uploaded by tests/azclient.py (Python's hmac Shared Key written from the spec,
not vdsql), then read through vdsql over az:// and compared with the same queries on the
local copies: vds_layers, vds_chunks by status, every chunk's vds_chunk_data, lindi_files,
lindi_refs, lindi_read, vtkhdf_partitions. Requests are counted by vdsql_stats() (row
'az'), each query in a fresh connection (cold cache). Listings (List Blobs with metadata,
several pages through markers), HEAD, range GETs, puts (metadata, If-Match /
If-None-Match, odd names) and deletes are checked through build/storetool (the store
interface) against the independent client's listing (curl with a SAS, ElementTree), HEAD
and GET. Credentials: a connection string with a key (Shared Key), one with a SAS, a SAS
on the URL itself, vdsql_config's azure_connection_string. Errors: a wrong key, a
tampered SAS, a missing blob, a missing container, each word for word, and no secret in
any output.
   env: SO, SQLITE3 (tests/taplib.py), VDSQL_TESTDATA (datasets, else generated),
        STORETOOL (default build/storetool)"""
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse
import xml.etree.ElementTree as ET

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.dirname(here))
from taplib import Azurite, datasets, ok, plan, shell_args  # noqa: E402
from azclient import Az, sas_container  # noqa: E402

STORETOOL = os.environ.get("STORETOOL", os.path.join(top, "build", "storetool"))
VD_NOTFOUND, VD_IO, VD_INVALID, VD_PRECONDITION = 2, 4, 3, 10  # ext/core/vd_err.h
AZ_VARS = ("AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN")
STATS = "SELECT 'stats', requests FROM vdsql_stats() WHERE backend = 'az';"
SECRETS = []  # every secret no output may show


def clean_env(env):
    e = {k: v for k, v in os.environ.items() if k not in AZ_VARS}
    e.update(env)
    return e


def run(script, env):
    """(stdout lines, stderr, rc) of script in a fresh connection, with env as the
    process environment's AZURE_STORAGE_* (the test's own never leak in)."""
    p = subprocess.run(shell_args(), input=".mode list\n" + script, text=True, capture_output=True, env=clean_env(env))
    return p.stdout.split("\n")[:-1], p.stderr, p.returncode


def q(s):
    return "'" + s.replace("'", "''") + "'"


def leaks(text):
    return [s for s in SECRETS if s and s in text]


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-azt.")
    ds = datasets(tmp)
    with Azurite() as srv:
        if not ok(srv.started, "azurite starts on 127.0.0.1", srv.error):
            return plan()
        SECRETS.append(srv.key)
        az = Az(srv)
        C, A = srv.container, srv.account
        cs = srv.env["AZURE_STORAGE_CONNECTION_STRING"]
        env = {"AZURE_STORAGE_CONNECTION_STRING": cs}
        base = "/%s/%s/" % (A, C)  # the independent client's paths: /ACCOUNT/container/blob

        def put_blob(name, data, meta=None):
            h = {"x-ms-blob-type": "BlockBlob"}
            h.update({"x-ms-meta-" + k: v for k, v in (meta or {}).items()})
            return az("PUT", base + urllib.parse.quote(name), headers=h, body=data)[0]

        def get_blob(name, method="GET"):
            return az(method, base + urllib.parse.quote(name))

        # -- upload with the independent client
        uploads = []
        for root, _, files in os.walk(os.path.join(ds, "survey")):
            for f in files:
                p = os.path.join(root, f)
                uploads.append((p, "ds/" + os.path.relpath(p, ds)))
        lt = os.path.join(ds, "lindi/small.lindi.tar")
        uploads.append((lt, "ds/lindi/small.lindi.tar"))
        vt = sorted(f for f in os.listdir(os.path.join(ds, "vtkhdf")) if f.startswith("ext_partitions"))
        uploads += [(os.path.join(ds, "vtkhdf", f), "ds/vtkhdf/" + f) for f in vt]
        odd = "ds/odd dir/a+b=c \u00e9.lindi.tar"  # bytes that must be encoded in the URL and the signature
        uploads.append((lt, odd))
        codes = [put_blob(k, open(p, "rb").read()) for p, k in uploads]
        ok(len(uploads) > 20 and codes == [201] * len(codes),
           "the independent client (Python hmac Shared Key) uploads %d blobs (OpenVDS, LINDI, VTKHDF)" % len(uploads), codes)

        S = "az://%s/ds/" % C
        vds, loc = S + "survey", os.path.join(ds, "survey")
        lay = "Dimensions_012LOD0"

        def compare(name, tmpl, remote, local, requests, ev=env):
            a, ea, ra = run(tmpl % q(local), {})
            ldir, rdir = os.path.dirname(local), remote[:remote.rindex("/")]
            a = [x.replace(ldir + "/", rdir + "/") for x in a]  # rows that name sub-files
            if "?" in remote:  # ... carrying the URL's query, shown redacted
                a = [re.sub(r"(\.vtkhdf)\|", r"\1?...|", x) for x in a]
            b, eb, rb = run("SELECT vdsql_config('stats', 'reset');\n" + tmpl % q(remote) + "\n" + STATS, ev)
            got = b[1:-1] if len(b) >= 2 else b
            st = b[-1] if b else ""
            ok(ra == 0 and rb == 0 and not ea and not eb and a and got == a,
               "az: %s equals the local copy's (%d rows)" % (name, len(a)), "local %s %s\naz %s %s" % (a[:5], ea, b[:5], eb))
            ok(st == "stats|%d" % requests, "az: %s takes exactly %d requests" % (name, requests), st)

        # VolumeDataLayout and LayerStatus: 2 GETs
        compare("vds_layers", "SELECT * FROM vds_layers(%s);", vds, loc, 2)
        # + the layer's 3 metadata pages (mkvds.py: 10 chunks per page, 24 chunks)
        compare("vds_chunks GROUP BY status", "SELECT status, count(*) FROM vds_chunks(%%s, '%s') GROUP BY status ORDER BY 1;" % lay,
                vds, loc, 5)
        # a bare count needs no page: the layer's chunk count is in the layouts
        compare("vds_chunks count", "SELECT count(*) FROM vds_chunks(%%s, '%s');" % lay, vds, loc, 2)
        # + one GET per chunk object with data (16 'data' chunks in mkvds.py's layer)
        compare("vds_chunk_data of every chunk (bytes)",
                "SELECT c.chunk, c.status, hex(vds_chunk_data(c.url, '%s', c.chunk)) FROM (SELECT %%s AS url) u, vds_chunks(u.url, '%s') c ORDER BY 1;" % (lay, lay),
                vds, loc, 5 + 16)
        # one chunk alone: the layouts, its page, its object
        compare("vds_chunk_data of one chunk", "SELECT hex(vds_chunk_data(%%s, '%s', 0));" % lay, vds, loc, 4)
        # the archive's first lindi_prefix bytes (128 KiB: the whole small archive) in one GET
        compare("lindi_files", "SELECT * FROM lindi_files(%s) ORDER BY 1;", S + "lindi/small.lindi.tar", lt, 1)
        compare("lindi_refs", "SELECT key, hex(value) FROM lindi_refs(%s) ORDER BY 1;", S + "lindi/small.lindi.tar", lt, 1)
        compare("lindi_read", "SELECT hex(lindi_read(%s, 'sample.h5'));", S + "lindi/small.lindi.tar", lt, 2)
        # walking every header to the end (a range past the end ends the walk, as over http)
        compare("tar_members", "SELECT * FROM tar_members(%s) ORDER BY 1;", S + "lindi/small.lindi.tar", lt, 2)
        compare("lindi_read of a name with space, + = and UTF-8", "SELECT hex(lindi_read(%s, 'sample.h5'));",
                "az://%s/ds/odd%%20dir/a%%2Bb%%3Dc%%20%%C3%%A9.lindi.tar" % C, lt, 2)
        # the main file and its 3 partition files, each one GET (small files whole)
        compare("vtkhdf_partitions (main file + 3 part files)", "SELECT * FROM vtkhdf_partitions(%s) ORDER BY 1, 2, 3;",
                S + "vtkhdf/ext_partitions.vtkhdf", os.path.join(ds, "vtkhdf/ext_partitions.vtkhdf"), 4)

        # -- credentials: a connection string with a SAS (no key), and a SAS on the URL
        ro, rw = sas_container(srv, "rl"), sas_container(srv, "racwdl")
        SECRETS.extend(dict(urllib.parse.parse_qsl(x))["sig"] for x in (ro, rw))
        SECRETS.extend(x.split("sig=")[1] for x in (ro, rw))
        sas_cs = "BlobEndpoint=%s;SharedAccessSignature=%s" % (srv.endpoint, ro)
        compare("vds_layers with a connection string holding a SAS", "SELECT * FROM vds_layers(%s);", vds, loc, 2,
                {"AZURE_STORAGE_CONNECTION_STRING": sas_cs})
        compare("vtkhdf_partitions with a SAS on the URL (carried to the part files)",
                "SELECT * FROM vtkhdf_partitions(%s) ORDER BY 1, 2, 3;", S + "vtkhdf/ext_partitions.vtkhdf?" + ro,
                os.path.join(ds, "vtkhdf/ext_partitions.vtkhdf"), 4, {"AZURE_STORAGE_CONNECTION_STRING": "BlobEndpoint=%s;SharedAccessSignature=%s" % (srv.endpoint, "sv=2021-08-06&sig=bm90LXZhbGlk")})
        out, err, rc = run("SELECT vdsql_config('azure_connection_string', %s);\nSELECT count(*) FROM vds_layers(%s);\n"
                           "SELECT vdsql_config('azure_connection_string');\nSELECT value FROM vdsql_config() WHERE key = 'azure_connection_string';\n"
                           % (q(cs), q(vds)), {})
        nl = len(run("SELECT * FROM vds_layers(%s);" % q(loc), {})[0])
        wrong_env = {"AZURE_STORAGE_CONNECTION_STRING": cs.replace(srv.key, "A" * 86 + "==")}
        out2, err2, rc2 = run("SELECT vdsql_config('azure_connection_string', %s);\nSELECT count(*) FROM vds_layers(%s);\n"
                              % (q(cs), q(vds)), wrong_env)
        ok(rc2 == 0 and not err2 and out2[1:] == [str(nl)],
           "az: vdsql_config's azure_* settings replace the environment's (a wrong key there is not used)", "%s %s" % (out2, err2))
        ok(rc == 0 and not err and out[1] == str(nl) and out[2] == "(set)" and out[3] == "(set)" and not leaks("\n".join(out)),
           "az: vdsql_config('azure_connection_string') alone reaches the container (%d layers); shown back as (set)" % nl, "%s %s" % (out, err))

        # -- listings: storetool's vd_list pages against the independent listing
        put_blob("meta/k1.bin", b"1", {"vdschunkmetadata": "AQIDBAUGBwg=", "MixedCase": "Value 1"})
        want, marker = [], None
        while True:
            params = {"restype": "container", "comp": "list", "include": "metadata", "prefix": "ds/survey/Dim"}
            if marker:
                params["marker"] = marker
            code, h, data = az("GET", "/%s/%s" % (A, C), params=params)
            x = ET.fromstring(data)
            for b in x.iter("Blob"):
                want.append("%s\t%s\t\"%s\"" % (b.findtext("Name")[len("ds/survey/"):], b.findtext("Properties/Content-Length"),
                                                 b.findtext("Properties/Etag")))
            marker = x.findtext("NextMarker")
            if not marker:
                break
        e = clean_env(env)
        r = subprocess.run([STORETOOL, "list", S + "survey/Dim", "7"], capture_output=True, text=True, env=e)
        lines = r.stdout.splitlines()
        got = [x for x in lines if not x.startswith("page ") and not x.startswith("meta\t")]
        pages = sum(1 for x in lines if x.startswith("page "))
        n = len(want)
        ok(r.returncode == 0 and got == want and n > 14, "az: List Blobs through vd_list gives the independent listing's %d names, sizes, quoted ETags" % n,
           "%s\n%s\n%s" % (r.stderr, got[:5], want[:5]))
        ok(pages == (n + 6) // 7 and r.stderr.strip().endswith("requests %d" % pages),
           "az: ... in %d pages of 7 through NextMarker, one request each" % ((n + 6) // 7), "%d %s" % (pages, r.stderr))
        r = subprocess.run([STORETOOL, "list", "az://%s/meta/" % C, "5"], capture_output=True, text=True, env=e)
        et = get_blob("meta/k1.bin", "HEAD")[1].get("etag")
        ok(r.returncode == 0 and r.stdout.splitlines() == ["page 1", "k1.bin\t1\t%s" % et, "meta\tvdschunkmetadata\tAQIDBAUGBwg=",
                                                           "meta\tmixedcase\tValue 1"] and r.stderr.strip().endswith("requests 1"),
           "az: a listing gives the user metadata (names lower-case) and the ETag as HEAD quotes it, in one request", r.stdout + r.stderr)
        r = subprocess.run([STORETOOL, "list", "az://%s/ds/odd%%20dir/" % C, "5"], capture_output=True, text=True, env=e)
        ok(r.returncode == 0 and len(r.stdout.splitlines()) == 2 and
           r.stdout.splitlines()[1].startswith("a+b=c \u00e9.lindi.tar\t%d\t\"0x" % os.path.getsize(lt)),
           "az: a listing under an encoded prefix gives the name decoded", r.stdout + r.stderr)

        # -- HEAD and range GET of what the independent client wrote
        r = subprocess.run([STORETOOL, "head", "az://%s/meta/k1.bin" % C], capture_output=True, text=True, env=e)
        ok(r.returncode == 0 and sorted(r.stdout.splitlines()) ==
           sorted(["1\t%s" % et, "meta\tvdschunkmetadata\tAQIDBAUGBwg=", "meta\tmixedcase\tValue 1"]),
           "az: HEAD gives size, ETag and the user metadata (names lower-case)", r.stdout + r.stderr)
        put_blob("meta/obj.bin", b"0123456789")
        r = subprocess.run([STORETOOL, "get", "az://%s/meta/obj.bin" % C, "3", "4"], capture_output=True, env=e)
        r2 = subprocess.run([STORETOOL, "get", "az://%s/meta/obj.bin" % C, "6", "-1"], capture_output=True, env=e)
        ok(r.returncode == 0 and r.stdout == b"3456" and r2.returncode == 0 and r2.stdout == b"6789",
           "az: range GETs (bytes=3-6, and 6- to the end) give those bytes", r.stdout + r.stderr + r2.stdout + r2.stderr)
        r = subprocess.run([STORETOOL, "get", "az://%s/meta/obj.bin" % C, "100", "5"], capture_output=True, text=True, env=e)
        ok(r.returncode == 10 + VD_INVALID and "error: az://%s/meta/obj.bin: HTTP 416 Range Not Satisfiable (InvalidRange)" % C in r.stderr,
           "az: a range past the end: VD_INVALID (416 InvalidRange), as over http", r.stderr)
        # QUIRK (Azurite 3.35): a range starting at the end gets 206 "bytes 10-9/10" and no body
        # (Azure and HTTP servers answer 416): the same VD_INVALID
        r = subprocess.run([STORETOOL, "get", "az://%s/meta/obj.bin" % C, "10", "5"], capture_output=True, text=True, env=e)
        ok(r.returncode == 10 + VD_INVALID and "nothing there (asked for bytes 10-14)" in r.stderr,
           "az: a range starting at the end: VD_INVALID too", r.stderr)
        put_blob("meta/empty.bin", b"")
        r = subprocess.run([STORETOOL, "get", "az://%s/meta/empty.bin" % C], capture_output=True, env=e)
        ok(r.returncode == 0 and r.stdout == b"", "az: an empty blob reads as empty", r.stderr)

        # -- writes through vd_put / vd_delete, read back with the independent client
        def tool(*args, body=None, ev=env):
            r = subprocess.run([STORETOOL] + list(args), input=body, capture_output=True, env=clean_env(ev))
            return r.returncode, r.stdout.decode(), r.stderr.decode()

        W = "az://%s/w/" % C
        body = bytes(range(256)) * 40
        rc, out, err = tool("put", W + "a.bin", "vdschunkmetadata=AQIDBAUGBwg=", "Mixed_Case=Value 1", body=body)
        code, h, g = get_blob("w/a.bin")
        ok(rc == 0 and out.strip() == h.get("etag") and g == body and h.get("x-ms-meta-vdschunkmetadata") == "AQIDBAUGBwg="
           and h.get("x-ms-meta-mixed_case") == "Value 1" and h.get("content-type") == "application/octet-stream"
           and h.get("x-ms-blob-type") == "BlockBlob" and err.strip().endswith("requests 1"),
           "az: a put (Shared Key, BlockBlob, Content-Type, metadata) reads back with the independent client, one request",
           "%s %s %s %s" % (rc, out, err, h))
        rc, out, err = tool("put", W + "a.bin", "--if-none-match", body=b"other")
        ok(rc == 10 + VD_PRECONDITION and "error: %sa.bin: HTTP 409 Conflict (BlobAlreadyExists)" % W in err
           and get_blob("w/a.bin")[2] == body,
           "az: a create-only put over an existing blob: VD_PRECONDITION (409 BlobAlreadyExists), nothing written", "%s %s" % (rc, err))
        rc, out, err = tool("put", W + "new.bin", "--if-none-match", body=b"first")
        rc2, out2, err2 = tool("put", W + "new.bin", "--if-none-match", body=b"second")
        ok(rc == 0 and rc2 == 10 + VD_PRECONDITION and get_blob("w/new.bin")[2] == b"first",
           "az: create-only put twice: the first creates, the second is VD_PRECONDITION", "%s %s %s" % (err, rc2, err2))
        rc, out, err = tool("put", W + "a.bin", "--if-match", '"0x8D000000000000"', body=b"other")
        ok(rc == 10 + VD_PRECONDITION and "error: %sa.bin: HTTP 412 Precondition Failed (ConditionNotMet)" % W in err
           and get_blob("w/a.bin")[2] == body,
           "az: a put If-Match a stale ETag: VD_PRECONDITION (412 ConditionNotMet), nothing written", "%s %s" % (rc, err))
        etag = get_blob("w/a.bin", "HEAD")[1]["etag"]  # quoted, as HEAD gives it
        rc, out, err = tool("put", W + "a.bin", "--if-match", etag, "vdschunkmetadata=AAAAAAAAAAA=", body=b"second")
        code, h, g = get_blob("w/a.bin")
        ok(rc == 0 and out.strip() == h.get("etag") != etag and g == b"second" and h.get("x-ms-meta-vdschunkmetadata") == "AAAAAAAAAAA="
           and "x-ms-meta-mixed_case" not in h,
           "az: a put If-Match the current (quoted) ETag replaces the blob and all its metadata", "%s %s %s %s" % (rc, out, err, h))
        rc, out, err = tool("put", W + "odd+k%20y=%3F.bin", body=b"odd")
        ok(rc == 0 and get_blob("w/odd+k y=?.bin")[2] == b"odd",
           "az: a put to a name with '+', space, '=' and '?' (encoded in the URL) lands on that name", err)
        rc, out, err = tool("put", W + "b.bin", "a-b=1", body=b"x")
        ok(rc == 10 + VD_INVALID and "error: %sb.bin: metadata name 'a-b': Azure takes letters, digits and '_', not first a digit" % W in err
           and err.strip().endswith("requests 0"), "az: a metadata name Azure refuses is refused before any request", err)
        rc, out, err = tool("put", W + "b.bin", "a_b=1", "a1=2", body=b"x")
        ok(rc == 10 + VD_INVALID and "error: %sb.bin: metadata names 'a_b' and 'a1' sort differently under Azure signers' rules" % W in err
           and err.strip().endswith("requests 0"),
           "az: metadata names whose signed order depends on '_' against a digit (Azurite sorts '_' first): refused, no request", err)
        rc, out, err = tool("put", W + "c.bin", "a_b=1", "ab=2", "Z=3", "_z=4", "q_x=5", body=b"x")
        h = get_blob("w/c.bin", "HEAD")[1]
        ok(rc == 0 and [h.get("x-ms-meta-" + k) for k in ("a_b", "ab", "z", "_z", "q_x")] == ["1", "2", "3", "4", "5"],
           "az: metadata names with '_' that sort alike either way are signed and stored", "%s %s" % (err, h))
        rc, out, err = tool("put", W + "b.bin", "k=a\r\nx-ms-meta-evil: 1", body=b"x")
        ok(rc == 10 + VD_INVALID and "metadata 'k': Azure takes printable ASCII values" in err,
           "az: a metadata value with a newline is refused (no header injection)", err)
        rc, out, err = tool("del", W + "a.bin")
        gone = get_blob("w/a.bin", "HEAD")[0] == 404
        rc2, out2, err2 = tool("del", W + "a.bin")
        ok(rc == 0 and gone and rc2 == 0 and err2.strip().endswith("requests 1"),
           "az: delete removes the blob (independent HEAD: 404); deleting it again is no error", err + err2)
        rc, out, err = tool("del", "az://vdsql-no-such-container/a")
        ok(rc == 10 + VD_NOTFOUND and "error: az://vdsql-no-such-container/a: HTTP 404 Not Found (ContainerNotFound)" in err,
           "az: a delete in a missing container is an error (ContainerNotFound)", err)
        # writes with a SAS: the read-write one on the URL, while the settings hold a read-only one
        ro_env = {"AZURE_STORAGE_CONNECTION_STRING": sas_cs}
        rc, out, err = tool("put", W + "sas.bin", "m=1", body=b"by sas", ev=ro_env)
        ok(rc == 10 + VD_IO and "error: %ssas.bin: HTTP 403 Forbidden (AuthorizationPermissionMismatch)" % W in err and not leaks(err),
           "az: a put with a read-only SAS: 403 AuthorizationPermissionMismatch, no SAS shown", err)
        rc, out, err = tool("put", W + "sas.bin?" + rw, "m=1", body=b"by sas", ev=ro_env)
        code, h, g = get_blob("w/sas.bin")
        ok(rc == 0 and g == b"by sas" and h.get("x-ms-meta-m") == "1", "az: a put with a read-write SAS on the URL is written", err)
        rc, out, err = tool("put", W + "sas2.bin?" + rw, body=b"by sas")
        ok(rc == 0 and get_blob("w/sas2.bin")[2] == b"by sas",
           "az: a SAS on the URL wins over a key in the settings (no Shared Key sent with it)", err)

        # -- errors, word for word, and no secret anywhere
        key = srv.key
        wrong = ("B" if key[0] != "B" else "C") + key[1:]
        SECRETS.append(wrong)
        bad_sas = ro.replace("sig=", "sig=AA")
        cases = [
            ("a wrong key", {"AZURE_STORAGE_CONNECTION_STRING": cs.replace(key, wrong)}, vds,
             "Runtime error near line 2: %s/VolumeDataLayout: HTTP 403 Forbidden (AuthorizationFailure)" % vds),
            ("a tampered SAS", {"AZURE_STORAGE_CONNECTION_STRING": "BlobEndpoint=%s;SharedAccessSignature=%s" % (srv.endpoint, bad_sas)}, vds,
             "Runtime error near line 2: %s/VolumeDataLayout: HTTP 403 Forbidden (AuthorizationFailure)" % vds),
            ("a missing blob", env, S + "nothing",
             "Runtime error near line 2: %snothing: not an OpenVDS dataset: %snothing/VolumeDataLayout: HTTP 404 Not Found (BlobNotFound)" % (S, S)),
            ("a missing container", env, "az://vdsql-no-such-container/survey",
             "Runtime error near line 2: az://vdsql-no-such-container/survey: not an OpenVDS dataset: "
             "az://vdsql-no-such-container/survey/VolumeDataLayout: HTTP 404 Not Found (ContainerNotFound)"),
        ]
        for name, ev, url, want in cases:
            # VolumeDataLayout and LayerStatus are asked for together: 2 requests, no retry
            out, err, rc = run("SELECT count(*) FROM vds_layers(%s);\n%s" % (q(url), STATS), ev)
            ok(rc != 0 and err.strip() == want and out[-1:] == ["stats|2"],
               "az: %s: %s (2 requests, none retried)" % (name, want.split(": ", 1)[1]), "%r %s" % (err, out))
            ok(not leaks(err + "\n".join(out)), "az: %s: no secret in any output" % name)
        # a wrong SAS on the URL itself: the URL is named with its query redacted
        out, err, rc = run("SELECT count(*) FROM vds_layers(%s);\n" % q(vds + "?" + bad_sas), env)
        ok(rc != 0 and err.strip() == "Runtime error near line 2: %s/VolumeDataLayout?...: HTTP 403 Forbidden (AuthorizationFailure)" % vds
           and not leaks(err), "az: a tampered SAS on the URL: AuthorizationFailure, the query redacted", err)
        # a listing's error names the listed URL
        r = subprocess.run([STORETOOL, "list", "az://vdsql-no-such-container/x/", "5"], capture_output=True, text=True, env=e)
        ok(r.returncode == 10 + VD_NOTFOUND and "error: az://vdsql-no-such-container/x/: listing: HTTP 404 Not Found (ContainerNotFound)" in r.stderr,
           "az: a listing of a missing container names the listed URL and ContainerNotFound", r.stderr)
        # no credentials at all: refused before any request, naming the settings
        out, err, rc = run("SELECT count(*) FROM vds_layers(%s);\n%s" % (q(vds), STATS), {})
        ok(rc != 0 and "%s/VolumeDataLayout: Azure credentials: none given (set AZURE_STORAGE_CONNECTION_STRING" % vds in err
           and out[-1:] == ["stats|0"], "az: without credentials: one error naming the settings, no request", "%s %s" % (err, out))
        # opening a database and loading vdsql reaches nothing
        out, err, rc = run("SELECT vdsql_version() IS NOT NULL;\n" + STATS,
                           {"AZURE_STORAGE_CONNECTION_STRING": "BlobEndpoint=http://127.0.0.1:1/x;SharedAccessSignature=sig=x"})
        ok(rc == 0 and out == ["1", "stats|0"], "az: loading vdsql makes no request (settings are read at use)", out + [err])
    return plan()


sys.exit(main())
