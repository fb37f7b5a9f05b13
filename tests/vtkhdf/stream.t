#!/usr/bin/python3
"""Big VTKHDF files read as a stream, as TAP. vtkhdf_partitions reads the count datasets
8192 entries at a time; these files (build/mkvtkhdf DIR big) have 10,000-60,000 entries,
so every row below crosses window boundaries. Each row is checked against an independent
computation with h5py + numpy, written from ../shared/spec/vtkhdf.md section 3 (not from
vdsql's C code): a moving UnstructuredGrid, a static mesh whose steps reuse the same
entries, PolyData with the PolyData Offsets rule, and a negative count far from the
start. Then the same over http (nginx), with the requests counted. Debian's python3
(/usr/bin/python3) runs it: python3-h5py is installed there.
   env: SO (extension, default ./vdsql), SQLITE3, MKVTKHDF (default build/mkvtkhdf)"""
import os
import shutil
import subprocess
import sys
import tempfile

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
mk = os.environ.get("MKVTKHDF", os.path.join(top, "build", "mkvtkhdf"))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import Nginx, ok, plan, query, sql  # noqa: E402

TOPOS = ["Vertices", "Lines", "Polygons", "Strips"]
COLS = ("step, partition, time, n_points, n_cells, n_connectivity_ids, point_offset, cell_offset, "
        "connectivity_offset, offsets_offset, status")


def excl(a):
    """Σ_{i<j} a[i] for every j."""
    import numpy as np
    return np.cumsum(a) - a


def expected_ug(path):
    """Rows of a temporal UnstructuredGrid, by the spec's table (section 3)."""
    import h5py
    import numpy as np
    rows = []
    with h5py.File(path, "r") as f:
        g = f["VTKHDF"]
        npt, nc, nci = (g[k][()].astype(np.int64) for k in ("NumberOfPoints", "NumberOfCells", "NumberOfConnectivityIds"))
        s = g["Steps"]
        vals = s["Values"][()]
        po, nparts, pto = (s[k][()].astype(np.int64) for k in ("PartOffsets", "NumberOfParts", "PointOffsets"))
        co = s["CellOffsets"][()].astype(np.int64).reshape(len(po), -1)[:, 0]
        cio = s["ConnectivityIdOffsets"][()].astype(np.int64).reshape(len(po), -1)[:, 0]
    for t in range(len(po)):
        p, n = int(po[t]), int(nparts[t])
        a, b, c = npt[p:p + n], nc[p:p + n], nci[p:p + n]
        pt, ce, cn = pto[t] + excl(a), co[t] + excl(b), cio[t] + excl(c)
        of = co[t] + p + excl(b) + np.arange(n)
        for j in range(n):
            rows.append((t, j, float(vals[t]), int(a[j]), int(b[j]), int(c[j]), int(pt[j]), int(ce[j]), int(cn[j]),
                         int(of[j]), "ok"))
    return rows


def expected_poly(path, rule="poly"):
    """(partition rows, topology rows) of a temporal PolyData, with the PolyData rule for
    the Offsets start: c = how many earlier entries' cells it takes to reach CellOffsets[t][k]
    (rule "ug": UnstructuredGrid's PartOffsets[t] instead, to show that a file tells them apart)."""
    import h5py
    import numpy as np
    parts, topos = [], []
    with h5py.File(path, "r") as f:
        g = f["VTKHDF"]
        npt = g["NumberOfPoints"][()].astype(np.int64)
        nc = [g[k]["NumberOfCells"][()].astype(np.int64) for k in TOPOS]
        nci = [g[k]["NumberOfConnectivityIds"][()].astype(np.int64) for k in TOPOS]
        s = g["Steps"]
        vals = s["Values"][()]
        po, nparts, pto = (s[k][()].astype(np.int64) for k in ("PartOffsets", "NumberOfParts", "PointOffsets"))
        co = s["CellOffsets"][()].astype(np.int64)
        cio = s["ConnectivityIdOffsets"][()].astype(np.int64)
    for t in range(len(po)):
        p, n = int(po[t]), int(nparts[t])
        a = npt[p:p + n]
        pt = pto[t] + excl(a)
        per = []
        for k in range(4):
            b, c = nc[k][p:p + n], nci[k][p:p + n]
            cell = int(co[t][k])
            run, cnt = 0, 0
            while cnt < p and run < cell:  # the spec's count c, entry by entry
                run += int(nc[k][cnt])
                cnt += 1
            extra = cnt if rule == "poly" else p
            per.append((b, c, cell + excl(b), cio[t][k] + excl(c), cell + extra + excl(b) + np.arange(n)))
        for j in range(n):
            for k in range(4):
                b, c, ce, cn, of = per[k]
                topos.append((t, j, TOPOS[k], int(b[j]), int(c[j]), int(ce[j]), int(cn[j]), int(of[j])))
            parts.append((t, j, float(vals[t]), int(a[j]), sum(int(x[0][j]) for x in per), sum(int(x[1][j]) for x in per),
                          int(pt[j]), sum(int(x[2][j]) for x in per), None, None, "ok"))
    return parts, topos


