#!/usr/bin/env python3
"""A bounded run of Debian's sqlsmith (random SQL built from the database's own tables,
functions and operators) against vdsql in PostgreSQL, as TAP (issue 28, item 1):
  - the database holds the tables of IMPORT FOREIGN SCHEMA vdsql (argument columns),
    foreign tables whose options fix their arguments (url, layer) over nginx on 127.0.0.1
    and local paths, named (writable) tables, and a catalog table of the datasets' real
    URLs (http and local) for sqlsmith to join and to pass to the functions;
  - views that call the set-returning functions over the catalog (sqlsmith never calls
    those itself): the scans, vdsql_check, vdsql_check_summary, vdsql_datasets over the
    datasets' folders, and lindi_repair over archives broken as lindi's writer leaves them
    (tests/gen/mkrepair_lindi.py, in this suite's own folder);
  - sqlsmith runs as the least privileged roles that reach vdsql: one with only
    vdsql_network, one with pg_read_server_files too (local paths), one with
    pg_write_server_files as well (lindi_repair's local writes), each with its own seed;
  - the run fails on any backend that ends with a signal and on any SQLSTATE of class XX
    (XX000 an internal error; XX001, "compressed pglz data is corrupt", is how freed memory
    read as a value showed), read from the server log (log_line_prefix shows the SQLSTATE,
    log_min_error_statement the statement, log_error_verbosity the source line), naming
    the query; but for a built-in function the query calls by name whose own code refuses
    its argument (sqlsmith calls intervaltypmodout(13)), printed as a comment; a run that does not end
    in time fails naming the queries still running. Errors by SQLSTATE are printed as
    TAP comments (timeouts and refusals are expected: sqlsmith writes slow and silly SQL).
   env: SQLSMITH_QUERIES (per role, default 2500), SQLSMITH_SEED (default 28),
        SQLSMITH_TIMEOUT (statement_timeout, default 1s), SQLSMITH_KEEP (a folder for the queries
        and logs), PG_CONFIG (tests/pg/pgtest.py)"""
import collections
import os
import re
import shutil
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.dirname(here))
if not shutil.which('sqlsmith'):
    print('not ok 1 - sqlsmith not found (Debian package sqlsmith: scripts/install-deps installs it)\n1..1')
    sys.exit(1)
from pgtest import data, done, env, ok, psql, readable, run, state, stop, top, work  # noqa: E402
from taplib import Nginx  # noqa: E402

queries = int(os.environ.get('SQLSMITH_QUERIES', '2500'))
seed = int(os.environ.get('SQLSMITH_SEED', '28'))
timeout = os.environ.get('SQLSMITH_TIMEOUT', '1s')
keep = os.environ.get('SQLSMITH_KEEP')  # a folder: each role's queries, sqlsmith's output and the server log go there
L0 = 'Dimensions_012LOD0'
# well-formed VTKHDF files of the generator (its hostile ones are tests/vtkhdf/hostile.t's)
VTK = ['image.vtkhdf', 'poly.vtkhdf', 'ug3.vtkhdf', 'ug_temporal.vtkhdf', 'ext_partitions.vtkhdf', 'ext_steps.vtkhdf',
       'ext_composite.vtkhdf']


def server_log():
    return open(os.path.join(open(os.path.join(state, 'rundir')).read().strip(), 'server.log'),
                errors='replace').read()


def entries(log):
    """The server log as entries: (pid, sqlstate, level, text with its continuation lines)."""
    out, cur = [], None
    for line in log.split('\n'):
        m = re.match(r'^\S+ \S+ UTC \[(\d+)\] (\w{5})?: ?(\w+):  (.*)$', line)
        if m:
            cur = [m.group(1), m.group(2) or '', m.group(3), m.group(4)]
            out.append(cur)
        elif cur is not None and line.startswith('\t'):
            cur[3] += '\n' + line[1:]
    return out


def after(ents, i, level):
    """The text of the entry of this level that goes with entry i (same process, next
    entries: LOCATION, STATEMENT), or ''."""
    for e in ents[i + 1:i + 8]:
        if e[0] == ents[i][0] and e[2] == level:
            return e[3]
    return ''


OURS = {f for f in os.listdir(os.path.join(top, 'ext', 'pg')) if f.endswith('.c')}


