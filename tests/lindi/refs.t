#!/usr/bin/env python3
"""lindi_refs values byte for byte, as TAP. tests/gen/mklindi.py writes (with Python's
json, as lindi does) an archive and a standalone .lindi.json whose inline values are
JSON strings with \\u0000 and every other escape, non-ASCII bytes as base64 (lindi's
rule), and a zarr array whose chunk is such a string. Checked: vdsql's values against
the bytes Python decodes; after an INSERT through a writable lindi_refs table, every
other ref of the new lindi.json equals the original (both parsed with Python's json)
and the text is what json.dumps writes; keys, strings, JSON values and targets ending in an
astral character (a surrogate pair right before the closing quote) decode to UTF-8; with LINDI_SRC, lindi itself reads every value
and zarr the arrays (one of them blosc-compressed) from the rewritten archive."""
import base64
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "gen"))
import mklindi  # noqa: E402
from taplib import ok, plan, skip, sql  # noqa: E402

LINDI = os.environ.get("LINDI_SRC")


def lindi_json(arc):
    """lindi.json of an archive as Python's tarfile and json read it: (text, rfs)."""
    with tarfile.open(arc) as t:
        text = t.extractfile("lindi.json").read().decode("ascii").rstrip(" ")
    return text, json.loads(text)


def py_bytes(v):
    """The bytes lindi gives for an inline string (LindiReferenceFileSystemStore._get_helper)."""
    return base64.b64decode(v[7:]) if v.startswith("base64:") else v.encode("utf-8")


def rows(url):
    """vdsql's rows: key -> (kind, typeof(value), length, hex, target)."""
    p = sql(".mode list\n.separator \\t\nSELECT key, kind, typeof(value), length(CAST(value AS BLOB)), hex(value), "
            "ifnull(target, '') FROM lindi_refs('%s');\n" % url)
    out = {}
    for line in p.stdout.splitlines():
        k, kind, typ, n, hx, target = line.split("\t")
        out[k] = (kind, typ, int(n or 0), bytes.fromhex(hx), target)
    return out, p.stderr


def utf8_text(b):
    try:
        b.decode("utf-8")
        return b"\0" not in b
    except UnicodeDecodeError:
        return False


