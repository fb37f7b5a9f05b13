#!/usr/bin/python3
"""Builds a catalog of datasets broken on purpose, for vdsql_datasets and vdsql_check
(docs/check.md), and prints the record of what it broke, as JSON. Every fault is made
here by hand, from shared/spec/openvds.md and the formats' own definitions, never by
asking vdsql: the record says, per dataset, its format, whether vdsql_datasets can
recognise it, and each problem row vdsql_check must give (part, item, verdict, and for
OpenVDS the vds_audit verdict its detail starts with).

  mkbroken.py catalog DIR    the catalog under DIR (needs h5py for its VTKHDF files)

The record, the same for every tests/gen/mkbroken*.py (tests/gen/mkbucket.py reads them
all): {"datasets": [entry, ...], ...} where an entry is
  name     the dataset's path under DIR
  format   openvds, lindi or vtkhdf
  error    a bool: vdsql_datasets lists it with an error (cannot recognise it)
  faults   [{part, item, verdict, audit}]: exactly the rows vdsql_check gives; audit is
           the vds_audit verdict the detail starts with (OpenVDS), the words it holds
           (VTKHDF) or null; a fault may hold "remote": {verdict, audit}, what it is
           instead when the dataset is read over http or S3
  items    (optional) what vdsql_check_summary counts
  files    (optional) entries for the sibling files the dataset names (VTKHDF part
           files, link targets): they must sit next to it, and are datasets themselves
  outside  (optional) what it refers to outside DIR (local paths, another server): a
           copy of it elsewhere does not check the same
Other top-level keys are the generator's own (mkbroken.py's "missing": names that name
nothing).

OpenVDS: a clean survey; the audit dataset of mkvds.py (every vds_audit verdict, mapped
to the shared vocabulary below); a stored page deleted; a stored page cut to 3 bytes
(not whole entries); LayerStatus and VolumeDataLayout that do not parse; LayerStatus
deleted (the dataset cannot be read at all); an object left by a vdsql transaction that
never committed. LINDI: a good archive (mklindi.py), a
.lindi.tar of random bytes, a good .lindi.json, one that is no JSON. VTKHDF: a good
Table file (mkvtkhdf_types.py), a .hdf cut to its first 3000 bytes, a .vtkhdf that is no
HDF5 file. And "missing": catalog
entries that name nothing at all."""
import json
import os
import random
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mkvds  # noqa: E402

L0, L1 = "Dimensions_012LOD0", "Dimensions_012LOD1"

# vds_audit's verdicts in the shared vocabulary (docs/check.md); size_mismatch is `short`
# when the object is shorter than its page entry says, else `mismatch`
AUDIT_VERDICT = {"mismatch": "mismatch", "missing_object": "missing", "missing_metadata": "missing",
                 "orphan_object": "orphan", "bad_object": "malformed"}


def status_of(root, layer):
    with open(os.path.join(root, "LayerStatus")) as f:
        return [x for x in json.load(f) if x["layerName"] == layer][0]


