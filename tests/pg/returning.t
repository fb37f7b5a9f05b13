#!/usr/bin/env python3
"""What PostgreSQL users rely on in the foreign tables (issue 29, item 4), as TAP:
  - RETURNING: DELETE ... RETURNING on lindi_tar and vtkhdf_main gives the deleted rows'
    values (read before, from Python's tarfile and h5py); INSERT ... RETURNING the derived
    columns (lindi_tar's size and offsets: tarfile's size, offset and offset_data after
    COMMIT; vtkhdf_main's stored: h5py's virtual source names; lindi_refs' kind: the JSON
    of lindi.json; vds_chunks' page, status, hash and key: the page entries in the files
    after COMMIT);
  - a NULL key (lindi_tar name, vtkhdf_main file, lindi_refs key, vds_chunks chunk) or a
    NULL lindi_tar / vds_chunks data is 23502 (not_null_violation), also under ON CONFLICT
    DO NOTHING and on_conflict 'ignore', and nothing is written (tarfile, os.walk);
  - WHERE url IN (...) and url = ANY($1) on vds_chunks and vds_layers: the rows of each
    url's own scan (the function's, once per distinct url; NULL and repeats matching
    nothing more), and the requests of the scans of each url alone (vdsql_stats);
  - EXPLAIN VERBOSE's Output of a foreign scan lists only the columns the query reads,
    below a GROUP BY too (where PostgreSQL otherwise hands the scan the whole row)."""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from pgtest import data, done, env, ok, psql, run, stop, vtkhdf_parts, work  # noqa: E402

L0 = 'Dimensions_012LOD0'


def psql_v(sql):
    """psql with errors in verbose form (their SQLSTATE)."""
    return run(['psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose', '-c', sql], env=env)


def members(path):
    """name -> (size, header offset, data offset) of the live members, by tarfile (the last copy)."""
    out = {}
    with tarfile.open(path) as t:
        for m in t.getmembers():
            if not m.name.startswith('.trash/') and m.name not in ('.tar_index.json', '.tar_entry.json', 'lindi.json'):
                out[m.name] = (m.size, m.offset, m.offset_data)
    return out


def mine(path):
    if os.getuid() == 0:
        subprocess.run(['chown', '-R', 'postgres:postgres', path])


