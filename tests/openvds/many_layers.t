#!/usr/bin/env python3
"""A LayerStatus of 100,000 layers, as TAP: every query parses the whole document and
checks that no layer name is listed twice; that check was once quadratic (18 s per
query). Now a hash set: the queries must finish well under LIMIT seconds each, list
every layer, and still refuse a name listed twice (at the end, the worst place).
   env: SO, SQLITE3 (as tests/taplib.py), MANY_LAYERS_LIMIT (seconds, default 5)"""
import json
import os
import shutil
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "gen"))
import mkvds  # noqa: E402
from taplib import measured, ok, plan  # noqa: E402

N = 100_000
LIMIT = float(os.environ.get("MANY_LAYERS_LIMIT", "5"))


def layer(i):
    return {"layerName": "L%06d" % i, "channelName": "Amplitude", "dimensionGroup": "Dimensions_012", "lod": 0,
            "produceStatus": "Normal", "compressionMethod": "None", "hasChunkMetadataPages": False}


def dataset(root, layers):
    os.makedirs(root)
    with open(os.path.join(root, "VolumeDataLayout"), "w") as f:
        json.dump(mkvds.Layout([100, 100, 100], brick=64).json(), f)
    with open(os.path.join(root, "LayerStatus"), "w") as f:
        json.dump(layers, f)


tmp = tempfile.mkdtemp(prefix="vdsql-layers.")
try:
    good, dup = os.path.join(tmp, "good"), os.path.join(tmp, "dup")
    dataset(good, [layer(i) for i in range(N)])
    dataset(dup, [layer(i) for i in range(N)] + [layer(N // 2)])

    def timed(what, script):
        rc, out, err, mb, secs = measured(script, timeout=max(60, 4 * LIMIT))
        ok(rc is not None and secs < LIMIT, "%s: %.2f s (limit %g s)" % (what, secs, LIMIT))
        return rc, out, err

    rc, out, err = timed("vds_layers, 100,000 layers",
                         "SELECT count(*), count(DISTINCT layer), min(layer), max(layer) FROM vds_layers('%s');" % good)
    want = "%d|%d|L000000|L%06d" % (N, N, N - 1)
    ok(rc == 0 and out.strip() == want, "every layer listed once: %s" % want, out + err)
    rc, out, err = timed("vds_chunks of the last layer",
                         "SELECT count(*) FROM vds_chunks('%s', 'L%06d');" % (good, N - 1))
    ok(rc == 0 and out.strip() == "8", "the last layer's 8 chunks", out + err)
    rc, out, err = timed("a name listed twice, last", "SELECT count(*) FROM vds_layers('%s');" % dup)
    ok(rc != 0 and "layer L%06d is listed twice" % (N // 2) in err and dup in err,
       "a name listed twice is refused, naming the document and the layer", out + err)
finally:
    shutil.rmtree(tmp)
sys.exit(plan())
