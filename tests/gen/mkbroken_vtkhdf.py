#!/usr/bin/python3
"""A catalog of VTKHDF files broken on purpose, for vdsql_check (docs/check.md, section
VTKHDF), and the record of what it broke, printed as JSON in tests/gen/mkbroken.py's
schema: {"datasets": [{name, format, error, faults: [{part, item, verdict, audit}],
items}]} (audit: the words the detail must hold; items: what the summary counts). A
main file that names sibling files (the part files of UseExternalPartitions, the
targets of external links) lists those that exist in "files", each an entry of its own
(vdsql_datasets lists them as VTKHDF datasets). Written with h5py (Debian's
python3-h5py: run with /usr/bin/python3); every count, extent and file name of the
record comes from how this script writes the file, never from vdsql.

  clean.vtkhdf          a temporal UnstructuredGrid, 2 steps of 2 partitions: no fault
  vds_gone.vtkhdf       UseExternalPartitions over 3 part files, part 1 deleted: missing
  vds_text.vtkhdf       the same, part 1 replaced by text: malformed
  vds_short.vtkhdf      the same, part 1's Points shorter than its mapping: short
  vds_far.vtkhdf        the same, part 1 named by a URL on another host: missing here,
                        disallowed (malformed) from a remote main file
  poly.vtkhdf           a PolyData whose Polygons/Connectivity is shorter than its counts
  elink_gone.vtkhdf     a PartitionedDataSetCollection whose BlockA is an external link
                        to a file that is gone: missing (BlockB is fine)
  counts.vtkhdf         NumberOfPoints past the Points it indexes (short), Connectivity
                        longer than the counts use (mismatch)
  steps_past.vtkhdf     Steps/PointOffsets of step 1 past Points: short
  negative.vtkhdf       NumberOfPoints[1] is -1 (met during the walk): malformed
  plain.hdf             an HDF5 file with no /VTKHDF group: unreadable
  text.vtkhdf           not HDF5: unreadable

   usage: mkbroken_vtkhdf.py catalog DIR"""
import json
import os
import sys

import h5py
import numpy as np

HEX = 12  # VTK_HEXAHEDRON; the cell type matters to no check


def header(g, typ):
    g.attrs["Version"] = np.array((2, 3), dtype=np.int64)
    g.attrs.create("Type", np.bytes_(typ))


def ug_body(g, parts, points=None, conn=None, steps=None):
    """An UnstructuredGrid leaf of one step: parts is [(np, nc, nci)]; points and conn,
    when given, are the row counts actually written (a fault), else what the counts use."""
    npt = [p[0] for p in parts]
    nc = [p[1] for p in parts]
    nci = [p[2] for p in parts]
    g.create_dataset("NumberOfPoints", data=np.array(npt, dtype=np.int64))
    g.create_dataset("NumberOfCells", data=np.array(nc, dtype=np.int64))
    g.create_dataset("NumberOfConnectivityIds", data=np.array(nci, dtype=np.int64))
    tp = sum(npt) if points is None else points
    g.create_dataset("Points", data=np.arange(tp * 3, dtype=np.float64).reshape(tp, 3))
    g.create_dataset("Types", data=np.full(sum(nc), HEX, dtype=np.uint8))
    offs = []
    for c, k in zip(nc, nci):
        if c:
            offs += [int(round(i * k / c)) for i in range(c + 1)]
    g.create_dataset("Offsets", data=np.array(offs, dtype=np.int64))
    tc = sum(nci) if conn is None else conn
    g.create_dataset("Connectivity", data=np.arange(tc, dtype=np.int64) % max(tp, 1))
    pd = g.create_group("PointData")
    pd.create_dataset("T", data=np.arange(tp, dtype=np.float32))


def ug_file(path, parts, **kw):
    with h5py.File(path, "w") as f:
        g = f.create_group("VTKHDF")
        header(g, "UnstructuredGrid")
        ug_body(g, parts, **kw)


def item(step, part):
    return "step %d partition %d" % (step, part)


