#!/usr/bin/env python3
"""lindi_repair(url), as TAP, on the archives of tests/gen/mkrepair_lindi.py (each
broken as lindi's own writer, which never syncs, can leave one; the generator's record
says how). Expected values come from the record, Python's tarfile and json and GNU tar,
never from vdsql:
  - before: the fault is visible (tar_members' in_index, or an unreadable index);
  - the repair's rows name the fault's action, then the new index and the entry;
  - after: the index the entry names lists exactly tarfile's members (the last copy of a
    name, trash left out) with tarfile's header offsets, data offsets and sizes; GNU tar
    and tarfile read it; every member's bytes equal tarfile's; tar_members lists every
    header but trash as in_index; a second repair has no rows and writes nothing;
  - a healthy archive: no rows, no write (strace counts the writing syscalls: 0), no journal;
  - refusals (a plain tar, a .lindi.json, no tar, a missing file, a directory, a stray
    journal, http(s)://) name the url and what is wrong, and change nothing;
  - kill -9 before every write and sync of the repair's commit, at each numbered step,
    and at random moments from outside: the archive is the old one or the repaired one
    and readable, and the next repair ends with the repaired one;
  - two repairs at once: one repairs, the other then finds nothing to do;
  - a repair racing a lindi_tar writer's transaction: it waits for the writer's lock
    (or says another writer holds it), and the end state lists the writer's members;
  - on radosgw and Azurite (REPAIR_STORES, default "s3 az"): every archive repaired in
    place as a whole-object rewrite (one GET, one conditional PUT; a healthy one costs
    one GET and keeps its ETag), read back with boto3 / tests/azclient.py and checked with
    tarfile; kill -9 at random moments leaves the old object or the repaired one; on S3
    through tests/faultproxy.py, a PUT whose answer is lost is a repair done, and another
    writer replacing the object mid-repair leaves that writer's object, nothing written."""
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
from taplib import TOP, ok, plan, shell_args, skip, sql  # noqa: E402

GEN = os.path.join(TOP, "tests/gen/mkrepair_lindi.py")
# REPAIR_KILLS=0 leaves the kill -9 checks out (reported as skips), for a quick run
KILLS = os.environ.get("REPAIR_KILLS", "1") != "0"


def tar_view(path):
    """{name: (header offset, data offset, size)} of tarfile's live members (the last
    copy of a name; .trash/ left out)."""
    out = {}
    with tarfile.open(path) as t:
        for m in t.getmembers():
            if not m.name.startswith(".trash/"):
                out[m.name] = (m.offset, m.offset_data, m.size)
    return out


def lindi_view(path):
    """(entry's index triple, {name: (o, d, s)}) as lindi reads it: the entry at 512, the
    index it names, parsed with json."""
    with open(path, "rb") as f:
        f.seek(512)
        e = json.loads(f.read(1024))["index"]
        f.seek(e["d"])
        ix = json.loads(f.read(e["s"]).decode().rstrip(" "))
    return (e["o"], e["d"], e["s"]), {x["n"]: (x["o"], x["d"], x["s"]) for x in ix["files"]}


def agrees(path):
    """'' when the index lindi reads equals tarfile's members exactly, else why not."""
    try:
        tv = tar_view(path)
        (eo, ed, es), lv = lindi_view(path)
    except Exception as ex:  # noqa: BLE001 - any failure is the finding
        return "unreadable: %s" % ex
    if lv != tv:
        return "index %s != tarfile %s" % (sorted(set(lv.items()) ^ set(tv.items()))[:6], "")
    if tv.get(".tar_index.json") != (eo, ed, es):
        return "the entry names %s, tarfile's index is %s" % ((eo, ed, es), tv.get(".tar_index.json"))
    p = subprocess.run(["tar", "tf", path], capture_output=True, text=True)
    if p.returncode != 0:
        return "GNU tar: " + p.stderr
    with tarfile.open(path) as t:
        for m in t.getmembers():
            if m.name.startswith(".trash/") or tv[m.name][0] != m.offset:
                continue
            with open(path, "rb") as f:
                f.seek(m.offset_data)
                if f.read(m.size) != t.extractfile(m).read():
                    return "bytes of %s" % m.name
    return ""


