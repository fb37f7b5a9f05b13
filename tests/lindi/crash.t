#!/usr/bin/env python3
"""Crash safety of the lindi_tar writer, as TAP.

A writer is killed with SIGKILL at every numbered step of its commit (VDSQL_CRASHPOINT,
see formats/lindi/lindi_writer.c) and just before each write, truncation and sync of a commit
(VDSQL_CRASH_AT_WRITE); afterwards GNU tar,
Python's tarfile and vdsql (the index, as lindi reads it, and the header walk) must each
see exactly the old or the new committed set of members, with the right bytes, and the
next vdsql writer must recover and leave every view agreeing. Set LINDI_SRC to a lindi
source tree to also open every archive with lindi's LindiTarFile (own verification)."""
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import ok, plan, shell_args, sql  # noqa: E402

LINDI = os.environ.get("LINDI_SRC")

def live(names):
    """Member names a reader presents, trash excluded, as a set: between tar's commit
    point and the end of trashing, tar lists a replaced member twice (old copy first),
    which extraction resolves to the new copy."""
    return sorted(set(x for x in names if not x.startswith(".trash/")))


def views(path):
    """name sets per reader, or an error string."""
    out = {}
    p = subprocess.run(["tar", "tf", path], capture_output=True, text=True)
    out["gnu tar"] = live(p.stdout.split("\n")[:-1]) if p.returncode == 0 else "tar failed: " + p.stderr
    try:
        with tarfile.open(path) as t:
            out["tarfile"] = live(m.name for m in t.getmembers())
    except Exception as e:  # noqa: BLE001 - any failure is the finding
        out["tarfile"] = "tarfile failed: %s" % e
    q = sql("SELECT name FROM lindi_files('%s');\nSELECT '--';\nSELECT name FROM tar_members('%s');" % (path, path),
            check=False)
    if q.returncode == 0:
        a, b = q.stdout.split("--\n")
        out["vdsql index"] = live(a.split("\n")[:-1])
        out["vdsql walk"] = live(b.split("\n")[:-1])
    else:
        out["vdsql"] = "vdsql failed: " + q.stderr
    if os.environ.get("LINDI_SRC"):
        code = ("import sys; sys.path.insert(0, %r)\nfrom lindi.tar.lindi_tar import LindiTarFile\n"
                "t = LindiTarFile(%r)\nprint('\\n'.join(sorted(f['n'] for f in t._index['files'])))\n"
                "[t.read_file(f['n']) for f in t._index['files']]\nt.close()" % (os.environ["LINDI_SRC"], path))
        p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True)
        out["lindi"] = live(p.stdout.split()) if p.returncode == 0 else "lindi failed: " + p.stderr[-300:]
    return out


def refs(path):
    q = sql("SELECT key FROM lindi_refs('%s') ORDER BY key;" % path, check=False)
    return q.stdout.split() if q.returncode == 0 else "lindi_refs failed: " + q.stderr


def content(path, name):
    """What extracting the archive leaves in the file `name` (the last copy wins)."""
    d = tempfile.mkdtemp()
    try:
        subprocess.run(["tar", "xf", path, "-C", d, name], capture_output=True)
        with open(os.path.join(d, name), "rb") as f:
            return f.read()
    except OSError:
        return None
    finally:
        shutil.rmtree(d)