def clean(d):
    """2 steps of 2 partitions, moving geometry: Steps offsets sum the steps before."""
    steps = [[(4, 1, 8), (3, 1, 4)], [(5, 2, 8), (3, 0, 0)]]
    with h5py.File(os.path.join(d, "clean.vtkhdf"), "w") as f:
        g = f.create_group("VTKHDF")
        header(g, "UnstructuredGrid")
        flat = [p for s in steps for p in s]
        ug_body(g, flat)
        s = g.create_group("Steps")
        s.attrs["NSteps"] = np.int64(len(steps))
        po, pt, co, ci = [], [], [], []
        a = [0, 0, 0, 0]
        for st in steps:
            po.append(a[0]), pt.append(a[1]), co.append(a[2]), ci.append(a[3])
            a[0] += len(st)
            a[1] += sum(p[0] for p in st)
            a[2] += sum(p[1] for p in st)
            a[3] += sum(p[2] for p in st)
        s.create_dataset("Values", data=np.arange(len(steps), dtype=np.float64))
        s.create_dataset("PartOffsets", data=np.array(po, dtype=np.int64))
        s.create_dataset("NumberOfParts", data=np.array([len(st) for st in steps], dtype=np.int64))
        s.create_dataset("PointOffsets", data=np.array(pt, dtype=np.int64))
        s.create_dataset("CellOffsets", data=np.array(co, dtype=np.int64))
        s.create_dataset("ConnectivityIdOffsets", data=np.array(ci, dtype=np.int64))
    return {"name": "clean.vtkhdf", "format": "vtkhdf", "error": False, "faults": [], "items": 4}


PARTS = [(6, 2, 8), (4, 1, 4), (5, 3, 12)]


def vds(g, name, dtype, files, sizes, cols=None, claim=None, src=None):
    """A virtual dataset over files (one partition each): sizes[k] rows from file k's
    /VTKHDF/name (src[k] instead, when given: a fault); claim[k], when given, is the
    source extent the mapping says (a fault)."""
    total = sum(sizes)
    shape = (total,) if cols is None else (total, cols)
    lay = h5py.VirtualLayout(shape=shape, dtype=dtype)
    at = 0
    for k, (f, n) in enumerate(zip(files, sizes)):
        if n:
            rows = claim[k] if claim and claim[k] is not None else n
            path = src[k] if src and src[k] else g.name + "/" + name
            vs = h5py.VirtualSource(f, path, shape=(rows,) if cols is None else (rows, cols))
            lay[at:at + n] = vs[0:n]
        at += n
    g.create_virtual_dataset(name, lay, fillvalue=0)


def ext_parts(d, stem, points_claim=None, t_src=None, names=None):
    """UseExternalPartitions: stem.vtkhdf over stem_part<k>.vtkhdf, each one partition;
    names[k], when given, is the name stored for part k instead (a fault)."""
    files = []
    for k, p in enumerate(PARTS):
        fn = "%s_part%d.vtkhdf" % (stem, k)
        ug_file(os.path.join(d, fn), [p])
        files.append(names[k] if names and names[k] else fn)
    with h5py.File(os.path.join(d, stem + ".vtkhdf"), "w") as f:
        g = f.create_group("VTKHDF")
        header(g, "UnstructuredGrid")
        one = [1] * len(PARTS)
        for n in ("NumberOfPoints", "NumberOfCells", "NumberOfConnectivityIds"):
            vds(g, n, np.int64, files, one)
        vds(g, "Points", np.float64, files, [p[0] for p in PARTS], cols=3, claim=points_claim)
        vds(g, "Types", np.uint8, files, [p[1] for p in PARTS])
        vds(g, "Offsets", np.int64, files, [p[1] + 1 if p[1] else 0 for p in PARTS])
        vds(g, "Connectivity", np.int64, files, [p[2] for p in PARTS])
        pd = g.create_group("PointData")
        vds(pd, "T", np.float32, files, [p[0] for p in PARTS], src=t_src or [None, None, None])
    return files


def sub(name, faults=(), error=False, items=1):
    """A part or link target next to its main file: itself a dataset (one partition of
    PARTS unless faults say otherwise)."""
    return {"name": name, "format": "vtkhdf", "error": error, "items": items, "faults": list(faults)}


def vds_gone(d):
    files = ext_parts(d, "vds_gone")
    os.unlink(os.path.join(d, files[1]))
    return {"name": "vds_gone.vtkhdf", "format": "vtkhdf", "error": False, "items": 3,
            "faults": [{"part": None, "item": item(0, 1), "verdict": "missing", "audit": files[1]}],
            "files": [sub(files[0]), sub(files[2])]}


def vds_text(d):
    """Part 1 overwritten by text; and the PointData/T mapping into part 2 names a
    dataset part 2 does not have (no partition row names part 2: its own row)."""
    files = ext_parts(d, "vds_text", t_src=[None, None, "/VTKHDF/PointData/Temp"])
    with open(os.path.join(d, files[1]), "w") as f:
        f.write("this part file was overwritten by a text file\n")
    return {"name": "vds_text.vtkhdf", "format": "vtkhdf", "error": False, "items": 3,
            "faults": [{"part": None, "item": item(0, 1), "verdict": "malformed", "audit": files[1]},
                       {"part": "/VTKHDF/PointData/T", "item": None, "verdict": "missing",
                        "audit": [files[2], "has no dataset /VTKHDF/PointData/Temp"]}],
            "files": [sub(files[0]), sub(files[1], error=True, items=0,
                                         faults=[{"part": None, "item": None, "verdict": "unreadable",
                                                  "audit": [files[1], "HDF5"]}]), sub(files[2])]}


