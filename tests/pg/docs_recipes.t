#!/usr/bin/env python3
"""docs/postgresql.md's "Several servers" recipe as written, as TAP: its SQL blocks are
taken from the file, in order (1. a shard's catalog and views, the role the coordinator
logs in as; 2. the coordinator; 3. the query), each @NAME@ marker (only those the
section's table lists) replaced, nothing else, and run on three temporary clusters on
127.0.0.1. The shards' datasets are their own files (an audit lists a dataset's
objects, which http cannot: the role needs pg_read_server_files); the role also reads
one over http through its grant of vdsql_network. The query's answer must be the
generator's (tests/gen/mkvds.py audit), so the docs cannot drift from what runs; without
the recipe's grants it fails on the shards."""
import collections
import json
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from pgtest import cluster, data, done, env, ok, readable, run, stop, top, work  # noqa: E402
sys.path.insert(0, os.path.dirname(here))
from taplib import Nginx  # noqa: E402

LAYER = 'Dimensions_012LOD0'


def section(text, title):
    a = text.index('\n## ' + title + '\n')
    b = text.find('\n## ', a + 1)
    return text[a:b if b > 0 else len(text)]


def psql_script(script, e):
    return run(['psql', '-X', '-q', '-A', '-t', '-F', '|', '-v', 'ON_ERROR_STOP=1', '-f', '-'], input=script, env=e)


ng = None
try:
    doc = section(open(os.path.join(top, 'docs/postgresql.md')).read(), 'Several servers')
    blocks = re.findall(r'```sql\n(.*?)```', doc, re.S)
    documented = set(re.findall(r'`(@[A-Z0-9_]+@)`', doc))
    used = set(re.findall(r'@[A-Z0-9_]+@', ''.join(blocks)))
    ok(len(blocks) == 4, f'the section has the four SQL blocks of the recipe ({len(blocks)})', '\n---\n'.join(blocks))
    ok(used and used <= documented, f'every marker of its blocks is in its table of markers: {sorted(used)}',
       f'undocumented: {sorted(used - documented)}')
    shard_sql, role_sql, coord_sql, query_sql = (blocks + ['', '', '', ''])[:4]

    # the datasets: two copies of the audit dataset per shard, and what the generator says
    spec = None
    for k in (1, 2):
        for name in ('a', 'b'):
            d = os.path.join(data, 'recipe', f'shard{k}', name)
            g = run([sys.executable, 'tests/gen/mkvds.py', 'audit', d], cwd=top)
            spec = spec or json.loads(g.stdout)
    readable(os.path.join(data, 'recipe'))
    want = collections.Counter()
    for r in spec['layers'][LAYER]['rows'].values():
        want[r['verdict']] += 4  # four datasets
    want = sorted(f'{v}|{n}' for v, n in want.items())

    ng = Nginx(data, os.path.join(work, 'nginx'))
    ok(ng.started, 'nginx serves the datasets on 127.0.0.1', ng.error)
    shards = {1: cluster('shard1'), 2: cluster('shard2')}
    where = {k: os.path.join(data, 'recipe', f'shard{k}') for k in shards}
    over_http = f"SELECT count(*) FROM vds_chunks('{ng.url}/recipe/shard1/a', '{LAYER}')"
    n_chunks = str(spec['layers'][LAYER]['count'])
    marks = {'@SHARD_DB@': 'postgres', '@AUDITOR_PASSWORD@': 'auditor-secret'}
    for k, e in shards.items():
        marks[f'@SHARD{k}_HOST@'] = '127.0.0.1'
        marks[f'@SHARD{k}_PORT@'] = e['PGPORT']

    def fill(sql, **extra):
        m = dict(marks, **extra)
        return re.sub(r'@[A-Z0-9_]+@', lambda x: m.get(x.group(0), x.group(0)), sql)

    for k, e in shards.items():
        r = psql_script(fill(shard_sql + role_sql, **{'@SHARD@': str(k), '@DATASETS@': where[k]}), e)
        ok(r.returncode == 0, f'shard {k}: step 1 as written', r.stderr)
    r = psql_script(fill(coord_sql), env)
    ok(r.returncode == 0, 'the coordinator: step 2 as written', r.stderr)
    r = psql_script(fill(query_sql), env)
    got = sorted(x for x in r.stdout.split() if '|' in x)
    ok(r.returncode == 0 and got == want, 'step 3 as written: the audit over both shards is the generator\'s: '
       + ', '.join(want), f'{got}\n{r.stderr}')

    auditor = dict(shards[1], PGUSER='auditor')
    r = psql_script(over_http + ';', auditor)
    ok(r.returncode == 0 and r.stdout.split() == [n_chunks], f'the role of step 1 reads a dataset over http '
       f'({n_chunks} chunks): its vdsql_network', r.stdout + r.stderr)

    # what the grants are for: without them the same query fails on the shards
    for k, e in shards.items():
        psql_script('REVOKE vdsql_network FROM auditor; REVOKE pg_read_server_files FROM auditor;', e)
    r = psql_script(fill(query_sql), env)
    ok(r.returncode != 0 and 'needs the privileges of pg_read_server_files' in r.stderr,
       'without the grants of step 1 the query fails on the shard: "needs the privileges of pg_read_server_files"', r.stderr)
    r = psql_script(over_http + ';', auditor)
    ok(r.returncode != 0 and 'needs the privileges of vdsql_network' in r.stderr,
       'and a dataset over http: "needs the privileges of vdsql_network"', r.stderr)
finally:
    if ng:
        ng.stop()
    stop()
done()
