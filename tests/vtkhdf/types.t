#!/usr/bin/python3
"""The VTKHDF Types beyond UnstructuredGrid/PolyData/ImageData, as TAP: OverlappingAMR
(temporal, in 2.2's singular and 2.3's plural names, and static), HyperTreeGrid (two
partitions, bit-packed Descriptors and Mask, static and temporal), RectilinearGrid,
StructuredGrid with Steps and Table, written by tests/gen/mkvtkhdf_types.py with h5py.
vtkhdf_partitions, vtkhdf_amr_boxes, vtkhdf_trees and vtkhdf_arrays must give the rows
that generator computed while building each file (<stem>.expect.json); then the data
the offsets point at is read back with h5py: each AMR box's slice holds that box's
values, each tree's descriptor and mask bits are the ones the generator wrote for that
tree, each tree's first CellData row is its first cell. Bad files get clear errors; all
of it again over http (nginx). Debian's python3 (/usr/bin/python3) runs it: h5py.
   env: SO (extension, default ./vdsql), SQLITE3"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import Nginx, ok, plan, query, sql  # noqa: E402

GEN = os.path.join(top, "tests", "gen", "mkvtkhdf_types.py")
STEMS = ["amr_v22", "amr_v23", "amr_static", "htg", "htg_temporal", "rectilinear", "structured", "table",
         "types_composite"]
PCOLS = "block, step, time, partition, type, n_points, n_cells, point_offset, cell_offset, n_trees, status"
BCOLS = "block, step, level, box, i_min, i_max, j_min, j_max, k_min, k_max, origin_x, origin_y, origin_z, " \
        "spacing_x, spacing_y, spacing_z"
TCOLS = "block, step, partition, tree, tree_id, depth, n_cells, cell_offset, descriptor_offset, descriptor_bits, " \
        "mask_offset, mask_bits"


def q(s):
    return "'" + s.replace("'", "''") + "'"


def rows(rel, cols, url):
    try:
        return [[r[c.strip()] for c in cols.split(",")] for r in query("SELECT %s FROM %s(%s);" % (cols, rel, q(url)))]
    except Exception as e:  # an error is a result to compare, not a crash of the test
        return [str(e)]


def diff(got, want):
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return "row %d: got %s\n        want %s" % (i, g, w)
    return "rows: got %d, want %d %s" % (len(got), len(want), got[:1])


def check(d, url, label):
    import h5py
    import numpy as np
    for stem in STEMS:
        want = json.load(open(os.path.join(d, stem + ".expect.json")))
        f = "%s/%s.vtkhdf" % (url, stem)
        got = rows("vtkhdf_partitions", PCOLS, f)
        ok(got == want["partitions"], "%s%s: vtkhdf_partitions gives the %d rows the generator computed"
           % (label, stem, len(want["partitions"])), diff(got, want["partitions"]))
        arrays = rows("vtkhdf_arrays", "block, association, name, components, tuples", f)
        n = len(want["arrays"][0])
        ok([a[:n] for a in arrays] == want["arrays"], "%s%s: vtkhdf_arrays lists %s" %
           (label, stem, ", ".join("%s/%s" % (a[0] or "/", a[2]) for a in want["arrays"])), diff(arrays, want["arrays"]))
        plain = stem != "types_composite"  # the data checks below read the plain files' own layout
        if "amr_boxes" in want and want["amr_boxes"]:
            got = rows("vtkhdf_amr_boxes", BCOLS, f)
            ok(got == want["amr_boxes"], "%s%s: vtkhdf_amr_boxes gives every box of every step and level (%d)"
               % (label, stem, len(want["amr_boxes"])), diff(got, want["amr_boxes"]))
            # the slice each row points at holds that box's values (1000 t + 100 k + b)
            bad = []
        if "amr_boxes" in want and plain:
            try:
                got_parts = query("SELECT * FROM vtkhdf_partitions(%s);" % q(f))
            except Exception as e:
                got_parts, bad = [], [str(e)]
            with h5py.File(os.path.join(d, stem + ".vtkhdf"), "r") as h:
                for r in got_parts:
                    lv = h["VTKHDF" + r["block"]]
                    v = 1000 * r["step"] + 100 * int(r["block"][-1]) + r["partition"]
                    dens = lv["PointData/Density"][r["point_offset"]:r["point_offset"] + r["n_points"]]
                    ids = lv["CellData/Id"][r["cell_offset"]:r["cell_offset"] + r["n_cells"]]
                    if len(dens) != r["n_points"] or (dens != v).any() or len(ids) != r["n_cells"] or (ids != -v).any():
                        bad.append(r)
            ok(not bad, "%s%s: each box's point_offset/cell_offset slice of Density and Id holds that box's values"
               % (label, stem), bad[:2])
        if "trees" in want and want["trees"]:
            got = rows("vtkhdf_trees", TCOLS, f)
            ok(got == [t[:12] for t in want["trees"]], "%s%s: vtkhdf_trees gives every tree (%d)" %
               (label, stem, len(want["trees"])), diff(got, [t[:12] for t in want["trees"]]))
        if "trees" in want and plain:
            bad = []
            with h5py.File(os.path.join(d, stem + ".vtkhdf"), "r") as h:
                g = h["VTKHDF"]
                desc = np.unpackbits(g["Descriptors"][()])  # most significant bit first, as vtkBitArray
                mask = np.unpackbits(g["Mask"][()])
                cid = g["CellData/CellId"][()]
                coff = want["cell_data_offsets"]
                parts = {(r[1], r[3]): r[8] for r in want["partitions"]}
                for t, w in zip(got, want["trees"]):
                    if not isinstance(t, list):
                        bad.append(t)
                        break
                    dbits = "".join(map(str, desc[t[8]:t[8] + t[9]]))
                    mbits = "".join(map(str, mask[t[10]:t[10] + t[11]]))
                    first = cid[coff[t[1]] + t[7]]
                    if dbits != w[12] or mbits != w[13] or first != 10000 * t[1] + 1000 * t[2] + t[7] - parts[(t[1], t[2])]:
                        bad.append((t, dbits, w[12], mbits, w[13], first))
            ok(not bad, "%s%s: each tree's descriptor and mask bit ranges hold its own bits, its cell_offset its first "
               "cell" % (label, stem), bad[:2])
    a, b = (rows("vtkhdf_partitions", PCOLS, "%s/%s.vtkhdf" % (url, s)) + rows("vtkhdf_amr_boxes", BCOLS, "%s/%s.vtkhdf"
            % (url, s)) for s in ("amr_v22", "amr_v23"))
    ok(a == b and len(a) > 10, "%s2.2's NumberOfAMRBox/AMRBoxOffset/PointDataOffset read as 2.3's plural names" % label)


def bad_files(d):
    """Copies of good files broken one way each, and the error each must give"""
    import h5py
    import numpy as np
    cases = []

    def copy(stem, new):
        p = os.path.join(d, new + ".vtkhdf")
        shutil.copy(os.path.join(d, stem + ".vtkhdf"), p)
        return p

    p = copy("amr_static", "bad_amr_cols")
    with h5py.File(p, "r+") as h:
        del h["VTKHDF/Level1/AMRBox"]
        h["VTKHDF/Level1"].create_dataset("AMRBox", data=np.zeros((2, 5), dtype=np.int32))
    cases.append(("vtkhdf_partitions", p, "Level1/AMRBox has 5 columns, expected 6"))
    p = copy("amr_static", "bad_amr_box")
    with h5py.File(p, "r+") as h:
        h["VTKHDF/Level0/AMRBox"][0, 1] = -5
    cases.append(("vtkhdf_amr_boxes", p, "Level0/AMRBox row 0 (0 -5 0 3 0 1) is not a valid box"))
    p = copy("amr_v23", "bad_amr_steps")
    with h5py.File(p, "r+") as h:
        h["VTKHDF/Steps/Level1/AMRBoxOffsets"][1] = 4
    cases.append(("vtkhdf_partitions", p, "step 1 of Level1 takes 3 AMRBox rows from row 4, but Level1/AMRBox has 5 rows"))
    p = copy("htg", "bad_htg_size")
    with h5py.File(p, "r+") as h:
        h["VTKHDF/DescriptorsSize"][1] += 1
    cases.append(("vtkhdf_trees", p, "partition 1 of step 0: its 2 trees hold"))
    p = copy("htg", "bad_htg_ids")
    with h5py.File(p, "r+") as h:
        del h["VTKHDF/TreeIds"]
        h["VTKHDF"].create_dataset("TreeIds", data=np.arange(3, dtype=np.int64))
    cases.append(("vtkhdf_trees", p, "TreeIds has 3 entries, entry 3 is needed"))
    return cases


def main():
    try:
        import h5py  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        print("1..1\nnot ok 1 - h5py and numpy are needed (Debian python3-h5py python3-numpy; scripts/install-deps)")
        return 1
    tmp = tempfile.mkdtemp(prefix="vdsql-vtktypes.")
    web = None
    try:
        d = os.path.join(tmp, "t")
        r = subprocess.run([sys.executable, GEN, d], capture_output=True, text=True)
        if not ok(r.returncode == 0, "the generator wrote the files", r.stderr):
            return plan()
        check(d, d, "")
        cases = bad_files(d)
        for rel, p, msg in cases:
            r = sql("SELECT count(*) FROM %s(%s);" % (rel, q(p)))
            ok(r.returncode != 0 and os.path.basename(p) in r.stderr and msg in r.stderr,
               "%s: %s refuses it naming the file: ...%s" % (os.path.basename(p), rel, msg), r.stderr or r.stdout)
        # what is held in memory is bounded by max_alloc, with the usual error: 30,000 boxes
        import h5py
        import numpy as np
        p = os.path.join(d, "many_boxes.vtkhdf")
        shutil.copy(os.path.join(d, "amr_static.vtkhdf"), p)
        with h5py.File(p, "r+") as h:
            del h["VTKHDF/Level1"]
            del h["VTKHDF/Level0/AMRBox"]
            h["VTKHDF/Level0"].create_dataset("AMRBox", data=np.tile(np.array([0, 1, 0, 1, 0, 0], dtype=np.int32),
                                                                     (30000, 1)))
        r = sql("SELECT count(*), sum(n_cells), max(cell_offset) FROM vtkhdf_partitions(%s);" % q(p))
        ok(r.returncode == 0 and r.stdout.split() == ["30000|120000|119996"], "many_boxes: 30,000 boxes of 4 cells",
           r.stderr or r.stdout)
        for rel in ("vtkhdf_partitions", "vtkhdf_amr_boxes"):
            r = sql("SELECT vdsql_config('max_alloc', '1048576');\nSELECT count(*) FROM %s(%s);" % (rel, q(p)))
            ok(r.returncode != 0 and "many_boxes.vtkhdf" in r.stderr and
               "more than vdsql_config('max_alloc') (1048576)" in r.stderr,
               "many_boxes: %s within max_alloc, else a clear error" % rel, r.stderr or r.stdout)
        web = Nginx(d, os.path.join(tmp, "nginx"))
        if not ok(web.started, "http: nginx started", web.error):
            return plan()
        url = web.url
        check(d, url, "http ")
        rel, p, msg = cases[3]
        r = sql("SELECT count(*) FROM %s(%s);" % (rel, q(url + "/" + os.path.basename(p))))
        ok(r.returncode != 0 and url + "/bad_htg_size.vtkhdf" in r.stderr and msg in r.stderr,
           "http bad_htg_size: the same error, naming the URL", r.stderr or r.stdout)
    finally:
        if web:
            web.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


if __name__ == "__main__":
    sys.exit(main())