def vds_short(d):
    """Part 1 holds 2 points where the main file maps 4 from it: the part file is written
    with 2 rows of Points, the mapping claims 4 (HDF5 would fill rows 2..3 with zeros)."""
    files = ext_parts(d, "vds_short")
    have = 2
    with h5py.File(os.path.join(d, files[1]), "a") as f:
        g = f["VTKHDF"]
        del g["Points"]
        g.create_dataset("Points", data=np.zeros((have, 3)))
    # the record's words: source file, dataset, and both extents
    return {"name": "vds_short.vtkhdf", "format": "vtkhdf", "error": False, "items": 3,
            "faults": [{"part": None, "item": item(0, 1), "verdict": "short",
                        "audit": [files[1], "/VTKHDF/Points", "has %d rows" % have, "rows 0..%d" % (PARTS[1][0] - 1)]}],
            # part 1 alone: its one partition's NumberOfPoints reads past its 2 Points
            "files": [sub(files[0]), sub(files[1], faults=[{"part": None, "item": item(0, 0), "verdict": "short",
                                                            "audit": ["Points has %d rows" % have,
                                                                      "0..%d" % (PARTS[1][0] - 1)]}]),
                      sub(files[2])]}


FAR = "http://127.0.0.2:9/vds_far_part1.vtkhdf"


def vds_far(d):
    """Part 1 named by a URL on another host: from a remote main file it is never
    requested (disallowed: malformed); from a local one it is a file name that names
    nothing (missing). The record says both ("remote": the verdict over http and S3)."""
    files = ext_parts(d, "vds_far", names=[None, FAR, None])
    os.unlink(os.path.join(d, "vds_far_part1.vtkhdf"))
    return {"name": "vds_far.vtkhdf", "format": "vtkhdf", "error": False, "items": 3,
            "faults": [{"part": None, "item": item(0, 1), "verdict": "missing", "audit": "missing_source",
                        "remote": {"verdict": "malformed", "audit": ["disallowed_source", "127.0.0.2:9"]}}],
            "files": [sub(files[0]), sub(files[2])]}


TOPO = ("Vertices", "Lines", "Polygons", "Strips")


def poly(d):
    """A PolyData of 2 partitions; Polygons/Connectivity holds 5 ids where the counts use
    7 (partition 1 reads ids 4..6). Empty topologies keep 1 Offsets value per partition,
    as VTK's writer stores them."""
    np_ = [4, 3]
    cells = [{"Vertices": (1, 1), "Lines": (0, 0), "Polygons": (1, 4), "Strips": (0, 0)},
             {"Vertices": (0, 0), "Lines": (1, 2), "Polygons": (1, 3), "Strips": (0, 0)}]
    with h5py.File(os.path.join(d, "poly.vtkhdf"), "w") as f:
        g = f.create_group("VTKHDF")
        header(g, "PolyData")
        g.create_dataset("NumberOfPoints", data=np.array(np_, dtype=np.int64))
        g.create_dataset("Points", data=np.zeros((sum(np_), 3)))
        for t in TOPO:
            tg = g.create_group(t)
            nc = [c[t][0] for c in cells]
            nci = [c[t][1] for c in cells]
            tg.create_dataset("NumberOfCells", data=np.array(nc, dtype=np.int64))
            tg.create_dataset("NumberOfConnectivityIds", data=np.array(nci, dtype=np.int64))
            offs = []
            for c, k in zip(nc, nci):
                offs += [0] if not c else [int(round(i * k / c)) for i in range(c + 1)]
            tg.create_dataset("Offsets", data=np.array(offs, dtype=np.int64))
            n = 5 if t == "Polygons" else sum(nci)
            tg.create_dataset("Connectivity", data=np.zeros(n, dtype=np.int64))
    return {"name": "poly.vtkhdf", "format": "vtkhdf", "error": False, "items": 2,
            "faults": [{"part": None, "item": item(0, 1), "verdict": "short",
                        "audit": ["Polygons/Connectivity has 5 rows", "4..6"]}]}


