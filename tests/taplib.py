"""TAP output and the sqlite3 shell with vdsql loaded, for the Python test scripts
(tests/lindi, tests/vtkhdf)."""
import json
import os
import shlex
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SO = os.environ.get("SO", os.path.join(TOP, "vdsql"))
SQLITE3 = shlex.split(os.environ.get("SQLITE3", "sqlite3"))
counts = {"n": 0, "failed": 0}


def ok(cond, msg, detail=""):
    counts["n"] += 1
    print("%sok %d - %s" % ("" if cond else "not ", counts["n"], msg))
    if not cond:
        counts["failed"] += 1
        for line in str(detail).splitlines()[:40]:
            print("#   " + line)
    sys.stdout.flush()
    return cond


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


AWS_VARS = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
            "AWS_DEFAULT_REGION")


def json_sets(script, env=None):
    """(list of result sets as row dicts, stderr, rc): each statement's rows in JSON (the
    shell prints one array per statement that has rows), without the caller's AWS_*
    variables unless env gives them."""
    e = {k: v for k, v in os.environ.items() if k not in AWS_VARS}
    e.update(env or {})
    p = subprocess.run(shell_args(), input=".mode json\n" + script, text=True, capture_output=True, env=e)
    sets, buf = [], ""
    for line in p.stdout.splitlines():
        buf += line
        try:
            sets.append(json.loads(buf))
            buf = ""
        except ValueError:
            pass
    return sets, p.stderr, p.returncode


def query(sql):
    """Rows of a query as dicts (the shell's JSON mode); raises on any error."""
    r = subprocess.run(shell_args()[:-1] + ["-cmd", ".mode json", ":memory:"], input=sql, capture_output=True, text=True)
    if r.returncode != 0 or "rror" in r.stderr:
        raise RuntimeError("sqlite3 failed: " + r.stderr.strip())
    return json.loads(r.stdout) if r.stdout.strip() else []


def measured(script, timeout=60, env=None):
    """Runs script through the shell like sql(), in a child of its own, and returns
    (returncode or None on timeout, stdout, stderr, peak RSS in MB, seconds). The child
    is killed at the timeout, so a hang fails a test instead of stalling the suite."""
    import tempfile
    import time
    with tempfile.TemporaryFile("w+") as i, tempfile.TemporaryFile("w+") as o, tempfile.TemporaryFile("w+") as e:
        i.write(script)
        i.seek(0)
        t0 = time.monotonic()
        p = subprocess.Popen(shell_args(), stdin=i, stdout=o, stderr=e, env=dict(os.environ, **(env or {})))
        rc = None
        while True:  # wait4 gives this child's own peak RSS (RUSAGE_CHILDREN would be the max of all)
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                rc = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() - t0 > timeout:
                p.kill()
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.02)
        p.returncode = rc if rc is not None else -9  # reaped here: keep Popen from waiting again
        secs = time.monotonic() - t0
        o.seek(0)
        e.seek(0)
        return rc, o.read(), e.read(), ru.ru_maxrss / 1024.0, secs


def datasets(tmp, vtkhdf=True):
    """$VDSQL_TESTDATA, or the test datasets generated under tmp (tests/gen: OpenVDS,
    LINDI, and VTKHDF unless vtkhdf is false)."""
    ds = os.environ.get("VDSQL_TESTDATA")
    if ds:
        return ds
    ds = os.path.join(tmp, "ds")
    subprocess.run(["python3", os.path.join(TOP, "tests/gen/mkvds.py"), "tests", ds], check=True, capture_output=True)
    subprocess.run(["python3", os.path.join(TOP, "tests/gen/mklindi.py"), "tests", os.path.join(ds, "lindi")],
                   check=True, capture_output=True)
    if vtkhdf:
        subprocess.run([os.path.join(TOP, "build/mkvtkhdf"), os.path.join(ds, "vtkhdf")], check=True,
                       capture_output=True)
    return ds


class Nginx:
    """scripts/nginx-test-server serving root on 127.0.0.1, its logs under state:
    started, url (http://127.0.0.1:PORT), error (why it did not start); stop() is safe
    whether or not it started."""

    def __init__(self, root, state):
        self.srv, self.state = os.path.join(TOP, "scripts", "nginx-test-server"), state
        r = subprocess.run([self.srv, "start", root, state], capture_output=True, text=True)
        self.started, self.error = r.returncode == 0, r.stderr.strip()
        self.url = "http://127.0.0.1:%s" % r.stdout.split()[0] if self.started else None

    def stop(self):
        if self.started:
            subprocess.run([self.srv, "stop", self.state], capture_output=True)
            self.started = False


