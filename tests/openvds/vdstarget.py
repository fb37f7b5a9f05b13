"""What the OpenVDS write tests (write.t, reliability.t, tests/store/faults.t) share: a
dataset's store seen through independent clients (Target: os and xattrs for files, boto3
for radosgw, tests/azclient.py for Azurite), the sqlite3 shell with the store's environment
(run), chunk objects decoded here from the spec (section 9: descriptor, RLE, zlib), and a
layer checked through those clients alone (LayerState, check_layer, staged)."""
import base64
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib

from taplib import shell_args

AWS_VARS = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
            "AWS_DEFAULT_REGION")


def q(s):
    return "'" + s.replace("'", "''") + "'"


class Target:
    """Where a dataset lives: url(name), the objects as bytes + metadata, the env."""

    def __init__(self, kind, tmp, srv=None):
        self.kind, self.tmp, self.srv = kind, tmp, srv
        self.env = {}
        if kind == "s3":
            import boto3
            import botocore.config
            self.env = {k: srv.env[k] for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                                 "AWS_REGION")}
            self.c = boto3.client("s3", endpoint_url=srv.endpoint, aws_access_key_id=srv.key,
                                  aws_secret_access_key=srv.secret, region_name=srv.region,
                                  config=botocore.config.Config(s3={"addressing_style": "path"}))
            self.bucket = srv.bucket
        if kind == "az":
            from azclient import Az
            self.env = {"AZURE_STORAGE_CONNECTION_STRING": srv.env["AZURE_STORAGE_CONNECTION_STRING"]}
            self.az = Az(srv)
            self.base = "/%s/%s/" % (srv.account, srv.container)

    def port(self):
        """The port of the server on 127.0.0.1 (s3, az)."""
        return int(re.search(r"127\.0\.0\.1:([0-9]+)", self.env.get("AWS_ENDPOINT_URL") or
                             self.env["AZURE_STORAGE_CONNECTION_STRING"]).group(1))

    def url(self, name):
        if self.kind == "az":
            return "az://%s/%s" % (self.srv.container, name)
        return os.path.join(self.tmp, "local", name) if self.kind == "file" else "s3://%s/%s" % (self.bucket, name)

    def get(self, name, key):
        """(bytes, {metadata}) or (None, None) when there is no such object."""
        if self.kind == "file":
            p = os.path.join(self.url(name), key)
            if not os.path.exists(p):
                return None, None
            meta = {a[5:]: os.getxattr(p, a).decode() for a in os.listxattr(p) if a.startswith("user.")}
            return open(p, "rb").read(), meta
        if self.kind == "az":
            import urllib.parse
            st, h, body = self.az("GET", self.base + urllib.parse.quote("%s/%s" % (name, key)))
            if st == 404:
                return None, None
            assert st == 200, (st, body[:300])
            return body, {k[10:]: v for k, v in h.items() if k.startswith("x-ms-meta-")}
        try:
            r = self.c.get_object(Bucket=self.bucket, Key="%s/%s" % (name, key))
        except self.c.exceptions.NoSuchKey:
            return None, None
        return r["Body"].read(), r["Metadata"]

    def keys(self, name):
        if self.kind == "file":
            root = self.url(name)
            out = []
            for d, _, fs in os.walk(root):
                out += [os.path.relpath(os.path.join(d, f), root) for f in fs]
            return sorted(out)
        if self.kind == "az":
            import xml.etree.ElementTree as ET
            out, marker = [], None
            while True:
                params = {"restype": "container", "comp": "list", "prefix": name + "/"}
                if marker:
                    params["marker"] = marker
                st, h, body = self.az("GET", self.base.rstrip("/"), params=params)
                assert st == 200, (st, body[:300])
                x = ET.fromstring(body)
                out += [b.findtext("Name")[len(name) + 1:] for b in x.iter("Blob")]
                marker = x.findtext("NextMarker")
                if not marker:
                    return sorted(out)
        out, tok = [], None
        while True:
            kw = {"Bucket": self.bucket, "Prefix": name + "/"}
            if tok:
                kw["ContinuationToken"] = tok
            r = self.c.list_objects_v2(**kw)
            out += [o["Key"][len(name) + 1:] for o in r.get("Contents", [])]
            tok = r.get("NextContinuationToken")
            if not tok:
                return sorted(out)

    def snapshot(self, name):
        return {k: self.get(name, k) for k in self.keys(name)}

    def put_raw(self, name, key, data, meta=None):
        """An object written here, not by vdsql (meta: its user metadata)."""
        meta = meta or {}
        if self.kind == "file":
            p = os.path.join(self.url(name), key)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            open(p, "wb").write(data)
            for k, v in meta.items():
                os.setxattr(p, "user." + k, v.encode())
        elif self.kind == "az":
            import urllib.parse
            h = {"x-ms-blob-type": "BlockBlob"}
            h.update({"x-ms-meta-" + k: v for k, v in meta.items()})
            st = self.az("PUT", self.base + urllib.parse.quote("%s/%s" % (name, key)), headers=h, body=data)[0]
            assert st == 201, st
        else:
            self.c.put_object(Bucket=self.bucket, Key="%s/%s" % (name, key), Body=data, Metadata=meta)


