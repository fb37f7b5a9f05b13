#!/usr/bin/env python3
"""Writer safety of the LINDI writer, as TAP: two writer processes interleaving on one
archive (a delete-only or refs-only commit must be seen by the other writer), savepoints
across a lindi_tar and a lindi_refs table of one archive, a journal over 1 MiB left by a
kill at each commit step, stray, foreign, tampered and symlinked journals (refused, the
archive untouched), and archives padded with extra zero blocks (new members go where
tar sees them). Every archive is checked with GNU tar, Python's tarfile, vdsql, and
lindi's LindiTarFile when LINDI_SRC names the lindi oracle (scripts/run-tests sets it
from ../shared/oracles)."""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import ok, plan, shell_args, skip, sql  # noqa: E402

LINDI = os.environ.get("LINDI_SRC")
END = "--end-of-step--"


class Shell:
    """A sqlite3 shell kept open between steps, so two writers can interleave: each
    step's output (errors included) is read up to a marker line."""

    def __init__(self, arc):
        self.p = subprocess.Popen(shell_args(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.run("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nCREATE VIRTUAL TABLE r USING lindi_refs('%s');" % (arc, arc))

    def run(self, script):
        self.p.stdin.write(script + "\nSELECT '%s';\n" % END)
        self.p.stdin.flush()
        out = []
        for line in self.p.stdout:
            if line.rstrip("\n") == END:
                return "".join(out)
            out.append(line)
        return "".join(out) + "<shell ended>"

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def live(names):
    return sorted(set(n for n in names if not n.startswith(".trash/")))


def views(path):
    """Live member names per reader (trash left out), or an error string."""
    out = {}
    p = subprocess.run(["tar", "tf", path], capture_output=True, text=True)
    out["gnu tar"] = live(p.stdout.split("\n")[:-1]) if p.returncode == 0 and not p.stderr else "tar: " + p.stderr
    try:
        with tarfile.open(path) as t:
            out["tarfile"] = live(m.name for m in t.getmembers())
    except Exception as e:  # noqa: BLE001 - any failure is the finding
        out["tarfile"] = "tarfile failed: %s" % e
    q = sql("SELECT name FROM lindi_files('%s');\nSELECT '--';\nSELECT name FROM tar_members('%s');" % (path, path))
    if q.returncode == 0 and not q.stderr:
        a, b = q.stdout.split("--\n")
        out["vdsql index"] = live(a.split("\n")[:-1])
        out["vdsql walk"] = live(b.split("\n")[:-1])
    else:
        out["vdsql"] = "vdsql failed: " + q.stderr
    if LINDI:
        code = ("import sys; sys.path.insert(0, %r)\nfrom lindi.tar.lindi_tar import LindiTarFile\n"
                "t = LindiTarFile(%r)\nprint('\\n'.join(sorted(f['n'] for f in t._index['files'])))\n"
                "[t.read_file(f['n']) for f in t._index['files']]\nt.close()" % (LINDI, path))
        p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True)
        out["lindi"] = live(p.stdout.split()) if p.returncode == 0 else "lindi failed: " + p.stderr[-300:]
    return out


def agree(path, want, what):
    v = views(path)
    ok(all(s == sorted(want) for s in v.values()), "%s: %s" % (what, ", ".join(sorted(v))),
       {k: s for k, s in v.items() if s != sorted(want)})


def lindi_refs_keys(path):
    """The refs keys as lindi itself reads lindi.json (or Python's json without lindi)."""
    if LINDI:
        code = ("import sys, json; sys.path.insert(0, %r)\nfrom lindi.tar.lindi_tar import LindiTarFile\n"
                "t = LindiTarFile(%r)\nprint(json.dumps(sorted(json.loads(t.read_file('lindi.json'))['refs'])))\n"
                "t.close()" % (LINDI, path))
        p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True)
        return json.loads(p.stdout) if p.returncode == 0 else "lindi failed: " + p.stderr[-300:]
    with tarfile.open(path) as t:
        return sorted(json.loads(t.extractfile("lindi.json").read())["refs"])


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


STRUCT = [".tar_entry.json", ".tar_index.json", "lindi.json"]