def got_parts(path):
    return [tuple(r[k.strip()] for k in COLS.split(","))
            for r in query("SELECT %s FROM vtkhdf_partitions('%s');" % (COLS, path))]


def got_topos(path):
    return [(r["step"], r["partition"], r["topology"], r["n_cells"], r["n_connectivity_ids"], r["cell_offset"],
             r["connectivity_offset"], r["offsets_offset"])
            for r in query("SELECT * FROM vtkhdf_topologies('%s');" % path)]


def first_diff(got, want):
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return "row %d: got %s, want %s" % (i, g, w)
    return "rows: got %d, want %d" % (len(got), len(want))


def scan_cost(q):
    """(the query's single number, http requests, bytes) in one fresh connection."""
    p = sql(".mode list\n" + q + "\nSELECT requests || ' ' || bytes FROM vdsql_stats() WHERE backend = 'http';\n")
    out = p.stdout.split()
    return (int(out[0]), int(out[1]), int(out[2])) if p.returncode == 0 and len(out) == 3 else (p.stderr, 0, 0)


def checks(root, label, want):
    ug, static, (poly_p, poly_t), (once_t, once_ug) = want
    for name, rows in (("big_ug", ug), ("big_static", static)):
        try:
            got = got_parts("%s/%s.vtkhdf" % (root, name))
        except Exception as e:
            got = [str(e)]
        ok(got == rows, "%s%s: all %d rows equal h5py's" % (label, name, len(rows)), first_diff(got, rows))
    try:
        gp, gt = got_parts(root + "/big_poly.vtkhdf"), got_topos(root + "/big_poly.vtkhdf")
    except Exception as e:
        gp = gt = [str(e)]
    ok(gp == poly_p, "%sbig_poly: all %d partition rows (totals over the topologies) equal h5py's" % (label, len(poly_p)),
       first_diff(gp, poly_p))
    ok(gt == poly_t, "%sbig_poly: all %d topology rows (PolyData Offsets rule) equal h5py's" % (label, len(poly_t)),
       first_diff(gt, poly_t))
    # points move, cells are stored once (CellOffsets 0, PartOffsets 0, 10000, 20000): here
    # only the PolyData rule gives VTK's Offsets starts
    f = root + "/big_poly_cells_once.vtkhdf"
    try:
        gt = got_topos(f)
    except Exception as e:
        gt = [str(e)]
    ok(gt == once_t and once_t != once_ug, "%sbig_poly_cells_once: all %d topology rows follow the PolyData Offsets "
       "rule (the UG rule differs in %d rows)" % (label, len(once_t), sum(a != b for a, b in zip(once_t, once_ug))),
       first_diff(gt, once_t))
    # a negative count at entry 12345: an error naming the file and the entry, no crash
    p = sql("SELECT count(*) FROM vtkhdf_partitions('%s/big_negative.vtkhdf');" % root)
    ok(p.returncode != 0 and "big_negative.vtkhdf" in p.stderr and "NumberOfCells[12345] is negative" in p.stderr,
       "%sbig_negative: the scan stops with an error naming the file and the entry" % label, p.stderr or p.stdout)
    # rows before the bad window still come out when the query stops early
    p = sql("SELECT max(partition) FROM (SELECT partition FROM vtkhdf_partitions('%s/big_negative.vtkhdf') LIMIT 100);"
            % root)
    ok(p.returncode == 0 and p.stdout.strip() == "99", "%sbig_negative: LIMIT 100 reads only the first window" % label,
       p.stderr or p.stdout)


