#!/usr/bin/python3
"""vtkhdf_main, as TAP: part files written here with h5py (UnstructuredGrid and PolyData
pieces, ImageData steps) are assembled from SQL in the three layouts, then checked with
h5py (every dataset read through the main file equals the parts' data concatenated; the
links and mappings are what spec section 5 describes), with vdsql's vtkhdf_partitions /
vtkhdf_sources / vtkhdf_blocks (counts and starts computed here from the parts), and with
Debian's python3-vtk9 vtkHDFReader (VTK 9.1: UnstructuredGrid and ImageData). Also:
errors, reconnect, ROLLBACK, DELETE, relative vs absolute names, moving the set, a
deleted part file.
   env: SO (extension, default ./vdsql), SQLITE3"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import ok, plan, query, sql  # noqa: E402

try:
    import h5py
    import numpy as np
except ImportError:
    print("1..1\nnot ok 1 - h5py and numpy are missing: install python3-h5py python3-numpy (scripts/install-deps)")
    sys.exit(1)

TOPO = ["Vertices", "Lines", "Polygons", "Strips"]


def q(s):
    return "'%s'" % s.replace("'", "''")


def type_attr(g, t):
    g.attrs.create("Type", np.bytes_(t), dtype=h5py.string_dtype("ascii", len(t)))


def write_ug(path, pieces, seed, comps=3, extra=None, temp="f4"):
    """An UnstructuredGrid file with pieces [(n_points, n_cells)], triangles; temp: the
    point array's type"""
    rng = np.random.default_rng(seed)
    with h5py.File(path, "w") as f:
        g = f.create_group("VTKHDF")
        g.attrs["Version"] = np.array([2, 1], "i8")
        type_attr(g, "UnstructuredGrid")
        c = {k: [] for k in ("P", "T", "O", "C", "pd", "cd", "ex")}
        for npt, nc in pieces:
            c["P"].append(rng.random((npt, 3)))
            c["T"].append(np.full(nc, 5, "u1"))
            c["O"].append(np.arange(nc + 1, dtype="i8") * 3)
            c["C"].append(rng.integers(0, npt, 3 * nc))
            c["pd"].append(rng.random(npt).astype(temp))
            c["cd"].append(rng.random((nc, comps)))
            c["ex"].append(rng.random(npt))
        g["NumberOfPoints"] = np.array([p[0] for p in pieces], "i8")
        g["NumberOfCells"] = np.array([p[1] for p in pieces], "i8")
        g["NumberOfConnectivityIds"] = np.array([3 * p[1] for p in pieces], "i8")
        g["Points"] = np.concatenate(c["P"])
        g["Types"] = np.concatenate(c["T"])
        g["Offsets"] = np.concatenate(c["O"])
        g["Connectivity"] = np.concatenate(c["C"]).astype("i8")
        g.create_group("PointData")["temp"] = np.concatenate(c["pd"])
        g.create_group("CellData")["vel"] = np.concatenate(c["cd"])
        if extra:  # an array only some parts have: left out of the main file
            g["PointData"]["only_some"] = np.concatenate(c["ex"])


def write_poly(path, pieces, seed):
    """A PolyData file; pieces: [(n_points, [n cells per topology])], 2-point cells"""
    rng = np.random.default_rng(seed)
    with h5py.File(path, "w") as f:
        g = f.create_group("VTKHDF")
        g.attrs["Version"] = np.array([2, 1], "i8")
        type_attr(g, "PolyData")
        g["NumberOfPoints"] = np.array([p[0] for p in pieces], "i8")
        g["Points"] = np.concatenate([rng.random((p[0], 3)) for p in pieces])
        for k, t in enumerate(TOPO):
            tg = g.create_group(t)
            tg["NumberOfCells"] = np.array([p[1][k] for p in pieces], "i8")
            tg["NumberOfConnectivityIds"] = np.array([2 * p[1][k] for p in pieces], "i8")
            tg["Offsets"] = np.concatenate([np.arange(p[1][k] + 1, dtype="i8") * 2 for p in pieces])
            tg["Connectivity"] = np.concatenate([rng.integers(0, p[0], 2 * p[1][k]) for p in pieces]).astype("i8")
        g.create_group("PointData")["h"] = np.concatenate([rng.random(p[0]) for p in pieces])
        g.create_group("CellData")["id"] = np.concatenate([rng.integers(0, 99, sum(p[1])) for p in pieces]).astype("i4")