class FaultProxy:
    """tests/faultproxy.py in front of 127.0.0.1:upstream: port; arm(**settings) (the
    relay's /_fault/arm query), off(), stats(), stop()."""

    def __init__(self, upstream):
        import sys as _sys
        self.p = subprocess.Popen([_sys.executable, os.path.join(TOP, "tests", "faultproxy.py"), str(upstream), "3600"],
                                  stdout=subprocess.PIPE, text=True)
        self.port = int(self.p.stdout.readline())

    def call(self, path, data=None):
        import urllib.request
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.port, path), data=data, timeout=30) as r:
            return r.read()

    def arm(self, **a):
        import urllib.parse
        self.call("/_fault/arm?" + urllib.parse.urlencode(a), b"")

    def off(self):
        self.call("/_fault/off", b"")

    def stats(self):
        return json.loads(self.call("/_fault/stats"))

    def stop(self):
        self.p.kill()
        self.p.wait()


class _EnvServer:
    """A scripts/*-test-server that prints KEY=VALUE lines on start: started, error (why
    it did not start, naming its log), env (those lines as a dict, plus extra), state (its
    directory: a fresh temp dir unless given, removed at stop when all went well). Use as
    a context manager, or call stop(): safe whether or not it started."""

    def __init__(self, script, state=None, extra=None, timeout=120):
        import tempfile
        self.srv = os.path.join(TOP, "scripts", script)
        self.own = state is None
        self.state = state or tempfile.mkdtemp(prefix="vdsql-%s." % script.split("-")[0])
        try:
            r = subprocess.run([self.srv, "start", self.state], capture_output=True, text=True, timeout=timeout)
            self.started, self.error = r.returncode == 0, r.stderr.strip()
            out = r.stdout
        except subprocess.TimeoutExpired:
            subprocess.run([self.srv, "stop", self.state], capture_output=True)
            self.started, self.error, out = False, "%s start took over %d s (logs in %s)" % (script, timeout, self.state), ""
        self.env = dict(line.split("=", 1) for line in out.splitlines() if "=" in line) if self.started else {}
        if self.started:
            self.env.update(extra or {})

    def stop(self):
        if self.started:
            subprocess.run([self.srv, "stop", self.state], capture_output=True)
            self.started = False
            if self.own:
                import shutil
                shutil.rmtree(self.state, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Radosgw(_EnvServer):
    """Ceph radosgw (S3, SigV4 checked) on 127.0.0.1 (scripts/radosgw-test-server):
    endpoint (http://127.0.0.1:PORT, path style), key, secret, region, bucket (created,
    empty); env holds AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
    AWS_REGION, AWS_DEFAULT_REGION, S3_BUCKET, and keeps the user's ~/.aws out of awscli
    and boto3."""

    def __init__(self, state=None):
        super().__init__("radosgw-test-server", state,
                         {"AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
                          "AWS_EC2_METADATA_DISABLED": "true"})
        e = self.env
        self.endpoint, self.key, self.secret = e.get("AWS_ENDPOINT_URL"), e.get("AWS_ACCESS_KEY_ID"), e.get("AWS_SECRET_ACCESS_KEY")
        self.region, self.bucket = e.get("AWS_REGION"), e.get("S3_BUCKET")


class Azurite(_EnvServer):
    """Azurite (Azure Blob, Shared Key and SAS checked) on 127.0.0.1
    (scripts/azurite-test-server): endpoint (http://127.0.0.1:PORT/ACCOUNT, path style),
    account, key (random, base64), container (created, empty); env holds
    AZURE_STORAGE_CONNECTION_STRING (with BlobEndpoint), AZURE_STORAGE_ACCOUNT,
    AZURE_STORAGE_KEY, AZURE_BLOB_ENDPOINT, AZURE_CONTAINER."""

    def __init__(self, state=None):
        super().__init__("azurite-test-server", state)
        e = self.env
        self.endpoint, self.account, self.key = e.get("AZURE_BLOB_ENDPOINT"), e.get("AZURE_STORAGE_ACCOUNT"), e.get("AZURE_STORAGE_KEY")
        self.container = e.get("AZURE_CONTAINER")
