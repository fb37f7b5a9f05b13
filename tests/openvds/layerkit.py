"""What the OpenVDS reliability suites (reliability.t, fencing.t) share: one 2-D RLE layer
of 1 KiB chunks over two pages, seen by vdstarget's independent reader (LayerState), and
sqlite3 writers of it run in the background."""
import os
import subprocess

import mkvds
import vdstarget
from taplib import shell_args
from vdstarget import AWS_VARS, LayerState, check_layer, chunk_data, chunks_script, q, staged, write_blob

L = "Dimensions_01LOD0"
CHUNK = 1024            # 32 x 32 U8 samples
NCHUNKS = 40 * 30       # two pages of 1024 entries


def layout():
    return mkvds.Layout([32 * 40, 32 * 30], brick=32, neg=0, pos=0, mult2d=1,
                        channels=[mkvds.channel("Amplitude", "U8")])


def data(rng):
    return chunk_data(rng, CHUNK)


def State(t, name):
    return LayerState(t, name, L, CHUNK)


def staging(t, name):
    return staged(t, name)


def leftovers(t, name):
    return vdstarget.leftovers(t, name, L, CHUNK)


def check(t, name, committed, what):
    return check_layer(t, name, L, CHUNK, committed, what)


def insert_script(url, rows, mode="OR REPLACE", files=None, marker=None, end="COMMIT;"):
    return chunks_script(url, L, rows, mode, files, marker, end)


def files_of(tmp, blobs):
    return {c: write_blob(tmp, b) for c, b in blobs.items()}


def popen(t, script, prefix=(), env=None):
    """The sqlite3 shell running script in the background; prefix: a command it runs
    under (unshare ...); env: more variables."""
    e = {k: v for k, v in os.environ.items() if k not in AWS_VARS}
    e.update(t.env)
    e.update(env or {})
    p = subprocess.Popen(list(prefix) + shell_args(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=e)
    p.stdin.write(".mode list\n" + script)
    p.stdin.close()
    return p


def read_chunks(t, url, chunks):
    """{chunk: bytes or the error text} through vds_chunk_data."""
    s = "".join("SELECT 'c', %d;\nSELECT hex(vds_chunk_data(%s, %s, %d));\n" % (c, q(url), q(L), c) for c in chunks)
    e = {k: v for k, v in os.environ.items() if k not in AWS_VARS}
    e.update(t.env)
    p = subprocess.run(shell_args(), input=".mode list\n" + s, text=True, capture_output=True, env=e)
    out, cur = {}, None
    for line in p.stdout.split("\n"):
        if line.startswith("c|"):
            cur = int(line[2:])
        elif cur is not None and line:
            out[cur] = bytes.fromhex(line)
    errs = [x for x in p.stderr.split("\n") if x]
    for c in chunks:
        if c not in out:
            out[c] = "; ".join(x for x in errs if "chunk %d" % c in x or "%s/%d" % (L, c) in x) or "no answer"
    return out