def write_image(path, seed, nx=4, ny=3, nz=2, origin=(0.0, 0.0, 0.0)):
    rng = np.random.default_rng(seed)
    with h5py.File(path, "w") as f:
        g = f.create_group("VTKHDF")
        g.attrs["Version"] = np.array([2, 1], "i8")
        type_attr(g, "ImageData")
        g.attrs["WholeExtent"] = np.array([0, nx - 1, 0, ny - 1, 0, nz - 1], "i8")
        g.attrs["Origin"] = np.array(origin, "f8")
        g.attrs["Spacing"] = np.array([1.0, 0.5, 0.25])
        g.attrs["Direction"] = np.eye(3).ravel()
        g.create_group("PointData")["rho"] = rng.random((nz, ny, nx))
        g.create_group("CellData")["v"] = rng.random((nz - 1, ny - 1, nx - 1, 3)).astype("f4")


def run(script, env=None):
    """(returncode, stdout, stderr) of the shell over script"""
    p = sql(script, env=env)
    return p.returncode, p.stdout, p.stderr


def h5_datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        f["VTKHDF"].visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return out


def check_concat(main, parts, what, skip=("Steps",), stack=False):
    """every dataset read through main equals the parts' datasets concatenated (or stacked
    on a new time axis), and nothing else is in main"""
    got = h5_datasets(main)
    pd = [h5_datasets(p) for p in parts]
    common = [k for k in pd[0] if all(k in d for d in pd)]
    want = {k: (np.stack if stack else np.concatenate)([d[k] for d in pd]) for k in common if not k.startswith("FieldData")}
    gk = {k for k in got if not any(k.startswith(s) for s in skip)}
    bad = [k for k in want if k not in got or got[k].shape != want[k].shape or not np.array_equal(got[k], want[k])]
    ok(not bad and gk == set(want), "%s: every dataset of the main file equals the parts concatenated (h5py)" % what,
       "differ: %s; main has %s, expected %s" % (bad, sorted(gk), sorted(want)))


def mappings(main, ds="VTKHDF/NumberOfPoints"):
    with h5py.File(main, "r") as f:
        return [v.file_name for v in f[ds].virtual_sources()]


def exp_parts(files, poly=False):
    """vtkhdf_partitions rows (counts and starts) computed from the parts alone"""
    rows, pt, cell, conn, offs, part = [], 0, 0, 0, 0, 0
    for fn in files:
        with h5py.File(fn, "r") as f:
            g = f["VTKHDF"]
            NP = g["NumberOfPoints"][()]
            if poly:
                NC = sum(g[t]["NumberOfCells"][()] for t in TOPO)
                NCI = sum(g[t]["NumberOfConnectivityIds"][()] for t in TOPO)
            else:
                NC, NCI = g["NumberOfCells"][()], g["NumberOfConnectivityIds"][()]
        for j in range(len(NP)):
            r = {"partition": part, "n_points": int(NP[j]), "n_cells": int(NC[j]), "point_offset": pt,
                 "source_file": os.path.realpath(fn)}
            if not poly:
                r.update(n_connectivity_ids=int(NCI[j]), cell_offset=cell, connectivity_offset=conn, offsets_offset=offs)
            rows.append(r)
            pt += int(NP[j])
            cell += int(NC[j])
            conn += int(NCI[j])
            offs += int(NC[j]) + 1
            part += 1
    return rows


def got_parts(main, keys):
    rows = query("SELECT * FROM vtkhdf_partitions(%s);" % q(main))
    return [{k: (os.path.realpath(r[k]) if k == "source_file" and r[k] else r[k]) for k in keys} for r in rows], rows


def md5(p):
    return hashlib.md5(open(p, "rb").read()).hexdigest()


def vtk_counts(path):
    """(points, cells) as Debian's VTK 9.1 vtkHDFReader reads path, or an error string"""
    code = ("import sys, vtk\nr = vtk.vtkHDFReader()\nr.SetFileName(sys.argv[1])\nr.Update()\n"
            "o = r.GetOutput()\nprint(o.GetNumberOfPoints(), o.GetNumberOfCells())\n")
    p = subprocess.run(["/usr/bin/python3", "-c", code, path], capture_output=True, text=True)
    if p.returncode:
        return p.stderr.strip().splitlines()[-1:] or ["failed"]
    return tuple(int(x) for x in p.stdout.split()[-2:])


def have_vtk():
    return subprocess.run(["/usr/bin/python3", "-c", "import vtk; vtk.vtkHDFReader"], capture_output=True).returncode == 0


