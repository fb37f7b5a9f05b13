#!/usr/bin/python3
"""Builds LINDI datasets broken on purpose, for vdsql_check (docs/check.md#lindi), and
prints the record of what it broke as JSON, in tests/gen/mkbroken.py's schema: per
dataset {name, format, error, faults: [{part, item, verdict, audit}], outside}, plus "ext" (the
files external refs point at, under DIR/ext/, and the base URL they are named by).
Archives are written with tests/gen/mklindi.py's Archive (from shared/spec/lindi.md,
stdlib only); every fault is planted here by hand, never by asking vdsql.

  mkbroken_lindi.py catalog DIR [EXTBASE]

EXTBASE is what the template {{ext}} of every lindi.json expands to: where DIR/ext/ is
served (the suite's nginx, http://127.0.0.1:PORT/ext); by default DIR/ext as a path.

Datasets, each in both forms where the fault exists in both:
  clean.lindi.tar / clean.lindi.json   no fault (a raw Zarr array whole, an external ref)
  index.lindi.tar     the index against the tar headers: a member listed but absent
                      (missing), one listed with another size and one with another
                      header offset (mismatch), a header not listed (orphan)
  refs.lindi.tar      internal refs to a member not listed (missing), outside their
                      member (short), past the archive's end (missing: the index lists the
                      member there, itself missing); external refs whose object is gone
                      (missing) or shorter than offset + size (short)
  refs.lindi.json     the same external faults, and a ./name ref (a file next to the
                      .lindi.json) that names nothing (missing)
  zarr.lindi.tar / zarr.lindi.json   absent chunk keys ('.' and '/' separators; an
                      array with none of its 100 chunks: 10 rows, the cap), raw chunks of
                      another size (mismatch; a compressed one is not judged),
                      .zarray / .zattrs / .zgroup that do not parse or lack dtype
                      (malformed)
"""
import base64
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mklindi  # noqa: E402

CAP = 10  # rows of absent chunk keys per array (check_lindi.h LC_MISSING_CAP, docs/check.md)
RAW = {"compressor": None, "filters": None, "fill_value": 0, "order": "C", "zarr_format": 2}


def zarray(shape, chunks, dtype="<i4", **kw):
    return dict(RAW, shape=shape, chunks=chunks, dtype=dtype, **kw)


def b64(n, byte=1):
    return "base64:" + base64.b64encode(bytes([byte]) * n).decode()


def write_json(path, refs, ext):
    with open(path, "w") as f:
        json.dump({"refs": refs, "templates": {"ext": ext}}, f, indent=2, sort_keys=True)


def archive(path, members, refs, ext, edit=None):
    a = mklindi.Archive(path)
    for name, data in members:
        a.append(name, data)
    a.write_refs({"refs": refs, "templates": {"ext": ext}})
    if edit:
        edit(a)
    a.close()
    return a


def missing_rows(folder, keys):
    return [(folder, folder + "/" + k, "missing") for k in keys]


