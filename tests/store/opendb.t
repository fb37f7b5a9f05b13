#!/usr/bin/env python3
"""Opening a database never writes a file or reaches a URL, as TAP. A crafted database
holds a writable lindi_tar table on an archive that does not exist, one on an archive
that does, and views over them and over remote relations; another process opens it and
runs what a curious user (or an application listing a schema) would run. Afterwards no
archive, journal or file has appeared, every file is byte-for-byte as before, no lock is
held, and a listener on 127.0.0.1 that stands for every URL in the database was never
connected to.
   env: SO, SQLITE3 (as tests/taplib.py)"""
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import TOP, ok, plan, shell_args, sql  # noqa: E402


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def listing(d):
    return sorted(os.listdir(d))


class Listener:
    """Counts connections on 127.0.0.1 (and answers none), for the URLs in the database."""

    def __init__(self):
        self.s = socket.socket()
        self.s.bind(("127.0.0.1", 0))
        self.s.listen(16)
        self.s.settimeout(0.2)
        self.port = self.s.getsockname()[1]
        self.count = 0
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop:
            try:
                c, _ = self.s.accept()
                self.count += 1
                c.close()
            except OSError:
                pass

    def close(self):
        self.stop = True
        self.t.join(2)
        self.s.close()


tmp = tempfile.mkdtemp(prefix="vdsql-opendb.")
srv = Listener()
try:
    data = os.path.join(tmp, "data")
    os.mkdir(data)
    subprocess.run([sys.executable, os.path.join(TOP, "tests", "gen", "mklindi.py"), "tests", data], check=True,
                   capture_output=True)
    have = os.path.join(data, "small.lindi.tar")
    never = os.path.join(data, "never.lindi.tar")
    url = "http://127.0.0.1:%d" % srv.port
    db = os.path.join(tmp, "crafted.db")
    p = subprocess.run(shell_args()[:-1] + [db], capture_output=True, text=True, input=
            "CREATE VIRTUAL TABLE a USING lindi_tar('%s');\n"
            "CREATE VIRTUAL TABLE r USING lindi_refs('%s');\n"
            "CREATE VIRTUAL TABLE e USING lindi_tar('%s');\n"
            "CREATE VIEW v AS SELECT * FROM a;\n"
            "CREATE VIEW ve AS SELECT count(*) FROM e;\n"
            "CREATE VIEW w AS SELECT * FROM lindi_files('%s/x.lindi.tar');\n"
            "CREATE VIEW x AS SELECT * FROM vds_layers('%s/ds');\n"
            "CREATE VIEW y AS SELECT * FROM vtkhdf_partitions('%s/x.vtkhdf');\n"
            "CREATE TABLE t(k);\n"
            "CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO a(name, data) VALUES ('from-trigger', 'x'); END;\n"
            % (never, never, have, url, url, url))
    ok(p.returncode == 0 and not p.stderr, "the crafted database is made", p.stderr)
    ok(not os.path.exists(never), "making it (CREATE VIRTUAL TABLE on a missing archive) created no archive")
    before = {n: digest(os.path.join(data, n)) for n in listing(data)}
    db_before = digest(db)
    srv.count = 0

    # a second process opens it and looks around; it keeps the database open meanwhile
    q = subprocess.Popen(shell_args()[:-1] + [db], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    q.stdin.write(".tables\n.schema\nSELECT count(*) FROM sqlite_master;\nPRAGMA integrity_check;\n"
                  "SELECT * FROM v;\nSELECT * FROM ve;\nSELECT * FROM w;\nSELECT * FROM x;\nSELECT * FROM y;\n"
                  "SELECT 'opened';\n")
    q.stdin.flush()
    line = ""
    while line.strip() != "opened":
        line = q.stdout.readline()
        if not line:
            break
    ok(line.strip() == "opened", "another process opens it and runs .tables, .schema, views over every relation")
    ok(not os.path.exists(never) and listing(data) == sorted(before),
       "no archive, journal or other file appeared", sorted(set(listing(data)) - set(before)))
    ok(all(digest(os.path.join(data, n)) == h for n, h in before.items()), "every existing file is unchanged")
    ok(srv.count == 0, "no URL named in the database was connected to (%d connections)" % srv.count)
    # while that process still has the database open, a writer takes the existing archive's lock
    w = sql("SELECT vdsql_config('lock_timeout', 0);\nCREATE VIRTUAL TABLE b USING lindi_tar('%s');\n"
            "INSERT INTO b(name, data) VALUES ('n', 'x');" % have)
    ok(w.returncode == 0 and not w.stderr, "opening the database took no lock on the archive its table names",
       w.stderr)
    q.stdin.close()
    err = q.stderr.read()
    q.wait(timeout=30)
    ok("unsafe use of virtual table" in err, "views over vdsql relations are refused when the database is opened "
       "(DIRECTONLY)", err)
    ok(digest(db) == db_before, "the database file itself is unchanged")
finally:
    srv.close()
    shutil.rmtree(tmp)
sys.exit(plan())
