#!/usr/bin/python3
"""Writes VTKHDF files of the Types other than UnstructuredGrid/PolyData/ImageData with
h5py, shaped as ../shared/spec/vtkhdf.md (sections 2-3) and VTK's vtkHDFWriter shape
them, each with a <stem>.expect.json of the rows vdsql must give, computed here from how
the file was built (never from vdsql):
  amr_v22.vtkhdf      temporal OverlappingAMR, Version 2.2: Steps/Level<k>/NumberOfAMRBox,
                      AMRBoxOffset, PointDataOffset/<a>, CellDataOffset/<a> (singular)
  amr_v23.vtkhdf      the same data, Version 2.3 plural names (NumberOfAMRBoxes, ...)
  amr_static.vtkhdf   OverlappingAMR without Steps
  htg.vtkhdf          HyperTreeGrid 2.4, two partitions, bit-packed Descriptors and Mask
  htg_temporal.vtkhdf HyperTreeGrid with Steps (2 steps x 2 partitions), VTK's offsets
  rectilinear.vtkhdf  RectilinearGrid 2.7 (Dimensions, X/Y/ZCoordinates)
  structured.vtkhdf   StructuredGrid 2.7 with Steps: Points (t, K, L, M, 3), PointOffsets
  table.vtkhdf        Table 2.8 with Steps: NumberOfRows per step, RowData, RowDataOffsets
  types_composite.vtkhdf  a PartitionedDataSetCollection of amr_v23 and htg (copied in)
  broken_amr.vtkhdf, broken_htg.vtkhdf   refused part way through (no .expect.json)
   usage: mkvtkhdf_types.py DIR    (Debian's python3: python3-h5py, python3-numpy)"""
import json
import os
import sys

import h5py
import numpy as np


def vtk_type(g, name):
    # VTK writes Type as a fixed-length UTF-8 string of exactly its length
    tid = h5py.h5t.C_S1.copy()
    tid.set_size(len(name))
    tid.set_cset(h5py.h5t.CSET_UTF8)
    a = h5py.h5a.create(g.id, b"Type", tid, h5py.h5s.create(h5py.h5s.SCALAR))
    a.write(np.array(name.encode(), dtype="S%d" % len(name)), mtype=tid)


def header(g, name, minor):
    g.attrs.create("Version", np.array([2, minor], dtype=np.int64))
    vtk_type(g, name)


def root(path):
    f = h5py.File(path, "w", track_order=True)
    return f, f.create_group("VTKHDF", track_order=True)


def steps(g, values):
    s = g.create_group("Steps")
    s.attrs.create("NSteps", np.int64(len(values)))
    s.create_dataset("Values", data=np.array(values, dtype=np.float64))
    return s


def i64(v):
    return np.array(v, dtype=np.int64)


# ---- OverlappingAMR ----
# per step, per level: boxes (imin, imax, jmin, jmax, kmin, kmax); level 1 is twice as fine
AMR_ORIGIN = (-1.0, 0.5, 2.0)
AMR_SPACING = [(1.0, 1.0, 1.0), (0.5, 0.5, 0.5)]
AMR_STEPS = [
    [[(0, 3, 0, 3, 0, 1)], [(0, 1, 0, 3, 0, 1), (4, 7, 2, 5, 0, 3)]],
    [[(0, 3, 0, 3, 0, 1)], [(2, 5, 0, 1, 0, 1), (0, 1, 4, 7, 0, 1), (6, 7, 6, 7, 2, 3)]],
]


def box_counts(b):
    """vtkAMRBox: cells hi-lo+1 per axis (empty axes skipped), nodes hi-lo+2"""
    cells = [b[2 * k + 1] - b[2 * k] + 1 for k in range(3)]
    nodes = [c + 1 for c in cells]
    nc = 1
    for c in cells:
        nc *= c if c else 1
    return int(np.prod(nodes)), nc