# PostgreSQL's own internal errors on SQL that needs no extension, each reproduced on a
# cluster without vdsql: (the message, what the statement must hold for it to be that).
# `SELECT unknownin('a') || 'x'` fails so in stock PostgreSQL 15.
PG_OWN = [(r'failed to find conversion function from unknown to', r'\bunknownin\s*\(|\bunknownout\s*\(|as unknown\)')]


def builtin_refusal(message, location, statement):
    """A built-in function that the statement calls by name and whose own code refuses its
    argument with elog (XX000), e.g. intervaltypmodout(13): sqlsmith calls PostgreSQL's
    internal functions directly; or one of PG_OWN. Any other XX000, also in PostgreSQL's
    files (a bad plan made by the wrapper surfaces there), counts."""
    m = re.match(r'^(\w+), (\S+?\.c):\d+$', location.strip())
    if not m or m.group(2) in OURS:
        return False
    if re.search(r'\b%s\s*\(' % m.group(1), statement):
        return True
    return any(re.search(a, message) and re.search(b, statement) for a, b in PG_OWN)


ng = None
try:
    vtk = os.path.join(data, 'vtk')
    os.makedirs(vtk)
    g = run([os.path.join(top, 'build', 'mkvtkhdf'), vtk])
    readable(work)
    ok(g.returncode == 0 and all(os.path.exists(os.path.join(vtk, f)) for f in VTK),
       'build/mkvtkhdf wrote the VTKHDF test files', g.stderr)
    # LINDI archives broken as lindi's writer leaves them, for lindi_repair to rewrite (a
    # folder of this suite's own: the writer role below repairs them for real)
    rep = os.path.join(work, 'repair')
    g = run(['python3', os.path.join(top, 'tests', 'gen', 'mkrepair_lindi.py'), 'catalog', rep])
    readable(work)
    ok(g.returncode == 0, 'tests/gen/mkrepair_lindi.py wrote the archives lindi_repair rewrites', g.stderr)
    repair_urls = sorted(os.path.join(rep, f) for f in os.listdir(rep))
    ng = Nginx(data, os.path.join(work, 'nginx'))
    if not ok(ng.started, 'nginx serves the datasets on 127.0.0.1', ng.error):
        raise SystemExit
    h = ng.url
    survey, hsurvey = os.path.join(data, 'survey'), h + '/survey'
    lin, hlin = os.path.join(data, 'lindi', 'small.lindi.tar'), h + '/lindi/small.lindi.tar'
    cat = []
    for base in (data, h):
        for d in ('survey', 'survey_rle', 'survey_none', 'wavelet'):
            for layer in (L0, 'Dimensions_012LOD1'):
                cat.append((f'{base}/{d}', layer, 'openvds'))
        for f in ('small.lindi.tar', 'small.lindi.json', 'many.lindi.tar', 'templates.lindi.tar'):
            cat.append((f'{base}/lindi/{f}', None, 'lindi'))
        for f in VTK:
            cat.append((f'{base}/vtk/{f}', None, 'vtkhdf'))
    values = ', '.join("('%s', %s, '%s')" % (u, f"'{layer}'" if layer else 'NULL', k) for u, layer, k in cat)
    fixed = [
        ('axes_http', 'dim bigint, name text, samples bigint, url text', f"relation 'vds_axes', url '{hsurvey}'"),
        ('layers_local', 'layer text, compression text, chunk_count bigint, url text', f"relation 'vds_layers', url '{survey}'"),
        ('chunks_http', 'chunk bigint, status text, hash bigint, min0 bigint, max0 bigint, url text, layer text',
         f"relation 'vds_chunks', url '{hsurvey}', layer '{L0}'"),
        ('pages_local', 'page bigint, first_chunk bigint, last_chunk bigint, url text, layer text',
         f"relation 'vds_pages', url '{survey}', layer '{L0}'"),
        ('samples_http', 'sample bigint, x bigint, value double precision, url text, layer text, chunk bigint',
         f"relation 'vds_samples', url '{hsurvey}', layer 'Dimensions_012LOD1', chunk '0'"),
        ('files_http', 'name text, size bigint, url text', f"relation 'lindi_files', url '{hlin}'"),
        ('members_local', 'name text, type text, checksum_ok bigint, url text', f"relation 'tar_members', url '{lin}'"),
        ('refs_named', 'key text, kind text, value text, "offset" bigint', f"relation 'lindi_refs', url '{lin}'"),
        ('tar_named', 'name text, data bytea, size bigint', f"relation 'lindi_tar', url '{lin}'"),
        ('parts_local', 'block text, step bigint, partition bigint, n_points bigint, status text, url text',
         f"relation 'vtkhdf_partitions', url '{vtk}/ext_partitions.vtkhdf'"),
        ('arrays_http', 'block text, name text, components bigint, url text',
         f"relation 'vtkhdf_arrays', url '{h}/vtk/ug3.vtkhdf'"),
    ]
    for q in ("ALTER SYSTEM SET log_line_prefix = '%m [%p] %e: '", "ALTER SYSTEM SET log_min_error_statement = 'error'",
              "ALTER SYSTEM SET log_error_verbosity = 'verbose'", 'SELECT pg_reload_conf()'):
        r = psql(q)
        ok(r.returncode == 0, q, r.stderr)
    setup = ("CREATE EXTENSION vdsql; CREATE SERVER vdsql FOREIGN DATA WRAPPER vdsql; CREATE SCHEMA vdsql_tables; "
             "IMPORT FOREIGN SCHEMA vdsql FROM SERVER vdsql INTO vdsql_tables; CREATE SCHEMA fixed; "
             + ''.join(f'CREATE FOREIGN TABLE fixed.{n} ({cols}) SERVER vdsql OPTIONS ({o}); ' for n, cols, o in fixed)
             + f'CREATE TABLE catalog (url text, layer text, kind text); INSERT INTO catalog VALUES {values}; ANALYZE catalog; '
             # the set-returning functions and parameterized scans, which sqlsmith never calls itself, as views
             # checked as their caller (security_invoker): vdsql's privilege checks see sqlsmith's role
             "CREATE VIEW cat_layers WITH (security_invoker) AS SELECT c.url, l.* FROM catalog c "
             "CROSS JOIN LATERAL vds_layers(c.url) l WHERE c.kind = 'openvds'; "
             "CREATE VIEW cat_chunks WITH (security_invoker) AS SELECT c.url, c.layer, ch.chunk, ch.status, ch.hash "
             "FROM catalog c JOIN vdsql_tables.vds_chunks ch ON ch.url = c.url AND ch.layer = c.layer; "
             "CREATE VIEW cat_files WITH (security_invoker) AS SELECT c.url, f.name, f.size FROM catalog c "
             "JOIN vdsql_tables.lindi_files f ON f.url = c.url WHERE c.kind = 'lindi'; "
             "CREATE VIEW cat_parts WITH (security_invoker) AS SELECT c.url, p.* FROM catalog c "
             "CROSS JOIN LATERAL vtkhdf_partitions(c.url) p WHERE c.kind = 'vtkhdf'; "
             # the health checks over the catalog, the walk of the datasets' folders, and the repair
             "CREATE VIEW cat_check WITH (security_invoker) AS SELECT c.url, k.* FROM catalog c "
             "CROSS JOIN LATERAL vdsql_check(c.url) k; "
             "CREATE VIEW cat_summary WITH (security_invoker) AS SELECT c.url, k.items, k.problems, k.worst "
             "FROM catalog c CROSS JOIN LATERAL vdsql_check_summary(c.url) k; "
             f"CREATE VIEW cat_datasets WITH (security_invoker) AS SELECT w.prefix, d.* FROM (VALUES ('{data}/'), "
             f"('{data}/lindi/'), ('{vtk}/')) w(prefix) CROSS JOIN LATERAL vdsql_datasets(w.prefix) d; "
             "CREATE VIEW cat_repair WITH (security_invoker) AS SELECT a.url, r.* FROM (VALUES "
             + ", ".join("('%s')" % u for u in repair_urls)
             + ") a(url) CROSS JOIN LATERAL lindi_repair(a.url) r; ")
    # the least privileged roles that reach vdsql: the network, local reads, and local writes
    # (lindi_repair rewrites local archives: pg_read_server_files and pg_write_server_files)
    roles = [('smith_net', 'vdsql_network'), ('smith_read', 'vdsql_network, pg_read_server_files'),
             ('smith_write', 'vdsql_network, pg_read_server_files, pg_write_server_files')]
    for role, grants in roles:
        setup += (f"CREATE ROLE {role} LOGIN; GRANT {grants} TO {role}; GRANT USAGE ON FOREIGN SERVER vdsql TO {role}; "
                  f"GRANT USAGE ON SCHEMA vdsql_tables, fixed TO {role}; "
                  f"GRANT SELECT ON ALL TABLES IN SCHEMA vdsql_tables, fixed, public TO {role}; "
                  f"GRANT INSERT, DELETE ON fixed.refs_named, fixed.tar_named TO {role}; "
                  f"ALTER ROLE {role} SET statement_timeout = '{timeout}'; ALTER ROLE {role} SET lock_timeout = '1s'; "
                  f"ALTER ROLE {role} SET search_path = public, fixed, vdsql_tables; ")
    r = psql(setup)
    ok(r.returncode == 0, f'a database of {len(cat)} catalog URLs, IMPORT FOREIGN SCHEMA vdsql, {len(fixed)} tables with '
       f'fixed options, roles {", ".join(x for x, _ in roles)}', r.stderr)

    total, t0 = 0, time.time()
    for i, (role, grants) in enumerate(roles):
        log0 = len(server_log())
        target = f"host={env['PGHOST']} port={env['PGPORT']} user={role} dbname={env['PGDATABASE']}"
        s = seed + i
        t1 = time.time()
        try:
            p = subprocess.run(['sqlsmith', f'--target={target}', f'--seed={s}', f'--max-queries={queries}', '--verbose',
                                '--dump-all-queries', '--exclude-catalog'], capture_output=True, text=True, timeout=60 + queries)
            rc, out, dump = p.returncode, p.stderr, p.stdout
        except subprocess.TimeoutExpired as e:
            rc, out, dump = 'timeout', (e.stderr or b'').decode(errors='replace'), (e.stdout or b'').decode(errors='replace')
        secs = time.time() - t1
        act = psql(f"SELECT now() - query_start, query FROM pg_stat_activity WHERE usename = '{role}' AND state = 'active'")
        log = server_log()[log0:]
        ents = entries(log)
        if keep:
            for name, text in (('queries.sql', dump), ('sqlsmith.log', out), ('server.log', log)):
                with open(os.path.join(keep, f'{role}.{name}'), 'w') as f:
                    f.write(text)
        bysql = collections.Counter(e[1] for e in ents if e[2] in ('ERROR', 'FATAL', 'PANIC'))
        print(f'# {role} (seed {s}): {queries} queries asked in {secs:.0f} s; errors by SQLSTATE: '
              + ', '.join(f'{k} {v}' for k, v in bysql.most_common()))
        total += queries
        ok(rc == 0, f'sqlsmith as {role} (--seed={s} --max-queries={queries}) ran to its end',
           f'exit {rc}\n' + out[-1500:] + '\nstill running:\n' + act.stdout)
        crashes = [(e[3], ents[j + 1][3] if j + 1 < len(ents) else '') for j, e in enumerate(ents)
                   if e[2] == 'LOG' and re.search(r'terminated by (signal|exception)', e[3])]
        ok(not crashes, f'as {role}: no backend ended with a signal', '\n'.join(f'{a}\n{b}' for a, b in crashes[:3]))
        internal = [(e[3], after(ents, j, 'LOCATION'), after(ents, j, 'STATEMENT')) for j, e in enumerate(ents)
                    if e[1].startswith('XX') and e[2] in ('ERROR', 'FATAL', 'PANIC')]
        for a, loc, q in internal:
            if builtin_refusal(a, loc, q):
                print(f'# not counted: {a} ({loc}): PostgreSQL\'s own, on a built-in the query calls')
        internal = [x for x in internal if not builtin_refusal(*x)]
        ok(not internal, f'as {role}: no internal error (SQLSTATE class XX: XX000, XX001 data corrupted ...)',
           '\n'.join(f'{a} ({loc})\n  query: {q}' for a, loc, q in internal[:3]))
    r = psql('SELECT 1')
    ok(r.returncode == 0 and r.stdout.strip() == '1', 'the cluster still answers', r.stderr)
    print(f'# {total} queries in {time.time() - t0:.0f} s')
finally:
    if ng:
        ng.stop()
    stop()
done()
