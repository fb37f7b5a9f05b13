#!/usr/bin/env python3
"""Several servers with stock PostgreSQL 15 (docs/postgresql.md, "Several servers"), as
TAP: three temporary clusters on 127.0.0.1, a coordinator and two shards. Each shard
holds its share of a catalog of OpenVDS datasets and VIEWs doing the lateral vds_audit /
vds_chunks call next to it; the coordinator holds tables PARTITION BY LIST (shard) whose
partitions are postgres_fdw foreign tables over those views (async_capable, fetch_size
10000), reached over TCP on 127.0.0.1.
  - an audit over the partitioned table gives the coordinator's own answer over the whole
    catalog (one server) and the numbers the generator states (tests/gen/mkvds.py);
  - EXPLAIN VERBOSE shows an Async Foreign Scan for each partition;
  - with enable_partitionwise_aggregate and GROUP BY the shard key, each Remote SQL holds
    the count(*) and a GROUP BY (the shards aggregate); without the key, it does not;
  - the shards called vds_audit (pg_stat_user_functions), the coordinator did not;
  - a non-superuser's mapping without a password is refused (postgres_fdw's rule)."""
import collections
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgtest import cluster, data, done, env, ok, readable, run, stop, top  # noqa: E402

AUDIT_COPIES = 4
MANY = [20, 40, 60, 80]


def sql(script, e=None, user=None):
    cmd = ['psql', '-X', '-q', '-A', '-t', '-F', '|', '-v', 'ON_ERROR_STOP=1', '-f', '-']
    if user:
        cmd[1:1] = ['-U', user]
    return run(cmd, input=script, env=e or env)


