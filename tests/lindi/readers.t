#!/usr/bin/env python3
"""LINDI readers never see a commit in flight (issue 27, item 4), as TAP.

1. Readers in separate processes (vdsql's lindi_files, lindi_read and lindi_refs, and
   lindi's LindiTarFile when LINDI_SRC names a lindi source tree) read an archive over
   and over while one writer commits in a loop: appends, replaces, refs-only commits and
   delete-only commits (the last two fit in lindi.json's or the index's padding). Every
   read must show exactly the members, sizes, bytes and refs of one committed state,
   which the test computes itself; no zeros, no "malformed JSON". Python's tarfile
   checks the final archive byte for byte.
2. A writer running that loop is killed with SIGKILL at random moments; before any
   recovery, vdsql, lindi and tarfile must each show one committed state exactly. The
   next writer then recovers, and no journal temporaries remain.
3. An appending commit, a refs-only and a delete-only commit are killed just before each
   of their writes and syncs, and at each numbered step (VDSQL_CRASHPOINT): readers before
   recovery see the old or the new state exactly; recovery leaves one of them.
Figures (reads, wrong reads, zeros, malformed JSON, temporaries) are printed as # lines."""
import hashlib
import json
import os
import random
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
RESERVED = (".tar_entry.json", ".tar_index.json", "lindi.json")


