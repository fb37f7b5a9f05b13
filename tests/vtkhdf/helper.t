#!/usr/bin/python3
"""libhdf5 runs only in vdsql's HDF5 helper process (formats/vtkhdf/vtkhdf_helper.h), as TAP:
  * the crafted files of ../shared/fixtures/hostile-vtkhdf/ (read in place), through every
    vtkhdf_* relation in one sqlite3 session: each query fails with an error naming the
    file (h5s_select_fortify.vtkhdf: "the HDF5 helper process died (SIGABRT)"), and the
    query after each one gives the generator's rows (<stem>.expect.json): the sqlite3
    process goes on, with a fresh helper;
  * a helper killed between queries (SIGSEGV) is replaced without the next query failing;
  * the helper as it runs: /proc/<pid>/status says NoNewPrivs 1 and Seccomp 2, its
    descriptors are stdin/stdout on /dev/null, stderr, and the one socket;
    `vdsql-h5helper --selftest`, confined the same way, cannot open a file, make a
    socket or signal its parent (EPERM);
  * a mutation fuzzer (bit flips, byte runs, truncations, splices of two files) over the
    generator's VTKHDF files: FUZZ_N mutants (default 40; seed FUZZ_SEED), each through
    every relation: the sqlite3 process never dies, and a sentinel query after them all
    gives its rows.
Debian's python3 runs it. env: SO (default ./vdsql), SQLITE3, VDSQL_TESTDATA (the
generated datasets), VDSQL_SHARED (default ../shared), FUZZ_N, FUZZ_SEED."""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import ok, plan, shell_args  # noqa: E402
import h5mutate  # noqa: E402

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
data = os.environ.get("VDSQL_TESTDATA")
shared = os.environ.get("VDSQL_SHARED", os.path.join(top, "..", "shared"))
hostile = os.path.join(shared, "fixtures", "hostile-vtkhdf")
so = os.environ.get("SO", os.path.join(top, "vdsql"))
helper = os.path.join(os.path.dirname(os.path.abspath(so)), "vdsql-h5helper")
RELATIONS = ["vtkhdf_partitions", "vtkhdf_topologies", "vtkhdf_arrays", "vtkhdf_array_starts", "vtkhdf_sources",
             "vtkhdf_blocks", "vtkhdf_amr_boxes", "vtkhdf_trees"]

if not data or not os.path.isdir(os.path.join(data, "vtkhdf")):
    print("Bail out! VDSQL_TESTDATA must hold the generated datasets (scripts/run-tests makes them)")
    sys.exit(1)
if not os.path.isdir(hostile):
    print("Bail out! %s not found: set VDSQL_SHARED" % hostile)
    sys.exit(1)
if not os.access(helper, os.X_OK):
    print("Bail out! %s not found: run make" % helper)
    sys.exit(1)

vt = os.path.join(data, "vtkhdf")
sentinel = os.path.join(vt, "htg_temporal.vtkhdf")
with open(os.path.join(vt, "htg_temporal.expect.json")) as f:
    want_rows = len(json.load(f)["partitions"])