def amr(path, minor, temporal):
    f, g = root(path)
    header(g, "OverlappingAMR", minor)
    g.attrs.create("Origin", np.array(AMR_ORIGIN))
    g.attrs.create("GridDescription", np.int64(3))  # VTK_XYZ_GRID
    steps_used = AMR_STEPS if temporal else AMR_STEPS[:1]
    if temporal:
        s = steps(g, [0.0, 0.25])
    parts, boxes, slices = [], [], []
    for k in range(2):
        lv = g.create_group("Level%d" % k)
        lv.attrs.create("Spacing", np.array(AMR_SPACING[k]))
        allboxes, pdata, cdata = [], [], []
        nbox, boff, poff, coff = [], [], [], []
        for t, per in enumerate(steps_used):
            nbox.append(len(per[k]))
            boff.append(len(allboxes))
            poff.append(len(pdata))
            coff.append(len(cdata))
            pt = len(pdata) if temporal else 0
            ce = len(cdata) if temporal else 0
            for b, box in enumerate(per[k]):
                np_, nc = box_counts(box)
                allboxes.append(box)
                # each box's values name it: a wrong slice shows
                pdata += [1000 * t + 100 * k + b] * np_
                cdata += [-(1000 * t + 100 * k + b)] * nc
                parts.append(["/Level%d" % k, t, [0.0, 0.25][t] if temporal else None, b, "OverlappingAMR", np_, nc, pt, ce,
                              None, "ok"])
                slices.append([k, t, b, pt, np_, ce, nc])
                o = [AMR_ORIGIN[i] + box[2 * i] * AMR_SPACING[k][i] for i in range(3)]
                boxes.append(["", t, k, b] + list(box) + o + list(AMR_SPACING[k]))
                pt += np_
                ce += nc
        lv.create_dataset("AMRBox", data=np.array(allboxes, dtype=np.int32))
        lv.create_group("PointData").create_dataset("Density", data=np.array(pdata, dtype=np.float64))
        lv.create_group("CellData").create_dataset("Id", data=np.array(cdata, dtype=np.int64))
        lv.create_group("FieldData")
        if temporal:
            sl = s.create_group("Level%d" % k)
            one = minor == 2  # 2.2's singular names
            sl.create_dataset("NumberOfAMRBox" if one else "NumberOfAMRBoxes", data=i64(nbox))
            sl.create_dataset("AMRBoxOffset" if one else "AMRBoxOffsets", data=i64(boff))
            sl.create_group("PointDataOffset" if one else "PointDataOffsets").create_dataset("Density", data=i64(poff))
            sl.create_group("CellDataOffset" if one else "CellDataOffsets").create_dataset("Id", data=i64(coff))
    f.close()
    # rows come level by level, then step by step, then box by box
    parts.sort(key=lambda r: (r[0], r[1], r[3]))
    boxes.sort(key=lambda r: (r[2], r[1], r[3]))
    arrays = [["/Level%d" % k, a, n] for k in range(2) for a, n in (("point", "Density"), ("cell", "Id"))]
    return {"partitions": parts, "amr_boxes": boxes, "slices": slices, "arrays": arrays}


# ---- HyperTreeGrid ----
BF = 2  # BranchFactor: 2**3 = 8 children per refined cell in 3-D


def make_tree(seed, depth):
    """A tree as VTK's breadth-first descriptor gives it: per level, a refine bit per cell
    (none at the deepest level), and a mask bit per cell. Returns (cells per depth,
    descriptor bits, mask bits)."""
    rng = np.random.RandomState(seed)
    per, desc, mask = [1], [], []
    for d in range(depth):
        n = per[-1]
        mask += [int(x) for x in rng.randint(0, 2, n)]
        if d == depth - 1:
            break
        bits = [int(x) for x in rng.randint(0, 2, n)]
        bits[0] = 1  # keep every level reached
        desc += bits
        per.append(8 * sum(bits))
    return per, desc, mask


def htg_piece(trees):
    """One partition's datasets from its trees [(tree id, depth, seed)]"""
    ids, dpt, ncd, desc, mask, info = [], [], [], [], [], []
    for tid, depth, seed in trees:
        per, d, m = make_tree(seed, depth)
        info.append((tid, depth, per, d, m))
        ids.append(tid)
        dpt.append(depth)
        ncd += per
        desc += d
        mask += m
    return ids, dpt, ncd, desc, mask, info


def pack(bits):
    # vtkBitArray packs the first value into the most significant bit (numpy's default)
    return np.packbits(np.array(bits, dtype=np.uint8)) if bits else np.zeros(0, dtype=np.uint8)


HTG_PIECES = [
    [[(0, 3, 11), (2, 2, 12), (5, 3, 13)], [(1, 3, 14), (3, 1, 15)]],
    [[(0, 2, 21), (5, 3, 22)], [(1, 3, 23), (3, 3, 24), (4, 2, 25)]],
]


