"""TAP output and the sqlite3 shell with vdsql loaded, for the LINDI test scripts."""
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SO = os.environ.get("SO", os.path.join(TOP, "vdsql"))
SQLITE3 = os.environ.get("SQLITE3", "sqlite3").split()
counts = {"n": 0, "failed": 0}


def ok(cond, msg, detail=""):
    counts["n"] += 1
    print("%sok %d - %s" % ("" if cond else "not ", counts["n"], msg))
    if not cond:
        counts["failed"] += 1
        for line in str(detail).splitlines()[:30]:
            print("#   " + line)
    sys.stdout.flush()


def skip(msg):
    counts["n"] += 1
    print("ok %d # SKIP %s" % (counts["n"], msg))


def plan():
    print("1..%d" % counts["n"])
    return 1 if counts["failed"] else 0


def shell_args():
    return SQLITE3 + ["-batch", "-cmd", ".load " + SO, ":memory:"]


def sql(script, env=None, check=False):
    p = subprocess.run(shell_args(), input=script, text=True, capture_output=True, env=dict(os.environ, **(env or {})))
    if check and p.returncode != 0:
        raise RuntimeError("sqlite3 failed (%d): %s" % (p.returncode, p.stderr))
    return p
