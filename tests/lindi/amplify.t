#!/usr/bin/env python3
"""Template amplification in lindi_refs, as TAP.

lindi.json "templates" are plain text substituted for {{name}} in ref urls, so a small
archive can name a 100 KB template 20,000 times: in one url (2 GB for one row) and in
20,000 refs (100 KB each). vdsql expands a url only when a column needs it (target,
member, archive_offset), one row at a time, and refuses a url that would exceed
vdsql_config('max_alloc') with an error naming the archive and the ref, before
allocating it. Each query's sqlite3 child must stay under PEAK_MB of resident memory."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gen"))
import mklindi  # noqa: E402
from taplib import measured, ok, plan  # noqa: E402

PEAK_MB = 100
TEMPLATE = "".join(chr(ord("a") + i % 26) for i in range(100_000))
N = 20_000

tmp = tempfile.mkdtemp(prefix="vdsql-amplify.")
try:
    path = os.path.join(tmp, "bomb.lindi.tar")
    a = mklindi.Archive(path)
    a.append("blobs/x", b"0123456789" * 10)
    refs = {"bomb": ["{{t}}" * N, 0, 1], "plain": ["{{m}}", 5, 10]}
    for i in range(N):
        refs["r/%05d" % i] = ["{{t}}", i, 10]
    a.write_refs({"refs": refs, "templates": {"t": TEMPLATE, "m": "./blobs/x"}})
    a.close()
    member = next(f for f in a.files if f["n"] == "blobs/x")
    text = len(mklindi.dumps({"refs": refs, "templates": {"t": TEMPLATE, "m": "./blobs/x"}}))
    ok(text < 2 << 20, "lindi.json is %d bytes of text (%d with lindi's padding)"
       % (text, next(f["s"] for f in a.files if f["n"] == "lindi.json")))

    def run(what, script, want_rc=0):
        rc, out, err, mb, secs = measured(script, timeout=120)
        ok(rc is not None, "%s: finished (%.1f s)" % (what, secs), "killed after 120 s")
        ok(mb < PEAK_MB, "%s: peak RSS %.0f MB < %d MB" % (what, mb, PEAK_MB), err)
        return rc, out, err

    # rows and keys only: no template is expanded
    rc, out, err = run("count(*), sum(length(key))", "SELECT count(*), sum(length(key)) FROM lindi_refs('%s');" % path)
    want = "%d|%d" % (len(refs), sum(len(k) for k in refs))
    ok(rc == 0 and out.strip() == want, "count(*), sum(length(key)) = %s" % want, out + err)
    rc, out, err = run("key, kind", "SELECT key, kind FROM lindi_refs('%s') WHERE kind = 'ref' ORDER BY key DESC LIMIT 1;"
                       % path)
    ok(rc == 0 and out.strip() == "r/%05d|ref" % (N - 1), "key, kind of the last ref", out + err)
    # the url of 20,000 refs, 100 KB each: expanded one row at a time
    rc, out, err = run("sum(length(url)) over 20,000 refs",
                       "SELECT count(*), sum(length(target)), count(DISTINCT target), sum(offset), sum(size) "
                       "FROM lindi_refs('%s') WHERE key LIKE 'r/%%';" % path)
    want = "%d|%d|1|%d|%d" % (N, N * len(TEMPLATE), N * (N - 1) // 2, 10 * N)
    ok(rc == 0 and out.strip() == want, "urls, offsets and sizes of the 20,000 refs: %s" % want, out + err)
    rc, out, err = run("one url", "SELECT target = '%s' FROM lindi_refs('%s') WHERE key = 'r/00042';" % (TEMPLATE, path))
    ok(rc == 0 and out.strip() == "1", "r/00042's url is the template's text", out + err)
    rc, out, err = run("member ref", "SELECT target, member, offset, size, archive_offset FROM lindi_refs('%s') "
                       "WHERE key = 'plain';" % path)
    want = "./blobs/x|blobs/x|5|10|%d" % (member["d"] + 5)
    ok(rc == 0 and out.strip() == want, "a templated member ref resolves: %s" % want, out + err)
    # one url of 2 GB: refused before it is made
    for col in ("target", "member", "archive_offset"):
        rc, out, err = run("bomb's %s" % col, "SELECT %s FROM lindi_refs('%s') WHERE key = 'bomb';" % (col, path))
        ok(rc != 0 and path in err and '"bomb"' in err and "max_alloc" in err,
           "reading the bomb's %s is an error naming the archive and the ref" % col, out + err)
    rc, out, err = run("bomb's offset", "SELECT offset, size FROM lindi_refs('%s') WHERE key = 'bomb';" % path)
    ok(rc == 0 and out.strip() == "0|1", "the bomb's offset and size need no expansion", out + err)
    # the same through a named (writable) table, which has its own cursor set-up
    rc, out, err = run("named table", "CREATE VIRTUAL TABLE r USING lindi_refs('%s');\n"
                       "SELECT count(*), sum(length(key)) FROM r;\nSELECT target FROM r WHERE key = 'bomb';" % path)
    ok(rc != 0 and out.strip() == "%d|%d" % (len(refs), sum(len(k) for k in refs)) and '"bomb"' in err,
       "named table: rows without expansion, the bomb refused", out + err)
    # max_alloc is the bound: at 16 MiB the 100 KB urls read and the bomb is refused; at
    # 1 MiB the 8 MiB lindi.json member still reads, since lindi_refs streams it and holds
    # one ref at a time (tests/lindi/refs_stream.t refuses one value over max_alloc)
    rc, out, err = run("max_alloc 16 MiB", "SELECT vdsql_config('max_alloc', '16777216') IS NOT NULL;\n"
                       "SELECT sum(length(target)) FROM lindi_refs('%s') WHERE key LIKE 'r/0000%%';\n"
                       "SELECT target FROM lindi_refs('%s') WHERE key = 'bomb';" % (path, path))
    ok(rc != 0 and out.split() == ["1", str(10 * len(TEMPLATE))] and "more than 16777216 bytes" in err,
       "under max_alloc 16 MiB: 100 KB urls read, the bomb is refused", out + err)
    rc, out, err = run("max_alloc 1 MiB", "SELECT vdsql_config('max_alloc', '1048576') IS NOT NULL;\n"
                       "SELECT count(*) FROM lindi_refs('%s');\n"
                       "SELECT target FROM lindi_refs('%s') WHERE key = 'bomb';" % (path, path))
    ok(rc != 0 and out.split() == ["1", str(len(refs))] and "more than 1048576 bytes" in err and '"bomb"' in err,
       "under max_alloc 1 MiB the 8 MiB lindi.json member is streamed (%d refs) and the bomb refused" % len(refs),
       out + err)
finally:
    shutil.rmtree(tmp)
sys.exit(plan())
