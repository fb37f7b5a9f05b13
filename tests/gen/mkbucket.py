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
edit here. A generator's dataset with no fault and no error is a good template, one
with faults a broken template; the good copies cycle through the good templates (so
the formats share the bucket), the broken ones through the broken templates, spread
evenly among them. A copy keeps its template's name ending (.lindi.tar, .vtkhdf, ...):
the format is in the name. Its record entry is the template's, renamed, plus `source`
(generator:template). The generators' paths that name nothing are left out: a bucket
lists what it holds."""
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
            t = (name, d, os.path.join(out, d["name"]))
            (broken if d["faults"] else good if not d["error"] else broken).append(t)
    if not good or not broken:
        raise SystemExit("mkbucket.py: the generators gave %d good and %d broken datasets; both are needed"
                         % (len(good), len(broken)))
    return good, broken


def ending(name):
    return next((e for e in ENDINGS if name.lower().endswith(e)), "")


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
            name = "ds%04d%s" % (i, ending(entry["name"]))
            dst = os.path.join(d, name)
            if os.path.isdir(src):
                shutil.copytree(src, dst, copy_function=os.link)
            else:
                os.link(src, dst)
            rec["datasets"].append(dict(entry, name=name, source="%s:%s" % (gen, entry["name"])))
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
