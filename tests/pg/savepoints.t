#!/usr/bin/env python3
"""Savepoints around vds_chunks INSERTs through the foreign-data wrapper, as TAP (issue 29,
item 1): ROLLBACK TO and PL/pgSQL exception blocks take back exactly what their
subtransaction put, and the transaction goes on and commits.

A foreign table over a new OpenVDS dataset with the test survey's layout (vds_create,
Zip), filled with chunks of the survey through vds_chunk_data; every check of what is
stored reads the files with vdstarget's independent reader (page entries, objects decoded
from the spec, compared with the survey's objects decoded the same way) and lists the
staging folder and the chunk keys with os.walk.
  - the issue's transaction: chunk 0, SAVEPOINT, chunk 1, ROLLBACK TO, chunk 2, COMMIT;
  - one chunk at three levels (on_conflict 'replace'): ROLLBACK TO the middle savepoint
    commits the outer level's bytes; ROLLBACK TO the inner one and RELEASE the middle's;
  - a PL/pgSQL exception block around a failing INSERT: its rows are taken back, the DO
    commits the rest; then INSERT ... ON CONFLICT DO NOTHING inserts a valid row (INSERT 0
    1), also one that the block took back."""
import os
import shutil
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(os.path.dirname(here), 'openvds'))
sys.path.insert(0, os.path.dirname(here))
from pgtest import data, done, env, ok, psql, run, sqlite, stop, work  # noqa: E402
from vdstarget import LayerState, Target  # noqa: E402

L = 'Dimensions_012LOD0'
root = os.path.join(work, 'sp')
t = Target('file', root)
src, dst = t.url('src'), t.url('dst')


def state(name):
    return LayerState(t, name, L, 0, method='Zip')