def htg(path, temporal):
    f, g = root(path)
    header(g, "HyperTreeGrid", 4)
    g.attrs.create("Dimensions", np.array([4, 3, 2], dtype=np.int32))  # 3 x 2 x 1 trees
    g.attrs.create("BranchFactor", np.int64(BF))
    g.attrs.create("TransposedRootIndexing", np.int64(0))
    use = HTG_PIECES if temporal else HTG_PIECES[:1]
    cols = {k: [] for k in ("NumberOfTrees", "NumberOfCells", "NumberOfDepths", "DescriptorsSize", "TreeIds",
                            "DepthPerTree", "NumberOfCellsPerTreeDepth")}
    desc_bytes, mask_bytes, cell_ids = [], [], []
    offs = {k: [] for k in ("PartOffsets", "NumberOfParts", "TreeIdsOffsets", "DepthPerTreeOffsets",
                            "NumberOfCellsPerTreeDepthOffsets", "DescriptorsOffsets", "MaskOffsets", "CellIds")}
    parts, trees = [], []
    for t, pieces in enumerate(use):
        offs["PartOffsets"].append(len(cols["NumberOfTrees"]))
        offs["NumberOfParts"].append(len(pieces))
        offs["TreeIdsOffsets"].append(len(cols["TreeIds"]))
        offs["DepthPerTreeOffsets"].append(len(cols["DepthPerTree"]))
        offs["NumberOfCellsPerTreeDepthOffsets"].append(len(cols["NumberOfCellsPerTreeDepth"]))
        offs["DescriptorsOffsets"].append(len(desc_bytes))
        offs["MaskOffsets"].append(len(mask_bytes))
        offs["CellIds"].append(len(cell_ids))
        cell = 0
        for j, piece in enumerate(pieces):
            ids, dpt, ncd, desc, mask, info = htg_piece(piece)
            ncell = sum(ncd)
            dbyte, mbyte = len(desc_bytes), len(mask_bytes)
            cols["NumberOfTrees"].append(len(ids))
            cols["NumberOfCells"].append(ncell)
            cols["NumberOfDepths"].append(len(ncd))
            cols["DescriptorsSize"].append(len(desc))
            cols["TreeIds"] += ids
            cols["DepthPerTree"] += dpt
            cols["NumberOfCellsPerTreeDepth"] += ncd
            desc_bytes += list(pack(desc))  # each partition starts on a fresh byte
            mask_bytes += list(pack(mask))
            cell_ids += [10000 * t + 1000 * j + i for i in range(ncell)]
            parts.append(["", t, [0.0, 1.5][t] if temporal else None, j, "HyperTreeGrid", None, ncell, None, cell, len(ids),
                          "ok"])
            inc, dbits = 0, 0
            for k, (tid, depth, per, d, m) in enumerate(info):
                n = sum(per)
                trees.append(["", t, j, k, tid, depth, n, cell + inc, dbyte * 8 + dbits, len(d), mbyte * 8 + inc, n,
                              "".join(map(str, d)), "".join(map(str, m))])
                inc += n
                dbits += len(d)
            cell += ncell
    for k, v in cols.items():
        g.create_dataset(k, data=i64(v))
    g.create_dataset("Descriptors", data=np.array(desc_bytes, dtype=np.uint8))
    g.create_dataset("Mask", data=np.array(mask_bytes, dtype=np.uint8))
    for c in "XYZ":  # N, M, P values per partition
        n = {"X": 4, "Y": 3, "Z": 2}[c]
        g.create_dataset(c + "Coordinates", data=np.tile(np.arange(n, dtype=np.float64), sum(len(p) for p in use)))
    g.create_group("CellData").create_dataset("CellId", data=i64(cell_ids))
    if temporal:
        s = steps(g, [0.0, 1.5])
        for k in ("PartOffsets", "NumberOfParts", "TreeIdsOffsets", "DepthPerTreeOffsets",
                  "NumberOfCellsPerTreeDepthOffsets", "DescriptorsOffsets", "MaskOffsets"):
            s.create_dataset(k, data=i64(offs[k]))
        for c in "XYZ":
            n = {"X": 4, "Y": 3, "Z": 2}[c]
            s.create_dataset(c + "CoordinatesOffsets", data=i64([0, n * len(use[0])]))
        s.create_group("CellDataOffsets").create_dataset("CellId", data=i64(offs["CellIds"]))
    f.close()
    return {"partitions": parts, "trees": trees, "cell_data_offsets": offs["CellIds"],
            "arrays": [["", "cell", "CellId"]]}


# ---- RectilinearGrid, StructuredGrid, Table ----
def rectilinear(path):
    f, g = root(path)
    header(g, "RectilinearGrid", 7)
    dims = (5, 4, 3)
    g.attrs.create("Dimensions", np.array(dims, dtype=np.int32))
    for c, n in zip("XYZ", dims):
        g.create_dataset(c + "Coordinates", data=np.linspace(0, 1, n))
    # structured arrays are (z, y, x[, c])
    g.create_group("PointData").create_dataset("Pressure", data=np.zeros((3, 4, 5)))
    g.create_group("CellData").create_dataset("Velocity", data=np.zeros((2, 3, 4, 3)))
    f.close()
    np_, nc = 5 * 4 * 3, 4 * 3 * 2
    return {"partitions": [["", 0, None, 0, "RectilinearGrid", np_, nc, None, None, None, "ok"]],
            "arrays": [["", "point", "Pressure", 1, 60], ["", "cell", "Velocity", 3, 24]]}


