#!/usr/bin/python3
"""The s3:// backend against a real S3 server (Ceph radosgw on 127.0.0.1, which checks
every SigV4 signature; scripts/radosgw-test-server through tests/taplib.py), as TAP.

The test datasets (tests/gen: an OpenVDS dataset, a LINDI archive, a multi-file VTKHDF
layout) are uploaded with boto3 (Debian's python3-boto3, an independent signer), then
read through vdsql over s3:// and compared with the same queries on the local copies:
vds_layers, vds_chunks by status, every chunk's vds_chunk_data, lindi_files, lindi_refs,
lindi_read, vtkhdf_partitions. Requests are counted by vdsql_stats() (row 's3'), each
query in a fresh connection (cold cache). Listings (ListObjectsV2, several pages through
continuation tokens), HEAD, puts (metadata, If-Match / If-None-Match, odd keys) and
deletes are checked through build/storetool (the store interface; no SQL relation
writes to S3 yet) against boto3's listing, head_object and get_object. Errors: a wrong secret, an unknown access key, a missing object,
a missing bucket, each word for word, and no secret in any output. Settings: the s3_*
keys of vdsql_config work without the environment, and a secret is never shown back.
   env: SO, SQLITE3 (tests/taplib.py), VDSQL_TESTDATA (datasets, else generated),
        STORETOOL (default build/storetool)"""
import hashlib
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.dirname(here))
from taplib import Radosgw, datasets, ok, plan, shell_args  # noqa: E402

STORETOOL = os.environ.get("STORETOOL", os.path.join(top, "build", "storetool"))
VD_NOTFOUND, VD_IO, VD_INVALID, VD_PRECONDITION = 2, 4, 3, 10  # ext/core/vd_err.h
AWS_VARS = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
            "AWS_DEFAULT_REGION")


def run(script, env):
    """(stdout lines, stderr, rc) of script in a fresh connection, with env as the
    process environment's AWS_* (the test's own AWS_* never leak in)."""
    e = {k: v for k, v in os.environ.items() if k not in AWS_VARS}
    e.update(env)
    p = subprocess.run(shell_args(), input=".mode list\n" + script, text=True, capture_output=True, env=e)
    return p.stdout.split("\n")[:-1], p.stderr, p.returncode


STATS = "SELECT 'stats', requests FROM vdsql_stats() WHERE backend = 's3';"


def q(s):
    return "'" + s.replace("'", "''") + "'"