def two_writers(tmp):
    # 1. a delete-only commit by A must be seen by B, which had read the archive before
    arc = os.path.join(tmp, "two.lindi.tar")
    sql("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nINSERT INTO a(name, data) VALUES ('m1', 'one'), ('m2', 'two');" % arc,
        check=True)
    a, b = Shell(arc), Shell(arc)
    seen = b.run("SELECT group_concat(name) FROM (SELECT name FROM a ORDER BY name);")
    ok("m1,m2" in seen, "writer B has read the archive (m1, m2)", seen)
    out = a.run("DELETE FROM a WHERE name = 'm1';")
    ok(out == "", "writer A deletes m1", out)
    seen = b.run("SELECT group_concat(name) FROM (SELECT name FROM a ORDER BY name);")
    ok(".tar_entry.json,.tar_index.json,lindi.json,m2" == seen.strip(), "B's next scan sees A's delete", seen)
    out = b.run("INSERT INTO a(name, data) VALUES ('m3', 'three');")
    ok(out == "", "writer B inserts m3", out)
    agree(arc, STRUCT + ["m2", "m3"], "after A's delete and B's insert every reader sees m2, m3 (m1 stays deleted)")
    with tarfile.open(arc) as t:
        trash = [m.name for m in t.getmembers() if m.name.startswith(".trash/m1.")]
    ok(len(trash) == 1, "m1 is in .trash once and not live", trash)

    # 2. refs: B inserts k1, A inserts k2, B inserts k3: all three are kept
    outs = [b.run("INSERT INTO r(key, value) VALUES ('k1', 'v1');"), a.run("INSERT INTO r(key, value) VALUES ('k2', 'v2');"),
            b.run("INSERT INTO r(key, value) VALUES ('k3', 'v3');")]
    ok(outs == ["", "", ""], "B, A, B each insert a ref", outs)
    ok(lindi_refs_keys(arc) == ["k1", "k2", "k3"], "lindi.json holds k1, k2 and k3 (none lost)", lindi_refs_keys(arc))
    seen = a.run("SELECT group_concat(key) FROM (SELECT key FROM r ORDER BY key);")
    ok(seen.strip() == "k1,k2,k3", "A's next scan of the refs sees B's k3", seen)

    # 3. a refs-only commit, then a member replace by the other writer, then a delete of refs
    outs = [a.run("DELETE FROM r WHERE key = 'k1';"), b.run("INSERT OR REPLACE INTO a(name, data) VALUES ('m2', 'TWO');"),
            a.run("INSERT INTO r(key, member, offset, size) VALUES ('k4', 'm2', 0, 3);")]
    ok(outs == ["", "", ""], "A deletes a ref, B replaces m2, A adds a ref into the new m2", outs)
    ok(lindi_refs_keys(arc) == ["k2", "k3", "k4"], "lindi.json holds k2, k3, k4", lindi_refs_keys(arc))
    q = sql("SELECT archive_offset FROM lindi_refs('%s') WHERE key = 'k4';\n"
            "SELECT data_offset FROM lindi_files('%s') WHERE name = 'm2';\n"
            "SELECT CAST(lindi_read('%s', 'm2') AS TEXT);" % (arc, arc, arc)).stdout.split()
    ok(len(q) == 3 and q[0] == q[1] and q[2] == "TWO", "k4 points into the replaced m2 (A saw B's replace)", q)
    agree(arc, STRUCT + ["m2", "m3"], "after interleaved member and ref commits every reader agrees")

    # 4. while A's transaction has written over 1 MB past the end, a new table and scans of B
    #    see the last committed set; after A's COMMIT, B's next scan sees A's members
    out = a.run("BEGIN;\nINSERT INTO a(name, data) VALUES ('big1', randomblob(600000)), ('big2', randomblob(600000)), "
                "('big3', randomblob(600000));")
    ok(out == "" and os.path.getsize(arc) > 1000000, "A's open transaction has written over 1 MB past the end", out)
    c = Shell(arc)
    seen = c.run("SELECT group_concat(name) FROM (SELECT name FROM a ORDER BY name);")
    ok(seen.strip() == ".tar_entry.json,.tar_index.json,lindi.json,m2,m3", "a table created meanwhile shows the committed set",
       seen)
    seen = b.run("SELECT group_concat(name) FROM (SELECT name FROM a ORDER BY name);")
    ok(seen.strip() == ".tar_entry.json,.tar_index.json,lindi.json,m2,m3", "B's scan meanwhile shows the committed set", seen)
    out = a.run("COMMIT;")
    ok(out == "", "A commits", out)
    seen = c.run("SELECT group_concat(name) FROM (SELECT name FROM a ORDER BY name);")
    ok(seen.strip() == ".tar_entry.json,.tar_index.json,big1,big2,big3,lindi.json,m2,m3", "then the new table sees A's members",
       seen)
    out = c.run("INSERT INTO a(name, data) VALUES ('m4', 'four');")
    ok(out == "", "and writes after them", out)
    agree(arc, STRUCT + ["big1", "big2", "big3", "m2", "m3", "m4"], "every reader sees all of it")
    for sh in (a, b, c):
        sh.close()