def main():
    try:
        import h5py  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        print("1..1\nnot ok 1 - h5py and numpy are needed (Debian python3-h5py python3-numpy; scripts/install-deps)")
        return 1
    if not os.access(mk, os.X_OK):
        print("1..1\nnot ok 1 - %s not built (make)" % mk)
        return 1
    tmp = tempfile.mkdtemp(prefix="vdsql-vtkstream.")
    web = None
    try:
        d = os.path.join(tmp, "big")
        subprocess.run([mk, d, "big"], check=True)
        want = (expected_ug(d + "/big_ug.vtkhdf"), expected_ug(d + "/big_static.vtkhdf"),
                expected_poly(d + "/big_poly.vtkhdf"),
                (expected_poly(d + "/big_poly_cells_once.vtkhdf")[1],
                 expected_poly(d + "/big_poly_cells_once.vtkhdf", "ug")[1]))
        ok(len(want[0]) == 60000 and len(want[1]) == 60000 and len(want[2][0]) == 30000,
           "the files have 60,000 / 60,000 / 30,000 rows (several 8192-entry windows each)")
        checks(d, "", want)
        web = Nginx(d, os.path.join(tmp, "nginx"))
        if not ok(web.started, "http: nginx started", web.error):
            return plan()
        url = web.url
        checks(url, "http ", want)
        # request economy over http: the whole scan of big_ug reads each byte of the
        # counts once (64 KiB blocks, coalesced), an early stop reads one window's worth
        size = os.path.getsize(d + "/big_ug.vtkhdf")
        whole = "SELECT count(*) FROM vtkhdf_partitions('%s/big_ug.vtkhdf');" % url
        limit = "SELECT count(*) FROM (SELECT * FROM vtkhdf_partitions('%s/big_ug.vtkhdf') LIMIT 10);" % url
        mib = 1 << 20
        full = scan_cost(whole)
        # the first request asks for the first MiB (vtkhdf_prefix) and its Content-Range
        # gives the size (no HEAD); the Steps datasets at the file's end are the block
        # after it; at the first count window past the head the windows after it are
        # asked for together (as many bytes as the file gave so far: the rest of
        # NumberOfConnectivityIds, one run of 64 KiB blocks): 3 requests, every byte once
        # (7 windows one after another, 8 requests, before the read ahead)
        ok(full == (60000, 3, size),
           "http big_ug: a full scan reads the file once, in 3 requests (%s bytes of %d, %s requests)"
           % (full[2], size, full[1]), full)
        early = scan_cost(limit)
        ok(early[0] == 10 and early[1] == 2 and mib < early[2] < size,
           "http big_ug: LIMIT 10 costs 2 requests (the first MiB, then the block it lacks) / %s bytes, against "
           "%s / %s for the whole scan" % (early[2], full[1], full[2]), early)
        # with a first request of one 64 KiB block (the size of the blocks that follow): the
        # metadata's blocks, then windows read ahead as far as the file has given, doubling
        # (3 datasets at a time): 12 requests (22 one window after another before the read
        # ahead, 23 with a HEAD before that), and an early stop still reads under a third of
        # what the whole scan does
        small = ".output /dev/null\nSELECT vdsql_config('vtkhdf_prefix', 65536);\n.output\n"
        full = scan_cost(small + whole)
        ok(full == (60000, 12, size),
           "http big_ug, vtkhdf_prefix 64 KiB: a full scan reads the file once, in 12 requests (%s bytes of %d, %s "
           "requests)" % (full[2], size, full[1]), full)
        early = scan_cost(small + limit)
        ok(early[0] == 10 and early[1] == 6 and early[2] * 3 < full[2],
           "http big_ug, vtkhdf_prefix 64 KiB: LIMIT 10 costs %s requests / %s bytes, against %s / %s for the whole "
           "scan" % (early[1], early[2], full[1], full[2]), early)
    finally:
        if web:
            web.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


if __name__ == "__main__":
    sys.exit(main())
