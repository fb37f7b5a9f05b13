#!/usr/bin/env python3
"""Builds LINDI tar archives (.lindi.tar) for vdsql's tests, written from
shared/spec/lindi.md alone (stdlib only, no lindi code): lindi's header format, the
entry / index / lindi.json members with space padding, appends that move the two zero
blocks, trash (dashes + .trash/ rename + checksum) and the index trash-and-re-append
with the growth rule when it outgrows its padding.

  mklindi.py tests DIR     the archives the SQL tests use
  mklindi.py many N FILE   an archive of N small members (benchmarks)
"""
import base64
import json
import os
import random
import sys

BLOCK = 512


def header(name, size):
    b = bytearray(BLOCK)
    nb = name.encode()
    assert len(nb) <= 100
    b[0:len(nb)] = nb
    b[100:108] = b"0000644\0"
    b[108:116] = b"0000000\0"
    b[116:124] = b"0000000\0"
    b[124:136] = b"%011o\0" % size
    b[136:148] = b"00000000000\0"
    b[156:157] = b"0"
    b[257:263] = b"ustar\0"
    b[263:265] = b"00"
    seal(b)
    return bytes(b)


def seal(b):
    b[148:156] = b" " * 8
    s = sum(b)
    b[148:156] = b"%06o\0 " % s


def padded(n):
    return (n + BLOCK - 1) // BLOCK * BLOCK


def grow(text_len):
    s = 8192
    while s < 4 * text_len:
        s *= 2
    return s


def dumps(obj):
    return json.dumps(obj, indent=2, sort_keys=True)


class Archive:
    def __init__(self, path):
        self.path = path
        self.files = []          # index entries in order: dicts n, o, d, s
        self.rng = random.Random(5)
        self.f = open(path, "w+b")
        self.end = 0             # where the two zero blocks start
        self.append(".tar_entry.json", b" " * 1024)
        self.append(".tar_index.json", b" " * 8192)
        self.refs = {"refs": {}}
        self.append("lindi.json", self.pad(dumps(self.refs), 8192))
        self.write_index()

    def pad(self, text, size):
        return text.encode() + b" " * (size - len(text))

    def append(self, name, data):
        o = self.end
        self.f.seek(o)
        self.f.write(header(name, len(data)) + data + b"\0" * (padded(len(data)) - len(data)) + b"\0" * 1024)
        self.end = o + BLOCK + padded(len(data))
        self.files.append({"n": name, "o": o, "d": o + BLOCK, "s": len(data)})
        return self.files[-1]

    def find(self, name):
        return next(f for f in self.files if f["n"] == name)

    def trash(self, name):
        e = self.find(name)
        self.f.seek(e["d"])
        self.f.write(b"-" * e["s"])
        self.f.seek(e["o"])
        h = bytearray(self.f.read(BLOCK))
        new = ".trash/%s.%s" % (name, "".join(self.rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(10)))
        h[0:100] = new.encode().ljust(100, b"\0")
        h[345:500] = b"\0" * 155
        seal(h)
        self.f.seek(e["o"])
        self.f.write(bytes(h))
        self.files.remove(e)

    def write_index(self):
        text = dumps({"files": self.files})
        ix = self.find(".tar_index.json")
        if len(text) <= ix["s"]:
            self.f.seek(ix["d"])
            self.f.write(self.pad(text, ix["s"]))
        else:
            self.trash(".tar_index.json")
            size = grow(len(dumps({"files": self.files})))
            ix = self.append(".tar_index.json", b" " * size)
            self.f.seek(ix["d"])
            self.f.write(self.pad(dumps({"files": self.files}), size))
        entry = dumps({"index": {"n": ix["n"], "o": ix["o"], "d": ix["d"], "s": ix["s"]}})
        self.f.seek(512)
        self.f.write(self.pad(entry, 1024))

    def write_refs(self, rfs):
        text = dumps(rfs)
        lj = self.find("lindi.json")
        if len(text) <= lj["s"]:
            self.f.seek(lj["d"])
            self.f.write(self.pad(text, lj["s"]))
        else:
            self.trash("lindi.json")
            self.append("lindi.json", self.pad(text, grow(len(text))))

    def close(self):
        self.write_index()
        self.f.close()