def concurrent(tmp):
    """Four processes commit at once: members, refs and deletes, 25 transactions each;
    nothing any of them committed may be lost."""
    arc = os.path.join(tmp, "conc.lindi.tar")
    sql("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nINSERT INTO a(name, data) VALUES ('seed', 's');" % arc, check=True)
    procs = []
    for k in range(4):
        steps = ["SELECT vdsql_config('lock_timeout', 60);", "CREATE VIRTUAL TABLE a USING lindi_tar('%s');" % arc,
                 "CREATE VIRTUAL TABLE r USING lindi_refs('%s');" % arc]
        for i in range(25):
            steps.append("BEGIN;\nINSERT INTO a(name, data) VALUES ('p%d/%02d', 'x%d');\n"
                         "INSERT INTO r(key, value) VALUES ('r%d/%02d', 'v');\nCOMMIT;" % (k, i, i, k, i))
            if i % 5 == 4:  # delete-only and refs-only commits in between
                steps.append("DELETE FROM a WHERE name = 'p%d/%02d';" % (k, i - 1))
                steps.append("DELETE FROM r WHERE key = 'r%d/%02d';" % (k, i - 1))
        procs.append(subprocess.Popen(shell_args(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
        procs[-1].stdin.write("\n".join(steps) + "\n")
        procs[-1].stdin.close()
    errs = []
    for p in procs:
        p.wait(timeout=300)
        errs.append(p.stderr.read())
    ok(all(p.returncode == 0 for p in procs) and not any(errs), "4 writer processes x 25 transactions, with deletes, "
       "all commit", errs)
    want_m = ["p%d/%02d" % (k, i) for k in range(4) for i in range(25) if i % 5 != 3]
    want_r = sorted("r%d/%02d" % (k, i) for k in range(4) for i in range(25) if i % 5 != 3)
    agree(arc, STRUCT + ["seed"] + want_m, "every member committed by any writer is there, every deleted one gone")
    ok(lindi_refs_keys(arc) == want_r, "every ref committed by any writer is there, every deleted one gone",
       "missing %s, extra %s" % (sorted(set(want_r) - set(lindi_refs_keys(arc)))[:5],
                                 sorted(set(lindi_refs_keys(arc)) - set(want_r))[:5]))


def savepoints(tmp):
    arc = os.path.join(tmp, "sp.lindi.tar")
    base = "CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nCREATE VIRTUAL TABLE r USING lindi_refs('%s');\n" % (arc, arc)
    # the issue's sequence: the second table joins after the savepoint
    p = sql(base + "BEGIN;\nINSERT INTO a(name, data) VALUES ('a', 'A');\nSAVEPOINT s1;\n"
            "INSERT INTO a(name, data) VALUES ('b', 'B');\nINSERT INTO r(key, value) VALUES ('kb', 'x');\n"
            "ROLLBACK TO s1;\nCOMMIT;\n")
    ok(p.returncode == 0 and not p.stderr, "BEGIN; a; SAVEPOINT s1; b; ref; ROLLBACK TO s1; COMMIT runs", p.stderr)
    agree(arc, STRUCT + ["a"], "only 'a' is committed ('b' was rolled back)")
    ok(lindi_refs_keys(arc) == [], "the rolled-back ref is not in lindi.json", lindi_refs_keys(arc))
    # the ref first, then a member, rolled back; then work after the rollback is kept
    p = sql(base + "BEGIN;\nINSERT INTO r(key, value) VALUES ('k0', '0');\nSAVEPOINT s1;\n"
            "INSERT INTO r(key, value) VALUES ('k1', '1');\nINSERT INTO a(name, data) VALUES ('c', 'C');\n"
            "ROLLBACK TO s1;\nINSERT INTO a(name, data) VALUES ('d', 'D');\nCOMMIT;\n")
    ok(p.returncode == 0 and not p.stderr, "refs table first, members table joins inside the savepoint", p.stderr)
    agree(arc, STRUCT + ["a", "d"], "'c' rolled back, 'd' after the rollback committed")
    ok(lindi_refs_keys(arc) == ["k0"], "k0 kept, k1 rolled back", lindi_refs_keys(arc))
    # nested savepoints, refs changed only inside the inner one, rolled back to the outer
    p = sql(base + "BEGIN;\nSAVEPOINT outer_;\nINSERT INTO a(name, data) VALUES ('e', 'E');\nSAVEPOINT inner_;\n"
            "INSERT INTO r(key, value) VALUES ('k2', '2');\nROLLBACK TO outer_;\nRELEASE outer_;\nCOMMIT;\n")
    ok(p.returncode == 0 and not p.stderr, "nested savepoints, refs changed in the inner one only", p.stderr)
    agree(arc, STRUCT + ["a", "d"], "ROLLBACK TO the outer savepoint drops 'e'")
    ok(lindi_refs_keys(arc) == ["k0"], "... and the ref made under the inner savepoint", lindi_refs_keys(arc))
    # a savepoint level released and opened again records the new state
    p = sql(base + "BEGIN;\nSAVEPOINT s1;\nINSERT INTO a(name, data) VALUES ('f', 'F');\nRELEASE s1;\nSAVEPOINT s2;\n"
            "INSERT INTO r(key, value) VALUES ('k3', '3');\nINSERT INTO a(name, data) VALUES ('g', 'G');\n"
            "ROLLBACK TO s2;\nCOMMIT;\n")
    ok(p.returncode == 0 and not p.stderr, "SAVEPOINT, RELEASE, SAVEPOINT at the same level", p.stderr)
    agree(arc, STRUCT + ["a", "d", "f"], "'f' (released savepoint) kept, 'g' rolled back")
    ok(lindi_refs_keys(arc) == ["k0"], "k3 rolled back", lindi_refs_keys(arc))
    # a failing statement inside a transaction undoes only itself, in both tables
    p = sql(base + "BEGIN;\nINSERT INTO a(name, data) VALUES ('h', 'H');\nINSERT INTO r(key, value) VALUES ('k5', '5');\n"
            "INSERT INTO a(name, data) VALUES ('i', 'I'), ('h', 'dup');\nCOMMIT;\n")
    ok("a member named h exists" in p.stderr, "a duplicate in a multi-row INSERT fails that statement", p.stderr)
    agree(arc, STRUCT + ["a", "d", "f", "h"], "the failed statement's 'i' is undone, 'h' before it committed")
    ok(lindi_refs_keys(arc) == ["k0", "k5"], "k5 committed with 'h'", lindi_refs_keys(arc))


def big_journal(tmp):
    base = os.path.join(tmp, "big.lindi.tar")
    n = 7000
    # long names (deep directories, as NWB archives have) make a journal over 1 MiB
    folder = "data/session_2024_11_24/probe_array_imec0/recording_electrode_group_shank7/acquisition_raw_voltage_chunks"
    sql("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nWITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c "
        "WHERE i < %d) INSERT INTO a(name, data) SELECT printf('%s/%%080d', i), 'x' FROM c;" % (base, n - 1, folder),
        check=True)
    delete = "CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nDELETE FROM a WHERE name LIKE 'data/%%';\n"
    for k in (3, 4, 6, 7):  # 5 (the held blocks) is not reached: the new index fills the spare region
        path = os.path.join(tmp, "big%d.lindi.tar" % k)
        shutil.copy(base, path)
        p = sql(delete % path, env={"VDSQL_CRASHPOINT": str(k)})
        jsize = os.path.getsize(path + ".vdsql-journal") if os.path.exists(path + ".vdsql-journal") else 0
        ok(p.returncode in (-signal.SIGKILL, 137) and jsize > (1 << 20),
           "deleting %d members, killed at commit step %d, leaves a %d-byte journal (over 1 MiB)" % (n, k, jsize),
           p.stderr)
        p = sql("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nINSERT INTO a(name, data) VALUES ('after', 'x');" % path)
        ok(p.returncode == 0 and not p.stderr and not os.path.exists(path + ".vdsql-journal"),
           "step %d: the next writer reads the whole journal and recovers" % k, p.stderr)
        # the journal of step 3 carries the commit: from there on recovery rolls forward
        want = STRUCT + ["after"] if k >= 3 else None
        v = views(path)
        if want is None:  # rolled back: every data member is there again
            want = sorted(v.get("gnu tar", [])) if isinstance(v.get("gnu tar"), list) and len(v["gnu tar"]) == n + 4 else []
        ok(all(s == sorted(want) for s in v.values()) and len(want) in (4, n + 4),
           "step %d: every reader agrees on the %s set" % (k, "new" if k >= 3 else "old"),
           {r: (s if isinstance(s, str) else len(s)) for r, s in v.items()})


def journals(tmp):
    def fresh(name):
        path = os.path.join(tmp, name)
        sql("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nINSERT INTO a(name, data) VALUES ('m', 'M');" % path, check=True)
        return path

    insert = "CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nINSERT INTO a(name, data) VALUES ('n', 'N');"
    cases = {
        "a stray journal {\"end\":0}": lambda j, other: open(j, "w").write('{"end":0}'),
        "a journal without a checksum": lambda j, other: open(j, "w").write('{"end":1536,"dev":"1","ino":"1"}\n'),
    }
    for what, make in cases.items():
        path = fresh("stray.lindi.tar")
        make(path + ".vdsql-journal", None)
        before = digest(path)
        p = sql(insert % path)
        ok("not a journal of this archive's last transaction" in p.stderr and path in p.stderr,
           "%s is refused with an error naming it" % what, p.stderr)
        ok(digest(path) == before, "%s: the archive is unchanged" % what)
        os.remove(path)
        os.remove(path + ".vdsql-journal")
    # a real journal (left by a kill) copied beside another archive, and one tampered with
    src = fresh("src.lindi.tar")
    p = sql(insert % src, env={"VDSQL_CRASHPOINT": "2"})  # before the journal carries the commit
    ok(p.returncode in (-signal.SIGKILL, 137) and os.path.exists(src + ".vdsql-journal"), "a killed commit left a journal")
    other = fresh("other.lindi.tar")
    shutil.copy(src + ".vdsql-journal", other + ".vdsql-journal")
    before = digest(other)
    p = sql(insert % other)
    ok("written for another file" in p.stderr, "another archive's journal is refused", p.stderr)
    ok(digest(other) == before, "... and that archive is unchanged")
    with open(src + ".vdsql-journal", "rb") as f:
        text = f.read()
    i = text.index(b'"end":') + 6
    with open(src + ".vdsql-journal", "wb") as f:
        f.write(text[:i] + (b"1" if text[i:i + 1] != b"1" else b"2") + text[i + 1:])
    before = digest(src)
    p = sql(insert % src)
    ok("checksum does not match" in p.stderr, "a tampered journal is refused", p.stderr)
    ok(digest(src) == before, "... and the archive is unchanged")
    with open(src + ".vdsql-journal", "wb") as f:
        f.write(text)
    p = sql(insert % src)
    ok(p.returncode == 0 and not p.stderr, "the genuine journal is accepted and rolled back", p.stderr)
    agree(src, STRUCT + ["m", "n"], "after the recovery the archive holds m and n")

    # symlinks: at the journal's temporary name (followed before) and at the journal itself
    victim = os.path.join(tmp, "victim.txt")
    for planted in (".vdsql-journal.tmp", ".vdsql-journal"):
        with open(victim, "w") as f:
            f.write("precious\n")
        path = fresh("sym.lindi.tar")
        os.symlink(victim, path + planted)
        before = digest(path)
        p = sql(insert % path)
        with open(victim) as f:
            intact = f.read() == "precious\n"
        ok(intact, "a symlink planted at <archive>%s: its target is untouched" % planted)
        if planted == ".vdsql-journal":
            ok("it is a symbolic link" in p.stderr and digest(path) == before,
               "a journal that is a symlink is refused, the archive unchanged", p.stderr)
        else:
            ok(p.returncode == 0 and not p.stderr, "the writer commits beside a planted temporary-name symlink", p.stderr)
            agree(path, STRUCT + ["m", "n"], "... and the commit is whole")
            ok(not os.path.lexists(path + planted), "... and the planted name is gone (removed as a stale temporary)")
        os.remove(path)
        if os.path.lexists(path + planted):
            os.remove(path + planted)


def padded(tmp):
    path = os.path.join(tmp, "pad.lindi.tar")
    sql("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nINSERT INTO a(name, data) VALUES ('m', 'M');" % path, check=True)
    size = os.path.getsize(path)
    with open(path, "ab") as f:  # pad to GNU tar's 10 KiB records, and one more record
        f.write(b"\0" * ((-size) % 10240 + 10240))
    ok(subprocess.run(["tar", "tf", path], capture_output=True).returncode == 0, "the padded archive is a valid tar")
    p = sql("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nINSERT INTO a(name, data) VALUES ('n', 'N'), ('o', 'O');" % path)
    ok(p.returncode == 0 and not p.stderr, "vdsql appends to an archive padded with zero blocks", p.stderr)
    agree(path, STRUCT + ["m", "n", "o"], "new members are where tar sees them")
    with tarfile.open(path) as t:
        data = t.extractfile("o").read()
    ok(data == b"O", "tarfile reads the appended member's bytes")
    # garbage after the end-of-archive marker: refused, untouched
    with open(path, "ab") as f:
        f.write(b"\0" * 10240 + b"junk" + b"\0" * 1020 + b"\0" * 1024)
    before = digest(path)
    p = sql("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nINSERT INTO a(name, data) VALUES ('q', 'Q');" % path)
    ok("data after the end-of-archive marker" in p.stderr and digest(path) == before,
       "data hidden after the end-of-archive marker is refused, the archive unchanged", p.stderr)


def lock_once(tmp):
    """A transaction of 20 statements that meets another writer's lock waits lock_timeout
    once, not once per statement (SQLite asks the table to begin again with each)."""
    arc = os.path.join(tmp, "lock.lindi.tar")
    sql("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nINSERT INTO a(name, data) VALUES ('seed', 's');" % arc,
        check=True)
    holder = subprocess.Popen(shell_args(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    holder.stdin.write("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nBEGIN;\n"
                       "INSERT INTO a(name, data) VALUES ('held', 'h');\nSELECT 'holding';\n.shell sleep 8\nCOMMIT;\n"
                       % arc)
    holder.stdin.flush()
    holder.stdout.readline()  # it holds the lock now
    t0 = time.monotonic()
    p = sql("SELECT vdsql_config('lock_timeout', '1');\nCREATE VIRTUAL TABLE a USING lindi_tar('%s');\nBEGIN;\n%s"
            "COMMIT;\n" % (arc, "".join("INSERT INTO a(name, data) VALUES ('w%02d', 'w');\n" % i for i in range(20))))
    took = time.monotonic() - t0
    holder.stdin.close()
    holder.wait(timeout=60)
    refused = [x for x in p.stderr.split("\n") if "another writer holds the archive" in x]
    ok(len(refused) == 20 and took < 4, "20 statements of a transaction that meets another writer's lock: each "
       "refused naming the archive, after one lock_timeout (1 s) in all, not one each: %.1f s" % took,
       p.stderr.split("\n")[:3])
    agree(arc, STRUCT + ["held", "seed"], "only the holder's member is committed")


def main():
    if not LINDI:
        skip("LINDI_SRC not set: lindi's own reader is not among the checkers (scripts/run-tests sets it from "
             "../shared/oracles/lindi-0.4.5)")
    tmp = tempfile.mkdtemp(prefix="vdsql-writers.")
    try:
        two_writers(tmp)
        concurrent(tmp)
        savepoints(tmp)
        big_journal(tmp)
        journals(tmp)
        padded(tmp)
        lock_once(tmp)
    finally:
        shutil.rmtree(tmp)
    return plan()


if __name__ == "__main__":
    sys.exit(main())