class Via:
    """A Target's kind and environment, with the store reached at 127.0.0.1:port (a relay
    in front of its server): what run() needs."""

    def __init__(self, t, port):
        self.kind, self.env = t.kind, dict(t.env)
        at = re.compile(r"127\.0\.0\.1:[0-9]+")
        for k in ("AWS_ENDPOINT_URL", "AZURE_STORAGE_CONNECTION_STRING"):
            if k in self.env:
                self.env[k] = at.sub("127.0.0.1:%d" % port, self.env[k])


def run(t, script, inp=None):
    e = {k: v for k, v in os.environ.items() if k not in AWS_VARS}
    e.update(t.env)
    p = subprocess.run(shell_args(), input=".mode list\n" + script, text=True, capture_output=True, env=e)
    return p.stdout.split("\n")[:-1], p.stderr, p.returncode


def status_of(t, name):
    body, _ = t.get(name, "LayerStatus")
    return json.loads(body)


def rle_decode(p, want):
    """Section 9 RLE, decoded here: header, then runs (bit 6 literal, bit 7 extended)."""
    csize, osize, unit = struct.unpack_from("<iii", p)
    assert osize == want and csize == len(p), (csize, osize, len(p))
    i, out = 12, bytearray()
    while len(out) < want:
        b0 = p[i]
        i += 1
        run = b0 & 0x3F
        if b0 & 0x80:
            run |= p[i] << 6
            i += 1
        run += 1
        if b0 & 0x40:
            out += p[i:i + run * unit]
            i += run * unit
        else:
            out += p[i:i + unit] * run
            i += unit
    return bytes(out)


def decode_object(body, method):
    dims, sx, sy, sz, fmt, comp = struct.unpack_from("<6i", body)
    pay = body[24:]
    if method == "Zip":
        raw = zlib.decompress(pay)
    elif method == "RLE":
        raw = rle_decode(pay, struct.unpack_from("<i", pay, 4)[0])
    else:
        raw = pay
    return (dims, sx, sy, sz, fmt, comp), raw


def write_blob(tmp, data):
    fd, p = tempfile.mkstemp(dir=tmp, suffix=".bin")
    os.write(fd, data)
    os.close(fd)
    return p


def each_store(tmp, fn, stores=("file", "s3", "az")):
    """fn(Target) on each store named: local files, radosgw and Azurite (each started here
    on 127.0.0.1, checked to have started). False when boto3 is missing (said as a failure)."""
    from taplib import Azurite, Radosgw, ok
    if "file" in stores:
        fn(Target("file", tmp))
    if "s3" in stores:
        try:
            import boto3  # noqa: F401
        except ImportError:
            ok(False, "boto3 for /usr/bin/python3 (Debian package python3-boto3)")
            return False
        with Radosgw() as srv:
            if ok(srv.started, "radosgw starts on 127.0.0.1", srv.error):
                fn(Target("s3", tmp, srv))
    if "az" in stores:
        with Azurite() as srv:
            if ok(srv.started, "azurite starts on 127.0.0.1", srv.error):
                fn(Target("az", tmp, srv))
    return True


def run_stores(prefix, fn, stores):
    """fn(t, tmp) on each store named, in a temporary folder removed afterwards; the TAP plan."""
    from taplib import plan
    tmp = tempfile.mkdtemp(prefix=prefix)
    try:
        each_store(tmp, lambda t: fn(t, tmp), stores)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


