#!/usr/bin/python3
"""Builds a bucket's worth of datasets of every format, some broken on purpose, for the
bucket audit (tests/check/bucket.t, bench/check/), and prints the record of every
planted fault, as JSON, with the schema of mkbroken.py's record.

  mkbucket.py bucket DIR [N [BROKEN]]    N datasets (default 1000), BROKEN of them
                                         broken (default N/20), flat under DIR

Nothing is broken here: every dataset is a copy (hard links: the copies are only read)
of one that a broken-catalog generator made, renamed. The generators are every
tests/gen/mkbroken*.py that answers `catalog DIR` (one that does not, exit status 2
and no output, is passed over), so the formats' own generators plug in without an
edit here; their records share one schema (tests/gen/mkbroken.py's docstring). A
generator's dataset with no fault and no error (nor its files) is a good template, one
with faults a broken template; the good copies cycle through the good templates (so
the formats share the bucket), the broken ones through the broken templates, spread
evenly among them. A copy keeps its template's name ending (.lindi.tar, .vtkhdf, ...):
the format is in the name. Its record entry is the template's, renamed, plus `source`
(generator:template), `copy` (its name at the bucket's top) and, for a sibling file,
`of` (the main file that names it). The generators' paths
that name nothing are left out: a bucket lists what it holds. (tests/gen/mkrepair_lindi.py
is named apart: its record lists lindi_repair's actions, not vdsql_check's rows.)

Templates with sibling files ("files": a VTKHDF main file and the part files or link
targets it names by their own names, which are stored in the main file) are copied
whole into a folder of their own, dsNNNN/, under the templates' names; each sibling is
a dataset of the bucket too (vdsql_datasets lists it as VTKHDF), with its record entry.
A fault's "remote" verdict, where the generator gives one, is the one recorded: the
bucket is read over S3. Left out: templates that refer to files outside themselves
("outside": mkbroken_lindi.py's clean and refs archives, whose external refs name
its DIR/ext/ as a local path or the suite's nginx): a copy on S3 cannot take them
along, and would not check the same. Which were left out goes to stderr."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ENDINGS = (".lindi.tar", ".lindi.json", ".vtkhdf", ".hdf")


def templates(work):
    """(good, broken): lists of (generator, record entry, path) from every generator."""
    good, broken = [], []
    for gen in sorted(glob.glob(os.path.join(HERE, "mkbroken*.py"))):
        name = os.path.basename(gen)
        out = os.path.join(work, name[:-3])
        p = subprocess.run(["/usr/bin/python3", gen, "catalog", out], capture_output=True, text=True)
        if p.returncode == 2 and not p.stdout:
            continue  # no `catalog DIR` form
        if p.returncode != 0:
            raise SystemExit("mkbucket.py: %s catalog failed: %s" % (name, p.stderr[-2000:]))
        for d in json.loads(p.stdout)["datasets"]:
            if d.get("outside"):
                sys.stderr.write("mkbucket.py: %s:%s left out: it refers to %s\n" % (name, d["name"], d["outside"]))
                continue
            t = (name, d, os.path.join(out, d["name"]))
            whole = [d] + d.get("files", [])
            (broken if any(x["faults"] or x["error"] for x in whole) else good).append(t)
    if not good or not broken:
        raise SystemExit("mkbucket.py: the generators gave %d good and %d broken datasets; both are needed"
                         % (len(good), len(broken)))
    return good, broken


def ending(name):
    return next((e for e in ENDINGS if name.lower().endswith(e)), "")


def as_remote(entry, name, source, cp):
    """The record entry of a copy: renamed, read over S3, error a bool."""
    e = {k: v for k, v in entry.items() if k not in ("files", "outside")}
    e["faults"] = [dict({k: v for k, v in f.items() if k != "remote"}, **f.get("remote", {})) for f in entry["faults"]]
    return dict(e, name=name, source=source, copy=cp, error=bool(entry["error"]))


def copy(d, i, gen, entry, src):
    """Copies one template as dataset i of the bucket at d; its record entries."""
    files = entry.get("files", [])
    if not files:
        name = "ds%04d%s" % (i, ending(entry["name"]))
        dst = os.path.join(d, name)
        if os.path.isdir(src):
            shutil.copytree(src, dst, copy_function=os.link)
        else:
            os.link(src, dst)
        return [as_remote(entry, name, "%s:%s" % (gen, entry["name"]), name)]
    # the main file names its siblings: all of them, under their names, in a folder of the copy's own
    cp = "ds%04d" % i
    os.makedirs(os.path.join(d, cp))
    out = []
    main = cp + "/" + os.path.basename(entry["name"])
    for e in [entry] + files:
        base = os.path.basename(e["name"])
        os.link(os.path.join(os.path.dirname(src), base), os.path.join(d, cp, base))
        out.append(as_remote(e, cp + "/" + base, "%s:%s" % (gen, e["name"]), cp))
        if e is not entry:
            out[-1]["of"] = main
    return out


def build_bucket(d, n, nbroken):
    if not 0 < nbroken < n:
        raise SystemExit("mkbucket.py: BROKEN must be between 1 and N-1")
    os.makedirs(d, exist_ok=True)
    work = tempfile.mkdtemp(prefix="mkbucket.", dir=d)
    try:
        good, broken = templates(work)
        # the broken ones spread evenly: dataset i is broken when it starts a new step of n/nbroken
        is_broken = [i * nbroken // n != (i + 1) * nbroken // n for i in range(n)]
        rec = {"datasets": [], "missing": []}
        g = b = 0
        for i in range(n):
            if is_broken[i]:
                gen, entry, src = broken[b % len(broken)]
                b += 1
            else:
                gen, entry, src = good[g % len(good)]
                g += 1
            rec["datasets"] += copy(d, i, gen, entry, src)
        return rec  # the copies are hard links: the templates' names go below, their bytes stay
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv):
    if len(argv) >= 3 and argv[1] == "bucket":
        n = int(argv[3]) if len(argv) > 3 else 1000
        nb = int(argv[4]) if len(argv) > 4 else n // 20
        json.dump(build_bucket(argv[2], n, nb), sys.stdout, sort_keys=True)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