BASE = """CREATE VIRTUAL TABLE a USING lindi_tar('%s');
INSERT INTO a(name, data) VALUES ('keep/1', 'k1'), ('keep/2', randomblob(2000)), ('rep', 'old'), ('del', 'gone soon');
"""
TX = {
    "append+replace": """CREATE VIRTUAL TABLE a USING lindi_tar('%s');
BEGIN;
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 99)
INSERT INTO a(name, data) SELECT printf('new/%03d', i), randomblob(300 + i) FROM c;
INSERT OR REPLACE INTO a(name, data) VALUES ('rep', 'new');
COMMIT;
""",
    "members+refs": """CREATE VIRTUAL TABLE a USING lindi_tar('%s');
CREATE VIRTUAL TABLE r USING lindi_refs('%s');
BEGIN;
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 99)
INSERT INTO a(name, data) SELECT printf('new/%03d', i), randomblob(300 + i) FROM c;
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 299)
INSERT INTO r(key, member, offset, size) SELECT printf('k/%03d', i), printf('new/%03d', i % 100), 0, 10 FROM c;
COMMIT;
""",
    "reuse of the spare index": """CREATE VIRTUAL TABLE a USING lindi_tar('%s');
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 99)
INSERT INTO a(name, data) SELECT printf('new/%03d', i), randomblob(300 + i) FROM c;
INSERT INTO a(name, data) VALUES ('pad/1', 'x');
DELETE FROM a WHERE name = 'pad/1';
BEGIN;
INSERT OR REPLACE INTO a(name, data) VALUES ('rep', 'new');
COMMIT;
""",
    "append+delete": """CREATE VIRTUAL TABLE a USING lindi_tar('%s');
BEGIN;
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 99)
INSERT INTO a(name, data) SELECT printf('new/%03d', i), randomblob(300 + i) FROM c;
DELETE FROM a WHERE name = 'del';
COMMIT;
""",
}


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-crash.")
    try:
        base = os.path.join(tmp, "base.lindi.tar")
        sql(BASE % base, check=True)
        old = views(base)["vdsql index"]
        for kind, tx in TX.items():
            ref = os.path.join(tmp, "ref.lindi.tar")
            shutil.copy(base, ref)
            sql(tx.replace("%s", ref), check=True)
            new = views(ref)["vdsql index"]
            ok(new != old and len(new) == len(old) + 100 - (kind == "append+delete"), "%s: reference commit" % kind)
            if kind.startswith("reuse"):  # the old set is the state before the crashing (4th) commit
                pre = os.path.join(tmp, "pre.lindi.tar")
                shutil.copy(base, pre)
                sql(tx.replace("%s", pre).replace("BEGIN;\nINSERT OR REPLACE INTO a(name, data) VALUES ('rep', 'new');\nCOMMIT;\n", ""),
                    check=True)
                old_for = views(pre)["vdsql index"]
            else:
                old_for = old
            new_refs = refs(ref)
            for k in range(1, 8):
                path = os.path.join(tmp, "k%d.lindi.tar" % k)
                shutil.copy(base, path)
                skip = "3" if kind.startswith("reuse") else "0"  # crash in the commit that reuses the spare
                p = sql(tx.replace("%s", path), env={"VDSQL_CRASHPOINT": str(k), "VDSQL_CRASHPOINT_SKIP": skip},
                        check=False)
                ok(p.returncode == -signal.SIGKILL or p.returncode == 137, "%s: writer killed at step %d" % (kind, k),
                   p.stderr)
                v = views(path)
                for reader, names in v.items():
                    good = names in (old_for, new)
                    note = ""
                    if not good and kind == "append+delete" and reader in ("gnu tar", "tarfile", "vdsql walk") \
                            and k in (4, 6, 7) and names == sorted(set(new + ["del"])):
                        good, note = True, " (documented window: deleted member not yet trashed)"
                    ok(good, "%s, killed at step %d: %s sees the old or the new set%s" % (kind, k, reader, note),
                       names if isinstance(names, str) else "saw %d names" % len(names))
                if kind == "members+refs":
                    r = refs(path)
                    ok(r == ([] if v["vdsql index"] == old else new_refs), "%s, step %d: lindi.json holds the refs of "
                       "the same commit as the index (%d refs)" % (kind, k, len(r)))
                if kind in ("append+replace", "reuse of the spare index") and isinstance(v["gnu tar"], list):
                    if new != old_for:
                        want = b"new" if v["gnu tar"] == new else b"old"
                    else:  # same names either way: tar shows the new copy once its commit point (the held
                        # blocks, written between steps 5 and 4) is past
                        want = b"new" if k in (4, 6, 7) else b"old"
                    ok(content(path, "rep") == want, "%s, step %d: tar extracts the matching 'rep'" % (kind, k))
                # the next writer recovers: every view agrees, the journal is gone
                sql("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nINSERT INTO a(name, data) VALUES ('after', 'x');" % path, check=True)
                v2 = views(path)
                sets = [s for s in v2.values()]
                ok(all(s == sets[0] for s in sets) and "after" in sets[0]
                   and not os.path.exists(path + ".vdsql-journal"),
                   "%s, step %d: the next writer recovers, all readers agree" % (kind, k), v2)
                # the journal of step 3 holds every remaining write: from there on the commit is made
                expect = sorted((new if k >= 3 else old_for) + ["after"])
                ok(sets[0] == expect, "%s, step %d: recovery rolled %s" % (kind, k, "forward" if k >= 3 else "back"),
                   "got %s" % sets[0][:5])
        # kills at every write of a commit: the commit of 4,000 appends makes N writes,
        # truncations and syncs (journal included, counted by VDSQL_COMMIT_WRITES); trial
        # n kills the writer just before the n-th, so every kill lands inside the commit,
        # between two of its writes, and the test checks that it did
        script = TX["append+replace"].replace("i < 99", "i < 3999")
        full_new = sorted(old + ["new/%03d" % j for j in range(4000)])
        count = os.path.join(tmp, "writes")
        path = os.path.join(tmp, "count.lindi.tar")
        shutil.copy(base, path)
        sql(script.replace("%s", path), env={"VDSQL_COMMIT_WRITES": count}, check=True)
        with open(count) as f:
            total = int(f.read())
        ok(total >= 8, "a commit of 4,000 appends makes %d writes, truncations and syncs" % total)
        for i, n in enumerate(range(1, total + 1)):
            path = os.path.join(tmp, "r%d.lindi.tar" % i)
            shutil.copy(base, path)
            p = sql(script.replace("%s", path), env={"VDSQL_CRASH_AT_WRITE": str(n)}, check=False)
            ok(p.returncode in (-signal.SIGKILL, 137) and os.path.exists(path + ".vdsql-journal"),
               "kill %d: the writer died of SIGKILL at write %d of %d, its commit unfinished (journal left)"
               % (i, n, total), "exit %s, journal %s" % (p.returncode, os.path.exists(path + ".vdsql-journal")))
            v = views(path)
            ok(all(s in (old, full_new) for s in v.values()),
               "kill %d at write %d of %d: every reader sees the old or the new set" % (i, n, total),
               {r: (s if isinstance(s, str) else len(s)) for r, s in v.items()})
            sql("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nINSERT INTO a(name, data) VALUES ('after', 'x');" % path,
                check=True)
            v2 = views(path)
            sets = list(v2.values())
            ok(all(s == sets[0] for s in sets) and sets[0] in (sorted(old + ["after"]), sorted(full_new + ["after"]))
               and not os.path.exists(path + ".vdsql-journal"),
               "kill %d at write %d of %d: the next writer recovers, all readers agree" % (i, n, total),
               {r: (s if isinstance(s, str) else len(s)) for r, s in v2.items()})
    finally:
        shutil.rmtree(tmp)
    return plan()


if __name__ == "__main__":
    sys.exit(main())