w = os.path.join(work, 'ret')
os.makedirs(w)
os.chmod(w, 0o777)
mine(w)
a = os.path.join(w, 'a.lindi.tar')
try:
    r = psql("CREATE EXTENSION vdsql; CREATE SERVER s FOREIGN DATA WRAPPER vdsql; CREATE SCHEMA v; "
             "IMPORT FOREIGN SCHEMA vdsql FROM SERVER s INTO v; "
             "CREATE FOREIGN TABLE t (name text, data bytea, size bigint, header_offset bigint, data_offset bigint) "
             f"SERVER s OPTIONS (relation 'lindi_tar', url '{a}'); "
             "INSERT INTO t(name, data) VALUES ('x', 'hello'), ('y', 'abc')")
    ok(r.returncode == 0 and sorted(members(a)) == ['x', 'y'], 'a lindi_tar foreign table with two members', r.stderr)

    # ---- RETURNING ----
    r = psql("INSERT INTO t(name, data) VALUES ('ret1', decode(repeat('ab', 700), 'hex')), ('ret2', '') "
             "RETURNING name, size, header_offset, data_offset")
    m = members(a)
    want = [f"{n}|{m[n][0]}|{m[n][1]}|{m[n][2]}" for n in ('ret1', 'ret2')] if 'ret2' in m else None
    ok(r.returncode == 0 and r.stdout.split() == want and m['ret1'][0] == 700,
       'INSERT ... RETURNING size, header_offset, data_offset: tarfile\'s size, offset and offset_data after COMMIT',
       [r.stdout, r.stderr, want])
    r = psql("BEGIN; INSERT INTO t(name, data) VALUES ('ret3', 'abcd') RETURNING size; ROLLBACK")
    ok(r.returncode == 0 and r.stdout.split() == ['4'] and 'ret3' not in members(a),
       'INSERT ... RETURNING inside a transaction rolled back: the size of the staged member (4)', r.stdout + r.stderr)
    before = members(a)
    r = psql("DELETE FROM t WHERE name IN ('x', 'ret1') RETURNING name, size, header_offset, data_offset, "
             "encode(data, 'escape') = 'hello' OR length(data) = 700")
    got = sorted(r.stdout.split())
    want = sorted(f"{n}|{before[n][0]}|{before[n][1]}|{before[n][2]}|t" for n in ('x', 'ret1'))
    ok(r.returncode == 0 and got == want and sorted(members(a)) == ['ret2', 'y'],
       'DELETE ... RETURNING name, size, offsets, data: the deleted members as tarfile read them before', [got, want, r.stderr])
    r = psql("DELETE FROM t WHERE name = 'ret2' RETURNING t")
    ok(r.returncode == 0 and r.stdout.split() == [f'(ret2,"\\\\x",0,{before["ret2"][1]},{before["ret2"][2]})'],
       'DELETE ... RETURNING the whole row', r.stdout + r.stderr)
    r = psql("DELETE FROM t WHERE name = 'y' RETURNING 1, size * 2")
    ok(r.returncode == 0 and r.stdout.split() == ['1|6'], 'DELETE ... RETURNING an expression of a column (size 3)',
       r.stdout + r.stderr)

    # vtkhdf_main
    parts = vtkhdf_parts()
    main = os.path.join(w, 'main.vtkhdf')
    sources = ("import sys, json, h5py\n"
               "print(json.dumps([v.file_name for v in h5py.File(sys.argv[1], 'r')['VTKHDF/NumberOfPoints'].virtual_sources()]))")
    r = psql(f"CREATE FOREIGN TABLE m (file text, step bigint, time double precision, block text, stored text) SERVER s "
             f"OPTIONS (relation 'vtkhdf_main', url '{main}', layout 'partitions'); "
             "INSERT INTO m(file) VALUES " + ", ".join(f"('{p}')" for p in parts) + " RETURNING file, stored")
    h = run(['/usr/bin/python3', '-c', sources, main])  # Debian's python3-h5py
    try:
        src = json.loads(h.stdout)
    except ValueError:
        src = h.stderr[-300:] or 'h5py failed (install python3-h5py: scripts/install-deps)'
    want = [f"{os.path.realpath(p)}|{s}" for p, s in zip(parts, src)] if isinstance(src, list) else src
    ok(r.returncode == 0 and r.stdout.split() == want and len(want) == 3,
       'vtkhdf_main: INSERT ... RETURNING file, stored: the file canonical, stored as h5py reads the mapping\'s source',
       [r.stdout, r.stderr, want])
    # a committed member's file is its source as HDF5 resolves it: against the main file's folder
    gone = os.path.join(w, src[1]) if isinstance(src, list) else None
    r = psql(f"DELETE FROM m WHERE stored = '{src[1] if gone else ''}' RETURNING file, stored")
    ok(r.returncode == 0 and gone and r.stdout.split() == [f"{gone}|{src[1]}"],
       'vtkhdf_main: DELETE ... RETURNING file, stored: the deleted member\'s source as h5py read it before, and the '
       'file HDF5 resolves it to', [r.stdout, r.stderr, gone])

    # ---- NULL keys: 23502, never skipped ----
    # (and vds_chunks' RETURNING, on the same copy of the survey: see below)
    vds = os.path.join(w, 'survey')
    shutil.copytree(os.path.join(data, 'survey'), vds)
    mine(vds)
    lr = os.path.join(w, 'r.lindi.tar')
    shutil.copy(os.path.join(data, 'lindi', 'small.lindi.tar'), lr)
    mine(lr)
    r = psql(f"CREATE FOREIGN TABLE ch (chunk bigint, data bytea) SERVER s OPTIONS (relation 'vds_chunks', url '{vds}', "
             f"layer '{L0}'); CREATE FOREIGN TABLE lr (key text, kind text, value text) SERVER s "
             f"OPTIONS (relation 'lindi_refs', url '{lr}'); "
             f"CREATE FOREIGN TABLE ti (name text, data bytea) SERVER s OPTIONS (relation 'lindi_tar', url '{a}', "
             "on_conflict 'ignore')")
    ok(r.returncode == 0, 'foreign tables over vds_chunks, lindi_refs and lindi_tar (on_conflict ignore)', r.stderr)
    tar_before, vds_before = members(a), sorted(os.listdir(os.path.join(vds, L0)))
    lr_before = open(lr, 'rb').read()
    cases = [
        ('lindi_tar name', "INSERT INTO t(name, data) VALUES (NULL, 'x')", 'name'),
        ('lindi_tar name, ON CONFLICT DO NOTHING', "INSERT INTO t(name, data) VALUES (NULL, 'x') ON CONFLICT DO NOTHING",
         'name'),
        ("lindi_tar name, on_conflict 'ignore'", "INSERT INTO ti VALUES (NULL, 'x')", 'name'),
        ('lindi_tar data', "INSERT INTO t(name, data) VALUES ('nodata', NULL)", 'data'),
        ('lindi_tar data, ON CONFLICT DO NOTHING', "INSERT INTO t(name) VALUES ('nodata') ON CONFLICT DO NOTHING", 'data'),
        ('vtkhdf_main file', "INSERT INTO m(file) VALUES (NULL) ON CONFLICT DO NOTHING", 'file'),
        ('lindi_refs key', "INSERT INTO lr(key, value) VALUES (NULL, 'v') ON CONFLICT DO NOTHING", 'key'),
        ('vds_chunks chunk', f"INSERT INTO ch SELECT NULL, vds_chunk_data('{vds}', '{L0}', 0) ON CONFLICT DO NOTHING",
         'chunk'),
        ('vds_chunks data', "INSERT INTO ch VALUES (3, NULL) ON CONFLICT DO NOTHING", 'data'),
    ]
    bad = []
    for what, sql, col in cases:
        r = psql_v(sql)
        if r.returncode == 0 or 'ERROR:  23502' not in r.stderr or f'column "{col}"' not in r.stderr:
            bad.append(f'{what}: rc {r.returncode} {r.stdout} {r.stderr.strip()}')
    after = (members(a), sorted(os.listdir(os.path.join(vds, L0))), open(lr, 'rb').read())
    ok(not bad and after == (tar_before, vds_before, lr_before),
       f'a NULL key or NULL data in every writable relation ({len(cases)} cases, ON CONFLICT DO NOTHING and on_conflict '
       '\'ignore\' too): 23502 naming the column, nothing written (tarfile, the layer\'s files, the archive\'s bytes)',
       '\n'.join(bad) + str(after[0]))
    r = psql("INSERT INTO lr(key, value) VALUES ('newkey', 'abc') RETURNING key, kind")
    with tarfile.open(lr) as tf:
        refs = json.loads(tf.extractfile([m for m in tf.getmembers() if m.name == 'lindi.json'][-1]).read())['refs']
    ok(r.returncode == 0 and r.stdout.split() == ['newkey|text'] and refs.get('newkey') == 'abc',
       'lindi_refs: INSERT ... RETURNING kind (derived): text, a plain JSON string in lindi.json (tarfile, json)',
       r.stdout + r.stderr + str(refs.get('newkey')))
    # vds_chunks: INSERT ... RETURNING the derived columns of the chunks put, against the
    # page entries read from the files after COMMIT (spec section 4 for the status)
    src = os.path.join(data, 'survey')
    r = psql(f"CREATE FOREIGN TABLE chr (chunk bigint, page bigint, status text, hash bigint, key text, data bytea) "
             f"SERVER s OPTIONS (relation 'vds_chunks', url '{vds}', layer '{L0}', on_conflict 'replace'); "
             f"INSERT INTO chr(chunk, data) SELECT c, vds_chunk_data('{src}', '{L0}', c) FROM unnest(ARRAY[5, 23]) c "
             "RETURNING chunk, page, status, hash, key")
    ls = [x for x in json.load(open(os.path.join(vds, 'LayerStatus'))) if x['layerName'] == L0][0]
    ps = ls['chunkMetadataPageSize']

    def entry(c):
        page = open(os.path.join(vds, L0, 'ChunkMetadata', str(ls['pageDirectory'][c // ps])), 'rb').read()
        (h,) = struct.unpack_from('<Q', page, (c % ps) * 8)
        st = ('unwritten' if h == 0 else 'novalue' if h == 2 ** 64 - 1 else
              'constant' if h >> 32 == 0x01010101 else 'data')
        return f"{c}|{c // ps}|{st}|{h - 2 ** 64 if h >= 2 ** 63 else h}|{L0}/{c}"

    want = [entry(c) for c in (5, 23)]
    ok(r.returncode == 0 and r.stdout.split() == want and '|data|' in want[1],
       'vds_chunks: INSERT ... RETURNING page, status, hash, key: the page entries read from the files after COMMIT',
       [r.stdout, r.stderr, want])
    r = psql("INSERT INTO t(name, data) VALUES ('z', 'z') ON CONFLICT DO NOTHING; "
             "INSERT INTO t(name, data) VALUES ('z', 'q') ON CONFLICT DO NOTHING")
    ok(r.returncode == 0 and members(a)['z'][0] == 1, 'ON CONFLICT DO NOTHING still keeps what is there for a duplicate',
       r.stderr)

    # ---- url IN (...) ----
    ds = os.path.join(data, 'survey')
    ds2 = os.path.join(w, 'survey2')
    shutil.copytree(ds, ds2)
    stats = "; SELECT sum(requests) FROM vdsql_stats()"

    def one(sql):
        r = psql(sql + stats)
        return (r.stdout.split()[:-1], int(r.stdout.split()[-1])) if r.returncode == 0 else (r.stderr, -1)

    q = "SELECT url = '{a}', chunk, status FROM v.vds_chunks WHERE {w} AND layer = '%s' AND chunk IN (3, 23) ORDER BY 1, 2" % L0
    rows1, n1 = one(q.format(a=ds, w=f"url = '{ds}'"))
    rows2, n2 = one(q.format(a=ds, w=f"url = '{ds2}'"))
    fn = psql(f"SELECT true, chunk, status FROM vds_chunks('{ds}', '{L0}') WHERE chunk IN (3, 23) UNION ALL "
              f"SELECT false, chunk, status FROM vds_chunks('{ds2}', '{L0}') WHERE chunk IN (3, 23) ORDER BY 1, 2").stdout.split()
    both, nb = one(q.format(a=ds, w=f"url IN ('{ds}', '{ds2}')"))
    dup, nd = one(q.format(a=ds, w=f"url IN ('{ds2}', '{ds}', NULL, '{ds2}')"))
    ok(len(fn) == 4 and both == fn and dup == fn and n1 > 0 and nb == n1 + n2 and nd == n1 + n2,
       f'vds_chunks WHERE url IN (two datasets): the functions\' rows of each, and the requests of each url\'s scan '
       f'({n1} + {n2} = {nb}); a repeated url and NULL add no scan and no row ({nd})',
       [fn, both, dup, n1, n2, nb, nd])
    r = psql("PREPARE p(text[]) AS SELECT url, count(*) FROM v.vds_layers WHERE url = ANY($1) GROUP BY 1 ORDER BY 1; "
             + "".join(f"EXECUTE p(ARRAY['{ds}', '{ds2}']); " for _ in range(6)))
    lay = psql(f"SELECT '{ds}', count(*) FROM vds_layers('{ds}') UNION ALL SELECT '{ds2}', count(*) FROM vds_layers('{ds2}') "
               "ORDER BY 1").stdout.split()
    ok(r.returncode == 0 and r.stdout.split() == lay * 6 and len(lay) == 2,
       'vds_layers WHERE url = ANY($1), a prepared statement run 6 times (its generic plan too): each url\'s layers',
       [r.stdout, r.stderr, lay])
    r = psql(f"SELECT count(*) FROM v.vds_chunks WHERE url IN (NULL) AND layer = '{L0}'")
    ok(r.returncode == 0 and r.stdout.split() == ['0'], 'url IN (NULL): no row, no error', r.stdout + r.stderr)
    x = psql(f"EXPLAIN (VERBOSE, COSTS OFF) SELECT chunk FROM v.vds_chunks WHERE url IN ('{ds}', '{ds2}') AND layer = '{L0}'")
    ok(x.returncode == 0 and f"vdsql arguments: url = ANY ('{{{ds},{ds2}}}'::text[]) (a scan per value)" in x.stdout and 'a scan per value' in x.stdout,
       'EXPLAIN VERBOSE shows the url list among the arguments', x.stdout + x.stderr)

    # ---- EXPLAIN Output ----
    # below an aggregate PostgreSQL hands a scan the table's whole row to return (its
    # physical target list) unless the scan says what it returns
    x = psql(f"EXPLAIN (VERBOSE, COSTS OFF) SELECT status, count(*) FROM v.vds_chunks WHERE url = '{ds}' "
             f"AND layer = '{L0}' AND hash > 0 GROUP BY 1").stdout
    out = re.findall(r'Foreign Scan on v\.vds_chunks\n\s+Output: ([^\n]*)', x)
    ok(out in (['vds_chunks.status'], ['status']) and 'vdsql columns: status, hash' in x,
       'EXPLAIN VERBOSE below a GROUP BY: the scan\'s Output is the column the query reads (status), the scan reads hash '
       'for its Filter too', x)
    x = psql(f"EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}'").stdout
    out = re.findall(r'Foreign Scan on v\.vds_chunks\n\s+Output: ([^\n]*)', x)
    ok(out in (['vds_chunks.url'], ['url']) and 'vdsql columns: url\n' in x + '\n',
       'EXPLAIN VERBOSE of count(*): the scan outputs its bound url alone (a copy, no work per row)', x)
    r = psql(f"SELECT count(*) FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}'; "
             f"SELECT count(*) FROM v.vds_chunks WHERE url IN ('{ds}', '{ds2}') AND layer = '{L0}'; "
             f"SELECT count(*) FROM vds_chunks('{ds}', '{L0}')")
    ok(r.returncode == 0 and r.stdout.split() == ['24', '48', '24'],
       'count(*) over the table: the function\'s 24 chunks (48 for two urls)', r.stdout + r.stderr)
    r = psql(f"SELECT status, count(*), sum(i0) FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}' GROUP BY 1 ORDER BY 1")
    f = psql(f"SELECT status, count(*), sum(i0) FROM vds_chunks('{ds}', '{L0}') GROUP BY 1 ORDER BY 1")
    ok(r.returncode == 0 and r.stdout == f.stdout and r.stdout.strip(),
       'a GROUP BY over the narrowed scan: the function\'s rows', r.stdout + r.stderr + f.stdout)
    r = psql(f"SELECT chunk, length(data), md5(data) FROM v.vds_chunks WHERE url = '{ds}' AND layer = '{L0}' "
             "AND chunk IN (5, 23) ORDER BY 1")
    f = psql(f"SELECT c, length(vds_chunk_data('{ds}', '{L0}', c)), md5(vds_chunk_data('{ds}', '{L0}', c)) "
             "FROM unnest(ARRAY[5, 23]) c ORDER BY 1")
    ok(r.returncode == 0 and r.stdout == f.stdout and len(r.stdout.split()) == 2 and '||' not in r.stdout,
       'the table\'s last column (data) through the narrowed scan: vds_chunk_data\'s bytes', r.stdout + r.stderr + f.stdout + f.stderr)
finally:
    stop()
done()
