#!/usr/bin/python3
"""VTKHDF files shaped the way writers other than VTK shape them, each with a
<name>.expect.json next to it (tests/vtkhdf/others.t compares vdsql with them; docs/vtkhdf.md
shows some). Written with h5py (Debian's python3-h5py: run with /usr/bin/python3). The
expected counts come from how this script builds each file (the extent it writes and the
shape it gives each array), never from vdsql:
  * an ImageData whose WholeExtent is float32 (Origin, Spacing float32, Direction float64),
    and one whose float extent holds 7.5 (refused);
  * 2-D ImageData as gridformat writes it: the flat z axis dropped, arrays (y, x[, c]), and
    temporal (t, y, x[, c]) with FieldData (t, 1, n);
  * a PartitionedDataSetCollection holding an ImageData block (float extent) under an
    Assembly node that carries an Index;
  * a Version 1.0 ImageData (no Type) whose PointData/CellData groups name their active
    arrays with Scalars=<name>, Vectors=<name>, ... attributes.
   usage: mkvtkhdf_others.py DIR"""
import json
import os
import sys

import h5py
import numpy as np


def ordered(parent, name):
    """A group that tracks creation order (VTK lists Assembly children that way)."""
    gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
    gcpl.set_link_creation_order(h5py.h5p.CRT_ORDER_TRACKED | h5py.h5p.CRT_ORDER_INDEXED)
    return h5py.Group(h5py.h5g.create(parent.id, name.encode(), gcpl=gcpl))


def fixed_str(g, name, s):
    """A fixed-length ASCII string attribute, as VTK and gridformat write Type."""
    g.attrs.create(name, np.bytes_(s))


def header(g, typ, version=(2, 1)):
    g.attrs["Version"] = np.array(version, dtype=np.int64)
    if typ:
        fixed_str(g, "Type", typ)


def counts(ext):
    """Points and cells of an extent, per axis (x, y, z): a flat axis is one point, one
    cell layer."""
    pts = [ext[2 * k + 1] - ext[2 * k] + 1 for k in range(3)]
    cells = [p - 1 if p > 1 else 1 for p in pts]
    return pts, cells


class Image:
    """One ImageData leaf: writes its arrays and remembers what vtkhdf_arrays must say."""

    def __init__(self, g, ext, block="", ext_dtype=np.int64, drop_flat=False, nsteps=0):
        self.g, self.ext, self.block, self.nsteps = g, ext, block, nsteps
        g.attrs["WholeExtent"] = np.array(ext, dtype=ext_dtype)
        self.pts, self.cells = counts(ext)
        self.drop = drop_flat
        self.arrays = []

    def axes(self, per_axis):
        """(z, y, x) sizes, without the flat axes when the writer drops them."""
        zyx = [per_axis[2], per_axis[1], per_axis[0]]
        flat = [self.pts[2] == 1, self.pts[1] == 1, self.pts[0] == 1]
        return [n for n, f in zip(zyx, flat) if not (self.drop and f)]

    def add(self, assoc, name, comp_shape=(), dtype=np.float64, attribute=None):
        per_axis = self.pts if assoc == "point" else self.cells
        shape = ([self.nsteps] if self.nsteps else []) + self.axes(per_axis) + list(comp_shape)
        grp = self.g.require_group("PointData" if assoc == "point" else "CellData")
        d = grp.create_dataset(name, data=np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape))
        if attribute:
            fixed_str(d, "Attribute", attribute)
        ntup = int(np.prod(per_axis)) * max(self.nsteps, 1)
        self.arrays.append({"block": self.block, "association": assoc, "name": name, "type": np.dtype(dtype).name,
                            "components": int(np.prod(comp_shape)), "tuples": ntup, "attribute": attribute,
                            "shape": shape})
        if self.nsteps:  # per-step offsets, as gridformat writes them (issue #295 of gridformat)
            og = self.g.require_group("Steps").require_group("PointDataOffsets" if assoc == "point" else "CellDataOffsets")
            og.create_dataset(name, data=np.arange(self.nsteps, dtype=np.int64))
        return d

    def parts(self, typ="ImageData", times=None):
        npts, ncells = int(np.prod(self.pts)), int(np.prod(self.cells))
        return [{"block": self.block, "step": t, "partition": 0, "type": typ, "n_points": npts, "n_cells": ncells,
                 "time": times[t] if times else None, "status": "ok"} for t in range(max(self.nsteps, 1))]


def spatial(g):
    g.attrs["Origin"] = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    g.attrs["Spacing"] = np.array([0.25, 0.25, 1.0], dtype=np.float32)
    g.attrs["Direction"] = np.eye(3, dtype=np.float64).ravel()


def dump(d, name, exp):
    exp["file"] = name
    with open(os.path.join(d, name.rsplit(".", 1)[0] + ".expect.json"), "w") as f:
        json.dump(exp, f, indent=1, sort_keys=True)


def float_extent(d):
    name = "img_float_extent.vtkhdf"
    with h5py.File(os.path.join(d, name), "w") as f:
        g = f.create_group("VTKHDF")
        header(g, "ImageData")
        spatial(g)
        im = Image(g, [0, 3, 0, 3, 0, 3], ext_dtype=np.float32)
        im.add("point", "Pressure", dtype=np.float32)
        im.add("cell", "Velocity", (3,))
    dump(d, name, {"partitions": im.parts(), "arrays": im.arrays, "blocks": []})


