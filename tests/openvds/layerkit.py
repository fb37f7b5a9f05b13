"""What the OpenVDS reliability suites (reliability.t, fencing.t) share: one 2-D RLE layer
of 1 KiB chunks over two pages, seen by an independent reader (State: every page entry
against its object's vdschunkmetadata, each object decoded here, the LayerStatus counts
against what the pages and objects add up to), and sqlite3 writers run in the background."""
import base64
import json
import os
import struct
import subprocess

import mkvds
from taplib import ok, shell_args
from vdstarget import AWS_VARS, decode_object, q, write_blob

L = "Dimensions_01LOD0"
CHUNK = 1024            # 32 x 32 U8 samples
NCHUNKS = 40 * 30       # two pages of 1024 entries


def layout():
    return mkvds.Layout([32 * 40, 32 * 30], brick=32, neg=0, pos=0, mult2d=1,
                        channels=[mkvds.channel("Amplitude", "U8")])


def data(rng):
    """1 KiB that is no constant chunk (so it always has an object)."""
    b = bytearray(rng.randbytes(CHUNK))
    b[0], b[1] = 1, 2
    return bytes(b)


class State:
    """The layer as an independent reader sees it."""

    def __init__(self, t, name):
        self.t = t
        st = json.loads(t.get(name, "LayerStatus")[0])
        self.status = [x for x in st if x["layerName"] == L][0]
        self.entries, self.data, self.bad, self.sizes = {}, {}, [], {}
        ps = self.status["chunkMetadataPageSize"]
        for p, stored in enumerate(self.status["pageDirectory"]):
            if stored < 0:
                continue
            body, _ = t.get(name, "%s/ChunkMetadata/%d" % (L, stored))
            for i in range(len(body) // 8):
                (h,) = struct.unpack_from("<Q", body, i * 8)
                if h:
                    self.entries[p * ps + i] = h
        for c, h in self.entries.items():
            if h == 2 ** 64 - 1 or h >> 32 == 0x01010101:
                self.data[c] = ("constant", h)
                continue
            body, meta = t.get(name, "%s/%d" % (L, c))
            m = (meta or {}).get("vdschunkmetadata")
            if body is None or m is None or base64.b64decode(m) != struct.pack("<Q", h):
                self.bad.append(c)
                continue
            self.sizes[c] = len(body)
            self.data[c] = decode_object(body, "RLE")[1]

    def counts_ok(self):
        nd = sum(1 for v in self.data.values() if isinstance(v, bytes))
        want = (len(self.entries), sum(self.sizes.values()), nd * CHUNK)
        have = (self.status["validChunkCount"], self.status["serializedSize"], self.status["uncompressedSize"])
        return want == have, (want, have)


def staging(t, name):
    """Staged objects, and temporary files of puts that a kill interrupted (local)."""
    return [k for k in t.keys(name) if (k.startswith(".vdsql/") and not k.endswith("/commit")) or "/.vdsql-put-" in k
            or k.startswith(".vdsql-put-")]


def insert_script(url, rows, mode="OR REPLACE", files=None, marker=None, end="COMMIT;"):
    s = "CREATE VIRTUAL TABLE t USING vds_chunks(%s, %s);\nBEGIN;\n" % (q(url), q(L))
    s += "".join("INSERT %s INTO t(chunk, data) VALUES (%d, readfile(%s));\n" % (mode, c, q(files[c])) for c in rows)
    if marker:
        s += "SELECT writefile(%s, 'x');\n" % q(marker)
    return s + end + "\n"


def popen(t, script, prefix=(), env=None):
    """The sqlite3 shell running script in the background; prefix: a command it runs
    under (unshare ...); env: more variables."""
    e = {k: v for k, v in os.environ.items() if k not in AWS_VARS}
    e.update(t.env)
    e.update(env or {})
    p = subprocess.Popen(list(prefix) + shell_args(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=e)
    p.stdin.write(".mode list\n" + script)
    p.stdin.close()
    return p


def read_chunks(t, url, chunks):
    """{chunk: bytes or the error text} through vds_chunk_data."""
    s = "".join("SELECT 'c', %d;\nSELECT hex(vds_chunk_data(%s, %s, %d));\n" % (c, q(url), q(L), c) for c in chunks)
    e = {k: v for k, v in os.environ.items() if k not in AWS_VARS}
    e.update(t.env)
    p = subprocess.run(shell_args(), input=".mode list\n" + s, text=True, capture_output=True, env=e)
    out, cur = {}, None
    for line in p.stdout.split("\n"):
        if line.startswith("c|"):
            cur = int(line[2:])
        elif cur is not None and line:
            out[cur] = bytes.fromhex(line)
    errs = [x for x in p.stderr.split("\n") if x]
    for c in chunks:
        if c not in out:
            out[c] = "; ".join(x for x in errs if "chunk %d" % c in x or "%s/%d" % (L, c) in x) or "no answer"
    return out


def files_of(tmp, blobs):
    return {c: write_blob(tmp, b) for c, b in blobs.items()}


def check(t, name, committed, what):
    """The layer equals committed ({chunk: bytes}) and is self-consistent; returns State."""
    s = State(t, name)
    ok(not s.bad, "%s: every page entry agrees with its object's vdschunkmetadata" % what, s.bad[:8])
    wrong = [c for c in set(committed) | set(s.data) if s.data.get(c) != committed.get(c)]
    ok(not wrong, "%s: every chunk holds what was committed (%d chunks)" % (what, len(committed)), sorted(wrong)[:8])
    good, d = s.counts_ok()
    ok(good, "%s: LayerStatus counts equal the pages and objects (valid, serialized, uncompressed)" % what, d)
    return s