def session(script, timeout=300):
    p = subprocess.run(shell_args(), input=script, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def q(path):
    return path.replace("'", "''")


# 1. the crafted files, every relation, each followed by a query that must work
crafted = sorted(n for n in os.listdir(hostile) if n.endswith(".vtkhdf"))
for name in crafted:
    path = os.path.join(hostile, name)
    lines = []
    for rel in RELATIONS:
        lines.append("SELECT 'rel', '%s', count(*) FROM %s('%s');" % (rel, rel, q(path)))
        lines.append("SELECT 'next', '%s', count(*) FROM vtkhdf_partitions('%s');" % (rel, q(sentinel)))
    rc, out, err = session("\n".join(lines) + "\n")
    nexts = [l for l in out.splitlines() if l.startswith("next|")]
    ok(rc in (0, 1) and len(nexts) == len(RELATIONS) and all(l.endswith("|%d" % want_rows) for l in nexts),
       "%s: the sqlite3 process goes on after every relation, the next query gives its %d rows" % (name, want_rows),
       "rc %d, %s / %s" % (rc, out[-600:], err[-600:]))
    errs = [l for l in err.splitlines() if "Error" in l or "error" in l]
    ok(errs and all(name in l for l in errs), "%s: every failure names the file" % name, err[-800:])
    if name == "h5s_select_fortify.vtkhdf":
        ok("the HDF5 helper process died (SIGABRT) reading this file" in err,
           "%s: the error says the HDF5 helper died with SIGABRT" % name, err[-800:])

# 1b. vtkhdf_main: the crafted files as parts (read in place) and as existing main files
# (copies in a temporary folder: a main file is the table's to replace), then a query that
# must work
mtmp = tempfile.mkdtemp(prefix="vdsql-h5main-")
lines = []
for name in crafted:
    path = os.path.join(hostile, name)
    for lay in ("partitions", "composite"):
        t = "p_%s_%s" % (lay, name.split(".")[0])
        lines.append("CREATE VIRTUAL TABLE %s USING vtkhdf_main('%s', '%s');" % (t, q(os.path.join(mtmp, t + ".vtkhdf")), lay))
        lines.append("INSERT INTO %s(file%s) VALUES ('%s'%s);" % (t, ", block" if lay == "composite" else "", q(path),
                                                                  ", 'b'" if lay == "composite" else ""))
        main = os.path.join(mtmp, "main_%s_%s" % (lay, name))
        shutil.copyfile(path, main)
        lines.append("CREATE VIRTUAL TABLE m_%s_%s USING vtkhdf_main('%s', '%s');" % (lay, name.split(".")[0], q(main), lay))
        lines.append("SELECT count(*) FROM m_%s_%s;" % (lay, name.split(".")[0]))
lines.append("SELECT 'next', count(*) FROM vtkhdf_partitions('%s');" % q(sentinel))
rc, out, err = session("\n".join(lines) + "\n")
ok(rc in (0, 1) and ("next|%d" % want_rows) in out.splitlines(),
   "vtkhdf_main: the crafted files as parts and as main files; the sqlite3 process goes on, the next query gives its rows",
   "rc %d, %s / %s" % (rc, out[-600:], err[-600:]))
parts_err = [l for l in err.splitlines() if l.startswith("Runtime error")]
fortify_parts = [l for l in parts_err if "h5s_select_fortify.vtkhdf:" in l and "main_" not in l]
ok(len(fortify_parts) == 2 and all("the HDF5 helper process died (SIGABRT) reading this file" in l for l in fortify_parts),
   "vtkhdf_main: h5s_select_fortify.vtkhdf as a part (two layouts): the HDF5 helper died (SIGABRT), named in the error",
   err[-1200:])
ok(parts_err and all(any(n in l for n in crafted) for l in parts_err),
   "vtkhdf_main: every failure names the crafted file (part or main file)", err[-1200:])
shutil.rmtree(mtmp)

# 2. a helper killed between queries is replaced; 3. what the running helper may do
probe = os.path.join(tempfile.mkdtemp(prefix="vdsql-h5probe-"), "probe.sh")
with open(probe, "w") as f:  # $1: the sqlite3 process
    # the helpers among $1's children, from /proc (no procps on a minimal Debian)
    f.write("""kids() {
  for s in /proc/[0-9]*/stat; do
    read -r pid comm state ppid rest 2>/dev/null < "$s" || continue
    [ "$comm" = "(vdsql-h5helper)" ] && [ "$ppid" = "$1" ] && echo "$pid"
  done
}
for p in $(kids "$1"); do
  echo "pid $p"
  if [ "$2" = show ]; then
    grep -E '^(NoNewPrivs|Seccomp):' /proc/$p/status
    for d in /proc/$p/fd/*; do echo "fd $(basename $d) $(readlink $d)"; done
  fi
  if [ "$2" = kill ]; then kill -SEGV $p; sleep 0.3; fi
done
""")
script = """SELECT 'a', count(*) FROM vtkhdf_partitions('%s');
.system sh %s $PPID show
.system sh %s $PPID kill
SELECT 'b', count(*) FROM vtkhdf_partitions('%s');
.system sh %s $PPID
""" % (q(sentinel), probe, probe, q(sentinel), probe)
rc, out, err = session(script)
lines = out.splitlines()
pids = sorted(set(l.split()[1] for l in lines if l.startswith("pid ")))
shutil.rmtree(os.path.dirname(probe))
ok(("a|%d" % want_rows) in lines and ("b|%d" % want_rows) in lines and err == "",
   "a helper killed (SIGSEGV) while idle: the next query gets a new one and its rows", out + err)
ok(len(pids) == 2 and pids[0] != pids[1], "one helper at a time, a new process after the kill", pids)
ok("NoNewPrivs:\t1" in lines, "the helper runs with no_new_privs", out)
ok("Seccomp:\t2" in lines, "the helper runs under a seccomp filter", out)
fds = sorted(l for l in lines if l.startswith("fd "))
ok(len(fds) == 4 and fds[0] == "fd 0 /dev/null" and fds[1] == "fd 1 /dev/null" and fds[3].startswith("fd 3 socket:"),
   "the helper holds only stdin/stdout (/dev/null), stderr and its channel", fds)
st = subprocess.run([helper, "--selftest"], capture_output=True, text=True, timeout=30)
ok(st.stdout.splitlines() == ["open: Operation not permitted", "socket: Operation not permitted",
                              "kill parent: Operation not permitted"],
   "confined as the helper, open(), socket() and kill(parent) fail with EPERM", st.stdout + st.stderr)

# 4. the mutation fuzzer
n = int(os.environ.get("FUZZ_N", "40"))
seed = int(os.environ.get("FUZZ_SEED", "28"))
rng = random.Random(seed)
seeds = h5mutate.seeds_in(vt)
tmp = tempfile.mkdtemp(prefix="vdsql-h5fuzz-")
try:
    lines = []
    for i in range(n):
        dst = h5mutate.mutant(rng, seeds, tmp, i)
        for rel in RELATIONS:
            lines.append("SELECT count(*) FROM %s('%s');" % (rel, q(dst)))
    lines.append("SELECT 'sentinel', count(*) FROM vtkhdf_partitions('%s');" % q(sentinel))
    rc, out, err = session("\n".join(lines) + "\n", timeout=900)
    died = err.count("the HDF5 helper process died")
    sigs = {}
    for m in re.findall(r"the HDF5 helper process died \(([^)]*)\)", err):
        sigs[m] = sigs.get(m, 0) + 1
    ok(("sentinel|%d" % want_rows) in out.splitlines() and rc in (0, 1),
       "fuzzer: %d mutants x %d relations, the sqlite3 process never dies (helper deaths: %d %s)" % (n, len(RELATIONS), died, sigs),
       "rc %d %s" % (rc, err[-800:]))
    bad = [l for l in err.splitlines() if l.startswith("Runtime error") and "vtkhdf" not in l and "/" not in l]
    ok(not bad, "fuzzer: every error names the file", bad[:5])
finally:
    shutil.rmtree(tmp)
plan()