def entry_size_of(root, layer, chunk):
    """The object size a 28-byte page entry gives (spec section 4), read back here."""
    st = status_of(root, layer)
    ps, es = st["chunkMetadataPageSize"], st["chunkMetadataByteSize"]
    name = st["pageDirectory"][chunk // ps]
    with open(os.path.join(root, layer, "ChunkMetadata", str(name)), "rb") as f:
        body = f.read()
    return struct.unpack("<I", body[(chunk % ps) * es:(chunk % ps) * es + 4])[0]


def survey(root):
    mkvds.build_survey(root, page_size=10, pageless=False)


def build_catalog(d):
    os.makedirs(d, exist_ok=True)
    rec = {"datasets": [], "missing": ["gone", "sub/also_gone"]}

    def add(name, fmt, faults=(), error=False):
        rec["datasets"].append({"name": name, "format": fmt, "error": error,
                                "faults": [dict(zip(("part", "item", "verdict", "audit"), f + (None,) * (4 - len(f))))
                                           for f in faults]})

    survey(os.path.join(d, "clean"))
    add("clean", "openvds")

    root = os.path.join(d, "sub", "audit")
    exp = mkvds.build_audit(root)
    faults = []
    for layer in (L0, L1):
        for c, r in sorted(exp["layers"][layer]["rows"].items(), key=lambda x: int(x[0])):
            a = r["verdict"]
            if a == "ok":
                continue
            if a == "size_mismatch":
                v = "short" if r["object_size"] < entry_size_of(root, layer, int(c)) else "mismatch"
            else:
                v = AUDIT_VERDICT[a]
            faults.append((layer, str(int(c)), v, a))
    add("sub/audit", "openvds", faults)

    # a stored page deleted: the directory lists it, the store has it not
    root = os.path.join(d, "sub", "nopage")
    survey(root)
    st = status_of(root, L0)
    name = st["pageDirectory"][1]
    os.remove(os.path.join(root, L0, "ChunkMetadata", str(name)))
    add("sub/nopage", "openvds", [(L0, "ChunkMetadata/%d" % name, "missing", "missing_page")])

    # a stored page of 3 bytes: not whole entries (spec section 4)
    root = os.path.join(d, "sub", "cutpage")
    survey(root)
    name = status_of(root, L0)["pageDirectory"][0]
    with open(os.path.join(root, L0, "ChunkMetadata", str(name)), "r+b") as f:
        f.truncate(3)
    add("sub/cutpage", "openvds", [(L0, "ChunkMetadata/%d" % name, "malformed", "bad_page")])

    # an object a vdsql transaction put at an unwritten chunk's key and never committed
    # (metadata vdsqltx, as openvds_direct.c writes it): the survey leaves 20-22 unwritten
    root = os.path.join(d, "sub", "txleft")
    survey(root)
    path = os.path.join(root, L0, "21")
    with open(path, "wb") as f:
        f.write(b"\0" * 64)
    os.setxattr(path, "user.vdschunkmetadata", mkvds.b64(struct.pack("<Q", 0x1234567890ABCDEF)).encode())
    os.setxattr(path, "user.vdsqltx", b"00c0ffee00c0ffee00c0ffee00c0ffee")
    add("sub/txleft", "openvds", [(L0, "21", "uncommitted", "uncommitted_object")])

    root = os.path.join(d, "badstatus")
    survey(root)
    with open(os.path.join(root, "LayerStatus"), "w") as f:
        f.write('[{"layerName": ')
    add("badstatus", "openvds", [(None, "LayerStatus", "malformed")])

    root = os.path.join(d, "badlayout")
    survey(root)
    with open(os.path.join(root, "VolumeDataLayout"), "w") as f:
        f.write("{\"dimensionality\": 3,")
    add("badlayout", "openvds", [(None, "VolumeDataLayout", "malformed")], error=True)

    root = os.path.join(d, "nostatus")
    survey(root)
    os.remove(os.path.join(root, "LayerStatus"))
    add("nostatus", "openvds", [(None, None, "unreadable")])

    # LINDI
    import mklindi
    tmp = os.path.join(d, ".lindi-tmp")
    mklindi.build_tests(tmp)
    shutil.copy(os.path.join(tmp, "small.lindi.tar"), os.path.join(d, "good.lindi.tar"))
    shutil.rmtree(tmp)
    add("good.lindi.tar", "lindi")
    with open(os.path.join(d, "sub", "noise.lindi.tar"), "wb") as f:
        f.write(random.Random(5).randbytes(3000))
    add("sub/noise.lindi.tar", "lindi", [(None, None, "unreadable")], error=True)
    with open(os.path.join(d, "refs.lindi.json"), "w") as f:
        json.dump({"refs": {".zgroup": {"zarr_format": 2}}}, f)
    add("refs.lindi.json", "lindi")
    with open(os.path.join(d, "notjson.lindi.json"), "w") as f:
        f.write("refs = {}\n")
    add("notjson.lindi.json", "lindi", [(None, None, "unreadable")], error=True)

    # VTKHDF
    import mkvtkhdf_types
    mkvtkhdf_types.table(os.path.join(d, "sub", "table.vtkhdf"))
    add("sub/table.vtkhdf", "vtkhdf")
    # cut short: the signature says HDF5 (so it is recognised), HDF5 cannot open it
    with open(os.path.join(d, "sub", "table.vtkhdf"), "rb") as f:
        head = f.read(3000)
    with open(os.path.join(d, "sub", "cut.hdf"), "wb") as f:
        f.write(head)
    add("sub/cut.hdf", "vtkhdf", [(None, None, "unreadable")])
    with open(os.path.join(d, "text.vtkhdf"), "w") as f:
        f.write("# vtk DataFile Version 3.0\n")
    add("text.vtkhdf", "vtkhdf", [(None, None, "unreadable")], error=True)

    # files of no dataset's name, never listed
    with open(os.path.join(d, "README.txt"), "w") as f:
        f.write("not a dataset\n")
    return rec


def main(argv):
    if len(argv) >= 3 and argv[1] == "catalog":
        json.dump(build_catalog(argv[2]), sys.stdout, sort_keys=True)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
