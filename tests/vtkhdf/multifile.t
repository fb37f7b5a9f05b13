#!/usr/bin/env python3
"""Multi-file VTKHDF, as TAP: files in every layout VTK's writer produces are built with
the HDF5 C API (build/mkvtkhdf, relative and absolute source names); each partition must
resolve to the file that really holds its Points, and deleting one sub-file must turn
exactly its rows to missing_source (no zero counts) while every other row is unchanged.
Absolute names must still resolve after the directory moves (HDF5's basename fallback).
   env: SO (extension, default ./vdsql), SQLITE3, MKVTKHDF (default build/mkvtkhdf)"""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
mk = os.environ.get("MKVTKHDF", os.path.join(top, "build", "mkvtkhdf"))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import ok, plan, query  # noqa: E402


def parts(path):
    return query("SELECT * FROM vtkhdf_partitions('%s');" % path.replace("'", "''"))


def key(r):
    return (r["block"], r["step"], r["partition"])


# (stem, {row key: the sub-file that must hold that row's Points})
LAYOUTS = {
    "partitions": {("", 0, 0): "_part0", ("", 0, 1): "_part1", ("", 0, 2): "_part2"},
    "composite": {("/Assembly/Solid/BlockA", 0, 0): "_BlockA", ("/Assembly/BlockB", 0, 0): "_BlockB_part0",
                  ("/Assembly/BlockB", 0, 1): "_BlockB_part1"},
    "steps": {("", 0, 0): "_0", ("", 0, 1): "_0", ("", 1, 0): "_1", ("", 1, 1): "_1", ("", 2, 0): "_2", ("", 2, 1): "_2"},
}


def check_layout(d, prefix, kind):
    stem = "%s_%s" % (prefix, kind)
    main = os.path.join(d, stem + ".vtkhdf")
    base = parts(main)
    want = {k: os.path.join(d, stem + suf + ".vtkhdf") for k, suf in LAYOUTS[kind].items()}
    got = {key(r): r["source_file"] for r in base}
    ok(set(got) == set(want) and all(os.path.realpath(got[k]) == os.path.realpath(v) for k, v in want.items()),
       "%s: every partition resolves to the file holding its Points" % stem,
       json.dumps({str(k): [got.get(k), want[k]] for k in want}, indent=1))
    ok(all(r["status"] == "ok" and r["n_points"] is not None for r in base), "%s: all rows ok with counts" % stem)
    # delete each sub-file in turn: exactly its rows become missing_source
    for sub in sorted(set(want.values())):
        hidden = sub + ".hidden"
        os.rename(sub, hidden)
        try:
            after = {key(r): r for r in parts(main)}
        finally:
            os.rename(hidden, sub)
        mine = {k for k, v in want.items() if v == sub}
        bad = []
        for k, r in after.items():
            if k in mine or (r["block"] and any(m[0] == r["block"] for m in mine) and r["step"] is None):
                if r["status"] != "missing_source":
                    bad.append("%s: status %s" % (k, r["status"]))
                if r["n_points"] is not None or r["n_cells"] is not None:
                    bad.append("%s: counts reported for a missing source: %s" % (k, r))
                if os.path.realpath(r["source_file"]) != os.path.realpath(sub):
                    bad.append("%s: source_file %s" % (k, r["source_file"]))
            else:
                b = {key(x): x for x in base}.get(k)
                if b != r:
                    bad.append("%s changed: %s -> %s" % (k, b, r))
        missing_keys = {k for k, r in after.items() if r["status"] == "missing_source"}
        blocks_gone = {r["block"] for r in after.values() if r["step"] is None}
        expected_gone = {k for k in mine if k[0] not in blocks_gone}
        if not (expected_gone <= missing_keys):
            bad.append("not reported missing: %s" % sorted(expected_gone - missing_keys))
        ok(not bad, "%s: without %s exactly its rows are missing_source" % (stem, os.path.basename(sub)), "\n".join(bad))
    # the sources relation names every sub-file, with exists = 1
    src = query("SELECT * FROM vtkhdf_sources('%s');" % main)
    files = {os.path.realpath(s["resolved_path"]) for s in src}
    ok(all(os.path.realpath(v) in files for v in want.values()) and all(s["exists"] == 1 for s in src),
       "%s: vtkhdf_sources lists every sub-file, all present" % stem)
    return base


def main():
    if not os.access(mk, os.X_OK):
        print("1..1\nnot ok 1 - %s not built (make)" % mk)
        return 1
    tmp = tempfile.mkdtemp(prefix="vdsql-vtkhdf.")
    try:
        d = os.path.join(tmp, "a")
        subprocess.run([mk, d], check=True)
        subprocess.run([mk, d, "abs"], check=True)
        absrows = {}
        for prefix in ("ext", "abs"):
            for kind in LAYOUTS:
                try:
                    rows = check_layout(d, prefix, kind)
                except Exception as e:  # report it and go on with the next layout
                    ok(False, "%s_%s: query" % (prefix, kind), e)
                    rows = []
                if prefix == "abs":
                    absrows[kind] = rows
        # the absolute names are really absolute
        try:
            src = query("SELECT file FROM vtkhdf_sources('%s/abs_partitions.vtkhdf');" % d)
        except Exception as e:
            src = []
            print("# " + str(e).replace("\n", "\n# "))
        ok(src and all(s["file"].startswith("/") for s in src), "abs_partitions stores absolute source names")
        # move the directory: HDF5 (and vdsql) find the sub-files next to the main file
        moved = os.path.join(tmp, "moved")
        shutil.move(d, moved)
        for kind in LAYOUTS:
            try:
                rows = parts(os.path.join(moved, "abs_%s.vtkhdf" % kind))
            except Exception as e:
                ok(False, "abs_%s after moving the directory: query" % kind, e)
                continue
            same = all(r["status"] == "ok" and os.path.dirname(r["source_file"]) == moved for r in rows)
            strip = lambda rs: [{k: v for k, v in r.items() if k != "source_file"} for r in rs]
            ok(same and strip(rows) == strip(absrows[kind]),
               "abs_%s after moving the directory: same rows, sub-files found next to the main file" % kind,
               json.dumps(rows, indent=1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


if __name__ == "__main__":
    sys.exit(main())
