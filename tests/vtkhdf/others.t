#!/usr/bin/python3
"""VTKHDF files from writers other than VTK (tests/gen/mkvtkhdf_others.py: float32
WholeExtent, gridformat's 2-D ImageData arrays (y, x[, c]) and (t, y, x[, c]), FieldData
(t, 1, n), an ImageData block of a composite under an Assembly node with Index, a Version 1
file naming its active arrays with Scalars=<name>) compared, as TAP, with the .expect.json
the generator wrote next to each: vtkhdf_partitions, vtkhdf_arrays and vtkhdf_blocks row
for row, or the error the file must be refused with; on the local files and again over
http (nginx on 127.0.0.1). Debian's python3 (/usr/bin/python3)
runs it: the generator needs python3-h5py.
   env: SO (extension, default ./vdsql), SQLITE3 (shell command)"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import Nginx, ok, plan, query, sql  # noqa: E402

PART_COLS = ("block", "step", "partition", "type", "n_points", "n_cells", "time", "status")
ARRAY_COLS = ("block", "association", "name", "type", "components", "tuples", "attribute")
BLOCK_COLS = ("block_path", "name", "kind", "leaf", "index", "type")


def q(s):
    return "'" + s.replace("'", "''") + "'"


def rows(got, cols):
    return [{c: r.get(c) for c in cols} for r in got]


def compare(label, got, want, cols):
    g, w = rows(got, cols), rows(want, cols)
    diff = [] if g == w else ["vdsql: " + json.dumps(x) for x in g] + ["expected: " + json.dumps(x) for x in w]
    ok(g == w, label, "\n".join(diff))


def check(files, label, root):
    for ej in files:
        exp = json.load(open(ej))
        path = root + "/" + exp["file"]
        fname = label + exp["file"]
        if "error" in exp:
            for rel in ("vtkhdf_partitions", "vtkhdf_arrays"):
                p = sql("SELECT * FROM %s(%s);" % (rel, q(path)))
                msg = p.stderr.strip()
                ok(p.stdout == "" and all(s in msg for s in exp["error"]) and msg.count("\n") == 0,
                   "%s: %s refuses it naming %s" % (fname, rel, ", ".join(exp["error"])), msg or p.stdout)
            continue
        try:
            parts = query("SELECT * FROM vtkhdf_partitions(%s);" % q(path))
            arrays = query("SELECT * FROM vtkhdf_arrays(%s);" % q(path))
            blocks = query("SELECT * FROM vtkhdf_blocks(%s);" % q(path))
        except Exception as e:  # one failure per file, and carry on with the others
            ok(False, "%s: query" % fname, e)
            continue
        compare("%s: partitions (type, points and cells of WholeExtent, time, status)" % fname, parts,
                exp["partitions"], PART_COLS)
        # vdsql lists a leaf's arrays group by group (point, cell, field), each in name order
        order = {"point": 0, "cell": 1, "field": 2}
        want = sorted(exp["arrays"], key=lambda a: (a["block"], order[a["association"]], a["name"]))
        compare("%s: arrays (components and tuples from the extent, attribute)" % fname, arrays, want, ARRAY_COLS)
        compare("%s: Assembly blocks with their Index" % fname, blocks, exp["blocks"], BLOCK_COLS)


def main():
    d = tempfile.mkdtemp(prefix="vdsql-others.")
    state = tempfile.mkdtemp(prefix="vdsql-othershttp.")
    web = None
    try:
        r = subprocess.run([sys.executable, os.path.join(top, "tests", "gen", "mkvtkhdf_others.py"), d],
                           capture_output=True, text=True)
        if not ok(r.returncode == 0, "mkvtkhdf_others.py wrote the files", r.stderr):
            return plan()
        files = sorted(glob.glob(os.path.join(d, "*.expect.json")))
        ok(len(files) >= 6, "%d expectations written" % len(files))
        check(files, "", d)
        # the same over http, through vdsql's HDF5 file driver (nginx on 127.0.0.1)
        web = Nginx(d, state)
        if ok(web.started, "http: nginx started", web.error):
            check(files, "http ", web.url)
    finally:
        if web:
            web.stop()
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)
    return plan()


if __name__ == "__main__":
    sys.exit(main())
