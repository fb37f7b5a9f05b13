#!/usr/bin/env python3
"""A 100,000-member LINDI archive in flat memory, as TAP.

The index of 100,000 members is ~10 MB of JSON (padded to 64 MiB, lindi's growth rule).
vdsql reads it as a stream, only until its JSON value ends, and keeps it packed: listing
it (lindi_files, on a local file and over HTTP), and opening the writable lindi_tar on it
and appending one member, must each peak under PEAK_MIB of resident memory in the sqlite3
process (GNU time's %M; the shell with the extension loaded is about 11 MiB). Before,
cJSON built a tree of the whole text: 87 MiB for the listing, 80 MiB for the append.

The archive is written here from the spec (tests/gen/mklindi.py's headers): empty members
(their headers only), so it builds in about a second; names, offsets and the appended
member are checked with Python's json and tarfile. The archive is built in a child
process, and sqlite3 is started by /usr/bin/time: a process's peak RSS includes that of
the process it was forked from (the high-water mark survives exec)."""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gen"))
import mklindi  # noqa: E402
from taplib import Nginx, ok, plan, shell_args  # noqa: E402

PEAK_MIB = 32
N = 100_000
PREFIX = 128 << 10        # vdsql_config('lindi_prefix') default
PIECE = 2 << 20           # the largest range lindi_open asks for at once


def build(path):
    """entry, lindi.json, N empty members, then the index (as lindi leaves a grown one)."""
    files = [{"n": ".tar_entry.json", "o": 0, "d": 512, "s": 1024},
             {"n": "lindi.json", "o": 1536, "d": 2048, "s": 8192}]
    off = 10240
    for i in range(N):
        files.append({"n": "blobs/m/%d" % i, "o": off, "d": off + 512, "s": 0})
        off += 512
    io = off
    files.append({"n": ".tar_index.json", "o": io, "d": io + 512, "s": 0})
    text = mklindi.dumps({"files": files})
    size = mklindi.grow(len(text))
    files[-1]["s"] = size
    text = mklindi.dumps({"files": files})
    assert len(text) <= size
    entry = mklindi.dumps({"index": {"n": ".tar_index.json", "o": io, "d": io + 512, "s": size}})
    with open(path, "wb") as f:
        f.write(mklindi.header(".tar_entry.json", 1024) + entry.encode().ljust(1024))
        f.write(mklindi.header("lindi.json", 8192) + b'{"refs": {}}'.ljust(8192))
        f.write(b"".join(mklindi.header("blobs/m/%d" % i, 0) for i in range(N)))
        f.write(mklindi.header(".tar_index.json", size) + text.encode())
        f.write(b" " * (size - len(text)) + b"\0" * 1024)
    return files, len(text)


def measured(script, timeout=120):
    """(returncode, stdout, stderr, peak RSS in MiB, seconds) of the shell running script."""
    import time
    with tempfile.NamedTemporaryFile("r") as t:
        t0 = time.monotonic()
        try:
            p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", t.name] + shell_args(), input=script, text=True,
                               capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            return None, "", str(e), float("inf"), timeout
        secs = time.monotonic() - t0
        lines = t.read().split()
        return p.returncode, p.stdout, p.stderr, int(lines[-1]) / 1024.0 if lines else float("inf"), secs


if len(sys.argv) == 3 and sys.argv[1] == "build":
    files, text_len = build(sys.argv[2])
    print(json.dumps([len(files), sum(len(f["n"]) for f in files), sum(f["d"] for f in files), text_len]))
    sys.exit(0)

tmp = tempfile.mkdtemp(prefix="vdsql-memory.")
web = None
try:
    path = os.path.join(tmp, "big.lindi.tar")
    nfiles, names, offsets, text_len = json.loads(
        subprocess.run([sys.executable, os.path.abspath(__file__), "build", path], capture_output=True, text=True,
                       check=True).stdout)
    want = "%d|%d|%d" % (nfiles, names, offsets)
    ok(text_len > 9_000_000, "the index of %d members is %d bytes of JSON" % (nfiles, text_len))

    rc, out, err, base, _ = measured("SELECT 1;")
    ok(rc == 0, "baseline: sqlite3 with vdsql loaded, SELECT 1: %.1f MiB" % base, err)

    def run(what, script):
        rc, out, err, mib, secs = measured(script)
        ok(rc == 0, "%s: runs (%.2f s)" % (what, secs), err)
        ok(mib < PEAK_MIB, "%s: peak RSS %.1f MiB < %d MiB" % (what, mib, PEAK_MIB), err)
        return out.split("\n")

    def listing(url):
        q = "SELECT count(*), sum(length(name)), sum(data_offset) FROM lindi_files('%s');\n" % url
        st = "SELECT sum(requests) || '|' || sum(bytes) FROM vdsql_stats();\n"
        return q + st + q + st

    # a local file: the index text (not its padding) is read once; the second listing
    # comes from the cache (the packed index, ~5 MB, fits the default 16 MiB cache)
    out = run("lindi_files count over %d members (file)" % N, listing(path))
    ok(out[0] == want and out[2] == want, "the listing has every entry: count, name lengths, offsets = %s" % want,
       "\n".join(out))
    req, nbytes = (int(x) for x in out[1].split("|"))
    ok(nbytes <= PREFIX + text_len + PIECE, "read %d bytes in %d requests: the text (%d) and at most one range more, "
       "never the padding" % (nbytes, req, text_len), out[1])
    ok(out[3] == out[1], "a second listing costs no request (cached)", "\n".join(out))

    web = Nginx(tmp, os.path.join(tmp, "nginx"))
    if ok(web.started, "nginx serves the archive", web.error):
        out = run("lindi_files count over %d members (http)" % N, listing(web.url + "/big.lindi.tar"))
        ok(out[0] == want and out[2] == want and out[3] == out[1], "over http: every entry, twice, the second cached",
           "\n".join(out))

    # the writer: open, append one member (autocommit), then read it back
    run("open lindi_tar on %d members and append one" % N,
        "CREATE VIRTUAL TABLE a USING lindi_tar('%s');\n"
        "INSERT INTO a(name, data) VALUES ('extra/1', x'00ff00ff');\n" % path)
    rc, out, err, mib, _ = measured("SELECT count(*), hex(lindi_read('%s', 'extra/1')) FROM lindi_files('%s');"
                                    % (path, path))
    ok(rc == 0 and out.strip() == "%d|00FF00FF" % (nfiles + 1), "vdsql lists and reads it (%.1f MiB)" % mib,
       out + err)
    with tarfile.open(path) as t:
        m = t.getmember("extra/1")
        data = t.extractfile(m).read()
    with open(path, "rb") as f:
        entry = json.loads(f.read(1536)[512:])["index"]
        f.seek(entry["d"])
        index = json.loads(f.read(entry["s"]))["files"]
    new = [x for x in index if x["n"] == "extra/1"]
    ok(data == b"\x00\xff\x00\xff" and len(index) == nfiles + 1 and len(new) == 1 and new[0]["d"] == m.offset_data,
       "tarfile reads the new member and json the new index: %d entries, extra/1 at %d" % (len(index), m.offset_data))
finally:
    if web:
        web.stop()
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(plan())
