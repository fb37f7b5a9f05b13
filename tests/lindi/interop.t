#!/usr/bin/env python3
"""Interoperability of archives vdsql writes and reads, as TAP: GNU tar lists and
extracts vdsql-written members byte-equal to what was inserted; Python's tarfile reads
them; two writers on one archive serialise (the second waits, or reports busy). With
LINDI_SRC set to a lindi source tree (own verification), lindi's LindiTarFile opens
vdsql-written archives and reads every member, and vdsql reports exactly the index of
lindi-written archives; without it those checks are reported as skipped."""
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import ok, plan, shell_args, skip, sql  # noqa: E402

LINDI = os.environ.get("LINDI_SRC")

def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-interop.")
    try:
        arc = os.path.join(tmp, "x.lindi.tar")
        members = {"blobs/a": os.urandom(5000), "blobs/empty": b"", "text.txt": b"hello\n",
                   "p" * 120 + "/" + "n" * 90: os.urandom(700), "deep/dir/\u00e9t\u00e9.bin": os.urandom(513)}
        src = os.path.join(tmp, "src")
        os.mkdir(src)
        values = []
        for i, (name, data) in enumerate(members.items()):
            with open(os.path.join(src, str(i)), "wb") as f:
                f.write(data)
            values.append("('%s', readfile('%s'))" % (name.replace("'", "''"), os.path.join(src, str(i))))
        p = sql("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nINSERT INTO a(name, data) VALUES %s;\n"
                "INSERT OR REPLACE INTO a(name, data) VALUES ('text.txt', 'replaced\n');\n" % (arc, ", ".join(values)))
        ok(p.returncode == 0, "vdsql writes members (long names in the ustar prefix, UTF-8, empty)", p.stderr)
        members["text.txt"] = b"replaced\n"
        p = subprocess.run(["tar", "tvf", arc], capture_output=True, text=True)
        ok(p.returncode == 0 and p.stderr == "", "GNU tar lists the archive without complaint", p.stderr)
        out = os.path.join(tmp, "out")
        os.mkdir(out)
        p = subprocess.run(["tar", "xf", arc, "-C", out], capture_output=True, text=True)
        same = p.returncode == 0 and all(open(os.path.join(out, k), "rb").read() == v for k, v in members.items())
        ok(same, "GNU tar extracts every member byte-equal to what was inserted", p.stderr)
        with tarfile.open(arc) as t:
            got = {m.name: t.extractfile(m).read() for m in t.getmembers() if m.isfile() and not m.name.startswith(".")
                   and m.name != "lindi.json"}
        ok(got == members, "Python tarfile reads the same members and bytes", sorted(got))
        q = sql("SELECT name, hex(data) FROM (SELECT name, lindi_read('%s', name) AS data FROM lindi_files('%s'));" %
                (arc, arc)).stdout
        rows = dict(line.split("|") for line in q.splitlines())
        ok(all(rows.get(k) == v.hex().upper() for k, v in members.items()), "vdsql reads back every member")

        # two writers: the second waits for the lock, then commits; with a short wait it is told busy
        hold = subprocess.Popen(shell_args(), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        hold.stdin.write("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nBEGIN;\nINSERT INTO a(name, data) "
                         "VALUES ('w1', 'one');\n.shell sleep 1.5\nCOMMIT;\n" % arc)
        hold.stdin.close()
        time.sleep(0.5)
        t0 = time.time()
        p = sql("SELECT vdsql_config('lock_timeout', 0.2);\nCREATE VIRTUAL TABLE a USING lindi_tar('%s');\n"
                "INSERT INTO a(name, data) VALUES ('w2', 'two');" % arc)
        ok("another writer holds the archive" in p.stderr, "a second writer with lock_timeout 0.2 s gets a busy error",
           p.stderr)
        p = sql("SELECT vdsql_config('lock_timeout', 10);\nCREATE VIRTUAL TABLE a USING lindi_tar('%s');\n"
                "INSERT INTO a(name, data) VALUES ('w3', 'three');" % arc)
        waited = time.time() - t0
        hold.wait()
        q = sql("SELECT group_concat(name) FROM lindi_files('%s') WHERE name LIKE 'w%%';" % arc).stdout.strip()
        ok(p.returncode == 0 and hold.returncode == 0 and q == "w1,w3" and waited > 0.8,
           "a second writer waits for the first, then both commits are there (%.1f s)" % waited, p.stderr + q)
        p = subprocess.run(["tar", "tf", arc], capture_output=True, text=True)
        ok(p.returncode == 0 and "w1" in p.stdout and "w3" in p.stdout, "tar sees both writers' members", p.stderr)

        if not LINDI:
            for what in ("lindi opens vdsql-written archives", "vdsql reads lindi-written archives exactly"):
                skip("%s: set LINDI_SRC to a lindi source tree (not packaged in Debian)" % what)
            return
        code = ("import sys, json; sys.path.insert(0, %r)\nfrom lindi.tar.lindi_tar import LindiTarFile\n"
                "t = LindiTarFile(%r)\nprint(json.dumps({f['n']: t.read_file(f['n']).hex() for f in t._index['files']}))\n"
                "t.close()" % (LINDI, arc))
        p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True)
        import json
        got = json.loads(p.stdout) if p.returncode == 0 else {}
        ok(all(got.get(k) == v.hex() for k, v in members.items()), "lindi's LindiTarFile opens the archive and reads "
           "every member byte-equal", p.stderr[-500:])
        made = os.path.join(tmp, "lindi-made.lindi.tar")
        code = ("import sys, json; sys.path.insert(0, %r)\nfrom lindi.tar.lindi_tar import LindiTarFile\n"
                "LindiTarFile.create(%r, rfs={'refs': {}})\nt = LindiTarFile(%r)\n"
                "t.write_files({'blobs/%%d' %% i: bytes([i %% 256]) * (i * 37 %% 3000) for i in range(150)})\n"
                "t.write_rfs({'refs': {'k%%d' %% i: ['./blobs/%%d' %% i, 0, 1] for i in range(150)}})\n"
                "t.close()\nt = LindiTarFile(%r)\nprint(json.dumps(t._index['files']))" % (LINDI, made, made, made))
        p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True)
        want = json.loads(p.stdout) if p.returncode == 0 else []
        q = sql("SELECT json_group_array(json_object('n', name, 'o', header_offset, 'd', data_offset, 's', size)) "
                "FROM lindi_files('%s');" % made).stdout
        ok(want and json.loads(q) == want, "vdsql's lindi_files of a lindi-written archive (%d entries, re-appended index) "
           "equals lindi's own index" % len(want), p.stderr[-500:] + q[:300])
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
    sys.exit(plan())