SMALL_RFS = {"refs": {
    ".zgroup": {"zarr_format": 2},
    "group1/temps/.zarray": {"chunks": [1000], "dtype": "<i2", "shape": [1000]},
    "group1/temps/0": ["./blobs/group1/temps/0", 0, 2048],
    "group1/h5/0": ["{{u1}}", 8, 3000],
    "external/0": ["https://example.org/data.h5", 100, 50],
    "inline/text": "hello",
    "inline/b64": "base64:" + base64.b64encode(b"\x00\xff\x10").decode(),
}, "templates": {"u1": "./sample.h5"}}

ARR = (1, 2, 0, 127, 31, 0x7f00)   # the int32 values of the arrays of escapes.lindi.tar
BLOSC = (1, 2, 0, 127, 31, 5)

# The bytes of the inline refs of escapes.lindi.tar (tests/lindi/refs.t checks vdsql's
# values against them): chunks as lindi meets them, a blosc-like header and zero-padded
# ints (the bytes that made lindi_refs cut values at their first NUL), and every escape
# Python's json writes.
ESCAPE_VALUES = {
    "nul/header": bytes([2, 1, 0x21, 1, 22, 0, 0, 0, 22, 0, 0, 0, 6, 0, 0, 0, 0, 1, 2, 3, 4, 5]),
    "nul/only": b"\0",
    "nul/lead": b"\0\0abc",
    "nul/trail": b"abc\0",
    "esc/quote": b'say "hi" \\ back\\',
    "esc/control": b"line\nnext\ttab\r\x1f\x08\x0c\x7f\x01",
    "esc/slash": b"a/b</c>",
    "text/plain": b"hello",
    "text/empty": b"",
    "utf8/accents": "\u00e9t\u00e9 \u2603 \U0001f600".encode(),   # not ASCII: lindi stores it as base64
    "bin/all": bytes(range(256)),
    "arr/0": b"".join(v.to_bytes(4, "little", signed=True) for v in ARR),
    # numcodecs.Blosc("lz4", 5, shuffle=1).encode(numpy.array(BLOSC, "<i4")): a blosc
    # chunk whose bytes are all below 0x80, as in the FLUENT case that showed the bug
    "blosc/0": bytes.fromhex("020133041800000018000000280000000100000002000000000000007f0000001f00000005000000"),
}


def lindi_inline(b):
    """How lindi stores inline bytes (LindiReferenceFileSystemStore.__setitem__)."""
    if b.startswith(b"base64:"):
        return "base64:" + base64.b64encode(b).decode("ascii")
    try:
        return b.decode("ascii")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(b).decode("ascii")


def escapes_rfs():
    refs = {k: lindi_inline(v) for k, v in ESCAPE_VALUES.items()}
    refs[".zgroup"] = {"zarr_format": 2}
    refs["arr/.zarray"] = {"chunks": [6], "compressor": None, "dtype": "<i4", "fill_value": 0, "filters": None,
                           "order": "C", "shape": [6], "zarr_format": 2}
    refs["blosc/.zarray"] = {"chunks": [6], "compressor": {"blocksize": 0, "clevel": 5, "cname": "lz4", "id": "blosc",
                                                         "shuffle": 1},
                             "dtype": "<i4", "fill_value": 0, "filters": None, "order": "C", "shape": [6],
                             "zarr_format": 2}
    # JSON values keep their literals too: a NUL in a string, floats Python writes as 1.0
    refs["arr/.zattrs"] = {"note": "a\0b\u00e9", "scale": 1.0, "offset": 0.1, "big": 1e300, "tiny": 5e-324}
    refs["ref/accent"] = ["./blobs/e", 0, 2]
    refs["ref/\u00e9t\u00e9"] = ["./blobs/e", 2, 3]
    return {"refs": refs, "version": 1}