def chunk_data(rng, n):
    """n bytes that are no constant chunk (so they always have an object)."""
    b = bytearray(rng.randbytes(n))
    b[0], b[1] = 1, 2
    return bytes(b)


def chunks_script(url, layer, rows, mode="OR REPLACE", files=None, marker=None, end="COMMIT;"):
    """A transaction of INSERT <mode> of each chunk in rows, its bytes read from files[chunk]."""
    s = "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\nBEGIN;\n" % (q(url), q(layer))
    s += "".join("INSERT %s INTO t(chunk, data) VALUES (%d, readfile(%s));\n" % (mode, c, q(files[c])) for c in rows)
    if marker:
        s += "SELECT writefile(%s, 'x');\n" % q(marker)
    return s + end + "\n"


class LayerState:
    """A layer of a dataset of single-channel U8 chunks of chunk_bytes (objects compressed
    with method: RLE, or None), as an independent reader sees it: the LayerStatus entry (status), the page entries
    ({chunk: hash}), what each chunk holds ({chunk: bytes, or ("constant", hash)}), the
    chunks whose object disagrees with their entry (bad) and the objects' sizes."""

    def __init__(self, t, name, layer, chunk_bytes, method="RLE"):
        self.t, self.chunk_bytes = t, chunk_bytes
        st = json.loads(t.get(name, "LayerStatus")[0])
        self.status = [x for x in st if x["layerName"] == layer][0]
        self.entries, self.data, self.bad, self.sizes = {}, {}, [], {}
        ps = self.status["chunkMetadataPageSize"]
        for p, stored in enumerate(self.status["pageDirectory"]):
            if stored < 0:
                continue
            body, _ = t.get(name, "%s/ChunkMetadata/%d" % (layer, stored))
            for i in range(len(body) // 8):
                (h,) = struct.unpack_from("<Q", body, i * 8)
                if h:
                    self.entries[p * ps + i] = h
        for c, h in self.entries.items():
            if h == 2 ** 64 - 1 or h >> 32 == 0x01010101:
                self.data[c] = ("constant", h)
                continue
            body, meta = t.get(name, "%s/%d" % (layer, c))
            m = (meta or {}).get("vdschunkmetadata")
            if body is None or m is None or base64.b64decode(m) != struct.pack("<Q", h):
                self.bad.append(c)
                continue
            self.sizes[c] = len(body)
            self.data[c] = decode_object(body, method)[1]

    def counts_ok(self):
        nd = sum(1 for v in self.data.values() if isinstance(v, bytes))
        want = (len(self.entries), sum(self.sizes.values()), nd * self.chunk_bytes)
        have = (self.status["validChunkCount"], self.status["serializedSize"], self.status["uncompressedSize"])
        return want == have, (want, have)


def staged(t, name):
    """Staged objects, and temporary files of puts that a kill interrupted (local)."""
    return [k for k in t.keys(name) if (k.startswith(".vdsql/") and not k.endswith("/commit")) or "/.vdsql-put-" in k
            or k.startswith(".vdsql-put-")]


def leftovers(t, name, layer, chunk_bytes):
    """Objects at chunk keys that no entry names: what a transaction put at a key (plain
    INSERT of a new chunk) and never committed; a constant's key holds at most an empty one."""
    s = LayerState(t, name, layer, chunk_bytes)
    out = []
    for k in t.keys(name):
        if not k.startswith(layer + "/") or "/ChunkMetadata/" in k:
            continue
        c = int(k[len(layer) + 1:])
        if c not in s.entries or (isinstance(s.data.get(c), tuple) and t.get(name, k)[0]):
            out.append(k)
    return out


def check_layer(t, name, layer, chunk_bytes, committed, what, method="RLE"):
    """The layer equals committed ({chunk: bytes}) and is self-consistent, as TAP; returns
    its LayerState."""
    from taplib import ok
    s = LayerState(t, name, layer, chunk_bytes, method)
    ok(not s.bad, "%s: every page entry agrees with its object's vdschunkmetadata" % what, s.bad[:8])
    wrong = [c for c in set(committed) | set(s.data) if s.data.get(c) != committed.get(c)]
    ok(not wrong, "%s: every chunk holds what was committed (%d chunks)" % (what, len(committed)), sorted(wrong)[:8])
    good, d = s.counts_ok()
    ok(good, "%s: LayerStatus counts equal the pages and objects (valid, serialized, uncompressed)" % what, d)
    return s