def psql_v(sql):
    """psql with command tags (INSERT 0 1) and errors with their SQLSTATE."""
    return run(['psql', '-X', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose', '-c', sql], env=env)


def leftovers():
    out = []
    for d, _, fs in os.walk(dst):
        for f in fs:
            k = os.path.relpath(os.path.join(d, f), dst)
            if k.startswith('.vdsql/') and not k.endswith('/commit'):
                out.append(k)
    s = state('dst')
    layer = os.path.join(dst, L)
    for f in os.listdir(layer) if os.path.isdir(layer) else []:
        if f.isdigit() and int(f) not in s.entries:
            out.append('%s/%s' % (L, f))
    return out


def expect(want, what):
    """The layer holds exactly the survey's chunks want[chunk] at chunk."""
    s, ref = state('dst'), state('src')
    ok(not s.bad, '%s: every page entry agrees with its object' % what, s.bad)
    got = sorted(s.entries)
    same = [c for c in want if s.data.get(c) == ref.data[want[c]] and isinstance(ref.data[want[c]], bytes)]
    ok(got == sorted(want) and len(same) == len(want), '%s: chunks %s hold the survey\'s chunks %s' %
       (what, sorted(want), [want[c] for c in sorted(want)]), 'entries %s, right %s' % (got, same))
    lo = leftovers()
    ok(not lo, '%s: nothing staged, no uncommitted object at a chunk key' % what, lo)


def cd(c):
    return "vds_chunk_data('%s', '%s', %d)" % (src, L, c)


try:
    os.makedirs(os.path.dirname(src))
    shutil.copytree(os.path.join(data, 'survey'), src)
    r = sqlite("SELECT vds_create('%s', readfile('%s/VolumeDataLayout'), 'Zip');" % (dst, src))
    ok(r.returncode == 0, 'a new dataset with the survey\'s layout (vds_create, Zip)', r.stderr)
    if os.getuid() == 0:
        subprocess.run(['chown', '-R', 'postgres:postgres', root])
    r = psql("CREATE EXTENSION vdsql; CREATE SERVER s FOREIGN DATA WRAPPER vdsql; "
             f"CREATE FOREIGN TABLE ch (chunk bigint, data bytea) SERVER s OPTIONS (relation 'vds_chunks', "
             f"url '{dst}', layer '{L}'); "
             f"CREATE FOREIGN TABLE chr (chunk bigint, data bytea) SERVER s OPTIONS (relation 'vds_chunks', "
             f"url '{dst}', layer '{L}', on_conflict 'replace')")
    ok(r.returncode == 0, 'foreign tables ch and chr (on_conflict replace) over it', r.stderr)

    # the issue's transaction
    r = psql_v(f"BEGIN; INSERT INTO ch SELECT 0, {cd(0)}; SAVEPOINT s; INSERT INTO ch SELECT 1, {cd(1)}; "
               f"ROLLBACK TO s; INSERT INTO ch SELECT 2, {cd(2)}; COMMIT;")
    tags = ['BEGIN', 'INSERT 0 1', 'SAVEPOINT', 'INSERT 0 1', 'ROLLBACK', 'INSERT 0 1', 'COMMIT']
    ok(r.returncode == 0 and r.stdout.split('\n')[:7] == tags,
       'BEGIN; chunk 0; SAVEPOINT s; chunk 1; ROLLBACK TO s; chunk 2; COMMIT: every statement succeeds, COMMIT '
       'commits', r.stdout + r.stderr)
    expect({0: 0, 2: 2}, 'after the issue\'s transaction')

    # one chunk at three levels (chunks 0, 1, 2, 4, 6 of the survey have one size, 12, 13, 14, 18 another)
    r = psql_v(f"BEGIN; INSERT INTO chr SELECT 4, {cd(4)}; SAVEPOINT s1; INSERT INTO chr SELECT 4, {cd(6)}; "
               f"INSERT INTO ch SELECT 7, {cd(7)}; SAVEPOINT s2; INSERT INTO chr SELECT 4, {cd(1)}; "
               f"INSERT INTO chr SELECT 0, {cd(6)}; ROLLBACK TO s1; COMMIT;")
    ok(r.returncode == 0, 'chunk 4 at three levels, ROLLBACK TO the middle savepoint, COMMIT', r.stderr)
    expect({0: 0, 2: 2, 4: 4}, 'ROLLBACK TO the middle savepoint: the outer level\'s bytes (chunk 4 = survey 4, '
           'chunk 0 as committed, chunk 7 taken back)')
    r = psql_v(f"BEGIN; INSERT INTO chr SELECT 6, {cd(6)}; SAVEPOINT s1; INSERT INTO chr SELECT 6, {cd(1)}; "
               f"SAVEPOINT s2; INSERT INTO chr SELECT 6, {cd(2)}; ROLLBACK TO s2; RELEASE s1; COMMIT;")
    ok(r.returncode == 0, 'chunk 6 at three levels, ROLLBACK TO the inner savepoint, RELEASE, COMMIT', r.stderr)
    expect({0: 0, 2: 2, 4: 4, 6: 1}, 'ROLLBACK TO the inner savepoint: the middle level\'s bytes')

    # a PL/pgSQL exception block around a failing INSERT
    r = psql_v(f"DO $$ BEGIN INSERT INTO ch SELECT 12, {cd(12)}; "
               f"BEGIN INSERT INTO ch SELECT 13, {cd(13)}; INSERT INTO chr SELECT 12, {cd(14)}; "
               f"INSERT INTO ch SELECT 0, {cd(4)}; "
               "EXCEPTION WHEN unique_violation THEN RAISE NOTICE 'caught %', SQLSTATE; END; "
               f"INSERT INTO ch SELECT 14, {cd(14)}; END $$;")
    ok(r.returncode == 0 and 'caught 23505' in r.stderr, 'a DO whose exception block catches 23505 (chunk 0 '
       'written already) commits', r.stdout + r.stderr)
    expect({0: 0, 2: 2, 4: 4, 6: 1, 12: 12, 14: 14}, 'after the exception block: its rows taken back (13 at its '
           'key, 12 replaced), the rest committed')
    r = psql_v(f"INSERT INTO ch SELECT 18, {cd(18)} ON CONFLICT DO NOTHING")
    r2 = psql_v(f"INSERT INTO ch SELECT 13, {cd(13)} ON CONFLICT DO NOTHING")
    r3 = psql_v(f"INSERT INTO ch SELECT 14, {cd(12)} ON CONFLICT DO NOTHING")
    ok(r.returncode == 0 and 'INSERT 0 1' in r.stdout and 'INSERT 0 1' in r2.stdout and 'INSERT 0 0' in r3.stdout,
       'then INSERT ... ON CONFLICT DO NOTHING: a new chunk and the one the block took back are inserted (INSERT 0 '
       '1), a written one is kept (INSERT 0 0)', r.stdout + r.stderr + r2.stdout + r2.stderr + r3.stdout)
    expect({0: 0, 2: 2, 4: 4, 6: 1, 12: 12, 13: 13, 14: 14, 18: 18}, 'after ON CONFLICT DO NOTHING')
finally:
    stop()
    done()