def structured(path):
    f, g = root(path)
    header(g, "StructuredGrid", 7)
    dims = (4, 3, 2)
    g.attrs.create("Dimensions", np.array(dims, dtype=np.int32))
    nsteps = 3
    s = steps(g, [0.0, 0.5, 1.0])
    # VTK's writer: Points (t, dims[0], dims[1], dims[2], 3), a slice per step, PointOffsets = t
    g.create_dataset("Points", data=np.zeros((nsteps,) + dims + (3,)), maxshape=(None,) + dims + (3,),
                     chunks=(1,) + dims + (3,))
    s.create_dataset("PointOffsets", data=i64(range(nsteps)))
    g.create_group("PointData").create_dataset("Temperature", data=np.zeros((nsteps, 2, 3, 4)))
    s.create_group("PointDataOffsets").create_dataset("Temperature", data=i64(range(nsteps)))
    f.close()
    return {"partitions": [["", t, [0.0, 0.5, 1.0][t], 0, "StructuredGrid", 24, 6, t, None, None, "ok"]
                           for t in range(nsteps)],
            "arrays": [["", "point", "Temperature", 1, 72]]}


def table(path):
    f, g = root(path)
    header(g, "Table", 8)
    rows = [4, 6]
    g.create_dataset("NumberOfRows", data=i64(rows))
    s = steps(g, [10.0, 20.0])
    rd = g.create_group("RowData")
    rd.create_dataset("Name", data=np.arange(sum(rows), dtype=np.int64))
    rd.create_dataset("Value", data=np.arange(sum(rows) * 2, dtype=np.float64).reshape(-1, 2))
    ro = s.create_group("RowDataOffsets")
    ro.create_dataset("Name", data=i64([0, 4]))
    ro.create_dataset("Value", data=i64([0, 4]))
    f.close()
    return {"partitions": [["", 0, 10.0, 0, "Table", 4, None, 0, None, None, "ok"],
                           ["", 1, 20.0, 0, "Table", 6, None, 4, None, None, "ok"]],
            "arrays": [["", "row", "Name", 1, 10], ["", "row", "Value", 2, 10]]}


def composite(path, d):
    """A PartitionedDataSetCollection whose leaves are the temporal 2.3 AMR and the static
    HTG (copied in): their rows come with the Assembly path as block"""
    f, g = root(path)
    header(g, "PartitionedDataSetCollection", 3)
    asm = g.create_group("Assembly", track_order=True)
    want = {"partitions": [], "amr_boxes": [], "trees": [], "arrays": []}
    for i, (name, stem) in enumerate((("Mesh", "amr_v23"), ("Tree", "htg"))):
        with h5py.File(os.path.join(d, stem + ".vtkhdf"), "r") as src:
            src.copy(src["VTKHDF"], g, name=name)
        g[name].attrs.create("Index", np.int64(i))
        asm["blk_" + name] = h5py.SoftLink("/VTKHDF/" + name)
        leaf = json.load(open(os.path.join(d, stem + ".expect.json")))
        b = "/Assembly/blk_" + name
        for k in ("partitions", "amr_boxes", "trees", "arrays"):
            for r in leaf.get(k, []):
                want[k].append([b + r[0]] + r[1:])
        want["cell_data_offsets"] = leaf.get("cell_data_offsets", want.get("cell_data_offsets"))
    f.close()
    return want


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    made = {
        "amr_v22": lambda p: amr(p, 2, True),
        "amr_v23": lambda p: amr(p, 3, True),
        "amr_static": lambda p: amr(p, 3, False),
        "htg": lambda p: htg(p, False),
        "htg_temporal": lambda p: htg(p, True),
        "rectilinear": rectilinear,
        "structured": structured,
        "table": table,
    }
    for stem, fn in made.items():
        want = fn(os.path.join(d, stem + ".vtkhdf"))
        with open(os.path.join(d, stem + ".expect.json"), "w") as o:
            json.dump(want, o, indent=1)
    with open(os.path.join(d, "types_composite.expect.json"), "w") as o:
        json.dump(composite(os.path.join(d, "types_composite.vtkhdf"), d), o, indent=1)
    # two broken ones (refused part way through, for tests/unit/t_vtkhdf_ids.c's error paths)
    amr(os.path.join(d, "broken_amr.vtkhdf"), 3, True)
    with h5py.File(os.path.join(d, "broken_amr.vtkhdf"), "r+") as h:
        h["VTKHDF/Steps/Level1/AMRBoxOffsets"][1] = 4
    htg(os.path.join(d, "broken_htg.vtkhdf"), True)
    with h5py.File(os.path.join(d, "broken_htg.vtkhdf"), "r+") as h:
        h["VTKHDF/NumberOfDepths"][3] += 1


if __name__ == "__main__":
    main()