def build_tests(d):
    os.makedirs(d, exist_ok=True)
    # small: a few members and refs of every kind, index near the start
    a = Archive(os.path.join(d, "small.lindi.tar"))
    a.append("blobs/group1/temps/0", bytes(range(256)) * 8)
    a.append("blobs/data/0.0", b"x" * 1000)
    a.append("sample.h5", b"\x89HDF\r\n\x1a\n" + b"\0" * 3000)
    a.write_refs(SMALL_RFS)
    a.close()
    # many: 200 members: the index outgrows 8 KiB and is trashed and re-appended;
    # lindi.json is rewritten twice, the second time too big for its padding
    a = Archive(os.path.join(d, "many.lindi.tar"))
    for i in range(200):
        a.append("blobs/x/%d" % i, (b"%04d" % i) * (i % 7 + 1))
    a.write_refs({"refs": {"a": "1"}})
    a.write_refs({"refs": {"k%d" % i: ["./blobs/x/%d" % i, 0, 4] for i in range(200)}})
    a.close()
    # LINDI's JSON form: small's lindi.json as a standalone file, written as lindi writes
    # one (LindiH5pyFile.write_lindi_file: json.dump, indent 2, sorted keys)
    with open(os.path.join(d, "small.lindi.json"), "w") as f:
        json.dump(SMALL_RFS, f, indent=2, sort_keys=True)
    # inline values whose JSON strings hold escapes, \u0000 above all (lindi stores bytes
    # all below 0x80 as a string), a zarr array whose one chunk is such a string
    a = Archive(os.path.join(d, "escapes.lindi.tar"))
    a.append("blobs/e", "\u00e9t\u00e9".encode())
    a.write_refs(escapes_rfs())
    a.close()
    with open(os.path.join(d, "escapes.lindi.json"), "w") as f:
        json.dump(escapes_rfs(), f, indent=2, sort_keys=True)
    # broken archives
    with open(os.path.join(d, "small.lindi.tar"), "rb") as f:
        good = f.read()
    open(os.path.join(d, "truncated.lindi.tar"), "wb").write(good[:5000])
    bad = bytearray(good)
    bad[512:600] = b'{"index": {"n": ".tar_index.json", "o": 1536' + b" " * 43
    open(os.path.join(d, "badentry.lindi.tar"), "wb").write(bytes(bad))
    bad = bytearray(good)
    bad[2048 + 30] = ord("#")
    open(os.path.join(d, "badindex.lindi.tar"), "wb").write(bytes(bad))
    bad = bytearray(good)
    bad[10240 + 124] = ord("7")   # lindi.json header size digit: checksum no longer matches
    open(os.path.join(d, "badchecksum.lindi.tar"), "wb").write(bytes(bad))
    open(os.path.join(d, "notar.lindi.tar"), "wb").write(b"neither a tar archive nor JSON\n")
    # the JSON form is told by its bytes, whatever the name says
    with open(os.path.join(d, "jsonform.lindi.tar"), "w") as f:
        json.dump({"refs": {"a": "1"}}, f, indent=2, sort_keys=True)
    build_hostile(d)
    # plain tar archives from Python's tarfile: GNU long names ('L') and pax headers
    import io
    import tarfile
    long = "deep/" + "n" * 120 + "/file.bin"
    for fmt, fname in ((tarfile.GNU_FORMAT, "gnu.tar"), (tarfile.PAX_FORMAT, "pax.tar")):
        with tarfile.open(os.path.join(d, fname), "w", format=fmt) as t:
            for name, data in (("short.txt", b"abc"), (long, b"x" * 700), ("dir/after.txt", b"")):
                ti = tarfile.TarInfo(name)
                ti.size, ti.mtime, ti.mode = len(data), 1700000000, 0o600
                t.addfile(ti, io.BytesIO(data))