d = tempfile.mkdtemp(prefix="vtkhdf_main.")
try:
    os.makedirs(os.path.join(d, "parts"))
    P = lambda *n: os.path.join(d, "parts", *n)  # noqa: E731
    ug = [P("ug_%d.vtkhdf" % i) for i in range(3)]
    write_ug(ug[0], [(5, 3)], 0, extra=True)
    write_ug(ug[1], [(6, 2), (4, 4)], 1)  # a part that is itself two partitions
    write_ug(ug[2], [(7, 5)], 2, extra=True)
    main = os.path.join(d, "ug.vtkhdf")

    # ---- partitions: UnstructuredGrid ----
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\n" % q(main) +
                       "".join("INSERT INTO m(file) VALUES (%s);\n" % q(f) for f in ug) +
                       ".mode list\nSELECT file, stored FROM m;\n")
    ok(rc == 0 and out.split() == ["%s|../%s" % (os.path.realpath(f), "parts/" + os.path.basename(f)) for f in ug][0:0] +
       ["%s|parts/%s" % (os.path.realpath(f), os.path.basename(f)) for f in ug],
       "partitions: three INSERTs list three members with names relative to the main file", out + err)
    um = os.umask(0)
    os.umask(um)
    ok(os.stat(main).st_mode & 0o777 == 0o666 & ~um, "the main file gets a new file's mode (umask), not mkstemp's 0600",
       oct(os.stat(main).st_mode))
    check_concat(main, ug, "partitions UG")
    # what a writer killed during COMMIT leaves (its temporary file) goes at the next COMMIT;
    # another main file's temporary file stays
    d0 = os.path.dirname(main)
    for n in (".ug.vtkhdf.Ab3dE9", ".other.vtkhdf.Ab3dE9"):
        open(os.path.join(d0, n), "wb").write(b"half a main file")
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\nBEGIN;\n" % q(main) +
                       "DELETE FROM m WHERE file = %s;\nINSERT INTO m(file) VALUES (%s);\nCOMMIT;\n"
                       % (q(os.path.realpath(ug[2])), q(ug[2])))
    left = sorted(n for n in os.listdir(d0) if n.startswith("."))
    ok(rc == 0 and left == [".other.vtkhdf.Ab3dE9"], "a COMMIT removes the temporary file a killed writer of the same "
       "main file left, and no other", [err, left])
    os.unlink(os.path.join(d0, ".other.vtkhdf.Ab3dE9"))
    ok(mappings(main) == ["parts/" + os.path.basename(f) for f in ug], "partitions UG: one mapping per part, in insertion "
       "order, relative source names (h5py virtual_sources)", mappings(main))
    with h5py.File(main, "r") as f:
        ok("only_some" not in f["VTKHDF/PointData"] and f["VTKHDF/Offsets"].shape == (14 + 4,),
           "partitions UG: an array missing from one part is left out; Offsets holds NC+1 per partition")
    keys = ["partition", "n_points", "n_cells", "n_connectivity_ids", "point_offset", "cell_offset", "connectivity_offset",
            "offsets_offset", "source_file"]
    got, rows = got_parts(main, keys)
    ok(got == exp_parts(ug) and all(r["status"] == "ok" for r in rows),
       "partitions UG: vtkhdf_partitions counts, starts and source files equal the parts'", [got, exp_parts(ug)])
    src = query("SELECT DISTINCT file, status FROM vtkhdf_sources(%s) WHERE kind = 'virtual';" % q(main))
    ok(sorted(r["file"] for r in src) == sorted("parts/" + os.path.basename(f) for f in ug) and
       all(r["status"] == "ok" for r in src), "partitions UG: vtkhdf_sources lists the three parts, all ok", src)

    if not have_vtk():
        ok(False, "python3-vtk9 is missing: install it (scripts/install-deps) for the vtkHDFReader cross-check")
    else:
        want = (sum(vtk_counts(f)[0] for f in ug), sum(vtk_counts(f)[1] for f in ug))
        ok(vtk_counts(main) == want == (22, 14),
           "partitions UG: VTK 9.1 vtkHDFReader reads the main file with the parts' point and cell counts summed",
           [vtk_counts(main), want])

    # ---- reconnect, ROLLBACK, DELETE ----
    before = md5(main)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\n.mode list\n" % q(main) +
                       "SELECT rowid, file FROM m;\nBEGIN;\nDELETE FROM m WHERE file LIKE '%%ug_0%%';\n"
                       "INSERT INTO m(file) VALUES (%s);\nSELECT count(*) FROM m;\nROLLBACK;\nSELECT count(*) FROM m;\n" % q(ug[0]))
    lines = out.split()
    ok(rc == 0 and [ln.split("|")[1] for ln in lines[:3]] == [os.path.realpath(f) for f in ug],
       "reconnect: a new connection reads the three members back from the main file, in order", out + err)
    ok(lines[3:] == ["3", "3"] and md5(main) == before, "ROLLBACK: the main file is untouched and the members unchanged",
       out + err)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\n.mode list\n" % q(main) +
                       "BEGIN;\nSAVEPOINT a;\nDELETE FROM m WHERE rowid = 2;\nSAVEPOINT b;\nDELETE FROM m;\n"
                       "ROLLBACK TO b;\nSELECT count(*) FROM m;\nROLLBACK TO a;\nSELECT count(*) FROM m;\n"
                       "DELETE FROM m WHERE rowid = 3;\nRELEASE a;\nROLLBACK;\nSELECT count(*) FROM m;\n")
    ok(out.split() == ["2", "3", "3"] and md5(main) == before,
       "savepoints: ROLLBACK TO restores the rows of each level (also one opened before the table joined)", out + err)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\n" % q(main) +
                       "DELETE FROM m WHERE file LIKE '%ug_1%';\n")
    check_concat(main, [ug[0], ug[2]], "DELETE + COMMIT rebuilds without the row:")
    got, rows = got_parts(main, keys)
    ok(got == exp_parts([ug[0], ug[2]]), "DELETE: vtkhdf_partitions shows the two remaining parts", got)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\n" % q(main) +
                       "INSERT INTO m(file) VALUES (%s);\n" % q(ug[1]))
    ok(rc == 0 and mappings(main) == ["parts/" + os.path.basename(f) for f in (ug[0], ug[2], ug[1])],
       "INSERT after reconnect appends", mappings(main))

    # ---- errors: each names the file and the difference; the main file stays as it was ----
    bad_comp, bad_type, temporal, notvtk = P("comp.vtkhdf"), P("poly1.vtkhdf"), P("temporal.vtkhdf"), P("plain.h5")
    write_ug(bad_comp, [(3, 1)], 9, comps=2)
    write_poly(bad_type, [(4, [1, 1, 1, 1])], 9)
    write_ug(temporal, [(3, 1)], 9)
    with h5py.File(temporal, "a") as f:
        s = f["VTKHDF"].create_group("Steps")
        s.attrs["NSteps"] = 1
    with h5py.File(notvtk, "w") as f:
        f["x"] = [1]
    before = md5(main)
    cases = [
        (bad_comp, "CellData/vel has 2 components where", "another number of components"),
        (bad_type, "is a PolyData where", "another Type"),
        (ug[0], "is already a member", "a file listed twice"),
        (temporal, "is temporal", "a temporal part"),
        (notvtk, "not a VTKHDF file", "not a VTKHDF file"),
        (P("nope.vtkhdf"), "no such file", "a missing file"),
        ("http://127.0.0.1:9/x.vtkhdf", "part files must be local", "an http part"),
        ("s3://bucket/x.vtkhdf", "part files must be local", "an s3 part"),
    ]
    for f, msg, what in cases:
        rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\n" % q(main) +
                           "INSERT INTO m(file) VALUES (%s);\n" % q(f))
        name = f if "://" in f else os.path.basename(f)
        ok(rc != 0 and msg in err and name in err and md5(main) == before,
           "error: %s is refused naming it and the difference; the main file is unchanged" % what, err)
    ok(not [x for x in os.listdir(d) if x.startswith(".")], "no temporary file is left behind", os.listdir(d))
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'timesteps');" % q(main))
    ok(rc != 0 and "holds a 'partitions' assembly, not 'timesteps'" in err, "reconnect with another layout is refused", err)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');" % q(ug[0]))
    ok(rc != 0 and "is not a multi-file main file (a UnstructuredGrid without virtual datasets)" in err and
       "refusing to replace it" in err and ug[0] in err,
       "a table over a plain VTKHDF file refuses to replace it", err)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'bogus');" % q(main))
    ok(rc != 0 and "'partitions', 'timesteps' or 'composite'" in err, "an unknown layout is refused", err)

    # ---- a name HDF5 would read as a pattern ('%b') ----
    odd = P("odd %b 100%.vtkhdf")
    shutil.copy(ug[2], odd)
    mo = os.path.join(d, "odd.vtkhdf")
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\n" % q(mo) +
                       "INSERT INTO m(file) VALUES (%s), (%s);\n" % (q(ug[0]), q(odd)))
    check_concat(mo, [ug[0], odd], "a part named with '%'")
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\n.mode list\nSELECT file FROM m;\n" % q(mo))
    ok(out.split("\n")[:2] == [ug[0], odd], "a part named with '%': read back by a new connection", out + err)
    os.remove(odd)
    os.remove(mo)

    # ---- absolute names, moving the set ----
    mabs = os.path.join(d, "abs.vtkhdf")
    run("SELECT vdsql_config('vtkhdf_absolute_paths', 'on');\n"
        "CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\n" % q(mabs) +
        "".join("INSERT INTO m(file) VALUES (%s);\n" % q(f) for f in ug))
    ok(mappings(mabs) == [os.path.realpath(f) for f in ug], "vtkhdf_absolute_paths on: absolute source names",
       mappings(mabs))
    moved = d + ".moved"
    os.rename(d, moved)
    try:
        mm = os.path.join(moved, "ug.vtkhdf")
        check_concat(mm, [os.path.join(moved, "parts", os.path.basename(f)) for f in (ug[0], ug[2], ug[1])],
                     "moved set (relative names)")
        rows = query("SELECT status FROM vtkhdf_partitions(%s);" % q(mm))
        ok(len(rows) == 4 and all(r["status"] == "ok" for r in rows), "moved set: every partition still ok", rows)
    finally:
        os.rename(moved, d)

    # ---- a deleted part file: missing_source on exactly its rows ----
    keep = P("ug_2.keep")
    shutil.copy(ug[2], keep)
    os.remove(ug[2])
    rows = query("SELECT partition, status FROM vtkhdf_partitions(%s);" % q(main))
    ok([r["status"] for r in rows] == ["ok", "missing_source", "ok", "ok"],
       "deleting one part file shows missing_source on exactly its partition", rows)
    ug3 = P("ug_3.vtkhdf")
    write_ug(ug3, [(3, 2)], 3)
    before = md5(main)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\n" % q(main) +
                       "INSERT INTO m(file) VALUES (%s);\n" % q(ug3))
    ok(rc != 0 and "ug_2.vtkhdf: no such file" in err and md5(main) == before,
       "a member whose file is gone blocks the COMMIT, naming it; the main file is unchanged", err)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\n" % q(main) +
                       "DELETE FROM m WHERE file LIKE '%ug_2%';\n")
    ok(rc == 0 and mappings(main) == ["parts/ug_0.vtkhdf", "parts/ug_1.vtkhdf"],
       "deleting the missing member rebuilds the main file without it", err + str(mappings(main)))
    shutil.move(keep, ug[2])

    # ---- partitions: PolyData ----
    poly = [P("poly_%d.vtkhdf" % i) for i in range(3)]
    write_poly(poly[0], [(6, [1, 2, 3, 1])], 10)
    write_poly(poly[1], [(5, [2, 1, 1, 2]), (4, [1, 1, 2, 1])], 11)
    write_poly(poly[2], [(8, [3, 2, 1, 1])], 12)
    mp = os.path.join(d, "poly.vtkhdf")
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\nBEGIN;\n" % q(mp) +
                       "".join("INSERT INTO m(file) VALUES (%s);\n" % q(f) for f in poly) + "COMMIT;\n")
    ok(rc == 0, "partitions PolyData: assembled in one transaction", err)
    check_concat(mp, poly, "partitions PolyData")
    got, rows = got_parts(mp, ["partition", "n_points", "n_cells", "point_offset", "source_file"])
    ok(got == exp_parts(poly, poly=True), "partitions PolyData: vtkhdf_partitions counts and point starts equal the parts'",
       [got, exp_parts(poly, poly=True)])
    topo = query("SELECT partition, topology, n_cells, cell_offset, offsets_offset FROM vtkhdf_topologies(%s) "
                 "ORDER BY partition, topology;" % q(mp))
    want, cs, os_ = [], {}, {}
    part = 0
    for fn in poly:
        with h5py.File(fn, "r") as f:
            n = len(f["VTKHDF/NumberOfPoints"])
            for j in range(n):
                for t in TOPO:
                    nc = int(f["VTKHDF"][t]["NumberOfCells"][j])
                    want.append((part, t, nc, cs.get(t, 0), os_.get(t, 0)))
                    cs[t] = cs.get(t, 0) + nc
                    os_[t] = os_.get(t, 0) + nc + 1
                part += 1
    gt = sorted((r["partition"], r["topology"], r["n_cells"], r["cell_offset"], r["offsets_offset"]) for r in topo)
    ok(gt == sorted(want), "partitions PolyData: vtkhdf_topologies per-topology counts and starts equal the parts'",
       [gt, sorted(want)])

    # ---- timesteps: UnstructuredGrid, two files in step 1 ----
    st = [P("st_%d.vtkhdf" % i) for i in range(4)]
    for i, f in enumerate(st):
        write_ug(f, [(4 + i, 2 + i)], 20 + i)
    ms = os.path.join(d, "steps.vtkhdf")
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'timesteps');\nBEGIN;\n" % q(ms) +
                       "INSERT INTO m(file, step, time) VALUES (%s, 0, 0.5), (%s, 1, 1.5), (%s, 1, 1.5), (%s, 2, 2.5);\n"
                       % tuple(q(f) for f in st) + "COMMIT;\n")
    ok(rc == 0, "timesteps UG: four files in three steps", err)
    check_concat(ms, st, "timesteps UG")
    with h5py.File(ms, "r") as f:
        s = f["VTKHDF/Steps"]
        got = {k: s[k][()].tolist() for k in ("Values", "PartOffsets", "NumberOfParts", "PointOffsets", "CellOffsets",
                                              "ConnectivityIdOffsets")}
        got["NSteps"] = int(s.attrs["NSteps"])
        got["pdo"] = s["PointDataOffsets/temp"][()].tolist()
        got["cdo"] = s["CellDataOffsets/vel"][()].tolist()
    want = {"Values": [0.5, 1.5, 2.5], "PartOffsets": [0, 1, 3], "NumberOfParts": [1, 2, 1], "PointOffsets": [0, 4, 15],
            "CellOffsets": [[0], [2], [9]], "ConnectivityIdOffsets": [[0], [6], [27]], "NSteps": 3, "pdo": [0, 4, 15],
            "cdo": [0, 2, 9]}
    ok(got == want, "timesteps UG: the Steps group sums the step files (h5py)", [got, want])
    rows = query("SELECT step, time, partition, n_points, point_offset, cell_offset, offsets_offset, source_file "
                 "FROM vtkhdf_partitions(%s);" % q(ms))
    gt = [(r["step"], r["time"], r["partition"], r["n_points"], r["point_offset"], r["cell_offset"], r["offsets_offset"],
           os.path.realpath(r["source_file"])) for r in rows]
    want = [(0, 0.5, 0, 4, 0, 0, 0, st[0]), (1, 1.5, 0, 5, 4, 2, 3, st[1]), (1, 1.5, 1, 6, 9, 5, 7, st[2]),
            (2, 2.5, 0, 7, 15, 9, 12, st[3])]
    ok(gt == [(a, b, c, e, f_, g, h, os.path.realpath(i)) for a, b, c, e, f_, g, h, i in want],
       "timesteps UG: vtkhdf_partitions gives each step's partitions, starts and files", gt)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'timesteps');\n.mode list\n" % q(ms) +
                       "SELECT step, time, file FROM m ORDER BY rowid;\n")
    ok(out.split() == ["%d|%s|%s" % (s_, t, os.path.realpath(f)) for s_, t, f in
                       [(0, 0.5, st[0]), (1, 1.5, st[1]), (1, 1.5, st[2]), (2, 2.5, st[3])]],
       "timesteps: reconnect reads steps and times back from Steps", out + err)
    before = md5(ms)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'timesteps');\n" % q(ms) +
                       "INSERT INTO m(file, step) VALUES (%s, 5);\n" % q(ug[0]))
    ok(rc != 0 and "step 3 has no file" in err and md5(ms) == before and
       not [x for x in os.listdir(d) if x.startswith(".")],
       "timesteps: a gap in the steps fails the COMMIT; the old main file stays and no temporary is left", err)

    # ---- timesteps: ImageData ----
    im = [P("im_%d.vtkhdf" % i) for i in range(3)]
    for i, f in enumerate(im):
        write_image(f, 30 + i)
    mi = os.path.join(d, "image.vtkhdf")
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'timesteps');\n" % q(mi) +
                       "".join("INSERT INTO m(file) VALUES (%s);\n" % q(f) for f in im))
    ok(rc == 0, "timesteps ImageData: one file per step, steps numbered in insertion order", err)
    check_concat(mi, im, "timesteps ImageData (a leading time axis)", stack=True)
    with h5py.File(mi, "r") as f:
        g = f["VTKHDF"]
        ok(list(g.attrs["WholeExtent"]) == [0, 3, 0, 2, 0, 1] and g["Steps"].attrs["NSteps"] == 3 and
           g["Steps/PointDataOffsets/rho"][()].tolist() == [0, 1, 2] and g["Steps/Values"][()].tolist() == [0, 1, 2],
           "timesteps ImageData: WholeExtent copied; Steps NSteps, Values and per-array offsets (h5py)")
    rows = query("SELECT step, n_points, n_cells FROM vtkhdf_partitions(%s);" % q(mi))
    ok([(r["step"], r["n_points"], r["n_cells"]) for r in rows] == [(t, 24, 6) for t in range(3)],
       "timesteps ImageData: vtkhdf_partitions gives three steps of 24 points and 6 cells", rows)
    if have_vtk():
        ok(vtk_counts(mi) == vtk_counts(im[0]) == (24, 6), "timesteps ImageData: VTK 9.1 vtkHDFReader reads its geometry",
           [vtk_counts(mi), vtk_counts(im[0])])
    odd = P("im_odd.vtkhdf")
    write_image(odd, 40, origin=(1.0, 0.0, 0.0))
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'timesteps');\n" % q(mi) +
                       "INSERT INTO m(file) VALUES (%s);\n" % q(odd))
    ok(rc != 0 and "im_odd.vtkhdf: its Origin differs from" in err, "timesteps ImageData: another Origin is refused", err)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\n" % q(os.path.join(d, "x.vtkhdf")) +
                       "INSERT INTO m(file) VALUES (%s);\n" % q(im[0]))
    ok(rc != 0 and "Type ImageData cannot be assembled as partitions" in err, "partitions of ImageData are refused", err)

    # ---- composite ----
    mc = os.path.join(d, "comp.vtkhdf")
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'composite');\n" % q(mc) +
                       "INSERT INTO m(file, block) VALUES (%s, 'solid'), (%s, 'surface'), (%s, 'field');\n"
                       % (q(ug[0]), q(poly[0]), q(im[0])))
    ok(rc == 0, "composite: three blocks of three Types", err)
    with h5py.File(mc, "r") as f:
        g = f["VTKHDF"]
        links = [(k, type(g.get(k, getlink=True)).__name__) for k in g]
        el = [(g.get(k, getlink=True).filename, g.get(k, getlink=True).path) for k in ("solid", "surface", "field")]
        al = [(k, g["Assembly"].get(k, getlink=True).path) for k in g["Assembly"]]
        order = list(g["Assembly"].keys())  # h5py lists in creation order when it is tracked
        ok(g.attrs["Type"] == b"PartitionedDataSetCollection" and
           el == [("parts/ug_0.vtkhdf", "/VTKHDF"), ("parts/poly_0.vtkhdf", "/VTKHDF"), ("parts/im_0.vtkhdf", "/VTKHDF")]
           and al == [("solid", "/VTKHDF/solid"), ("surface", "/VTKHDF/surface"), ("field", "/VTKHDF/field")] and
           order == ["solid", "surface", "field"],
           "composite: /VTKHDF/<block> external links (relative), Assembly soft links in creation order (h5py)",
           [links, el, al])
        same = all(np.array_equal(g["solid"][k][()], h5py.File(ug[0], "r")["VTKHDF"][k][()])
                   for k in ("Points", "Offsets", "CellData/vel"))
        ok(same, "composite: data read through the links equals the part's (h5py)")
    blocks = query("SELECT block_path, leaf, type, external_file FROM vtkhdf_blocks(%s) WHERE kind = 'leaf';" % q(mc))
    ok([(b["block_path"], b["type"], os.path.realpath(b["external_file"])) for b in blocks] ==
       [("/Assembly/solid", "UnstructuredGrid", os.path.realpath(ug[0])), ("/Assembly/surface", "PolyData",
         os.path.realpath(poly[0])), ("/Assembly/field", "ImageData", os.path.realpath(im[0]))],
       "composite: vtkhdf_blocks lists the three leaves, their Types and files", blocks)
    got = query("SELECT block, sum(n_points) AS n FROM vtkhdf_partitions(%s) GROUP BY block ORDER BY block;" % q(mc))
    ok([(r["block"], r["n"]) for r in got] == [("/Assembly/field", 24), ("/Assembly/solid", 5), ("/Assembly/surface", 6)],
       "composite: vtkhdf_partitions reads every block through its link", got)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'composite');\n.mode list\n" % q(mc) +
                       "SELECT block, file FROM m;\nINSERT INTO m(file, block) VALUES (%s, 'solid');\n" % q(ug[1]))
    ok(out.split() == ["solid|%s" % os.path.realpath(ug[0]), "surface|%s" % os.path.realpath(poly[0]),
                       "field|%s" % os.path.realpath(im[0])] and "block 'solid' is already listed" in err,
       "composite: reconnect reads the blocks back from the links; a block name listed twice is refused", out + err)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'composite');\n" % q(mc) +
                       "INSERT INTO m(file, block) VALUES (%s, 'moving');\n" % q(ms))
    ok(rc != 0 and "has NSteps 3 where" in err and "steps.vtkhdf" in err,
       "composite: a block with another NSteps is refused naming it", err)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'composite');\n" % q(mc) +
                       "INSERT INTO m(file, block) VALUES (%s, 'nested');\n" % q(mc))
    ok(rc != 0 and "is the main file itself" in err, "composite: the main file cannot be its own block", err)
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'composite');\n" % q(mc) +
                       "DELETE FROM m WHERE block = 'surface';\n")
    with h5py.File(mc, "r") as f:
        ok(list(f["VTKHDF/Assembly"].keys()) == ["solid", "field"] and "surface" not in f["VTKHDF"],
           "composite: DELETE + COMMIT rebuilds without the block")
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'composite');\nDELETE FROM m;\n" % q(mc))
    ok(rc == 0 and not os.path.exists(mc), "deleting every member removes the main file", err)

    # ---- two writers of one main file: neither loses the other's members ----
    import shlex
    from taplib import shell_args
    mw = os.path.join(d, "shared.vtkhdf")
    other = os.path.join(d, "other.sql")
    with open(other, "w") as fh:
        fh.write("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\nINSERT INTO m(file) VALUES (%s);\n"
                 % (q(mw), q(ug[1])))
    second = " ".join(shlex.quote(a) for a in shell_args()) + " < " + shlex.quote(other)
    rc, out, err = run("CREATE VIRTUAL TABLE a USING vtkhdf_main(%s, 'partitions');\n" % q(mw) +
                       "CREATE VIRTUAL TABLE b USING vtkhdf_main(%s, 'partitions');\n" % q(mw) +
                       "INSERT INTO a(file) VALUES (%s);\n" % q(ug[0]) +
                       "INSERT INTO b(file) VALUES (%s);\n" % q(ug[2]) +  # b read the file before a's commit
                       "BEGIN;\nINSERT INTO a(file) VALUES (%s);\n" % q(ug[1]) +
                       ".system %s\n" % second +  # another process commits ug_1 meanwhile
                       "COMMIT;\nROLLBACK;\n.mode list\nSELECT file FROM a;\n" +
                       "INSERT INTO a(file) VALUES (%s);\n" % q(ug[1]))
    ok(mappings(mw) == ["parts/ug_0.vtkhdf", "parts/ug_2.vtkhdf", "parts/ug_1.vtkhdf"],
       "two tables of one main file: the second starts from the first's commit, and a commit that another "
       "process beat is refused (the main file holds the three members each committed once)", mappings(mw))
    ok("%s was changed by another writer during this transaction; nothing written (ROLLBACK, then run the "
       "transaction again" % mw in err and out.split() == [os.path.realpath(ug[0]), os.path.realpath(ug[2])],
       "the refused COMMIT names the main file and says nothing was written; after ROLLBACK the table shows what "
       "it started from", out + err)
    ok("ug_1.vtkhdf: is already a member" in err,
       "running the transaction again starts from the other writer's members (its part is already there)", err)

    # ---- parts whose array types differ (issue 22): the virtual dataset takes the wider
    # type, so float64 values are not cut to float32 ----
    mixed = [P("mixed_%d.vtkhdf" % i) for i in range(2)]
    write_ug(mixed[0], [(5, 3)], 30, temp="f4")
    write_ug(mixed[1], [(6, 2)], 31, temp="f8")
    mm = os.path.join(d, "mixed.vtkhdf")
    rc, out, err = run("CREATE VIRTUAL TABLE m USING vtkhdf_main(%s, 'partitions');\n" % q(mm) +
                       "".join("INSERT INTO m(file) VALUES (%s);\n" % q(f) for f in mixed))
    with h5py.File(mixed[1], "r") as f:
        f8 = f["VTKHDF/PointData/temp"][()]
    try:
        with h5py.File(mm, "r") as f:
            t = f["VTKHDF/PointData/temp"]
            dt, tail = t.dtype, t[()][5:]
    except (OSError, KeyError) as e:
        dt, tail = str(e), None
    ok(rc == 0 and dt == np.float64 and tail is not None and np.array_equal(tail, f8) and
       not np.array_equal(f8.astype("f4").astype("f8"), f8),
       "parts with a float32 and a float64 PointData array: the main file's array is float64 and holds the second "
       "part's values exactly (h5py), which float32 could not", [err, str(dt)])
    check_concat(mm, mixed, "mixed types")
finally:
    shutil.rmtree(d, ignore_errors=True)
    shutil.rmtree(d + ".moved", ignore_errors=True)
sys.exit(plan())
