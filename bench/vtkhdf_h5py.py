#!/usr/bin/env python3
"""The h5py + numpy peer of bench/vtkhdf: every (step, partition) of a temporal
UnstructuredGrid VTKHDF file with its counts and its starts in Points, Types, Connectivity
and Offsets, computed as VTK's reader does (the same rule vdsql implements), then summed
into the same checksum the SQL side prints. Prints: rows, checksum, then rchar (bytes this
process read) from /proc/self/io.
   usage: vtkhdf_h5py.py FILE"""
import sys

import h5py
import numpy as np


def main(path):
    with h5py.File(path, "r") as f:
        g = f["VTKHDF"]
        np_ = g["NumberOfPoints"][()].astype(np.int64)
        nc = g["NumberOfCells"][()].astype(np.int64)
        nci = g["NumberOfConnectivityIds"][()].astype(np.int64)
        s = g["Steps"]
        nsteps = int(s.attrs["NSteps"])
        po = s["PartOffsets"][()].astype(np.int64)
        nparts = s["NumberOfParts"][()].astype(np.int64)
        pto = s["PointOffsets"][()].astype(np.int64)
        co = s["CellOffsets"][()].astype(np.int64).reshape(nsteps, -1)[:, 0]
        cio = s["ConnectivityIdOffsets"][()].astype(np.int64).reshape(nsteps, -1)[:, 0]
    rows = 0
    total = 0
    for t in range(nsteps):
        p, n = int(po[t]), int(nparts[t])
        a, b, c = np_[p:p + n], nc[p:p + n], nci[p:p + n]
        j = np.arange(n, dtype=np.int64)
        point_off = pto[t] + np.cumsum(a) - a
        cell_off = co[t] + np.cumsum(b) - b
        conn_off = cio[t] + np.cumsum(c) - c
        offs_off = co[t] + p + (np.cumsum(b) - b) + j
        total += int(a.sum() + b.sum() + c.sum() + point_off.sum() + cell_off.sum() + conn_off.sum() + offs_off.sum())
        rows += n
    print(rows)
    print(total)
    with open("/proc/self/io") as io:
        for line in io:
            if line.startswith("rchar:"):
                print(line.split()[1])


if __name__ == "__main__":
    main(sys.argv[1])