def build_hostile(d):
    """Archives made to break readers; each must give an error naming the archive and
    the fault (tests/sqlite/hostile.sql), never hang, crash or allocate without bound."""
    # an index that lists a name twice (lindi's writer never does; a reader must refuse it
    # rather than pick one of the two)
    a = Archive(os.path.join(d, "dupindex.lindi.tar"))
    a.append("blobs/a", b"first")
    a.append("blobs/b", b"other")
    a.append("blobs/a", b"second")
    a.close()
    # refs whose offset or size is no integer from 0 to 2^53
    a = Archive(os.path.join(d, "badrefs.lindi.tar"))
    a.append("blobs/b", b"y" * 100)
    a.write_refs({"refs": {"good": ["./blobs/b", 10, 20], "huge_offset": ["./blobs/b", 1e300, 1],
                           "frac_size": ["./blobs/b", 0, 1.5], "neg_offset": ["./blobs/b", -1, 4],
                           "big_offset": ["./blobs/b", 2 ** 60, 4], "max_offset": ["https://example.org/x", 2 ** 53, 0],
                           "size_2p63": ["https://example.org/x", 0, 2 ** 63]}})
    a.close()
    # templates: one ref whose url expands to 2.1 MB (1000 bytes named 2100 times)
    a = Archive(os.path.join(d, "templates.lindi.tar"))
    a.append("blobs/t", b"z" * 64)
    a.write_refs({"refs": {"plain": ["{{m}}", 1, 2], "bomb": ["{{k}}" * 2100, 0, 1], "unknown": ["{{nope}}/x", 0, 1],
                           "twice": ["{{m}}{{m}}", 0, 1], "inline": "{{m}}"},
                  "templates": {"m": "./blobs/t", "k": "k" * 1000}})
    a.close()
    # lindi.json strings that cJSON takes but JSON does not (Python's json refuses both):
    # an escape with a bad hex digit (cJSON reads it as U+0000) and a raw NUL byte
    with open(os.path.join(d, "badescape.lindi.json"), "wb") as f:
        f.write(b'{\n  "refs": {\n    "a": "ok",\n    "b": "x\\u12g4y"\n  }\n}')
    with open(os.path.join(d, "rawnul.lindi.json"), "wb") as f:
        f.write(b'{\n  "refs": {\n    "a": "x\x00y\\n"\n  }\n}')
    # tar headers whose GNU base-256 size runs past the largest int64 offset: 2^63 - 1,
    # and 2^63 - 2048 (in range alone, but its end does not fit after the header at 1024)
    for fname, size in (("bigsize.tar", 2 ** 63 - 1), ("bigsize2.tar", 2 ** 63 - 2048)):
        h = bytearray(header("huge", 0))
        h[124:136] = b"\x80" + size.to_bytes(11, "big")
        seal(h)
        with open(os.path.join(d, fname), "wb") as f:
            f.write(header("a.txt", 5) + b"hello".ljust(BLOCK, b"\0") + bytes(h) + b"\0" * 2048)
    # a negative base-256 size (all ones: -1)
    h = bytearray(header("negative", 0))
    h[124:136] = b"\xff" * 12
    seal(h)
    with open(os.path.join(d, "negsize.tar"), "wb") as f:
        f.write(bytes(h) + b"\0" * 2048)


def build_many(n, path):
    a = Archive(path)
    for i in range(n):
        a.append("blobs/m/%d" % i, b"%08d" % i * 12)
    a.write_refs({"refs": {"m/%d" % i: ["./blobs/m/%d" % i, 0, 96] for i in range(n)}})
    a.close()


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "tests":
        build_tests(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "many":
        build_many(int(sys.argv[2]), sys.argv[3])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