def state(path):
    with open(path, "rb") as f:
        data = f.read()
    st = os.stat(path)
    return hashlib.sha256(data).hexdigest(), st.st_mtime_ns, st.st_ino


def repair(path, env=None, lock_timeout=None):
    pre = "SELECT vdsql_config('lock_timeout', %s);\n" % lock_timeout if lock_timeout else ""
    p = sql(".mode json\n" + pre + "SELECT action, name, header_offset, size, detail FROM lindi_repair('%s');" % path,
            env=env)
    lines = [x for x in p.stdout.splitlines() if x.strip()]
    rows = []
    buf = ""
    for line in lines:
        buf += line
        try:
            v = json.loads(buf)
            buf = ""
            if v and "action" in v[0]:
                rows = v
        except ValueError:
            pass
    return p, rows


def main():
    tmp = tempfile.mkdtemp(prefix="vdsql-repair-")
    try:
        src = os.path.join(tmp, "src")
        g = subprocess.run(["python3", GEN, "catalog", src], capture_output=True, text=True)
        ok(g.returncode == 0, "mkrepair_lindi.py builds the archives", g.stderr)
        rec = json.loads(g.stdout)
        broken = [d for d in rec if d["faults"]]

        # the faults as the generator planted them, seen before the repair
        for d in broken:
            path = os.path.join(src, d["name"])
            f = d["faults"][0]
            if f["verdict"] == "orphan" or f["audit"] == "relisted":
                q = sql("SELECT name FROM tar_members('%s') WHERE in_index = 0 AND name NOT LIKE '.trash/%%';" % path)
                ok(q.returncode == 0 and f["part"] in q.stdout.split(),
                   "%s before: tar_members shows %s not in the index" % (d["name"], f["part"]), q.stdout + q.stderr)
            elif f["verdict"] == "unreadable":
                q = sql("SELECT verdict FROM vdsql_check('%s');" % path)
                ok(q.stdout.split() == ["unreadable"], "%s before: vdsql_check says unreadable" % d["name"],
                   q.stdout + q.stderr)
            else:
                q = sql("SELECT count(*) FROM tar_members('%s');" % path)
                ok(q.returncode != 0 and "ends before byte" in q.stderr,
                   "%s before: tar_members says the archive is cut" % d["name"], q.stdout + q.stderr)
            if f["verdict"] != "unreadable":
                q = sql(".mode list\n.separator |\nSELECT part, verdict FROM vdsql_check('%s');" % path)
                ok(q.returncode == 0 and "%s|%s" % (f["part"], f["verdict"]) in q.stdout.split("\n"),
                   "%s before: vdsql_check (the dry run) says %s %s" % (d["name"], f["part"], f["verdict"]),
                   q.stdout + q.stderr)
            ok(agrees(path) != "", "%s before: the index disagrees with tarfile" % d["name"])

        # the repair of each, checked against tarfile and json
        work = os.path.join(tmp, "work")
        shutil.copytree(src, work)
        for d in broken:
            path = os.path.join(work, d["name"])
            f = d["faults"][0]
            p, rows = repair(path)
            acts = [(r["action"], r["name"]) for r in rows]
            ok(p.returncode == 0 and (f["audit"], f["part"]) in acts and acts[-2:] ==
               [("index", ".tar_index.json"), ("entry", ".tar_entry.json")],
               "%s: the rows say %s %s, then index and entry" % (d["name"], f["audit"], f["part"]), p.stderr + str(acts))
            if f["item"]:
                r = [r for r in rows if (r["action"], r["name"]) == (f["audit"], f["part"])]
                want = int(f["item"]) if f["audit"] != "relisted" else tar_view(path)[f["part"]][0]
                ok(r and r[0]["header_offset"] == want, "%s: at the header offset the record says" % d["name"], str(r))
            why = agrees(path)
            ok(why == "", "%s: after, the index equals tarfile's members (names, offsets, sizes); GNU tar reads it" %
               d["name"], why)
            q = sql("SELECT count(*) FROM tar_members('%s') WHERE in_index = 0 AND name NOT LIKE '.trash/%%';\n"
                    "SELECT count(*) FROM vdsql_check('%s');" % (path, path))
            ok(q.returncode == 0 and q.stdout.split() == ["0", "0"],
               "%s: after, every header but trash in_index; vdsql_check has no row" % d["name"], q.stdout + q.stderr)
            before = state(path)
            p, rows = repair(path)
            ok(p.returncode == 0 and rows == [] and state(path) == before and not os.path.exists(path + ".vdsql-journal"),
               "%s: a second repair has no rows and leaves the file as it was" % d["name"], p.stderr + str(rows))
        dup = os.path.join(work, "duplicate.lindi.tar")
        with tarfile.open(dup) as t:
            names = [m.name for m in t.getmembers()]
        ok(names.count("blobs/m3") == 1 and any(n.startswith(".trash/blobs/m3.") for n in names),
           "duplicate: the older copy's header is renamed to .trash/ (tarfile)", str(names))

        # a healthy archive: no rows, no writing syscall, no journal
        h = os.path.join(work, "healthy.lindi.tar")
        before = state(h)
        trace = os.path.join(tmp, "strace")
        if not shutil.which("strace"):
            ok(False, "healthy: strace is needed to see that nothing is written (Debian package strace; "
               "scripts/install-deps installs it)")
            return plan()
        p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=write,pwrite64,pwritev,ftruncate,fsync,fdatasync,"
                            "openat,rename,renameat,renameat2,unlink,unlinkat,flock", "-o", trace] + shell_args(),
                           input="SELECT count(*) FROM lindi_repair('%s');" % h, capture_output=True, text=True)
        with open(trace) as tf:
            calls = tf.read().splitlines()
        fd_writes = [c for c in calls if h in c and ("O_RDWR" in c or "O_WRONLY" in c or "rename" in c or "unlink" in c)]
        writes = [c for c in calls if c.split(" ", 1)[-1].startswith(("pwrite", "ftruncate", "fsync", "fdatasync",
                                                                     "rename", "unlink"))]
        ok(p.returncode == 0 and p.stdout.split() == ["0"] and state(h) == before and not writes and
           not os.path.exists(h + ".vdsql-journal"),
           "healthy: no rows; no pwrite, truncate, sync, rename or unlink (strace); the file unchanged",
           p.stderr + "\n".join(writes + fd_writes[:3]))

        # refusals: each names the url and what is wrong, nothing changed
        with open(os.path.join(work, "text.lindi.tar"), "w") as f:
            f.write("hello, not a tar\n" * 100)
        os.mkdir(os.path.join(work, "dir.lindi.tar"))
        cases = [("plain.tar", "not a LINDI archive"), ("json.lindi.json", "has no index to repair"),
                 ("text.lindi.tar", "not a tar archive"), ("missing.lindi.tar", "no such file"),
                 ("dir.lindi.tar", "Is a directory")]
        for name, want in cases:
            path = os.path.join(work, name)
            b = state(path) if os.path.isfile(path) else None
            p, rows = repair(path)
            ok(p.returncode != 0 and path in p.stderr and want in p.stderr and
               (b is None or state(path) == b) and not os.path.exists(path + ".vdsql-journal"),
               "refused: %s (%s), unchanged" % (name, want), p.stderr)
        for url in ("http://127.0.0.1:9/a.lindi.tar", "https://127.0.0.1:9/a.lindi.tar"):
            q = sql("SELECT * FROM lindi_repair('%s');\nSELECT sum(requests) FROM vdsql_stats();" % url)
            ok(q.returncode != 0 and "this store is read-only" in q.stderr and url in q.stderr and
               q.stdout.split() in (["0"], [""], []), "refused before any request: %s" % url, q.stdout + q.stderr)

        # a journal that is not this archive's (a stray file): refused, nothing changed
        stray = os.path.join(work, "stray.lindi.tar")
        shutil.copy(os.path.join(src, "appended.lindi.tar"), stray)
        with open(stray + ".vdsql-journal", "w") as f:
            f.write("not a journal\n")
        b = state(stray)
        p, rows = repair(stray)
        ok(p.returncode != 0 and "not a journal of this archive's last transaction" in p.stderr and state(stray) == b
           and os.path.exists(stray + ".vdsql-journal"),
           "a stray journal beside the archive: refused, archive and journal left as they were", p.stderr)

        # kill -9 before each write and sync of the commit, and at each numbered step
        rng = random.Random(int(os.environ.get("REPAIR_SEED", "30")))
        kills = 0
        bad = []
        for d in broken if KILLS else []:
            base = os.path.join(src, d["name"])
            cnt = os.path.join(tmp, "writes")
            c = os.path.join(tmp, "count.lindi.tar")
            shutil.copy(base, c)
            p, _ = repair(c, env={"VDSQL_COMMIT_WRITES": cnt})
            with open(cnt) as f:
                n = int(f.read())
            try:
                tar_ok = bool(tar_view(base))
            except Exception:  # noqa: BLE001
                tar_ok = False
            plans = [{"VDSQL_CRASH_AT_WRITE": str(k)} for k in range(1, n + 1)] + \
                    [{"VDSQL_CRASHPOINT": str(k)} for k in range(1, 8)]
            for env in plans:
                victim = os.path.join(tmp, "victim.lindi.tar")
                shutil.copy(base, victim)
                for x in (victim + ".vdsql-journal",):
                    if os.path.exists(x):
                        os.unlink(x)
                old = lindi_or_none(victim)
                p, _ = repair(victim, env=env)
                if p.returncode not in (-9, 137):
                    if "VDSQL_CRASHPOINT" in env and p.returncode == 0:
                        continue  # a numbered step this commit does not pass (no revive, no trash)
                    bad.append("%s %s: not killed (%s) %s" % (d["name"], env, p.returncode, p.stderr[-200:]))
                    continue
                kills += 1
                now = lindi_or_none(victim)
                try:
                    tar_view(victim)
                except Exception as ex:  # noqa: BLE001 - unreadable only when the old one was (truncated)
                    if tar_ok:
                        bad.append("%s %s: tarfile cannot read it: %s" % (d["name"], env, ex))
                if now != old and agrees(victim) != "":
                    bad.append("%s %s: neither the old index nor the repaired one: %s" % (d["name"], env,
                                                                                            agrees(victim)))
                p, _ = repair(victim)
                if p.returncode != 0 or agrees(victim) != "" or os.path.exists(victim + ".vdsql-journal"):
                    bad.append("%s %s: the next repair did not finish it: %s %s" % (d["name"], env, p.stderr,
                                                                                    agrees(victim)))
        if not KILLS:
            skip("kill -9 at every write and step (REPAIR_KILLS=0)")
        else:
            ok(not bad and kills > 20, "kill -9 before every write/sync and at each step of %d repairs (%d kills): old or "
               "repaired, readable by tarfile; the next repair finishes" % (len(broken), kills), "\n".join(bad[:20]))

        # kill -9 from outside at random moments of a large repair
        big = os.path.join(tmp, "big.lindi.tar")
        mk = ("import sys; sys.path.insert(0, %r)\nfrom mklindi import Archive\na = Archive(%r)\n"
              "[a.append('blobs/%%05d' %% i, b'x' * 100) for i in range(15000)]\na.write_index()\n"
              "[a.append('late/%%04d' %% i, b'y' * 50) for i in range(300)]\na.f.close()\n"
              % (os.path.join(TOP, "tests/gen"), big))
        subprocess.run(["python3", "-c", mk], check=True)
        t0 = time.monotonic()
        shutil.copy(big, big + ".t")
        p, rows = repair(big + ".t")
        dur = time.monotonic() - t0
        ok(p.returncode == 0 and len([r for r in rows if r["action"] == "listed"]) == 300 and agrees(big + ".t") == "",
           "a 15,300-member archive with 300 unlisted: 300 listed, agrees (%.2f s)" % dur, p.stderr)
        bad, killed = [], 0
        for i in range(12 if KILLS else 0):
            victim = os.path.join(tmp, "rvictim.lindi.tar")
            shutil.copy(big, victim)
            old = lindi_or_none(victim)
            proc = subprocess.Popen(shell_args(), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, text=True)
            proc.stdin.write("SELECT count(*) FROM lindi_repair('%s');\n" % victim)
            proc.stdin.close()
            time.sleep(rng.uniform(0, dur))
            proc.send_signal(signal.SIGKILL)
            killed += proc.wait() == -9
            now = lindi_or_none(victim)
            if now != old and agrees(victim) != "":
                bad.append("kill %d: neither old nor repaired: %s" % (i, agrees(victim)))
            p, _ = repair(victim)
            if p.returncode != 0 or agrees(victim) != "":
                bad.append("kill %d: the next repair: %s %s" % (i, p.stderr, agrees(victim)))
        ok(not bad and (killed > 0 or not KILLS), "12 kills at random moments (%d landed before the end): old or repaired; the next repair finishes"
           % killed, "\n".join(bad))

        # two repairs at once
        both = os.path.join(tmp, "both.lindi.tar")
        shutil.copy(big, both)
        procs = [subprocess.Popen(shell_args(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(2)]
        for pr in procs:
            pr.stdin.write("SELECT count(*) FROM lindi_repair('%s');\n" % both)
            pr.stdin.close()
        outs = [(pr.wait(), pr.stdout.read().split(), pr.stderr.read()) for pr in procs]
        counts = sorted(o[1][0] if o[1] else "?" for o in outs)
        ok(all(o[0] == 0 for o in outs) and counts[0] == "0" and counts[1] != "0" and agrees(both) == "",
           "two repairs at once: one repairs, the other then finds nothing to do", str(outs))

        # a repair racing a lindi_tar writer
        race = os.path.join(tmp, "race.lindi.tar")
        shutil.copy(os.path.join(src, "appended.lindi.tar"), race)
        w = subprocess.Popen(shell_args(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        w.stdin.write("CREATE VIRTUAL TABLE t USING lindi_tar('%s');\nBEGIN;\n"
                      "INSERT INTO t(name, data) VALUES ('w/one', zeroblob(3000));\nSELECT 'held';\n" % race)
        w.stdin.flush()
        line = w.stdout.readline()
        p, rows = repair(race, lock_timeout=1)
        ok(line.strip() == "held" and p.returncode != 0 and "another writer holds the archive" in p.stderr,
           "while a lindi_tar transaction is open, the repair is refused: another writer holds the archive", p.stderr)
        repairer = subprocess.Popen(shell_args(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        repairer.stdin.write(".mode list\nSELECT action || ' ' || coalesce(name, '') FROM lindi_repair('%s');\n" % race)
        repairer.stdin.close()
        time.sleep(0.3)
        w.stdin.write("INSERT INTO t(name, data) VALUES ('w/two', zeroblob(10));\nCOMMIT;\n")
        w.stdin.close()
        wrc, werr = w.wait(), w.stderr.read()
        rrc, rout, rerr = repairer.wait(), repairer.stdout.read(), repairer.stderr.read()
        tv = tar_view(race)
        ok(wrc == 0 and rrc == 0 and "listed blobs/late" in rout and agrees(race) == "" and
           {"w/one", "w/two", "blobs/late"} <= set(tv),
           "a repair waiting on a writer's commit: both succeed; the writer's members and the appended one indexed",
           werr + rerr + rout + agrees(race))
        q = sql("SELECT length(lindi_read('%s', 'w/one')), length(lindi_read('%s', 'blobs/late'));" % (race, race))
        ok(q.stdout.split() == ["3000|777"], "and read back through the index with their sizes", q.stdout + q.stderr)
        stores = os.environ.get("REPAIR_STORES", "s3 az").split()
        if "s3" in stores:
            s3_checks(tmp, src, rec, rng)
        if "az" in stores:
            az_checks(tmp, src, rec)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return plan()


STATS = "SELECT coalesce(sum(requests), 0) FROM vdsql_stats() WHERE backend = '%s';"


def remote_checks(store, base, rec, env, fetch, tmp):
    """Each archive repaired where it lies: the rows as on files, requests counted exactly
    (one GET, then one PUT when something was wrong; none of them a write for a healthy
    archive), the object read back (boto3 / the tests' Azure client) agreeing with tarfile."""
    for d in rec:
        url = base + d["name"]
        p = sql(".mode json\nSELECT vdsql_config('stats', 'reset');\nSELECT action, name, header_offset, size FROM "
                "lindi_repair('%s');\n.mode list\n%s" % (url, STATS % store), env=env)
        lines = p.stdout.strip().splitlines()
        reqs = lines[-1] if lines else ""
        rows = []
        for chunk in p.stdout.split("\n["):
            try:
                v = json.loads(chunk if chunk.startswith("[") else "[" + chunk.split("\n" + reqs)[0])
                if v and "action" in v[0]:
                    rows = v
            except ValueError:
                pass
        local = os.path.join(tmp, store + "-" + d["name"])
        with open(local, "wb") as f:
            f.write(fetch(d["name"]))
        if d["error"]:
            ok(p.returncode != 0 and d["error"] in p.stderr and url in p.stderr,
               "%s: %s refused (%s)" % (store, d["name"], d["error"]), p.stderr)
            continue
        f0 = d["faults"][0] if d["faults"] else None
        want_reqs = "2" if f0 else "1"
        acts = [(r["action"], r["name"]) for r in rows]
        ok(p.returncode == 0 and reqs == want_reqs and (f0 is None and rows == [] or
                                                         (f0["audit"], f0["part"]) in acts and
                                                         acts[-2:] == [("index", ".tar_index.json"),
                                                                       ("entry", ".tar_entry.json")]),
           "%s: %s: %s, %s request(s) (GET%s)" % (store, d["name"], "%s %s" % (f0["audit"], f0["part"]) if f0 else
                                                  "no rows", want_reqs, ", PUT" if f0 else " only"),
           p.stderr + "requests %s; %s" % (reqs, acts))
        why = agrees(local)
        ok(why == "", "%s: %s read back: the index equals tarfile's members; GNU tar reads it" % (store, d["name"]), why)


def s3_checks(tmp, src, rec, rng):
    try:
        sys.path.insert(0, os.path.join(TOP, "tests/gen"))
        import vdsupload
        import boto3  # noqa: F401
    except ImportError:
        ok(False, "boto3 for python3 (Debian package python3-boto3)")
        return
    from taplib import Radosgw
    with Radosgw() as srv:
        if not ok(srv.started, "radosgw starts on 127.0.0.1", srv.error):
            return
        env = {k: srv.env[k] for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")}
        c = vdsupload.s3_client(srv.endpoint, srv.key, srv.secret, srv.region)
        vdsupload.upload_s3(c, srv.bucket, "r/", src)
        etag = c.head_object(Bucket=srv.bucket, Key="r/healthy.lindi.tar")["ETag"]
        remote_checks("s3", "s3://%s/r/" % srv.bucket, rec, env,
                      lambda n: c.get_object(Bucket=srv.bucket, Key="r/" + n)["Body"].read(), tmp)
        ok(c.head_object(Bucket=srv.bucket, Key="r/healthy.lindi.tar")["ETag"] == etag,
           "s3: the healthy archive's object is the one uploaded (its ETag unchanged)")
        # kill -9 at random moments: a whole-object PUT lands whole or not at all
        bad = []
        for i in range(6 if KILLS else 0):
            c.upload_file(os.path.join(src, "stale_entry.lindi.tar"), srv.bucket, "k/victim.lindi.tar")
            proc = subprocess.Popen(shell_args(), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, text=True, env=dict(os.environ, **env))
            proc.stdin.write("SELECT count(*) FROM lindi_repair('s3://%s/k/victim.lindi.tar');\n" % srv.bucket)
            proc.stdin.close()
            time.sleep(rng.uniform(0, 0.3))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            local = os.path.join(tmp, "s3victim.lindi.tar")
            with open(local, "wb") as f:
                f.write(c.get_object(Bucket=srv.bucket, Key="k/victim.lindi.tar")["Body"].read())
            with open(os.path.join(src, "stale_entry.lindi.tar"), "rb") as f:
                same_as_old = f.read() == open(local, "rb").read()
            if not same_as_old and agrees(local) != "":
                bad.append("kill %d: neither old nor repaired: %s" % (i, agrees(local)))
        ok(not bad, "s3: 6 kills at random moments of a repair: the object is the old one or the repaired one",
           "\n".join(bad))
        wire_checks(tmp, src, srv, c, env)


def wire_checks(tmp, src, srv, c, env):
    """Through tests/faultproxy.py in front of radosgw: the PUT's answer lost on the wire
    (the write landed; the retry's If-Match then fails) is a repair done, said as done;
    another writer replacing the object between the repair's GET and its PUT (the GET's
    answer held 3 s) makes the repair write nothing and say so, the other writer's object
    kept whole."""
    from taplib import FaultProxy
    proxy = FaultProxy(int(srv.endpoint.rsplit(":", 1)[1]))
    try:
        penv = dict(env, AWS_ENDPOINT_URL="http://127.0.0.1:%d" % proxy.port)
        url = "s3://%s/w/victim.lindi.tar" % srv.bucket
        local = os.path.join(tmp, "wire.lindi.tar")

        def fetch():
            with open(local, "wb") as f:
                f.write(c.get_object(Bucket=srv.bucket, Key="w/victim.lindi.tar")["Body"].read())
            return local

        c.upload_file(os.path.join(src, "appended.lindi.tar"), srv.bucket, "w/victim.lindi.tar")
        proxy.arm(rate=1, kinds="drop", methods="PUT", count=1)
        p, rows = repair(url, env=penv)
        drops = proxy.stats()["faults"].get("drop", {}).get("PUT", 0)
        proxy.off()
        acts = [(r["action"], r["name"]) for r in rows]
        why = agrees(fetch())
        ok(drops == 1 and p.returncode == 0 and ("listed", "blobs/late") in acts and
           acts[-2:] == [("index", ".tar_index.json"), ("entry", ".tar_entry.json")] and why == "",
           "s3: the PUT's answer lost on the wire (it landed; its retry's If-Match fails): the repair's rows, "
           "the object repaired", "drops %d; %s; %s; %s" % (drops, p.stderr, acts, why))

        c.upload_file(os.path.join(src, "appended.lindi.tar"), srv.bucket, "w/victim.lindi.tar")
        with open(os.path.join(src, "replaced.lindi.tar"), "rb") as f:
            other = f.read()
        proxy.arm(rate=1, kinds="stall", methods="GET", url="victim", stall=3, count=1)
        script = os.path.join(tmp, "race.sql")
        with open(script, "w") as f:
            f.write("SELECT count(*) FROM lindi_repair('%s');\n" % url)
        proc = subprocess.Popen(shell_args(), stdin=open(script), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=dict(os.environ, **penv))
        time.sleep(1)
        c.put_object(Bucket=srv.bucket, Key="w/victim.lindi.tar", Body=other)
        out, errs = proc.communicate(timeout=60)
        proxy.off()
        with open(fetch(), "rb") as f:
            now = f.read()
        ok(proc.returncode != 0 and "changed while it was being repaired" in errs and url in errs and now == other,
           "s3: another writer replaces the object between the repair's GET and PUT: the repair writes nothing "
           "and says so; the other writer's object stands", "rc %s; %s; same as the other's: %s"
           % (proc.returncode, errs, now == other))
    finally:
        proxy.stop()


def az_checks(tmp, src, rec):
    sys.path.insert(0, os.path.join(TOP, "tests/gen"))
    sys.path.insert(0, os.path.join(TOP, "tests"))
    import vdsupload
    from azclient import Az
    from taplib import Azurite
    with Azurite() as srv:
        if not ok(srv.started, "Azurite starts on 127.0.0.1", srv.error):
            return
        env = {"AZURE_STORAGE_CONNECTION_STRING": srv.env["AZURE_STORAGE_CONNECTION_STRING"]}
        vdsupload.upload_az(srv, "r/", src)
        az = Az(srv)

        def fetch(n):
            st, _, body = az("GET", "/%s/%s/r/%s" % (srv.account, srv.container, n))
            return body

        etag = az("HEAD", "/%s/%s/r/healthy.lindi.tar" % (srv.account, srv.container))[1].get("etag")
        remote_checks("az", "az://%s/r/" % srv.container, rec, env, fetch, tmp)
        ok(az("HEAD", "/%s/%s/r/healthy.lindi.tar" % (srv.account, srv.container))[1].get("etag") == etag,
           "az: the healthy archive's blob is the one uploaded (its ETag unchanged)")


def lindi_or_none(path):
    try:
        return lindi_view(path)
    except Exception:  # noqa: BLE001
        return None


if __name__ == "__main__":
    sys.exit(main())
