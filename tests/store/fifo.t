#!/usr/bin/env python3
"""Paths that are not regular files, as TAP: a FIFO waits in open() until a writer
appears, so a FIFO named VolumeDataLayout, LayerStatus, a chunk-metadata page, a chunk
object or a LINDI archive once hung the query for ever. The local store opens with
O_NONBLOCK and refuses anything but a regular file with one error naming the path
("<path>: not a regular file"). Each query runs with a timeout, so a regression fails
here instead of stalling the suite.

The LINDI writer (its archive, its journal) and VTKHDF (whose file HDF5 opens) go
through the same check.
   env: SO, SQLITE3 (as tests/taplib.py)"""
import os
import subprocess
import shutil
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "gen"))
import mklindi  # noqa: E402
import mkvds  # noqa: E402
from taplib import TOP, measured, ok, plan  # noqa: E402

TIMEOUT = 20


def refused(what, script, path, timeout=TIMEOUT):
    rc, out, err, _, secs = measured(script, timeout=timeout)
    if rc is None:
        return ok(False, "%s: answers (killed after %d s in open)" % (what, timeout))
    return ok(rc != 0 and "%s: not a regular file" % path in err, "%s: refused in %.1f s" % (what, secs), out + err)


def fifo(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)
    os.mkfifo(path)


tmp = tempfile.mkdtemp(prefix="vdsql-fifo.")
try:
    # OpenVDS: each document and object in turn replaced by a FIFO
    for doc in ("VolumeDataLayout", "LayerStatus"):
        ds = os.path.join(tmp, "ds_" + doc)
        mkvds.build_survey(ds)
        fifo(os.path.join(ds, doc))
        refused("OpenVDS %s is a FIFO" % doc, "SELECT * FROM vds_layers('%s');" % ds, os.path.join(ds, doc))
    ds = os.path.join(tmp, "ds_objects")
    mkvds.build_survey(ds)
    page = os.path.join(ds, "Dimensions_012LOD0", "ChunkMetadata", "0")
    fifo(page)
    refused("a chunk-metadata page is a FIFO",
            "SELECT count(status) FROM vds_chunks('%s', 'Dimensions_012LOD0');" % ds, page)
    chunk = os.path.join(ds, "Dimensions_012LOD1", "0")
    fifo(chunk)
    refused("a chunk object is a FIFO", "SELECT vds_chunk_data('%s', 'Dimensions_012LOD1', 0);" % ds, chunk)
    ds = os.path.join(tmp, "ds_dir")
    mkvds.build_survey(ds)
    os.remove(os.path.join(ds, "VolumeDataLayout"))
    os.mkdir(os.path.join(ds, "VolumeDataLayout"))
    refused("VolumeDataLayout is a directory", "SELECT * FROM vds_layout('%s');" % ds, os.path.join(ds, "VolumeDataLayout"))

    # LINDI: the archive is a FIFO, for every reader of it
    lindi = os.path.join(tmp, "lindi")
    mklindi.build_tests(lindi)
    arch = os.path.join(lindi, "small.lindi.tar")
    fifo(arch)
    for q in ("SELECT * FROM lindi_files('%s');", "SELECT * FROM lindi_refs('%s');", "SELECT * FROM tar_members('%s');",
              "SELECT lindi_read('%s', 'lindi.json');"):
        refused("LINDI archive is a FIFO: %s" % q.split("(")[0].split()[-1], q % arch, arch)
    refused("a character device as a LINDI archive", "SELECT * FROM lindi_files('/dev/zero');", "/dev/zero")

    # VTKHDF: HDF5 opens the file itself, after the store's check
    vtk = os.path.join(tmp, "x.vtkhdf")
    os.mkfifo(vtk)
    refused("VTKHDF file is a FIFO", "SELECT * FROM vtkhdf_blocks('%s');" % vtk, vtk)
    # a sub-file (external link) that is a FIFO: its partitions are bad_source, the rest is read
    vdir = os.path.join(tmp, "vtkhdf")
    subprocess.run([os.path.join(TOP, "build", "mkvtkhdf"), vdir], check=True, capture_output=True)
    fifo(os.path.join(vdir, "ext_composite_BlockA.vtkhdf"))
    rc, out, err, _, secs = measured("SELECT group_concat(status) FROM vtkhdf_partitions('%s');"
                                     % os.path.join(vdir, "ext_composite.vtkhdf"), timeout=TIMEOUT)
    ok(rc == 0 and out.strip() == "bad_source,ok,ok", "VTKHDF sub-file is a FIFO: bad_source, the other blocks read "
       "(%.1f s)" % secs, out + err)
    # the LINDI writer: the archive, its journal, the journal's old temporary name
    w = os.path.join(tmp, "w.lindi.tar")
    insert = "CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nINSERT INTO a(name, data) VALUES ('n', 'x');"
    fifo(w)
    refused("LINDI writer: the archive is a FIFO", insert % w, w)
    os.remove(w)
    shutil.copy(os.path.join(lindi, "many.lindi.tar"), w)
    os.mkfifo(w + ".vdsql-journal")
    rc, out, err, _, secs = measured(insert % w, timeout=TIMEOUT)
    ok(rc is not None and rc != 0 and "(not a regular file)" in err and w + ".vdsql-journal" in err,
       "LINDI writer: a FIFO at the journal's name is refused in %.1f s" % secs, out + err)
    os.remove(w + ".vdsql-journal")
    os.mkfifo(w + ".vdsql-journal.tmp")
    rc, out, err, _, secs = measured(insert % w, timeout=TIMEOUT)
    ok(rc == 0 and not err, "LINDI writer: a FIFO at the journal's old temporary name is never opened (%.1f s)" % secs,
       out + err)
finally:
    shutil.rmtree(tmp)
sys.exit(plan())