try:
    shard_env = {1: cluster('shard1'), 2: cluster('shard2')}
    ok(True, f"three clusters on 127.0.0.1: coordinator :{env['PGPORT']}, shards :{shard_env[1]['PGPORT']} "
       f"and :{shard_env[2]['PGPORT']}")

    # the datasets and what the generator says of them
    cat = os.path.join(data, 'catalog')
    os.makedirs(cat)
    spec = json.loads(run([sys.executable, 'tests/gen/mkvds.py', 'audit', os.path.join(cat, 'audit0')], cwd=top).stdout)
    rows = []  # (shard, url, layer)
    verdicts = collections.Counter()
    statuses = collections.Counter()
    for i in range(AUDIT_COPIES):
        if i:
            shutil.copytree(os.path.join(cat, 'audit0'), os.path.join(cat, f'audit{i}'), symlinks=True)
        shard = 1 if i < 3 else 2  # an uneven split: shard 1 has three of them
        for layer, lay in spec['layers'].items():
            rows.append((shard, os.path.join(cat, f'audit{i}'), layer))
            written = 0
            for r in lay['rows'].values():
                verdicts[(shard, r['verdict'])] += 1
                if r['page_status'] != 'unwritten':
                    statuses[(shard, r['page_status'])] += 1
                    written += 1
            statuses[(shard, 'unwritten')] += lay['count'] - written
    for j, n in enumerate(MANY):
        d = os.path.join(cat, f'many{n}')
        run([sys.executable, 'tests/gen/mkvds.py', 'many', str(n), d], cwd=top)
        shard = 1 if j == 0 else 2
        rows.append((shard, d, 'Dimensions_012LOD0'))
        verdicts[(shard, 'ok')] += n
        statuses[(shard, 'data')] += n
    readable(cat)

    def total(counter):
        t = collections.Counter()
        for (_, k), v in counter.items():
            t[k] += v
        return sorted(f'{k}|{v}' for k, v in t.items())

    want_audit, want_status = total(verdicts), total(statuses)
    want_by_shard = sorted(f'{s}|{k}|{v}' for (s, k), v in verdicts.items())

    # each shard: its share and the views doing the lateral call there
    views = """CREATE VIEW audit_here AS
  SELECT c.shard, c.url, c.layer, a.chunk, a.verdict
  FROM catalog_part c CROSS JOIN LATERAL vds_audit(c.url, c.layer) a;
CREATE VIEW chunks_here AS
  SELECT c.shard, c.url, c.layer, ch.chunk, ch.status
  FROM catalog_part c CROSS JOIN LATERAL vds_chunks(c.url, c.layer) ch;
"""
    for k, e in shard_env.items():
        share = ',\n'.join(f"({s}, '{u}', '{lay}')" for s, u, lay in rows if s == k)
        r = sql(f"""CREATE EXTENSION vdsql;
ALTER SYSTEM SET track_functions = 'all';
SELECT pg_reload_conf();
CREATE TABLE catalog_part (shard int, url text, layer text);
INSERT INTO catalog_part VALUES {share};
{views}""", e)
        ok(r.returncode == 0, f'shard {k}: vdsql, its {sum(1 for s, _, _ in rows if s == k)} catalog rows, '
           'the views audit_here and chunks_here', r.stderr)

    # the coordinator: the whole catalog (one server, the reference) and the partitioned tables
    whole = ',\n'.join(f"({s}, '{u}', '{lay}')" for s, u, lay in rows)
    servers = ''.join(f"""CREATE SERVER shard{k} FOREIGN DATA WRAPPER postgres_fdw
  OPTIONS (host '127.0.0.1', port '{e['PGPORT']}', dbname 'postgres', async_capable 'true', fetch_size '10000');
CREATE USER MAPPING FOR postgres SERVER shard{k} OPTIONS (user 'postgres');
""" for k, e in shard_env.items())
    parts = ''.join(f"""CREATE FOREIGN TABLE all_audit_{k} PARTITION OF all_audit FOR VALUES IN ({k})
  SERVER shard{k} OPTIONS (table_name 'audit_here');
CREATE FOREIGN TABLE all_chunks_{k} PARTITION OF all_chunks FOR VALUES IN ({k})
  SERVER shard{k} OPTIONS (table_name 'chunks_here');
""" for k in shard_env)
    r = sql(f"""CREATE EXTENSION vdsql;
CREATE EXTENSION postgres_fdw;
ALTER SYSTEM SET track_functions = 'all';
SELECT pg_reload_conf();
CREATE TABLE catalog (shard int, url text, layer text);
INSERT INTO catalog VALUES {whole};
{servers}
CREATE TABLE all_audit (shard int, url text, layer text, chunk bigint, verdict text) PARTITION BY LIST (shard);
CREATE TABLE all_chunks (shard int, url text, layer text, chunk bigint, status text) PARTITION BY LIST (shard);
{parts}""")
    ok(r.returncode == 0, 'coordinator: postgres_fdw, a SERVER and USER MAPPING per shard, all_audit and all_chunks '
       'PARTITION BY LIST (shard) of foreign tables over the shards\' views', r.stderr)

    # the same answers as one server over the whole catalog, and as the generator
    one_audit = sql("SELECT a.verdict, count(*) FROM catalog c, vds_audit(c.url, c.layer) a GROUP BY 1")
    dist_audit = sql("SELECT verdict, count(*) FROM all_audit GROUP BY 1")
    ok(dist_audit.returncode == 0 and sorted(dist_audit.stdout.split()) == sorted(one_audit.stdout.split()) == want_audit,
       'the audit over both shards = one server over the whole catalog = the generator: ' + ', '.join(want_audit),
       f'shards {sorted(dist_audit.stdout.split())} {dist_audit.stderr}\none server {sorted(one_audit.stdout.split())} '
       f'{one_audit.stderr}\ngenerator {want_audit}')
    one_status = sql("SELECT ch.status, count(*) FROM catalog c, vds_chunks(c.url, c.layer) ch GROUP BY 1")
    dist_status = sql("SELECT status, count(*) FROM all_chunks GROUP BY 1")
    ok(dist_status.returncode == 0 and sorted(dist_status.stdout.split()) == sorted(one_status.stdout.split()) == want_status,
       'chunks per status over both shards = one server = the generator: ' + ', '.join(want_status),
       f'shards {dist_status.stdout.split()} {dist_status.stderr}\none server {one_status.stdout.split()}\n'
       f'generator {want_status}')

    # plans
    r = sql("EXPLAIN (VERBOSE, COSTS OFF) SELECT url, chunk, verdict FROM all_audit WHERE verdict <> 'ok'")
    print('\n'.join('# ' + line for line in r.stdout.splitlines()))
    ok(r.returncode == 0 and r.stdout.count('Async Foreign Scan on public.all_audit_') == 2
       and r.stdout.count("WHERE ((verdict <> 'ok'))") == 2,
       'EXPLAIN VERBOSE: an Async Foreign Scan for each partition, the WHERE in each Remote SQL', r.stdout + r.stderr)

    grouped = "SELECT shard, verdict, count(*) FROM all_audit GROUP BY shard, verdict"
    r = sql(f"SET enable_partitionwise_aggregate = on;\nEXPLAIN (VERBOSE, COSTS OFF) {grouped};")
    print('\n'.join('# ' + line for line in r.stdout.splitlines()))
    remote = [line for line in r.stdout.splitlines() if 'Remote SQL:' in line]
    ok(r.returncode == 0 and len(remote) == 2 and all('count(*)' in x and 'GROUP BY' in x for x in remote)
       and r.stdout.count('Async Foreign Scan') == 2,
       'enable_partitionwise_aggregate and GROUP BY the shard key: both Remote SQL hold count(*) and GROUP BY '
       '(Async Foreign Scans): the shards aggregate', r.stdout + r.stderr)
    r2 = sql(f"SET enable_partitionwise_aggregate = on;\n{grouped};")
    ok(r2.returncode == 0 and sorted(r2.stdout.split()) == want_by_shard,
       'and its answer per shard is the generator\'s: ' + ', '.join(want_by_shard), r2.stdout + r2.stderr)
    # totals over the shards: sum the per-shard groups, which the shards compute
    totals = ("SELECT verdict, sum(n) FROM (SELECT shard, verdict, count(*) AS n FROM all_audit "
              "GROUP BY shard, verdict) s GROUP BY verdict")
    r = sql(f"SET enable_partitionwise_aggregate = on;\nEXPLAIN (VERBOSE, COSTS OFF) {totals};\n{totals};")
    print('\n'.join('# ' + line for line in r.stdout.splitlines()))
    remote = [line for line in r.stdout.splitlines() if 'Remote SQL:' in line]
    ok(r.returncode == 0 and len(remote) == 2 and all('GROUP BY' in x for x in remote)
       and sorted(x for x in r.stdout.split() if '|' in x) == want_audit,
       'totals as sums of per-shard groups: the shards still aggregate, and the answer is the generator\'s', r.stdout + r.stderr)
    r = sql("SET enable_partitionwise_aggregate = on;\n"
            "EXPLAIN (VERBOSE, COSTS OFF) SELECT verdict, count(*) FROM all_audit GROUP BY verdict;")
    print('\n'.join('# ' + line for line in r.stdout.splitlines()))
    remote = [line for line in r.stdout.splitlines() if 'Remote SQL:' in line]
    ok(r.returncode == 0 and len(remote) == 2 and not any('GROUP BY' in x or 'count(' in x for x in remote)
       and 'Async' not in r.stdout,
       'without the shard key in GROUP BY no aggregate is pushed: every row comes to the coordinator, '
       'through scans that are no longer async', r.stdout)

    # the shards called vds_audit, the coordinator did not
    for e in [env] + list(shard_env.values()):
        sql("SELECT pg_stat_reset();", e)
    r = sql(f"SET enable_partitionwise_aggregate = on;\n{grouped};")
    calls, deadline = {}, time.monotonic() + 15
    while time.monotonic() < deadline:
        for name, e in (('coordinator', env), ('shard1', shard_env[1]), ('shard2', shard_env[2])):
            c = sql("SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions WHERE funcname = 'vds_audit'", e)
            calls[name] = int(c.stdout.strip() or -1)
        if calls['shard1'] and calls['shard2']:
            break
        time.sleep(0.5)
    share = {k: sum(1 for s, _, _ in rows if s == k) for k in shard_env}
    ok(r.returncode == 0 and calls == {'coordinator': 0, 'shard1': share[1], 'shard2': share[2]},
       f'vds_audit ran on the shards ({share[1]} and {share[2]} calls, one per catalog row of each), '
       f'never on the coordinator (pg_stat_user_functions)', f'{calls} {r.stderr}')

    # postgres_fdw refuses a non-superuser's mapping that uses no password
    r = sql("""CREATE ROLE regress_analyst LOGIN;
GRANT USAGE ON FOREIGN SERVER shard1 TO regress_analyst;
CREATE USER MAPPING FOR regress_analyst SERVER shard1 OPTIONS (user 'postgres');
GRANT SELECT ON all_audit TO regress_analyst;""")
    r2 = sql("SELECT count(*) FROM all_audit WHERE shard = 1;", user='regress_analyst')
    ok(r.returncode == 0 and r2.returncode != 0 and 'password is required' in r2.stderr,
       'a non-superuser\'s mapping without a password is refused: "password is required"', r.stderr + r2.stdout + r2.stderr)
finally:
    stop()
done()
