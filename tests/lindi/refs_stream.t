#!/usr/bin/env python3
"""lindi_refs streams lindi.json, as TAP: archives whose lindi.json member is padded far
past its text (lindi pads with spaces to grow in place), written by tests/gen/mklindi.py
(spec-built, as lindi writes them). Asserted through vdsql_stats() and the child's peak
RSS: the text is read (bytes at least its length) and the padding is not (at most
1.05 x the text, counting the archive's prefix), over files and over HTTP; LIMIT stops
the reading; templates after refs (lindi sorts keys) are read from a window before the
text's end, found by small probes into the padding (exact bytes), checked when the stream
reaches them (a planted look-alike fails the query), and found by a second pass when not
in that window; templates before refs cost nothing; values against Python's json; malformed and truncated
text named with the byte offset Python finds; one value over max_alloc refused."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "gen"))
import mklindi  # noqa: E402
from taplib import Nginx, measured, ok, plan, sql  # noqa: E402

PEAK_MB = int(os.environ.get("REFS_PEAK_MB", "64"))  # scripts/run-tests raises it for its ASan run
N = 125_000
MEMBER = 64 << 20
TEMPLATE = "https://dandiarchive.s3.amazonaws.com/blobs/1d7/0b3/1d70b3c8"


def rfs_of(n, templates=True):
    refs = {}
    for i in range(n):
        if i % 1000 == 0:
            refs["d%03d/.zarray" % (i // 1000)] = {"chunks": [1000], "dtype": "<f4", "fill_value": float("nan"),
                                                   "shape": [1000000], "zarr_format": 2}
        refs["d%03d/%d" % (i // 1000, i % 1000)] = ["{{u1}}" if templates else TEMPLATE, 4096 * i, 4096]
    refs["inline/x"] = "a\u0000b \u00e9"
    rfs = {"refs": refs, "version": 1}
    if templates:
        rfs["templates"] = {"u1": TEMPLATE}
    return rfs


def archive(path, text, size):
    """A spec-built archive whose lindi.json member is text padded with spaces to size."""
    a = mklindi.Archive(path)
    a.append("blobs/x", b"0123456789" * 100)
    a.trash("lindi.json")
    data = text.encode() + b" " * (size - len(text))
    a.append("lindi.json", data)
    a.close()
    return next(f for f in a.files if f["n"] == "lindi.json")


def stats_query(url, q, pre=""):
    """(rc, output lines of q, requests, bytes, peak MB, stderr)"""
    script = ("%sSELECT vdsql_config('stats', 'reset') IS NULL;\n%s\n"
              "SELECT 'stats', sum(requests), sum(bytes) FROM vdsql_stats();\n" % (pre, q.replace("@T", "lindi_refs('%s')" % url)))
    rc, out, err, mb, _ = measured(script, timeout=120)
    lines = [x for x in out.splitlines() if x and x not in ("0", "1")]
    st = [x for x in lines if x.startswith("stats|")]
    req, nbytes = (int(v) for v in st[-1].split("|")[1:]) if st else (-1, -1)
    return rc, [x for x in lines if not x.startswith("stats|")], req, nbytes, mb, err


def generate(tmp):
    """The archives, and what Python's json says of them (facts.json)."""
    rfs = rfs_of(N)
    text = mklindi.dumps(rfs)
    lj = archive(os.path.join(tmp, "big.lindi.tar"), text, MEMBER)
    refs = rfs["refs"]
    with open(os.path.join(tmp, "big.lindi.json"), "w") as f:
        f.write(text)
    unsorted = json.dumps({"templates": rfs["templates"], "refs": refs, "version": 1}, indent=2)
    archive(os.path.join(tmp, "pre.lindi.tar"), unsorted, MEMBER)
    plain = mklindi.dumps(rfs_of(N // 4, templates=False))
    archive(os.path.join(tmp, "plain.lindi.tar"), plain, mklindi.grow(len(plain)))
    bad = text.replace('"d100/5": [', '"d100/5": [,', 1)
    try:
        json.loads(bad)
        pos = -1
    except json.JSONDecodeError as e:
        pos = e.pos
    archive(os.path.join(tmp, "bad.lindi.tar"), bad, MEMBER)
    cut = text[:len(text) // 2]
    archive(os.path.join(tmp, "cut.lindi.tar"), cut, mklindi.grow(len(cut)))
    with open(os.path.join(tmp, "cut.lindi.json"), "w") as f:
        f.write(cut)
    # a look-alike: a "templates" key nested in a ref's JSON value, then a run of spaces
    # (between tokens: valid JSON) long enough that probes take it for the padding
    small = rfs_of(N // 8)
    body = mklindi.dumps({"refs": small["refs"]})
    head = body[:body.rindex("}", 0, len(body) - 1)].rstrip()
    head += ',\n    "zz/plant": {"templates": {"u1": "https://evil.example/x"}}'
    planted = head + " " * (24 << 20) + '\n  },\n  "templates": {"u1": "%s"},\n  "version": 1\n}' % TEMPLATE
    pl = json.loads(planted)
    archive(os.path.join(tmp, "planted.lindi.tar"), planted, mklindi.grow(len(planted)))
    # templates that are not in the last 512 KiB: a long member sorts after them
    far = dict(small, zz="x" * (600 << 10))
    fart = mklindi.dumps(far)
    archive(os.path.join(tmp, "far.lindi.tar"), fart, mklindi.grow(len(fart)))
    far_lists = [v for v in far["refs"].values() if isinstance(v, list)]
    # 100 KiB after them: out of the first window (32 KiB), in the second (512 KiB)
    mid = mklindi.dumps(dict(small, zz="x" * (100 << 10)))
    archive(os.path.join(tmp, "mid.lindi.tar"), mid, mklindi.grow(len(mid)))
    lists = [v for v in refs.values() if isinstance(v, list)]
    facts = {"tl": len(text), "member": lj["s"], "grow": mklindi.grow(len(text)),
             "sorted": text.index('"templates"') > text.index('"refs"'), "nrefs": len(refs), "first3": sorted(refs)[:3],
             "nref": len(lists), "sum_off": sum(v[1] for v in lists), "inline": refs["inline/x"].encode().hex().upper(),
             "unsorted": len(unsorted),
             "planted": len(planted), "plant_at": planted.index('{"u1": "https://evil'),
             "real_at": planted.index('{"u1": "%s"}' % TEMPLATE), "plant_real": pl["templates"]["u1"] == TEMPLATE
             and pl["refs"]["zz/plant"]["templates"]["u1"] != TEMPLATE, "far": len(fart),
             "far_tail": fart.index('"templates"') < len(fart) - (512 << 10), "far_nref": len(far_lists), "far_nrefs": len(far["refs"]), "mid": len(mid), "plain": len(plain), "bad_pos": pos, "cut": len(cut), "cut_member": mklindi.grow(len(cut))}
    with open(os.path.join(tmp, "facts.json"), "w") as f:
        json.dump(facts, f)


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-refs-stream.")
    nginx = None
    try:
        subprocess.run([sys.executable, os.path.abspath(__file__), "generate", tmp], check=True)
        fx = json.load(open(os.path.join(tmp, "facts.json")))
        tl = fx["tl"]
        big = os.path.join(tmp, "big.lindi.tar")
        ok(tl > 8 << 20 and fx["member"] == MEMBER == fx["grow"] and fx["sorted"],
           "lindi.json: %d bytes of text padded to %d as lindi would, templates after refs" % (tl, MEMBER))

        # count(*): the text is read, the padding is not
        rc, out, req, nbytes, mb, err = stats_query(big, "SELECT count(*) FROM @T;")
        c_req, c_bytes = req, nbytes
        ok(rc == 0 and out == [str(fx["nrefs"])], "count(*) = %d refs (Python's json)" % fx["nrefs"], err)
        ok(tl <= nbytes <= 1.05 * tl, "bytes read %d: between the text (%d) and 1.05 x it (%.3f), in %d requests"
           % (nbytes, tl, nbytes / tl, req), err)
        ok(mb < PEAK_MB, "peak RSS %.1f MB < %d MB" % (mb, PEAK_MB))

        # LIMIT: only the start of the text
        rc, out, req, nbytes, mb, err = stats_query(big, "SELECT key FROM @T LIMIT 3;")
        want = fx["first3"]
        ok(rc == 0 and out == want and nbytes < tl / 10, "LIMIT 3: the first refs %s, %d bytes read" % (want, nbytes),
           err + repr(out))

        # every column: templates come after refs, found by one more pass
        q = ("SELECT count(*), sum(kind = 'ref'), sum(offset), sum(size), sum(target = '%s'), "
             "sum(kind = 'json' AND value LIKE '%%\"fill_value\":NaN%%') FROM @T;" % TEMPLATE)
        rc, out, req, nbytes, mb, err = stats_query(big, q)
        nref = fx["nref"]
        want = "%d|%d|%d|%d|%d|%d" % (fx["nrefs"], nref, fx["sum_off"], 4096 * nref, nref, N // 1000)
        ok(rc == 0 and out == [want], "every ref's target has its template expanded; NaN kept as written: %s" % want,
           err + repr(out))
        # what count(*) reads, the 256-byte probes that find the text's end in the padding
        # (at most 16 in the first round, 15 in each next, each shrinking the span 16-fold down
        # to 16 KiB) and one 32 KiB window before that end, which holds the templates
        probes = req - c_req - 1
        rounds = 1
        while (MEMBER >> 14) > 16 ** rounds:
            rounds += 1
        ok(nbytes == c_bytes + 256 * probes + 32768 and 0 < probes <= 16 + 15 * (rounds - 1)
           and tl <= nbytes <= 1.05 * tl and mb < PEAK_MB,
           "templates after refs, from the text's tail: count(*)'s %d bytes + %d probes of 256 + 32768 = %d bytes "
           "(%.3f x the text), peak RSS %.1f MB" % (c_bytes, probes, nbytes, nbytes / tl, mb), err)
        rc, out, req, nbytes, mb, err = stats_query(big, "SELECT key, hex(value) FROM @T WHERE key = 'inline/x';")
        ok(rc == 0 and out == ["inline/x|" + fx["inline"]],
           "an inline string with \\u0000 and \\u00e9 is its UTF-8 bytes", err + repr(out))

        # templates before refs (keys not sorted, as another writer may leave them): no second pass
        pre = os.path.join(tmp, "pre.lindi.tar")
        rc, out, req, nbytes, mb, err = stats_query(pre, q)
        ok(rc == 0 and out == [want] and fx["unsorted"] <= nbytes <= 1.05 * fx["unsorted"],
           "templates before refs: the same rows from one pass, %d bytes (%.3f x)" % (nbytes, nbytes / fx["unsorted"]),
           err + repr(out))

        # no template needed: no second pass either
        pl = os.path.join(tmp, "plain.lindi.tar")
        rc, out, req, nbytes, mb, err = stats_query(pl, "SELECT sum(length(target)) FROM @T;")
        ok(rc == 0 and out == [str(N // 4 * len(TEMPLATE))] and nbytes <= 1.05 * fx["plain"],
           "urls without templates: one pass, %d bytes (%.3f x)" % (nbytes, nbytes / fx["plain"]), err + repr(out))

        # the JSON form, larger than the prefix: streamed the same way
        jf = os.path.join(tmp, "big.lindi.json")
        rc, out, req, nbytes, mb, err = stats_query(jf, "SELECT count(*) FROM @T;")
        ok(rc == 0 and out == [str(fx["nrefs"])] and tl <= nbytes <= 1.05 * tl and mb < PEAK_MB,
           ".lindi.json of %d bytes: count(*) from %d bytes in %d requests, peak RSS %.1f MB" % (tl, nbytes, req, mb),
           err + repr(out))

        # over HTTP: the same economy (ranges, not the padding)
        nginx = Nginx(tmp, os.path.join(tmp, ".nginx"))
        if ok(nginx.started, "nginx serves the archives", nginx.error):
            rc, out, req, nbytes, mb, err = stats_query(nginx.url + "/big.lindi.tar", "SELECT count(*) FROM @T;")
            ok(rc == 0 and out == [str(fx["nrefs"])] and tl <= nbytes <= 1.01 * tl,
               "over HTTP: count(*) from %d bytes (%.3f x) in %d requests (the end probed, then read ahead to it)"
               % (nbytes, nbytes / tl, req), err)
            h_req, h_bytes = req, nbytes
            rc, out, req, nbytes, mb, err = stats_query(nginx.url + "/big.lindi.tar", q)
            # the probes start where the stream stands, so where they settle (within 16 KiB
            # past the text's end, where the read ahead stops) may differ by that much
            ok(rc == 0 and out == [want] and req == h_req + 1 and abs(nbytes - h_bytes - 32768) <= 16384
               and nbytes <= 1.05 * tl,
               "over HTTP, every column: count(*)'s %d requests + 1 (the 32 KiB window), %d bytes (%.3f x)"
               % (h_req, nbytes, nbytes / tl), err + repr(out))

        # a look-alike nested in a ref, before spaces that the probes take for the padding:
        # rows were given with it, so the query fails when the stream finds the real one
        pa = os.path.join(tmp, "planted.lindi.tar")
        rc, out, req, nbytes, mb, err = stats_query(pa, q)
        msg = ('%s: lindi.json: the "templates" found near the end of the text (at byte %d) are not its top-level '
               '"templates" (they are at byte %d), and refs were already expanded with them' % (pa, fx["plant_at"], fx["real_at"]))
        ok(fx["plant_real"] and rc != 0 and msg in err, "a planted look-alike: %s" % msg[len(tmp):], err + repr(out))
        ma = os.path.join(tmp, "mid.lindi.tar")
        fq = "SELECT count(*), sum(target = '%s') FROM @T;" % TEMPLATE
        rc, out, req, nbytes, mb, err = stats_query(ma, "SELECT count(*) FROM @T;")
        m_req, m_bytes = req, nbytes
        rc, out, req, nbytes, mb, err = stats_query(ma, fq)
        probes = req - m_req - 2
        ok(rc == 0 and out == ["%d|%d" % (fx["far_nrefs"], fx["far_nref"])] and 0 < probes <= 16 + 15 * (rounds - 1)
           and nbytes == m_bytes + 256 * probes + 32768 + 524288,
           "templates 100 KiB before the end: count(*)'s %d bytes + %d probes + a 32 KiB and a 512 KiB window = %d"
           % (m_bytes, probes, nbytes), err + repr(out))
        # the JSON form: its size asked for (one more request); the first round of probes
        # (15 spread over it, 1 at its last 256 bytes, which hold its end) is the only one
        rc, out, req, nbytes, mb, err = stats_query(jf, "SELECT count(*) FROM @T;")
        j_req, j_bytes = req, nbytes
        rc, out, req, nbytes, mb, err = stats_query(jf, q)
        ok(rc == 0 and out == [want] and req == j_req + 1 + 16 + 1 and nbytes == j_bytes + 16 * 256 + 32768,
           ".lindi.json, every column: count(*)'s %d requests + a size, 16 probes and a window; %d bytes + 16 x 256 + 32768"
           % (j_req, j_bytes), err + repr(out) + " %d %d" % (req, nbytes))
        # templates not in the last 512 KiB (a window of 32 KiB, then one of 512): the second pass
        fa = os.path.join(tmp, "far.lindi.tar")
        rc, out, req, nbytes, mb, err = stats_query(fa, "SELECT count(*), sum(target = '%s') FROM @T;" % TEMPLATE)
        ok(fx["far_tail"] and rc == 0 and out == ["%d|%d" % (fx["far_nrefs"], fx["far_nref"])]
           and 1.9 * fx["far"] <= nbytes <= 2.1 * fx["far"],
           "templates more than 512 KiB before the end: found by the second pass, %d bytes (%.2f x the text)"
           % (nbytes, nbytes / fx["far"]), err + repr(out))

        # malformed text deep in the stream: the byte offset Python's json reports
        pos = fx["bad_pos"]
        bp = os.path.join(tmp, "bad.lindi.tar")
        rc, out, req, nbytes, mb, err = stats_query(bp, "SELECT count(*) FROM @T;")
        msg = "%s: lindi.json: malformed JSON at byte %d: unexpected ','" % (bp, pos)
        ok(rc != 0 and msg in err and pos > 4 << 20, "a stray comma at byte %d: %s" % (pos, msg), err)
        # truncated: the text stops, the padding follows
        cp = os.path.join(tmp, "cut.lindi.tar")
        rc, out, req, nbytes, mb, err = stats_query(cp, "SELECT count(*) FROM @T;")
        msg = "%s: lindi.json: malformed JSON at byte %d: the text ends before its top-level object closes" % (cp, fx["cut_member"])
        ok(rc != 0 and msg in err, "a text cut short in its member: %s" % msg, err)
        jc = os.path.join(tmp, "cut.lindi.json")
        rc, out, req, nbytes, mb, err = stats_query(jc, "SELECT count(*) FROM @T;")
        msg = "%s: malformed JSON at byte %d: the text ends before its top-level object closes" % (jc, fx["cut"])
        ok(rc != 0 and msg in err, "a .lindi.json cut short: %s" % msg, err)
        rc, out, req, nbytes, mb, err = stats_query(jc.replace("cut", "nope"), "SELECT count(*) FROM @T;")
        ok(rc != 0 and "no such file" in err, "a missing file is the store's error", err)

        # one value over max_alloc (1 MiB): refused, naming its offset
        huge = {"refs": {"a": "x", "b": "y" * (1536 << 10), "c": "z"}}
        ht = mklindi.dumps(huge)
        hp = os.path.join(tmp, "huge.lindi.tar")
        archive(hp, ht, mklindi.grow(len(ht)))
        rc, out, req, nbytes, mb, err = stats_query(hp, "SELECT key FROM @T;",
                                                    pre="SELECT vdsql_config('max_alloc', '1048576') IS NULL;\n")
        msg = "%s: lindi.json: a key and value at byte %d take more than 1048576 bytes (the max_alloc setting)" % (
            hp, ht.index('"b"'))
        ok(rc != 0 and out == ["a"] and msg in err, "a 1.5 MiB value under max_alloc 1 MiB: %s" % msg, err + repr(out))
        rc, out, req, nbytes, mb, err = stats_query(hp, "SELECT key, length(value) FROM @T;")
        ok(rc == 0 and out == ["a|1", "b|%d" % (1536 << 10), "c|1"], "and read whole under the default", err)

        # small faults: the byte offset Python's json reports for each, and one wording each
        faults = {
            "a leading zero": ('{"refs": {"a": 01}}', "unexpected '1'"),
            "a dot without digits": ('{"refs": {"a": 1.}}', "unexpected '.'"),
            "an exponent without digits": ('{"refs": {"a": 1e}}', "unexpected 'e'"),
            "a trailing comma": ('{"refs": {"a": 1,}}', "unexpected '}'"),
            "a raw control character": ('{"refs": {"a": "x\x01"}}', "a raw control character (byte 0x01) in a string"),
            "a bad escape": ('{"refs": {"a": "x\\q"}}', "a bad escape in a string"),
            "a bad \\u escape": ('{"refs": {"a": "x\\u12g4"}}', "a \\u escape without four hex digits"),
            "a missing colon": ('{"refs": {"a" 1}}', "unexpected '1'"),
            "a cut literal": ('{"refs": {"a": tru}}', "not a JSON value"),
            "a lowercase nan": ('{"refs": {"a": nan}}', "not a JSON value"),
            "single quotes": ("{'refs': {}}", "unexpected '''"),
            "a missing brace": ('{"refs": {"a": [1, 2]}', "the text ends before its top-level object closes"),
            "a missing comma": ('{"refs": {"a": [1 2]}}', "unexpected '2'"),
        }
        for what, (doc, fault) in faults.items():
            try:
                json.loads(doc)
                pos = None
            except json.JSONDecodeError as e:
                pos = e.pos
            p = os.path.join(tmp, "fault.lindi.json")
            with open(p, "w") as f:
                f.write(doc)
            rc, out, req, nbytes, mb, err = stats_query(p, "SELECT count(*) FROM @T;")
            msg = "%s: malformed JSON at byte %s: %s" % (p, pos, fault)
            ok(rc != 0 and pos is not None and msg in err, "%s: %s" % (what, msg[len(tmp):]), err)
        # Python's numbers: NaN and Infinity read; a lone surrogate refused (cJSON refuses it too)
        p = os.path.join(tmp, "py.lindi.json")
        with open(p, "w") as f:
            f.write(json.dumps({"refs": {"n": [float("nan"), -float("inf"), 1e300], "r": ["x", float("nan"), 1]}}))
        rc, out, req, nbytes, mb, err = stats_query(p, "SELECT key, kind, ifnull(value, '') FROM @T WHERE key = 'n';")
        ok(rc == 0 and out == ["n|json|[NaN,-Infinity,1e+300]"], "NaN, -Infinity, 1e+300: a json value as written",
           err + repr(out))
        rc, out, req, nbytes, mb, err = stats_query(p, "SELECT offset FROM @T WHERE key = 'r';")
        ok(rc != 0 and 'lindi.json ref "r": offset nan is not an integer from 0 to 2^53' in err,
           "a ref whose offset is NaN: refused when read", err)
        with open(p, "w") as f:
            f.write('{"refs": {"a": "\\udc00"}}')
        rc, out, req, nbytes, mb, err = stats_query(p, "SELECT count(*) FROM @T;")
        ok(rc != 0 and "%s: malformed JSON at byte 17: a lone surrogate in a \\u escape" % p in err,
           "a lone low surrogate: refused at its u", err)

        # a document without refs, and refs that are no object
        for name, doc in (("norefs", {"version": 1}), ("listrefs", {"refs": [1, 2], "templates": {}})):
            t = mklindi.dumps(doc)
            p = os.path.join(tmp, name + ".lindi.tar")
            archive(p, t, 8192)
            rc, out, req, nbytes, mb, err = stats_query(p, "SELECT count(*) FROM @T;")
            ok(rc != 0 and '%s: lindi.json has no "refs" object' % p in err, "%s: no refs object" % name, err)
    finally:
        if nginx:
            nginx.stop()
        shutil.rmtree(tmp)


if __name__ == "__main__":
    if sys.argv[1:2] == ["generate"]:
        generate(sys.argv[2])
        sys.exit(0)
    main()
    sys.exit(plan())