def float_extent_bad(d):
    name = "img_float_half.vtkhdf"
    with h5py.File(os.path.join(d, name), "w") as f:
        g = f.create_group("VTKHDF")
        header(g, "ImageData")
        g.attrs["WholeExtent"] = np.array([0, 3, 0, 7.5, 0, 0], dtype=np.float64)
    dump(d, name, {"error": [name, "WholeExtent[3]", "7.5", "not a whole number"]})


def image_2d(d):
    name = "img_2d.vtkhdf"
    with h5py.File(os.path.join(d, name), "w") as f:
        g = f.create_group("VTKHDF")
        header(g, "ImageData")
        spatial(g)
        im = Image(g, [0, 5, 0, 7, 0, 0], drop_flat=True)
        im.add("point", "p")
        im.add("point", "velocity", (3,), attribute="Vectors")
        im.add("point", "stress", (9,), attribute="Tensors")
        im.add("point", "stress33", (3, 3))
        im.add("cell", "rank", dtype=np.int32)
        im.add("cell", "flux", (3,))
        fd = g.create_group("FieldData")
        fd.create_dataset("info", data=np.arange(4.0))
        fd.create_dataset("pair", data=np.arange(6.0).reshape(3, 2))
        arrays = im.arrays + [
            {"block": "", "association": "field", "name": "info", "type": "float64", "components": 1, "tuples": 4,
             "attribute": None},
            {"block": "", "association": "field", "name": "pair", "type": "float64", "components": 2, "tuples": 3,
             "attribute": None}]
    dump(d, name, {"partitions": im.parts(), "arrays": arrays, "blocks": []})


def image_2d_temporal(d):
    name = "img_2d_temporal.vtkhdf"
    times = [0.0, 0.5, 1.0]
    with h5py.File(os.path.join(d, name), "w") as f:
        g = f.create_group("VTKHDF")
        header(g, "ImageData")
        spatial(g)
        im = Image(g, [0, 5, 0, 7, 0, 0], drop_flat=True, nsteps=3)
        st = g["Steps"] if "Steps" in g else g.create_group("Steps")
        st.attrs["NSteps"] = np.int64(3)
        st.create_dataset("Values", data=np.array(times))
        im.add("point", "p")
        im.add("point", "velocity", (3,))
        im.add("cell", "flux", (3,))
        fd = g.create_group("FieldData")
        fd.create_dataset("probe", data=np.arange(12.0).reshape(3, 1, 4))  # (t, 1, n): n components per step
        fo = st.create_group("FieldDataOffsets")
        fo.create_dataset("probe", data=np.arange(3, dtype=np.int64))
        arrays = im.arrays + [{"block": "", "association": "field", "name": "probe", "type": "float64",
                               "components": 4, "tuples": 3, "attribute": None}]
    dump(d, name, {"partitions": im.parts(times=times), "arrays": arrays, "blocks": []})


def composite(d):
    name = "pdc_image.vtkhdf"
    with h5py.File(os.path.join(d, name), "w") as f:
        root = ordered(f, "VTKHDF")
        header(root, "PartitionedDataSetCollection")
        b = root.create_group("grid")
        header(b, "ImageData")
        spatial(b)
        b.attrs["Index"] = np.int64(0)
        im = Image(b, [0, 3, 0, 3, 0, 3], block="/Assembly/fluid/grid", ext_dtype=np.float32)
        im.add("point", "T")
        a = ordered(root, "Assembly")
        node = ordered(a, "fluid")
        node.attrs["Index"] = np.int64(5)
        node["grid"] = h5py.SoftLink("/VTKHDF/grid")
    blocks = [{"block_path": "/Assembly/fluid", "name": "fluid", "kind": "node", "leaf": None, "index": 5,
               "type": None},
              {"block_path": "/Assembly/fluid/grid", "name": "grid", "kind": "leaf", "leaf": "/VTKHDF/grid",
               "index": 0, "type": "ImageData"}]
    dump(d, name, {"partitions": im.parts(), "arrays": im.arrays, "blocks": blocks})


def v1_scalars(d):
    """Version 1.0 without Type (VTK 9.1's rule: WholeExtent means ImageData); the active
    arrays named by attributes of the PointData/CellData groups."""
    name = "v1_scalars.vtkhdf"
    with h5py.File(os.path.join(d, name), "w") as f:
        g = f.create_group("VTKHDF")
        header(g, None, (1, 0))
        spatial(g)
        im = Image(g, [0, 2, 0, 2, 0, 1])
        im.add("point", "density", attribute=None)
        im.add("point", "velocity", (3,))
        im.add("point", "other")
        im.add("cell", "cid", dtype=np.int64)
        fixed_str(g["PointData"], "Scalars", "density")
        fixed_str(g["PointData"], "Vectors", "velocity")
        fixed_str(g["CellData"], "GlobalIds", "cid")
        want = {"density": "Scalars", "velocity": "Vectors", "cid": "GlobalIds"}
        for a in im.arrays:
            a["attribute"] = want.get(a["name"])
    dump(d, name, {"partitions": im.parts(), "arrays": im.arrays, "blocks": []})


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for fn in (float_extent, float_extent_bad, image_2d, image_2d_temporal, composite, v1_scalars):
        fn(d)


if __name__ == "__main__":
    main()
