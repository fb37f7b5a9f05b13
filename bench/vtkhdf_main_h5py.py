#!/usr/bin/env python3
"""Peer and helper of bench/vtkhdf_main (Debian python3-h5py + numpy).
   gen DIR N            writes N single-partition UnstructuredGrid part files DIR/part_<k>.vtkhdf
   assemble MAIN PARTS  builds the main file a user would write with h5py: every dataset of
                        the parts' /VTKHDF a virtual dataset concatenating them, in order
                        (the layout of VTK's UseExternalPartitions, relative source names)
   compare A B          exits 1 unless every dataset of A and B reads the same through HDF5"""
import os
import sys

import h5py
import numpy as np


def gen(d, n):
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(1)
    for k in range(n):
        npt, nc = 100 + k % 17, 50 + k % 13
        with h5py.File(os.path.join(d, "part_%04d.vtkhdf" % k), "w") as f:
            g = f.create_group("VTKHDF")
            g.attrs["Version"] = np.array([2, 1], "i8")
            g.attrs.create("Type", np.bytes_("UnstructuredGrid"), dtype=h5py.string_dtype("ascii", 16))
            g["NumberOfPoints"] = np.array([npt], "i8")
            g["NumberOfCells"] = np.array([nc], "i8")
            g["NumberOfConnectivityIds"] = np.array([3 * nc], "i8")
            g["Points"] = rng.random((npt, 3))
            g["Types"] = np.full(nc, 5, "u1")
            g["Offsets"] = np.arange(nc + 1, dtype="i8") * 3
            g["Connectivity"] = rng.integers(0, npt, 3 * nc)
            g.create_group("PointData")["temperature"] = rng.random(npt)
            g.create_group("CellData")["velocity"] = rng.random((nc, 3))


def datasets(g, prefix=""):
    out = {}
    for k, v in g.items():
        if isinstance(v, h5py.Group):
            out.update(datasets(v, prefix + k + "/"))
        else:
            out[prefix + k] = (v.shape, v.dtype)
    return out


def assemble(main, parts):
    base = os.path.dirname(os.path.abspath(main))
    shapes = []
    for p in parts:
        with h5py.File(p, "r") as f:
            shapes.append(datasets(f["VTKHDF"]))
            if p is parts[0]:
                attrs = dict(f["VTKHDF"].attrs)
    common = [k for k in shapes[0] if all(k in s for s in shapes)]
    tmp = main + ".tmp"
    with h5py.File(tmp, "w") as f:
        g = f.create_group("VTKHDF")
        for k, v in attrs.items():
            g.attrs[k] = v
        for k in common:
            rows = sum(s[k][0][0] for s in shapes)
            shape0, dtype = shapes[0][k]
            layout = h5py.VirtualLayout(shape=(rows,) + shape0[1:], dtype=dtype)
            r = 0
            for p, s in zip(parts, shapes):
                n = s[k][0][0]
                layout[r:r + n] = h5py.VirtualSource(os.path.relpath(os.path.abspath(p), base), "/VTKHDF/" + k, shape=s[k][0])
                r += n
            g.create_virtual_dataset(k, layout)
    os.replace(tmp, main)


def compare(a, b):
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        da, db = datasets(fa["VTKHDF"]), datasets(fb["VTKHDF"])
        if set(da) != set(db):
            print("datasets differ:", sorted(set(da) ^ set(db)))
            return 1
        for k in da:
            if not np.array_equal(fa["VTKHDF"][k][()], fb["VTKHDF"][k][()]):
                print("dataset differs:", k)
                return 1
    return 0


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "gen":
        gen(sys.argv[2], int(sys.argv[3]))
    elif cmd == "assemble":
        assemble(sys.argv[2], sys.argv[3:])
    elif cmd == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