def check_values(url, rfs, what):
    got, err = rows(url)
    ok(sorted(got) == sorted(rfs["refs"]), "%s: one row per ref (%d)" % (what, len(got)), err)
    bad = []
    for k, v in rfs["refs"].items():
        if not isinstance(v, str):
            continue
        if k not in got:
            bad.append("%s: no row" % k)
            continue
        want = py_bytes(v)
        kind, typ, n, b, _ = got[k]
        want_type = "blob" if v.startswith("base64:") or not utf8_text(want) else "text"
        if b != want or n != len(want) or typ != want_type or kind != ("base64" if v.startswith("base64:") else "text"):
            bad.append("%s: %s %s %d %r, want %s %d %r" % (k, kind, typ, n, b[:40], want_type, len(want), want[:40]))
    nul = [k for k, v in rfs["refs"].items() if isinstance(v, str) and "\0" in v]
    ok(not bad and len(nul) >= 6, "%s: every inline value is the bytes Python decodes, whole (%d with NUL, as BLOB; "
       "lengths %s)" % (what, len(nul), ",".join(str(got[k][2]) for k in sorted(nul) if k in got)), "\n".join(bad))
    gen = [k for k, b in mklindi.ESCAPE_VALUES.items() if got.get(k, (0, 0, 0, None))[3] != b]
    ok(not gen, "%s: and the bytes the generator stored" % what, gen)
    js = {k: json.loads(got[k][3].decode()) for k, v in rfs["refs"].items() if isinstance(v, dict) and k in got}
    ok(js and all(js[k] == rfs["refs"][k] and json.dumps(js[k]) == json.dumps(rfs["refs"][k]) for k in js),
       "%s: JSON values parse to the originals, a \\u0000 in a string and 1.0 as a float included" % what,
       json.dumps(js)[:600])


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-refs.")
    try:
        d = os.path.join(tmp, "lindi")
        mklindi.build_tests(d)
        src = os.path.join(d, "escapes.lindi.tar")
        text0, rfs0 = lindi_json(src)
        ok(text0 == json.dumps(mklindi.escapes_rfs(), indent=2, sort_keys=True) and "\\u0000" in text0,
           "the generator's lindi.json is Python's json.dumps text, with \\u0000 escapes")
        check_values(src, rfs0, "archive")
        check_values(os.path.join(d, "escapes.lindi.json"), rfs0, "standalone .lindi.json")

        # an astral character (a \ud83d\ude00 surrogate pair) as the last thing in a key, in an
        # inline string and in a JSON value's string, right before the closing quote
        # (issue 22): each must come out as Python's json decodes it, in UTF-8
        astral = os.path.join(tmp, "astral.lindi.json")
        face = "\U0001f600"
        arfs = {"refs": {"k" + face: "v" + face, face: face, "j/" + face: {"s": "x" + face, face: 1},
                         "ref/" + face: ["./b" + face, 0, 1]}, "version": 1}
        with open(astral, "w") as f:
            f.write(json.dumps(arfs))  # ensure_ascii: the pairs as \ud83d\ude00 escapes, as Python writes them
        ok("\\ud83d\\ude00\"" in open(astral).read(), "the test file has surrogate-pair escapes right before closing quotes")
        # hex of everything: a decoding bug must show as wrong bytes, not break the reading of them
        p = sql(".mode list\n.separator \\t\nSELECT hex(key), hex(CAST(value AS BLOB)), hex(ifnull(target, '')) "
                "FROM lindi_refs('%s');\n" % astral)
        got = {}
        for line in p.stdout.splitlines():
            k, v, t = line.split("\t")
            got[bytes.fromhex(k)] = (bytes.fromhex(v), bytes.fromhex(t))
        want = {k.encode("utf-8"): v for k, v in arfs["refs"].items()}
        ok(sorted(got) == sorted(want), "keys ending in an astral character are Python's keys, in UTF-8 (%d)" % len(got),
           p.stderr + repr(sorted(got)))
        ok(all(got.get(k, (None,))[0] == v.encode("utf-8") for k, v in want.items() if isinstance(v, str)),
           "inline strings ending in an astral character are its 4 UTF-8 bytes, whole",
           repr({k: got.get(k) for k in want}))
        jv = got.get(("j/" + face).encode("utf-8"), (b"null",))[0]
        try:
            jok = json.loads(jv.decode("utf-8")) == arfs["refs"]["j/" + face]
        except ValueError:
            jok = False
        ok(jok, "a JSON value whose key and string end in an astral character parses to the original", repr(jv))
        ok(got.get(("ref/" + face).encode("utf-8"), (0, b""))[1] == ("./b" + face).encode("utf-8"),
           "a reference's target ending in one too", repr(got.get(("ref/" + face).encode("utf-8"))))

        # one INSERT through a writable table: every other ref is written back as read
        arc = os.path.join(tmp, "w.lindi.tar")
        shutil.copy(src, arc)
        new = b"\x00new\x00\x01\x7f"
        p = sql("CREATE VIRTUAL TABLE r USING lindi_refs('%s');\n"
                "INSERT INTO r(key, value) VALUES ('new/nul', x'%s');\n" % (arc, new.hex()))
        text1, rfs1 = lindi_json(arc)
        ok(p.returncode == 0 and rfs1["refs"].get("new/nul") == mklindi.lindi_inline(new),
           "an inserted value with NUL bytes (all below 0x80) is stored as lindi would: a string with \\u0000",
           p.stderr + repr(rfs1["refs"].get("new/nul")))
        others = {k: v for k, v in rfs1["refs"].items() if k != "new/nul"}
        diff = [k for k in rfs0["refs"] if json.dumps(others.get(k)) != json.dumps(rfs0["refs"][k])]
        ok(not diff and sorted(others) == sorted(rfs0["refs"]) and rfs1["version"] == 1,
           "every other ref of the new lindi.json equals the original (%d refs, parsed with Python's json)" %
           len(others), diff)
        ok(text1 == json.dumps(rfs1, indent=2, sort_keys=True),
           "the new lindi.json is the text Python's json.dumps writes for it (escapes, 1.0, 1e+300 alike)")
        got, err = rows(arc)
        ok(got.get("new/nul", (0, 0, 0, None))[1:4] == ("blob", len(new), new), "the inserted value reads back "
           "byte-exact", err + repr(got.get("new/nul")))

        # savepoints copy the refs: a rolled-back insert leaves the others as they were
        p = sql("CREATE VIRTUAL TABLE r USING lindi_refs('%s');\nBEGIN;\nSAVEPOINT a;\n"
                "INSERT INTO r(key, value) VALUES ('gone', x'0000');\nROLLBACK TO a;\n"
                "INSERT INTO r(key, kind, value) VALUES ('json/new', 'json', '{\"s\": \"a\\u0000b\", \"f\": 1.0}');\n"
                "COMMIT;\n" % arc)
        text2, rfs2 = lindi_json(arc)
        diff = [k for k in rfs1["refs"] if json.dumps(rfs2["refs"].get(k)) != json.dumps(rfs1["refs"][k])]
        jn = rfs2["refs"].get("json/new")
        ok(p.returncode == 0 and not diff and "gone" not in rfs2["refs"] and text2 == json.dumps(rfs2, indent=2,
                                                                                              sort_keys=True),
           "after SAVEPOINT / ROLLBACK TO, every ref is as it was", p.stderr + repr(diff))
        ok(jn == {"s": "a\0b", "f": 1.0} and isinstance(jn["f"], float),
           "an inserted JSON value keeps its \\u0000 and its 1.0", repr(jn))
        p = sql("CREATE VIRTUAL TABLE r USING lindi_refs('%s');\n"
                "INSERT INTO r(key, value) VALUES (CAST(x'eda080' AS TEXT), 'x');\n" % arc)
        ok("key must be UTF-8 text without NUL characters" in p.stderr and lindi_json(arc)[0] == text2,
           "a key that is not UTF-8 (it would make lindi.json unreadable) is refused, nothing written", p.stderr)

        if not LINDI:
            for what in ("lindi reads every value of the rewritten archive", "zarr reads its arrays"):
                skip("%s: set LINDI_SRC to a lindi source tree (not packaged in Debian)" % what)
            return
        code = ("import sys, json; sys.path.insert(0, %r)\nimport zarr\n"
                "from lindi.tar.lindi_tar import LindiTarFile\n"
                "from lindi.LindiH5pyFile.LindiReferenceFileSystemStore import LindiReferenceFileSystemStore\n"
                "t = LindiTarFile(%r)\nrfs = json.loads(t.read_file('lindi.json'))\nt.close()\n"
                "s = LindiReferenceFileSystemStore(rfs, mode='r')\n"
                "out = {k: s[k].hex() for k in rfs['refs'] if isinstance(rfs['refs'][k], str)}\n"
                "out['zarr arr'] = zarr.open_array(s, path='arr', mode='r')[:].tolist()\n"
                "out['zarr blosc'] = zarr.open_array(s, path='blosc', mode='r')[:].tolist()\n"
                "print(json.dumps(out))" % (LINDI, arc))
        p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True)
        got = json.loads(p.stdout) if p.returncode == 0 else {}
        want = {k: v.hex() for k, v in mklindi.ESCAPE_VALUES.items()}
        want["new/nul"] = new.hex()
        ok(got and all(got.get(k) == v for k, v in want.items()), "lindi's store reads every inline value of the "
           "rewritten archive byte-exact (%d values)" % len(want), p.stderr[-800:])
        ok(got.get("zarr arr") == list(mklindi.ARR) and got.get("zarr blosc") == list(mklindi.BLOSC),
           "zarr reads the array whose chunk is a \\u0000 string and the blosc-compressed one", p.stderr[-800:] +
           repr([got.get("zarr arr"), got.get("zarr blosc")]))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
    sys.exit(plan())