def blob(name, g):
    """The bytes of member `name` as written by commit g: no run of zeros, sizes that
    straddle the 512-byte blocks the writer holds back."""
    seed = hashlib.sha256(("%s@%d" % (name, g)).encode()).digest()
    n = 600 + (g * 137) % 1500
    return (seed * (n // 32 + 1))[:n]


def plan_commits(n):
    """SQL for n commits and the state after each (state[0]: the base)."""
    files = {"base/1": blob("base/1", 0), "rep": blob("rep", 0)}
    refs = {"k0": "v0"}
    for i in range(6):
        files["m/%04d" % i] = blob("m/%04d" % i, 0)
    states = [(dict(files), dict(refs))]
    txs = []
    nxt = 6
    for g in range(1, n + 1):
        kind = g % 4
        if kind == 0:  # append (and a ref pointing into it)
            name = "m/%04d" % nxt
            nxt += 1
            files[name] = blob(name, g)
            refs["k%d" % g] = "v%d" % g
            tx = "INSERT INTO a(name, data) VALUES ('%s', x'%s');\n" \
                 "INSERT OR REPLACE INTO r(key, value) VALUES ('k%d', 'v%d');\n" % (name, files[name].hex(), g, g)
        elif kind == 1:  # refs only: fits lindi.json's padding
            refs["k0"] = "v0-%d" % g
            tx = "INSERT OR REPLACE INTO r(key, value) VALUES ('k0', 'v0-%d');\n" % g
        elif kind == 2:  # append + replace
            name = "m/%04d" % nxt
            nxt += 1
            files[name] = blob(name, g)
            files["rep"] = blob("rep", g)
            tx = "INSERT INTO a(name, data) VALUES ('%s', x'%s');\n" \
                 "INSERT OR REPLACE INTO a(name, data) VALUES ('rep', x'%s');\n" % (name, files[name].hex(),
                                                                                  files["rep"].hex())
        else:  # delete only: fits the index's padding
            victim = sorted(k for k in files if k.startswith("m/"))[0]
            del files[victim]
            tx = "DELETE FROM a WHERE name = '%s';\n" % victim
        txs.append("BEGIN;\n" + tx + "COMMIT;\n")
        states.append((dict(files), dict(refs)))
    return txs, states


def base_sql(path):
    s0 = plan_commits(0)[1][0]
    rows = ", ".join("('%s', x'%s')" % (k, v.hex()) for k, v in sorted(s0[0].items()))
    return ("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nCREATE VIRTUAL TABLE r USING lindi_refs('%s');\n"
            "BEGIN;\nINSERT INTO a(name, data) VALUES %s;\nINSERT INTO r(key, value) VALUES ('k0', 'v0');\nCOMMIT;\n"
            % (path, path, rows))


def writer_sql(path, txs):
    return ("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nCREATE VIRTUAL TABLE r USING lindi_refs('%s');\n"
            % (path, path)) + "".join(txs)


def vdsql_read_script(path, rounds):
    one = ("SELECT 'F|' || group_concat(name || ':' || size, ',') FROM lindi_files('{p}');\n"
           "SELECT 'R|' || name || '|' || hex(lindi_read('{p}', name)) FROM "
           "(SELECT name FROM lindi_files('{p}') WHERE name LIKE 'm/%' ORDER BY name DESC LIMIT 2);\n"
           "SELECT 'P|rep|' || hex(lindi_read('{p}', 'rep'));\n"
           "SELECT 'K|' || json_group_object(key, value) FROM lindi_refs('{p}');\n").format(p=path)
    return "SELECT vdsql_config('cache_ttl', 0);\n" + one * rounds


LINDI_READER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from lindi.tar.lindi_tar import LindiTarFile
import os
path, stop = sys.argv[2], sys.argv[3]
print('READY')
sys.stdout.flush()
while True:
    try:
        t = LindiTarFile(path)
        files = t._index['files']
        print('F|' + ','.join('%s:%d' % (f['n'], f['s']) for f in files))
        ms = sorted((f['n'] for f in files if f['n'].startswith('m/')), reverse=True)[:None if sys.argv[4] == 'all' else 2]
        for n in ms + ['rep']:
            print(('P|' if n == 'rep' else 'R|') + n + '|' + t.read_file(n).hex().upper())
        refs = json.loads(t.read_file('lindi.json'))['refs']
        print('K|' + json.dumps(refs))
        t._file.close()
    except Exception as e:
        print('E|%s: %s' % (type(e).__name__, str(e).replace(chr(10), ' ')[:200]))
    sys.stdout.flush()
    if os.path.exists(stop):
        break
"""


class Tally:
    def __init__(self, states):
        self.states = states
        self.listings = [sorted((k, len(v)) for k, v in s[0].items()) for s in states]
        self.refsets = [s[1] for s in states]
        self.reps = set(s[0]["rep"].hex().upper() for s in states)
        self.blobs = {}
        for s in states:
            for k, v in s[0].items():
                self.blobs.setdefault(k, set()).add(v.hex().upper())
        self.reads = self.wrong = self.zeros = self.malformed = self.errors = 0
        self.samples = []

    def bad(self, what):
        self.wrong += 1
        if len(self.samples) < 8:
            self.samples.append(what[:300])

    def line(self, ln):
        kind, _, rest = ln.partition("|")
        if kind not in ("F", "R", "P", "K", "E"):
            return
        self.reads += 1
        if kind == "E":
            self.error(rest)
        elif kind == "F":
            got = []
            for item in rest.split(","):
                n, _, s = item.rpartition(":")
                if n and n not in RESERVED:
                    got.append((n, int(s)))
            if sorted(got) not in self.listings:
                self.bad("listing " + rest)
        elif kind in ("R", "P"):
            name, _, hx = rest.partition("|")
            if hx not in self.blobs.get(name, ()):
                self.bad("bytes of %s: %s..." % (name, hx[:64]))
                if hx.startswith("00" * 512) or "00" * 512 in hx:
                    self.zeros += 1
        else:
            try:
                refs = json.loads(rest)
            except ValueError:
                refs = None
            if refs not in self.refsets:
                self.bad("refs " + rest)

    def error(self, msg):
        if "no member" in msg or "KeyError" in msg:  # a member deleted since the listing: a newer state
            self.reads -= 1
            return
        if "malformed JSON" in msg or "JSONDecodeError" in msg:
            self.malformed += 1
        self.errors += 1
        if len(self.samples) < 8:
            self.samples.append("error: " + msg[:300])

    def stderr(self, text):
        for ln in text.splitlines():
            if "rror" in ln:
                self.reads += 1
                self.error(ln)

    def report(self, who):
        return "%s: %d reads, %d wrong, %d with 512 zero bytes, %d malformed JSON, %d other errors" % (
            who, self.reads, self.wrong, self.zeros, self.malformed, self.errors - self.malformed)


def lindi_cmd(path, stop, every=False):
    return ["/usr/bin/python3", "-c", LINDI_READER, LINDI, path, stop, "all" if every else "2"]


def state_of(path, states):
    """Which committed states each reader's view matches (a set: tar sees no refs, so a
    refs-only commit leaves it matching both), or an error string."""
    out = {}
    t = Tally(states)
    q = subprocess.run(shell_args(), input=vdsql_read_script(path, 1).replace(
        "ORDER BY name DESC LIMIT 2", "ORDER BY name"), capture_output=True, text=True)
    lines = q.stdout.splitlines()
    listing = [ln for ln in lines if ln.startswith("F|")]
    out["vdsql"] = set()
    if q.returncode == 0 and "rror" not in q.stderr and listing:
        got = sorted((n, int(s)) for n, _, s in (i.rpartition(":") for i in listing[0][2:].split(","))
                     if n not in RESERVED)
        data = {ln.split("|")[1]: ln.split("|")[2] for ln in lines if ln[:2] in ("R|", "P|")}
        refs = [json.loads(ln[2:]) for ln in lines if ln.startswith("K|")]
        for g, (files, rf) in enumerate(states):
            if got == t.listings[g] and refs == [rf] and all(data.get(k) == v.hex().upper()
                                                             for k, v in files.items() if k.startswith("m/") or k == "rep"):
                out["vdsql"].add(g)
    try:
        with tarfile.open(path) as tf:
            seen = {}
            for m in tf.getmembers():
                if not m.name.startswith(".trash/") and m.name not in RESERVED:
                    seen[m.name] = tf.extractfile(m).read()  # the last copy wins, as extraction does
        out["tarfile"] = set(g for g, (files, _) in enumerate(states) if seen == files)
    except Exception as e:  # noqa: BLE001 - any failure is the finding
        out["tarfile"] = "tarfile failed: %s" % e
    if LINDI:
        p = subprocess.run(lindi_cmd(path, "/", every=True), capture_output=True, text=True)
        lines = p.stdout.splitlines()[1:]
        out["lindi"] = set()
        if lines and not any(ln.startswith("E|") for ln in lines):
            got = sorted((n, int(s)) for n, _, s in (i.rpartition(":") for i in lines[0][2:].split(","))
                         if n not in RESERVED)
            data = {ln.split("|")[1]: ln.split("|")[2] for ln in lines if ln[:2] in ("R|", "P|")}
            refs = [json.loads(ln[2:]) for ln in lines if ln.startswith("K|")]
            for g, (files, rf) in enumerate(states):
                if got == t.listings[g] and refs == [rf] and all(
                        data.get(k) == v.hex().upper() for k, v in files.items() if k.startswith("m/") or k == "rep"):
                    out["lindi"].add(g)
        else:
            out["lindi"] = "lindi failed: " + (p.stdout + p.stderr)[-300:]
    return out


def temporaries(d):
    return sorted(f for f in os.listdir(d) if ".vdsql-journal." in f or ".vdsql-new-" in f or f == "stop")[:0] + \
        sorted(f for f in os.listdir(d) if ".vdsql-journal." in f or ".vdsql-new-" in f)


def concurrent(tmp, n_commits, n_readers, rounds):
    path = os.path.join(tmp, "live.lindi.tar")
    txs, states = plan_commits(n_commits)
    sql(base_sql(path), check=True)
    t = Tally(states)
    tl = Tally(states)
    stop = os.path.join(tmp, "stop")
    lr = None
    if LINDI:
        lr = subprocess.Popen(lindi_cmd(path, stop), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lr.stdout.readline()  # READY: lindi imported, reading from now on
    import threading
    outs = {"r": []}
    done = threading.Event()

    def reader():
        while not done.is_set():
            q = subprocess.run(shell_args(), input=vdsql_read_script(path, rounds), capture_output=True, text=True)
            outs["r"].append((q.stdout, q.stderr))

    t0 = time.monotonic()
    ths = [threading.Thread(target=reader) for _ in range(n_readers)]
    for th in ths:
        th.start()
    w = subprocess.run(shell_args(), input=writer_sql(path, txs), capture_output=True, text=True)
    outs["w"] = (w.stdout, w.stderr)
    done.set()
    open(stop, "w").close()
    for th in ths:
        th.join()
    secs = time.monotonic() - t0
    wout, werr = outs["w"]
    ok(w.returncode == 0 and not werr.strip(), "the writer made %d commits while %d vdsql readers%s read (%.1f s)" % (
        n_commits, n_readers, " and lindi" if lr else "", secs), werr[-500:])
    for o, e in outs["r"]:
        for ln in o.splitlines():
            t.line(ln)
        t.stderr(e)
    print("# " + t.report("vdsql readers"))
    ok(t.reads > 0 and t.wrong == 0 and t.errors == 0,
       "vdsql readers: every listing, member read and refs read shows one committed state exactly (%s)" % t.report(""),
       "\n".join(t.samples))
    ok(t.zeros == 0, "vdsql readers: no read returned zeros for bytes not yet written (%d)" % t.zeros)
    ok(t.malformed == 0, "vdsql readers: no \"malformed JSON\" from a region rewritten under a reader (%d)" % t.malformed)
    if lr:
        o, e = lr.communicate()
        for ln in o.splitlines():
            tl.line(ln)
        print("# " + tl.report("lindi reader"))
        ok(tl.reads > 0 and tl.wrong == 0 and tl.errors == 0,
           "lindi as the reader: every open shows one committed state exactly (%s)" % tl.report(""),
           "\n".join(tl.samples) + e[-300:])
    else:
        skip("skipped: lindi not available (set LINDI_SRC to a lindi source tree) - lindi as a concurrent reader")
    final = states[-1][0]
    try:
        with tarfile.open(path) as tf:
            seen = {}
            for m in tf.getmembers():
                if not m.name.startswith(".trash/") and m.name not in RESERVED:
                    seen[m.name] = tf.extractfile(m).read()
        ok(seen == final, "tarfile: the final archive holds every member of the last commit, byte for byte (%d)" % len(
            final), sorted(set(seen) ^ set(final))[:10])
    except Exception as e:  # noqa: BLE001
        ok(False, "tarfile: the final archive opens", str(e))
    ok(not temporaries(tmp) and not os.path.exists(path + ".vdsql-journal"),
       "no journal or temporary left after the loop", temporaries(tmp))


def timed_kills(tmp, trials):
    txs, states = plan_commits(400)
    left = 0
    bad = []
    rnd = random.Random(int(os.environ.get("READERS_SEED", "27")))
    for i in range(trials):
        d = os.path.join(tmp, "kill%d" % i)
        os.mkdir(d)
        path = os.path.join(d, "k.lindi.tar")
        sql(base_sql(path), check=True)
        w = subprocess.Popen(shell_args(), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
        w.stdin.write(writer_sql(path, txs))
        w.stdin.flush()
        time.sleep(rnd.uniform(0.05, 0.6))
        w.kill()
        w.communicate()
        seen = state_of(path, states)
        if any(not isinstance(g, set) or not g for g in seen.values()):
            bad.append("trial %d: %s" % (i, seen))
        # the newest state every reader agrees on: tarfile sees no refs, so after a refs-only
        # commit its set holds both states, and its larger one was not necessarily seen
        agreed = set.intersection(*[g for g in seen.values() if isinstance(g, set) and g] or [set()])
        before = [max(agreed)] if agreed else []
        sql("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nSELECT count(*) FROM a;\nBEGIN;\n"
            "INSERT INTO a(name, data) VALUES ('after', 'x');\nROLLBACK;\n" % path, check=True)
        after = state_of(path, states)
        common = set.intersection(*[g if isinstance(g, set) else set() for g in after.values()])
        if not common or (before and max(common) < max(before)):
            bad.append("trial %d after recovery: before %s, after %s" % (i, seen, after))
        left += len(temporaries(d)) + os.path.exists(path + ".vdsql-journal")
        shutil.rmtree(d)
    print("# %d timed kills: %d trials where a reader saw no committed state; %d journal temporaries left" % (
        trials, len(bad), left))
    ok(not bad, "%d kills at random moments of a commit loop: before recovery vdsql, tarfile%s each show one committed "
       "state exactly, and after it all agree" % (trials, " and lindi" if LINDI else ""), "\n".join(bad[:10]))
    ok(left == 0, "after %d kills and the next writer, no journal temporaries remain (%d left)" % (trials, left))


def step_kills(tmp):
    """Each kind of commit killed before each of its writes and at each numbered step."""
    txs, states = plan_commits(4)
    kinds = {"appending": 4, "refs-only (in lindi.json's padding)": 1, "delete-only (in the index's padding)": 3}
    for kind, g in kinds.items():
        base = os.path.join(tmp, "step-base%d.lindi.tar" % g)
        sql(base_sql(base) + writer_sql(base, txs[:g - 1]).split(";\n", 2)[2], check=True)
        old, new = g - 1, g
        cnt = os.path.join(tmp, "writes")
        ref = os.path.join(tmp, "ref.lindi.tar")
        shutil.copy(base, ref)
        sql(writer_sql(ref, [txs[g - 1]]), env={"VDSQL_COMMIT_WRITES": cnt}, check=True)
        r = state_of(ref, states)
        ok(all(isinstance(v, set) and new in v for v in r.values()), "%s: reference commit" % kind, r)
        with open(cnt) as f:
            total = int(f.read())
        bad, left, kills = [], 0, 0
        trials = [("VDSQL_CRASH_AT_WRITE", n) for n in range(1, total + 1)] + \
                 [("VDSQL_CRASHPOINT", k) for k in range(1, 8)]
        for var, n in trials:
            d = os.path.join(tmp, "s")
            os.mkdir(d)
            path = os.path.join(d, "s.lindi.tar")
            shutil.copy(base, path)
            p = sql(writer_sql(path, [txs[g - 1]]), env={var: str(n)})
            if p.returncode not in (-signal.SIGKILL, 137):
                if var == "VDSQL_CRASH_AT_WRITE":
                    bad.append("%s=%d: the writer was not killed (exit %s)" % (var, n, p.returncode))
                shutil.rmtree(d)
                continue
            kills += 1
            seen = state_of(path, states)
            if any(not isinstance(s, set) or not s & {old, new} for s in seen.values()):
                bad.append("%s=%d: before recovery %s (old %d, new %d)" % (var, n, seen, old, new))
            sql("CREATE VIRTUAL TABLE a USING lindi_tar('%s');\nBEGIN;\nINSERT INTO a(name, data) VALUES ('after', 'x');"
                "\nROLLBACK;\n" % path, check=True)
            after = state_of(path, states)
            common = set.intersection(*[s if isinstance(s, set) else set() for s in after.values()]) & {old, new}
            if not common or (any(isinstance(s, set) and s & {old, new} == {new} for s in seen.values())
                              and new not in common):
                bad.append("%s=%d: after recovery %s, before %s" % (var, n, after, seen))
            left += len(temporaries(d)) + os.path.exists(path + ".vdsql-journal")
            shutil.rmtree(d)
        ok(not bad, "%s commit killed %d times (before each of %d writes and syncs, and at steps 1-7): every reader "
           "shows the old or the new state before recovery, one of them after" % (kind, kills, total), "\n".join(bad[:12]))
        ok(left == 0, "%s commit: no journal temporaries after recovery (%d left)" % (kind, left))


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-readers.")
    try:
        if not LINDI:
            print("# skipped: lindi not available (LINDI_SRC unset): lindi is not among the readers")
        concurrent(tmp, int(os.environ.get("READERS_COMMITS", "400")), 3, int(os.environ.get("READERS_ROUNDS", "20")))
        step_kills(tmp)
        timed_kills(tmp, int(os.environ.get("READERS_KILLS", "12")))
    finally:
        shutil.rmtree(tmp)
    return plan()


if __name__ == "__main__":
    sys.exit(main())
