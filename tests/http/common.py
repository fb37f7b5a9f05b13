"""Shared by the tests/http/*.t scripts (stdlib only): the datasets, the misbehaving
server (badserver.py) and the sqlite3 shell run as a child whose peak RSS is known."""
import atexit
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from taplib import SO, SQLITE3, TOP  # noqa: E402


def datasets():
    """A directory with mkvds.py's test datasets, lindi/ (mklindi.py) and vtkhdf/
    (mkvtkhdf, when built): $VDSQL_TESTDATA when set, else generated once here."""
    d = os.environ.get("VDSQL_TESTDATA")
    if d and os.path.isdir(d):
        return os.path.abspath(d)
    tmp = tempfile.mkdtemp(prefix="vdsql-http.")
    atexit.register(shutil.rmtree, tmp, True)
    ds = os.path.join(tmp, "ds")
    subprocess.run([sys.executable, os.path.join(TOP, "tests/gen/mkvds.py"), "tests", ds], check=True)
    subprocess.run([sys.executable, os.path.join(TOP, "tests/gen/mklindi.py"), "tests", os.path.join(ds, "lindi")],
                   check=True)
    mk = os.environ.get("MKVTKHDF", os.path.join(TOP, "build/mkvtkhdf"))
    if os.access(mk, os.X_OK):
        subprocess.run([mk, os.path.join(ds, "vtkhdf")], check=True, stdout=subprocess.DEVNULL)
    return ds


class BadServer:
    """badserver.py on two loopback ports (self.port, self.port2), stopped at exit."""

    def __init__(self, root, lifetime=600):
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "badserver.py"), root, str(lifetime)],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        atexit.register(self.stop)
        r, _, _ = select.select([self.p.stdout], [], [], 20)
        line = self.p.stdout.readline() if r else ""
        if not re.match(r"^\d+ \d+$", line.strip()):
            self.stop()
            raise RuntimeError("badserver.py did not start")
        self.port, self.port2 = map(int, line.split())

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def shell(script, timeout=120):
    """Runs script through `sqlite3 -batch` with vdsql loaded, in a child of ours.
    Returns (stdout, stderr, exit status, peak RSS in KiB, seconds); a child still
    running after timeout seconds is killed (status -9)."""
    args = SQLITE3 + ["-batch", "-cmd", ".load " + SO, ":memory:"]
    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout, tempfile.TemporaryFile() as ferr:
        fin.write(script.encode())
        fin.seek(0)
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:
            try:
                os.dup2(fin.fileno(), 0)
                os.dup2(fout.fileno(), 1)
                os.dup2(ferr.fileno(), 2)
                os.execvp(args[0], args)
            finally:
                os._exit(127)
        while True:
            wpid, status, ru = os.wait4(pid, os.WNOHANG)
            if wpid:
                break
            if time.monotonic() - t0 > timeout:
                os.kill(pid, signal.SIGKILL)
                _, status, ru = os.wait4(pid, 0)
                break
            time.sleep(0.01)
        secs = time.monotonic() - t0
        fout.seek(0)
        ferr.seek(0)
        return (fout.read().decode(errors="replace"), ferr.read().decode(errors="replace"),
                os.waitstatus_to_exitcode(status), ru.ru_maxrss, secs)


def errors(stderr):
    """The messages of the shell's "... error near line N: message" lines."""
    return [m.group(1) for m in re.finditer(r"^(?:Runtime|Parse) error near line \d+: (.*)$", stderr, re.M)]


def quote(s):
    return "'" + s.replace("'", "''") + "'"
