#!/usr/bin/env python3
"""Local listings, as TAP: the file backend walks a tree once, streaming pages in byte
order of the keys and resuming after each page's token by descending the token's path
(store_file_list.c). Its pages (through build/storetool, the store interface) are
compared with an independent walk: os.walk, keys sorted as bytes. The tree is made to
catch a walk that sorts directory entries by name alone ("a-b" sorts before "a/x", as
'-' < '/'; "a0" after), one that loses its place at a page boundary inside a deep
directory or on a directory's last entry, empty directories, names with bytes over
0x7f, a symbolic link (never listed or followed) and vdsql's temporary files (never
listed). Every page size from 1 to a few keys past the tree's size, a key prefix, and
the folder listing (delimiter '/') against os.listdir.
   env: STORETOOL (default build/storetool)"""
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.dirname(here))
from taplib import ok, plan  # noqa: E402

STORETOOL = os.environ.get("STORETOOL", os.path.join(top, "build", "storetool"))


def pages(url, size, folder=False):
    """storetool's pages: a list of (keys, prefixes) per page, or the error."""
    p = subprocess.run([STORETOOL, "list", url, str(size)] + (["folder"] if folder else []), capture_output=True)
    if p.returncode != 0:
        return p.stderr.decode(errors="replace")
    out = []
    for line in p.stdout.split(b"\n"):
        if line.startswith(b"page "):
            out.append(([], []))
        elif line.startswith(b"prefix\t"):
            out[-1][1].append(line[7:])
        elif line and not line.startswith(b"meta\t"):
            out[-1][0].append(line.split(b"\t")[0])
    return out


def build(root):
    names = ["a-b", "a/x", "a/y/z", "a0", "a.b", "b/c/d/e/f", "b/c/d/e/g", "b/c/d/h", "b/c/i", "b/j", "b0/k",
             "\u00fc/1", "\u00fc/2", "z", "y/.vdsql-put-123", "y/real"]
    rnd = random.Random(21)
    for i in range(40):  # a wider directory with nested ones between its files
        names.append("w/%02d" % i if i % 7 else "w/%02d/in/%d" % (i, rnd.randrange(100)))
    for n in names:
        p = os.path.join(root, n)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(n)
    os.makedirs(os.path.join(root, "empty/deeper"))
    os.symlink(os.path.join(root, "a"), os.path.join(root, "link"))


def walk(root, prefix=""):
    keys = []
    for d, _, files in os.walk(root):
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), root)
            if not f.startswith(".vdsql-put-") and rel.startswith(prefix):
                keys.append(rel.encode())
    return sorted(keys)


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-listing.")
    try:
        root = os.path.join(tmp, "t")
        build(root)
        want = walk(root)
        bad = []
        for size in list(range(1, 12)) + [len(want) - 1, len(want), len(want) + 1, 5000]:
            got = pages(root + "/", size)
            if isinstance(got, str):
                bad.append((size, got))
                continue
            keys = [k for pg in got for k in pg[0]]
            npages = max(1, math.ceil(len(want) / size))
            if keys != want or len(got) != npages or any(len(pg[0]) > size for pg in got):
                bad.append((size, len(got), npages, keys[:5]))
        ok(not bad, "files: pages of 1..11, n-1, n, n+1 and 5000 keys give os.walk's %d keys in byte order, each once, "
           "in ceil(n/page) pages" % len(want), bad)
        got = pages(root + "/b/c", 2)
        ok(not isinstance(got, str) and [k for pg in got for k in pg[0]] ==
           [k[2:] for k in walk(root, "b/c")], "files: a key prefix inside a directory, in pages of 2", got)
        got = pages(root + "/", 5000)
        keys = [] if isinstance(got, str) else [k for pg in got for k in pg[0]]
        ok(os.path.islink(os.path.join(root, "link")) and os.path.exists(os.path.join(root, "y/.vdsql-put-123"))
           and keys and not any(b"vdsql-put" in k or k.startswith(b"link") for k in keys),
           "files: a symbolic link to a directory and a temporary file are on disk, not in the listing", keys)
        # folder listings: the directory's own files and its sub-directories as prefixes
        for url, d in ((root + "/", root), (root + "/b/", os.path.join(root, "b"))):
            ents = sorted(os.listdir(d))
            wf = sorted(e.encode() for e in ents if os.path.isfile(os.path.join(d, e))
                        and not os.path.islink(os.path.join(d, e)))
            wd = sorted(e.encode() + b"/" for e in ents if os.path.isdir(os.path.join(d, e))
                        and not os.path.islink(os.path.join(d, e)))
            for size in (1, 2, 3, 100):
                got = pages(url, size, folder=True)
                good = not isinstance(got, str) and [k for pg in got for k in pg[0]] == wf and \
                    [k for pg in got for k in pg[1]] == wd and \
                    len(got) == max(1, math.ceil((len(wf) + len(wd)) / size)) and \
                    all(len(pg[0]) + len(pg[1]) <= size for pg in got)
                ok(good, "files: folder listing of %s in pages of %d: os.listdir's files, and its directories "
                   "(empty ones too) as prefixes, in ceil(n/page) pages" % (url[len(root):] or "/", size),
                   "%s\n%s %s" % (got, wf, wd))
        got = pages(root + "/a", 10, folder=True)
        ok(got == [([b"a-b", b"a.b", b"a0"], [b"a/"])], "files: a folder listing with a name prefix: the files and "
           "directories whose names start with it", got)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


sys.exit(main())