def main():
    try:
        import boto3
        import botocore.config
    except ImportError:
        ok(False, "boto3 for /usr/bin/python3 (Debian package python3-boto3)")
        return plan()
    tmp = tempfile.mkdtemp(prefix="vdsql-s3t.")
    ds = datasets(tmp)
    with Radosgw() as srv:
        if not ok(srv.started, "radosgw starts on 127.0.0.1", srv.error):
            return plan()
        env = {k: srv.env[k] for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")}
        c = boto3.client("s3", endpoint_url=srv.endpoint, aws_access_key_id=srv.key, aws_secret_access_key=srv.secret,
                         region_name=srv.region,
                         config=botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
        B = srv.bucket
        # -- upload with boto3
        uploads = []
        for sub in ("survey",):
            for root, _, files in os.walk(os.path.join(ds, sub)):
                for f in files:
                    p = os.path.join(root, f)
                    uploads.append((p, "ds/" + os.path.relpath(p, ds)))
        uploads.append((os.path.join(ds, "lindi/small.lindi.tar"), "ds/lindi/small.lindi.tar"))
        vt = sorted(f for f in os.listdir(os.path.join(ds, "vtkhdf")) if f.startswith("ext_partitions"))
        uploads += [(os.path.join(ds, "vtkhdf", f), "ds/vtkhdf/" + f) for f in vt]
        # a key with bytes SigV4 wants encoded (space, '+', '=', UTF-8): curl 7.88 signs the path verbatim
        odd = "ds/odd dir/a+b=c é.lindi.tar"
        uploads.append((os.path.join(ds, "lindi/small.lindi.tar"), odd))
        for p, k in uploads:
            c.upload_file(p, B, k)
        ok(len(uploads) > 20, "boto3 uploads %d objects (OpenVDS, LINDI, VTKHDF)" % len(uploads))

        S = "s3://%s/ds/" % B
        vds, loc = S + "survey", os.path.join(ds, "survey")
        lay = "Dimensions_012LOD0"

        def compare(name, tmpl, remote, local, requests):
            a, ea, ra = run(tmpl % q(local), env)
            ldir, rdir = os.path.dirname(local), remote[:remote.rindex("/")]
            a = [x.replace(ldir + "/", rdir + "/") for x in a]  # rows that name sub-files
            b, eb, rb = run("SELECT vdsql_config('stats', 'reset');\n" + tmpl % q(remote) + "\n" + STATS, env)
            got = b[1:-1] if len(b) >= 2 else b
            st = b[-1] if b else ""
            ok(ra == 0 and rb == 0 and not ea and not eb and a and got == a,
               "s3: %s equals the local copy's (%d rows)" % (name, len(a)),
               "local %s %s\ns3 %s %s" % (a[:5], ea, b[:5], eb))
            ok(st == "stats|%d" % requests, "s3: %s takes exactly %d requests" % (name, requests), st)

        # VolumeDataLayout and LayerStatus: 2 GETs
        compare("vds_layers", "SELECT * FROM vds_layers(%s);", vds, loc, 2)
        # + the layer's 3 metadata pages (mkvds.py: 10 chunks per page, 24 chunks)
        compare("vds_chunks GROUP BY status", "SELECT status, count(*) FROM vds_chunks(%%s, '%s') GROUP BY status ORDER BY 1;" % lay,
                vds, loc, 5)
        # + one GET per chunk object with data (16 'data' chunks in mkvds.py's layer; constant,
        # novalue and unwritten chunks have no object to read)
        compare("vds_chunk_data of every chunk (bytes)",
                "SELECT c.chunk, c.status, hex(vds_chunk_data(c.url, '%s', c.chunk)) FROM (SELECT %%s AS url) u, vds_chunks(u.url, '%s') c ORDER BY 1;" % (lay, lay),
                vds, loc, 5 + 16)
        lt = os.path.join(ds, "lindi/small.lindi.tar")
        # the archive's first lindi_prefix bytes (128 KiB: the whole small archive) in one GET
        compare("lindi_files", "SELECT * FROM lindi_files(%s) ORDER BY 1;", S + "lindi/small.lindi.tar", lt, 1)
        compare("lindi_refs", "SELECT key, hex(value) FROM lindi_refs(%s) ORDER BY 1;", S + "lindi/small.lindi.tar", lt, 1)
        # the archive's head (its index), then the member's bytes
        compare("lindi_read", "SELECT hex(lindi_read(%s, 'sample.h5'));", S + "lindi/small.lindi.tar", lt, 2)
        compare("lindi_read of a key with space, + = and UTF-8", "SELECT hex(lindi_read(%s, 'sample.h5'));",
                "s3://%s/ds/odd%%20dir/a%%2Bb%%3Dc%%20%%C3%%A9.lindi.tar" % B, lt, 2)
        # the main file and its 3 partition files, each one GET (small files whole)
        compare("vtkhdf_partitions (main file + 3 part files)", "SELECT * FROM vtkhdf_partitions(%s) ORDER BY 1, 2, 3;",
                S + "vtkhdf/ext_partitions.vtkhdf", os.path.join(ds, "vtkhdf/ext_partitions.vtkhdf"), 4)

        # -- listings: build/storetool's vd_list pages against boto3's listing
        want = []
        for pg in c.get_paginator("list_objects_v2").paginate(Bucket=B, Prefix="ds/survey/Dim"):
            want += ["%s\t%d\t%s" % (o["Key"][len("ds/survey/"):], o["Size"], o["ETag"]) for o in pg.get("Contents", [])]
        e = {k: v for k, v in os.environ.items() if k not in AWS_VARS}
        e.update(env)
        r = subprocess.run([STORETOOL, "list", S + "survey/Dim", "7"], capture_output=True, text=True, env=e)
        lines = r.stdout.splitlines()
        got = [x for x in lines if not x.startswith("page ")]
        pages = sum(1 for x in lines if x.startswith("page "))
        n = len(want)
        ok(r.returncode == 0 and got == want and n > 14, "s3: ListObjectsV2 through vd_list gives boto3's %d keys, sizes, ETags" % n,
           "%s\n%s\n%s" % (r.stderr, got[:5], want[:5]))
        ok(pages == (n + 6) // 7 and r.stderr.strip().endswith("requests %d" % pages),
           "s3: ... in %d pages of 7 through continuation tokens, one request each" % ((n + 6) // 7), "%d %s" % (pages, r.stderr))
        r = subprocess.run([STORETOOL, "list", "s3://%s/ds/odd%%20dir/" % B, "5"], capture_output=True, text=True, env=e)
        ok(r.returncode == 0 and r.stdout.splitlines()[1:] ==
           ["a+b=c é.lindi.tar\t%d\t\"%s\"" % (os.path.getsize(lt), hashlib.md5(open(lt, "rb").read()).hexdigest())],
           "s3: a listing under an encoded prefix gives the key decoded", r.stdout + r.stderr)
        # -- HEAD: size, ETag and user metadata written by boto3
        c.put_object(Bucket=B, Key="meta/obj.bin", Body=b"0123456789", Metadata={"vdschunkmetadata": "AQIDBAUGBwg=", "Other": "x y"})
        r = subprocess.run([STORETOOL, "head", "s3://%s/meta/obj.bin" % B], capture_output=True, text=True, env=e)
        ok(r.returncode == 0 and sorted(r.stdout.splitlines()) ==
           sorted(["10\t\"%s\"" % hashlib.md5(b"0123456789").hexdigest(), "meta\tvdschunkmetadata\tAQIDBAUGBwg=", "meta\tother\tx y"]),
           "s3: HEAD gives size, ETag and boto3's user metadata (keys lower-case)", r.stdout + r.stderr)
        # -- an empty object is listed with size 0, not an unknown size (mutant s3_list_empty_size)
        c.put_object(Bucket=B, Key="meta/empty.bin", Body=b"")
        r = subprocess.run([STORETOOL, "list", "s3://%s/meta/" % B, "5"], capture_output=True, text=True, env=e)
        ok(r.returncode == 0 and r.stdout.splitlines()[1:] ==
           ["empty.bin\t0\t\"%s\"" % hashlib.md5(b"").hexdigest(), "obj.bin\t10\t\"%s\"" % hashlib.md5(b"0123456789").hexdigest()],
           "s3: a listing gives an empty object's size as 0 (boto3 wrote it)", r.stdout + r.stderr)
        r = subprocess.run([STORETOOL, "get", "s3://%s/meta/obj.bin" % B, "3", "4"], capture_output=True, env=e)
        ok(r.returncode == 0 and r.stdout == b"3456", "s3: a range GET gives those bytes", r.stdout + r.stderr)

        # -- writes through vd_put / vd_delete, read back with boto3
        def tool(*args, body=None):
            r = subprocess.run([STORETOOL] + list(args), input=body, capture_output=True, env=e)
            return r.returncode, r.stdout.decode(), r.stderr.decode()

        import botocore.exceptions
        W = "s3://%s/w/" % B
        body = bytes(range(256)) * 40
        rc, out, err = tool("put", W + "a.bin", "vdschunkmetadata=AQIDBAUGBwg=", "Mixed-Case=Value 1", body=body)
        h = c.head_object(Bucket=B, Key="w/a.bin")
        g = c.get_object(Bucket=B, Key="w/a.bin")["Body"].read()
        md5 = '"%s"' % hashlib.md5(body).hexdigest()
        ok(rc == 0 and out.strip() == md5 and g == body and h["Metadata"] == {"vdschunkmetadata": "AQIDBAUGBwg=", "mixed-case": "Value 1"}
           and h["ContentType"] == "application/octet-stream" and err.strip().endswith("requests 1"),
           "s3: a put (signed body hash, Content-Type, metadata) reads back with boto3, ETag = MD5, one request",
           "%s %s %s %s" % (rc, out, err, h.get("Metadata")))
        rc, out, err = tool("put", W + "a.bin", "--if-none-match", body=b"other")
        ok(rc == 10 + VD_PRECONDITION and "error: %sa.bin: HTTP 412 Precondition Failed (PreconditionFailed)" % W in err
           and c.get_object(Bucket=B, Key="w/a.bin")["Body"].read() == body,
           "s3: a create-only put over an existing object: VD_PRECONDITION, nothing written", "%s %s" % (rc, err))
        rc, out, err = tool("put", W + "a.bin", "--if-match", '"%s"' % ("0" * 32), body=b"other")
        ok(rc == 10 + VD_PRECONDITION and c.get_object(Bucket=B, Key="w/a.bin")["Body"].read() == body,
           "s3: a put If-Match a stale ETag: VD_PRECONDITION, nothing written", "%s %s" % (rc, err))
        etag = c.head_object(Bucket=B, Key="w/a.bin")["ETag"]  # quoted, as HEAD gives it
        rc, out, err = tool("put", W + "a.bin", "--if-match", etag, "vdschunkmetadata=AAAAAAAAAAA=", body=b"second")
        h = c.head_object(Bucket=B, Key="w/a.bin")
        ok(rc == 0 and out.strip() == '"%s"' % hashlib.md5(b"second").hexdigest() and h["Metadata"] == {"vdschunkmetadata": "AAAAAAAAAAA="},
           "s3: a put If-Match the current (quoted) ETag is sent unquoted, as radosgw wants: replaced, metadata too",
           "%s %s %s" % (rc, out, err))
        rc, out, err = tool("put", W + "odd+k%20y=.bin", body=b"odd")
        ok(rc == 0 and c.get_object(Bucket=B, Key="w/odd+k y=.bin")["Body"].read() == b"odd",
           "s3: a put to a key with '+', space and '=' lands on that key (boto3 reads it)", err)
        rc, out, err = tool("put", W + "b.bin", "a=1", "a1=2", body=b"x")
        ok(rc == 10 + VD_INVALID and err.startswith("error: %sb.bin: metadata names 'a' and 'a1' together are signed in the wrong order"
                                                    " by this libcurl (before 8.10); rename one" % W) and err.strip().endswith("requests 0"),
           "s3: metadata names 'a' and 'a1' (curl 7.88 signs them wrongly): refused before any request", err)
        rc2, out2, err2 = tool("put", W + "b.bin", "k=a\r\nx-amz-meta-evil: 1", body=b"x")
        ok(rc2 == 10 + VD_INVALID and "metadata 'k': S3 takes printable ASCII values" in err2,
           "s3: a metadata value with a newline is refused (no header injection)", err2)
        rc, out, err = tool("del", W + "a.bin")
        try:
            c.head_object(Bucket=B, Key="w/a.bin")
            gone = False
        except botocore.exceptions.ClientError as ex:
            gone = ex.response["ResponseMetadata"]["HTTPStatusCode"] == 404
        rc2, out2, err2 = tool("del", W + "a.bin")
        ok(rc == 0 and gone and rc2 == 0, "s3: delete removes the object (boto3: 404); deleting it again is no error", err + err2)
        rc, out, err = tool("del", "s3://vdsql-no-such-bucket/a")
        ok(rc == 10 + VD_NOTFOUND and "error: s3://vdsql-no-such-bucket/a: HTTP 404 Not Found (NoSuchBucket)" in err,
           "s3: a delete in a missing bucket is an error (NoSuchBucket)", err)

        # -- errors, word for word, and no secret anywhere
        sec = srv.secret
        wrong = sec[:-1] + ("A" if sec[-1] != "A" else "B")
        cases = [
            ("a wrong secret", dict(env, AWS_SECRET_ACCESS_KEY=wrong), vds,
             "Runtime error near line 2: %s/VolumeDataLayout: HTTP 403 Forbidden (SignatureDoesNotMatch)" % vds),
            ("an unknown access key", dict(env, AWS_ACCESS_KEY_ID="VDSQLNOSUCHKEY000000"), vds,
             "Runtime error near line 2: %s/VolumeDataLayout: HTTP 403 Forbidden (InvalidAccessKeyId)" % vds),
            ("a missing object", env, S + "nothing",
             "Runtime error near line 2: %snothing: not an OpenVDS dataset: %snothing/VolumeDataLayout: HTTP 404 Not Found (NoSuchKey)" % (S, S)),
            ("a missing bucket", env, "s3://vdsql-no-such-bucket/survey",
             "Runtime error near line 2: s3://vdsql-no-such-bucket/survey: not an OpenVDS dataset: "
             "s3://vdsql-no-such-bucket/survey/VolumeDataLayout: HTTP 404 Not Found (NoSuchBucket)"),
        ]
        for name, ev, url, want in cases:
            # VolumeDataLayout and LayerStatus are asked for together: 2 requests, no retry
            out, err, rc = run("SELECT count(*) FROM vds_layers(%s);\n%s" % (q(url), STATS), ev)
            ok(rc != 0 and err.strip() == want and out[-1:] == ["stats|2"],
               "s3: %s: %s (2 requests, none retried)" % (name, want.split(": ", 1)[1]), "%r %s" % (err, out))
            ok(sec not in out and sec not in err and wrong not in err, "s3: %s: no secret in any output" % name)
        # userinfo in an s3:// URL is no bucket name: refused before any request, never shown
        out, err, rc = run("SELECT count(*) FROM vds_layers('s3://AKIDX:s3cretvalue@%s/ds/survey');\n%s" % (B, STATS), env)
        ok(rc != 0 and "s3://%s/ds/survey/VolumeDataLayout: not an s3://bucket/key URL (a bucket name is letters, digits, "
           "'.', '-' and '_')" % B in err and "s3cretvalue" not in err + "".join(out) and out[-1:] == ["stats|0"],
           "s3: user:password@ in an s3:// URL is refused before any request, and not shown", "%s %s" % (err, out))
        # a listing's error names the listed URL
        r = subprocess.run([STORETOOL, "list", "s3://vdsql-no-such-bucket/x/", "5"], capture_output=True, text=True, env=e)
        ok(r.returncode == 10 + VD_NOTFOUND and "error: s3://vdsql-no-such-bucket/x/: listing: HTTP 404 Not Found (NoSuchBucket)" in r.stderr,
           "s3: a listing of a missing bucket names the listed URL and NoSuchBucket", r.stderr)

        # -- per-connection settings, without any AWS_* in the environment
        setup = "".join("SELECT vdsql_config('%s', %s);\n" % (k, q(v)) for k, v in
                        (("s3_endpoint", srv.endpoint), ("s3_region", srv.region), ("s3_access_key_id", srv.key),
                         ("s3_secret_access_key", sec), ("s3_session_token", "")))
        out, err, rc = run(setup + "SELECT count(*) FROM vds_layers(%s);\nSELECT vdsql_config('s3_secret_access_key');\n"
                           "SELECT key, value FROM vdsql_config() WHERE key LIKE 's3_%%' ORDER BY key;\n" % q(vds), {})
        nl = len(run("SELECT * FROM vds_layers(%s);" % q(loc), {})[0])
        ok(rc == 0 and not err and out[5] == str(nl), "s3: vdsql_config's s3_* keys alone reach the bucket (%d layers)" % nl,
           "%s %s" % (out, err))
        ok(out[3] == "(set)" and out[6] == "(set)" and sec not in "\n".join(out) + err,
           "s3: vdsql_config never shows the secret back: '(set)'", out)
        ok("s3_access_key_id|" + srv.key in out and "s3_endpoint|" + srv.endpoint in out and "s3_secret_access_key|(set)" in out
           and "s3_session_token|" in out, "s3: vdsql_config() lists the s3_* keys, the secret as (set)", out)
        # a settings-only secret that is wrong: the same error wording
        out, err, rc = run(setup.replace(q(sec), q(wrong)) + "SELECT count(*) FROM vds_layers(%s);\n" % q(vds), {})
        ok(rc != 0 and "HTTP 403 Forbidden (SignatureDoesNotMatch)" in err and sec not in err and wrong not in err,
           "s3: a wrong s3_secret_access_key: SignatureDoesNotMatch, no secret shown", err)
        # opening a database and loading vdsql reaches nothing: the endpoint is not even read
        out, err, rc = run("SELECT vdsql_version() IS NOT NULL;\n" + STATS, dict(env, AWS_ENDPOINT_URL="http://127.0.0.1:1"))
        ok(rc == 0 and out == ["1", "stats|0"], "s3: loading vdsql makes no request (settings are read at use)", out + [err])
    return plan()


sys.exit(main())