def build_catalog(d, ext):
    os.makedirs(os.path.join(d, "ext"), exist_ok=True)
    with open(os.path.join(d, "ext", "data.bin"), "wb") as f:
        f.write(bytes(range(250)) * 4)                     # 1000 bytes
    with open(os.path.join(d, "ext", "other.bin"), "wb") as f:
        f.write(b"o" * 64)
    rec = {"datasets": [], "missing": [], "ext": {"base": ext, "files": ["ext/data.bin", "ext/other.bin"]}}

    def add(name, faults=(), outside=False):
        # outside: its refs name DIR/ext/ through EXTBASE, which a copy elsewhere cannot take along
        rec["datasets"].append({"name": name, "format": "lindi", "error": False,
                                "faults": [{"part": p, "item": i, "verdict": v, "audit": None} for p, i, v in faults],
                                "outside": [ext + "/data.bin", ext + "/other.bin"] if outside else []})

    # clean: a raw array whole (one chunk a member, one inline), metadata, external refs
    clean = {".zgroup": {"zarr_format": 2}, "a/.zarray": zarray([20], [10]), "a/.zattrs": {"units": "mV"},
             "a/0": ["./blobs/a/0", 0, 40], "a/1": b64(40), "e/0": ["{{ext}}/data.bin", 0, 100],
             "e/1": ["{{ext}}/data.bin", 900, 100], "e/2": ["{{ext}}/other.bin", 0, 64], "text": "hello"}
    archive(os.path.join(d, "clean.lindi.tar"), [("blobs/a/0", b"\x02" * 40)], clean, ext)
    add("clean.lindi.tar", outside=True)
    clean_json = dict(clean, **{"a/0": b64(40, 2)})
    write_json(os.path.join(d, "clean.lindi.json"), clean_json, ext)
    add("clean.lindi.json", outside=True)

    # the index against the tar headers
    def index_faults(a):
        pad = a.find("blobs/pad")
        a.files.append({"n": "ghost/0", "o": pad["d"], "d": pad["d"] + 512, "s": 10})   # no header of that name
        a.find("blobs/size")["s"] += 100                                                # another size
        moved = a.find("blobs/moved")
        moved["o"] += 512                                                               # another header offset
        moved["d"] += 512
        a.files.remove(a.find("stray.bin"))                                             # a header not listed
    archive(os.path.join(d, "index.lindi.tar"),
            [("blobs/pad", b"p" * 2048), ("blobs/size", b"s" * 100), ("blobs/moved", b"m" * 1024),
             ("stray.bin", b"x" * 10)],
            {".zgroup": {"zarr_format": 2}}, ext, index_faults)
    add("index.lindi.tar", [("ghost/0", None, "missing"), ("blobs/size", None, "mismatch"),
                            ("blobs/moved", None, "mismatch"), ("stray.bin", None, "orphan")])

    # refs, the tar form
    ext_refs = {"x/gone": ["{{ext}}/gone.bin", 0, 10], "x/short": ["{{ext}}/data.bin", 990, 20],
                "x/ok": ["{{ext}}/data.bin", 10, 20], "x/ok2": ["{{ext}}/other.bin", 0, 64],
                "x/short2": ["{{ext}}/other.bin", 60, 5]}
    ext_faults = [("x", "x/gone", "missing"), ("x", "x/short", "short"), ("x", "x/short2", "short")]

    def late(a):
        a.files.append({"n": "late/0", "o": a.end + 4096, "d": a.end + 4608, "s": 10})  # past the archive's end
    refs = dict(ext_refs, **{"r/absent": ["./nothere", 0, 4], "r/outside": ["./blobs/r", 30, 20],
                             "r/inside": ["./blobs/r", 10, 30], "r/late": ["./late/0", 0, 10]})
    archive(os.path.join(d, "refs.lindi.tar"), [("blobs/r", b"r" * 40)], refs, ext, late)
    add("refs.lindi.tar", ext_faults + [("r", "r/absent", "missing"), ("r", "r/outside", "short"),
                                        ("r", "r/late", "missing"), ("late/0", None, "missing")], outside=True)
    refs_json = dict(ext_refs, **{"r/near": ["./nofile.bin", 0, 4]})
    write_json(os.path.join(d, "refs.lindi.json"), refs_json, ext)
    add("refs.lindi.json", ext_faults + [("r", "r/near", "missing")], outside=True)

    # Zarr
    z = {".zgroup": {"zarr_format": 2},
         # 5 chunks, 2 given: 1, 3, 4 absent
         "m/.zarray": zarray([50], [10]), "m/0": b64(40), "m/2": b64(40),
         # 100 chunks, none given: the first CAP listed
         "big/.zarray": zarray([1000], [10], compressor={"id": "zlib", "level": 1}),
         # 2-D, '/' separator, 2 x 2 chunks, (0,0) and (1,1) given; edge chunks are whole
         "n2/.zarray": zarray([4, 3], [2, 2], dtype="|u1", dimension_separator="/"),
         "n2/0/0": b64(4), "n2/1/1": b64(4),
         # raw chunks of another size: inline and a ref; a compressed one is not judged
         "u/.zarray": zarray([20], [10], dtype="<f8"), "u/0": b64(80), "u/1": b64(72),
         "c/.zarray": zarray([10], [10], compressor={"id": "zlib", "level": 1}), "c/0": b64(7),
         # metadata that does not parse, or lacks what a .zarray must say
         "bad/.zarray": "{\"shape\": [", "nodt/.zarray": {"shape": [4], "chunks": [2], "compressor": None},
         "bad/.zattrs": "[1,", "g/.zgroup": "nope", "ok/.zattrs": "{\"a\": 1}"}
    zf = (missing_rows("m", ["1", "3", "4"]) + missing_rows("big", [str(i) for i in range(CAP)]) +
          missing_rows("n2", ["0/1", "1/0"]) +
          [("u", "u/1", "mismatch"), ("bad", "bad/.zarray", "malformed"), ("nodt", "nodt/.zarray", "malformed"),
           ("bad", "bad/.zattrs", "malformed"), ("g", "g/.zgroup", "malformed")])
    zt = dict(z, **{"u/1": ["./blobs/u1", 0, 72]})
    archive(os.path.join(d, "zarr.lindi.tar"), [("blobs/u1", b"u" * 72)], zt, ext)
    add("zarr.lindi.tar", zf)
    write_json(os.path.join(d, "zarr.lindi.json"), z, ext)
    add("zarr.lindi.json", zf)
    rec["cap"] = CAP
    rec["big_absent"] = 100
    return rec


def main(argv):
    if len(argv) >= 3 and argv[1] == "catalog":
        ext = argv[3] if len(argv) >= 4 else os.path.join(argv[2], "ext")
        json.dump(build_catalog(argv[2], ext), sys.stdout, sort_keys=True)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