def elink_gone(d):
    """BlockA: an external link to elink_gone_BlockA.vtkhdf, which is then deleted."""
    a, b = "elink_gone_BlockA.vtkhdf", "elink_gone_BlockB.vtkhdf"
    ug_file(os.path.join(d, a), [(4, 1, 4)])
    ug_file(os.path.join(d, b), [(5, 2, 8), (3, 1, 4)])
    with h5py.File(os.path.join(d, "elink_gone.vtkhdf"), "w", track_order=True) as f:
        g = f.create_group("VTKHDF", track_order=True)
        header(g, "PartitionedDataSetCollection")
        g["BlockA"] = h5py.ExternalLink(a, "/VTKHDF")
        g["BlockB"] = h5py.ExternalLink(b, "/VTKHDF")
        asm = g.create_group("Assembly", track_order=True)
        asm["BlockA"] = h5py.SoftLink("/VTKHDF/BlockA")
        asm["BlockB"] = h5py.SoftLink("/VTKHDF/BlockB")
    os.unlink(os.path.join(d, a))
    return {"name": "elink_gone.vtkhdf", "format": "vtkhdf", "error": False, "items": 3,
            "faults": [{"part": "/Assembly/BlockA", "item": None, "verdict": "missing", "audit": a}],
            "files": [sub(b, items=2)]}


def counts(d):
    """Counts [(4,1,4), (3,1,4), (2,1,4)]: 9 points used, 6 written (partition 1 needs
    rows 4..6, partition 2 rows 7..8: both short); Connectivity 12 used, 15 written."""
    parts = [(4, 1, 4), (3, 1, 4), (2, 1, 4)]
    ug_file(os.path.join(d, "counts.vtkhdf"), parts, points=6, conn=15)
    return {"name": "counts.vtkhdf", "format": "vtkhdf", "error": False, "items": 3,
            "faults": [{"part": None, "item": item(0, 1), "verdict": "short", "audit": ["Points has 6 rows", "4..6"]},
                       {"part": None, "item": item(0, 2), "verdict": "short", "audit": ["Points has 6 rows", "7..8"]},
                       {"part": None, "item": None, "verdict": "mismatch",
                        "audit": ["Connectivity has 15 entries", "12"]}]}


def steps_past(d):
    """2 steps of 1 partition (4 points each, 8 written); Steps/PointOffsets says step 1
    starts at row 6 (rows 6..9: past the 8)."""
    with h5py.File(os.path.join(d, "steps_past.vtkhdf"), "w") as f:
        g = f.create_group("VTKHDF")
        header(g, "UnstructuredGrid")
        ug_body(g, [(4, 1, 4), (4, 1, 4)])
        s = g.create_group("Steps")
        s.attrs["NSteps"] = np.int64(2)
        s.create_dataset("Values", data=np.array([0.0, 1.0]))
        s.create_dataset("PartOffsets", data=np.array([0, 1], dtype=np.int64))
        s.create_dataset("NumberOfParts", data=np.array([1, 1], dtype=np.int64))
        s.create_dataset("PointOffsets", data=np.array([0, 6], dtype=np.int64))
        s.create_dataset("CellOffsets", data=np.array([0, 1], dtype=np.int64))
        s.create_dataset("ConnectivityIdOffsets", data=np.array([0, 4], dtype=np.int64))
    return {"name": "steps_past.vtkhdf", "format": "vtkhdf", "error": False, "items": 2,
            "faults": [{"part": None, "item": item(1, 0), "verdict": "short", "audit": ["Points has 8 rows", "6..9"]}]}


def negative(d):
    """NumberOfPoints[1] is -1: VTK would read a negative slice. vdsql reads the counts as
    the rows go, so this is met during the walk, not at the open: one malformed row."""
    ug_file(os.path.join(d, "negative.vtkhdf"), [(4, 1, 4), (-1, 1, 4), (3, 1, 4)], points=7)
    return {"name": "negative.vtkhdf", "format": "vtkhdf", "error": False, "items": 0,
            "faults": [{"part": None, "item": None, "verdict": "malformed", "audit": "NumberOfPoints[1] is negative"}]}


def plain(d):
    with h5py.File(os.path.join(d, "plain.hdf"), "w") as f:
        f.create_dataset("data", data=np.arange(10))
    return {"name": "plain.hdf", "format": "vtkhdf", "error": False, "items": 0,
            "faults": [{"part": None, "item": None, "verdict": "unreadable", "audit": "no /VTKHDF group"}]}


def text(d):
    with open(os.path.join(d, "text.vtkhdf"), "w") as f:
        f.write("not an HDF5 file at all\n")
    return {"name": "text.vtkhdf", "format": "vtkhdf", "error": True, "items": 0,
            "faults": [{"part": None, "item": None, "verdict": "unreadable", "audit": ["text.vtkhdf", "HDF5"]}]}


def catalog(d):
    os.makedirs(d, exist_ok=True)
    return [f(d) for f in (clean, vds_gone, vds_text, vds_short, vds_far, elink_gone, counts, steps_past, poly, negative,
                           plain, text)]


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "catalog":
        sys.exit(__doc__)
    print(json.dumps({"datasets": catalog(sys.argv[2])}, indent=1))
