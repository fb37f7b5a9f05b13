#!/usr/bin/env python3
"""Privileges and credentials in PostgreSQL (docs/postgresql.md, "Privileges and
credentials"), as TAP, with roles that are not superusers:
  - local files, the file_fdw model, checked when a call runs: reading needs
    pg_read_server_files, writing pg_write_server_files too, a relative path is refused;
  - the network needs vdsql_network, which CREATE EXTENSION makes when absent and which
    outlives DROP EXTENSION (CREATE EXTENSION works again);
  - allowed_hosts and the other privileged settings are a superuser's, by SET and by
    vdsql_config(key, value);
  - the server's AZURE_STORAGE_* environment signs for a superuser only (the cluster runs
    with Azurite's connection string in its environment);
  - credentials from the USER MAPPING of a vdsql server named by vdsql.server, per role:
    the right key reads, a wrong key gets Azurite's refusal, also after SET ROLE in one
    session where the other role's document is in the cache;
  - the validator: credentials only in a user mapping, no URL carrying one elsewhere,
    unknown names refused with the valid ones; vdsql.server naming no vdsql server.
Each refusal is checked by SQLSTATE (42501 for privileges) and by its words.
   env: AZURITE (scripts/azurite-test-server's azurite-blob), PG_CONFIG (tests/pg/pgtest.py)"""
import os
import sys
import urllib.parse

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from taplib import Azurite  # noqa: E402
from azclient import Az  # noqa: E402

# Azurite first: the cluster (started when pgtest is imported) inherits its connection
# string, as a server configured with AZURE_STORAGE_* in its environment would
azurite = Azurite()
if azurite.started:
    os.environ['AZURE_STORAGE_CONNECTION_STRING'] = azurite.env['AZURE_STORAGE_CONNECTION_STRING']

sys.path.insert(0, here)
from pgtest import data, done, env, ok, psql, run, stop  # noqa: E402


def as_role(role, sql):
    """sql run by role in its own session, verbose errors (SQLSTATE in the text)."""
    return run(['psql', '-X', '-q', '-A', '-t', '-U', role, '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose',
                '-c', sql], env=env)


def refused(r, sqlstate, words):
    return r.returncode != 0 and sqlstate in r.stderr and words in r.stderr


try:
    r = psql('CREATE EXTENSION vdsql')
    ok(r.returncode == 0, 'CREATE EXTENSION vdsql', r.stderr)
    r = psql("SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname = 'vdsql_network'")
    ok(r.stdout.strip() == 'vdsql_network|f', 'CREATE EXTENSION makes the role vdsql_network (NOLOGIN)', r.stdout + r.stderr)
    psql('CREATE ROLE alice LOGIN; CREATE ROLE bob LOGIN')
    survey = os.path.join(data, 'survey')

    # -- local files
    q = f"SELECT count(*) FROM vds_layers('{survey}')"
    r = as_role('alice', q)
    ok(refused(r, '42501', f'vdsql: reading local file "{survey}" needs the privileges of pg_read_server_files'),
       'a role without pg_read_server_files is refused a local read (42501, naming the path and the role it needs)',
       r.stdout + r.stderr)
    r = as_role('alice', f"SELECT count(*) FROM vds_layers('file://{survey}')")
    ok(refused(r, '42501', 'needs the privileges of pg_read_server_files'), 'the same for a file:// URL', r.stderr)
    psql('GRANT pg_read_server_files TO alice')
    r = as_role('alice', q)
    ok(r.returncode == 0 and int(r.stdout.strip() or 0) > 0, 'after GRANT pg_read_server_files the read works',
       r.stdout + r.stderr)
    r = as_role('alice', "SELECT count(*) FROM vds_layers('survey')")
    r2 = psql("SELECT count(*) FROM vds_layers('./survey')")
    ok(refused(r, '42501', 'vdsql: reading relative path "survey" needs an absolute path')
       and r2.returncode != 0 and 'needs an absolute path' in r2.stderr,
       'a relative path is refused, a superuser\'s too (a backend would resolve it in the data directory)',
       r.stderr + r2.stderr)
    new = os.path.join(data, 'created')
    layout = open(os.path.join(survey, 'VolumeDataLayout')).read().replace("'", "''")
    create = f"SELECT vds_create('{new}', '{layout}', 'None')"
    r = as_role('alice', create)
    ok(refused(r, '42501', f'vdsql: writing local file "{new}" needs the privileges of pg_write_server_files')
       and not os.path.exists(new),
       'a write (vds_create) with pg_read_server_files only is refused, nothing written', r.stderr)
    psql('GRANT pg_write_server_files TO alice')
    os.chmod(data, 0o777)  # the postgres user writes there
    r = as_role('alice', create)
    ok(r.returncode == 0 and os.path.exists(os.path.join(new, 'VolumeDataLayout')),
       'after GRANT pg_write_server_files it writes', r.stdout + r.stderr)

    # -- the network
    dead = 'http://127.0.0.1:9/ds'
    r = as_role('bob', f"SELECT count(*) FROM vds_layers('{dead}')")
    ok(refused(r, '42501', f'vdsql: reaching "{dead}" needs the privileges of vdsql_network'),
       'a role without vdsql_network is refused a URL (42501, naming the URL and vdsql_network)', r.stderr)
    r = as_role('bob', "SELECT count(*) FROM vds_layers('http://u:pw@127.0.0.1:9/ds?sig=s3cr3t')")
    ok(r.returncode != 0 and 'pw' not in r.stderr and 's3cr3t' not in r.stderr and 'vdsql_network' in r.stderr,
       'the refusal shows the URL redacted (no password, no query value)', r.stderr)
    psql('GRANT vdsql_network TO bob')
    r = as_role('bob', f"SELECT count(*) FROM vds_layers('{dead}')")
    ok(r.returncode != 0 and '42501' not in r.stderr and '127.0.0.1:9' in r.stderr,
       'a member of vdsql_network gets through to the request (here: nothing listens)', r.stderr)
    r = as_role('bob', q)
    ok(refused(r, '42501', 'needs the privileges of pg_read_server_files'),
       'vdsql_network does not open local files', r.stderr)

    # -- settings that widen what the server reaches are a superuser's
    r = as_role('bob', "SELECT vdsql_version(); SET vdsql.allowed_hosts = '*'")  # loaded: no placeholder
    r2 = as_role('bob', "SELECT vdsql_config('allowed_hosts', '*')")
    r3 = as_role('bob', "SELECT vdsql_config('azure_key', 'eA==')")
    ok(refused(r, '42501', 'permission denied to set parameter "vdsql.allowed_hosts"')
       and refused(r2, '42501', 'vdsql: changing allowed_hosts needs superuser (as SET vdsql.allowed_hosts does)')
       and refused(r3, '42501', 'vdsql: changing azure_key needs superuser'),
       'allowed_hosts (and a secret) cannot be changed by a role that is not a superuser, by SET or vdsql_config',
       r.stderr + r2.stderr + r3.stderr)
    r = psql("LOAD 'vdsql_pg'; SELECT name FROM pg_settings WHERE name IN ('vdsql.allowed_hosts', 'vdsql.ca_file', 'vdsql.max_alloc', "
             "'vdsql.max_parallel') AND context = 'superuser' ORDER BY 1")
    ok(r.stdout.split() == ['vdsql.allowed_hosts', 'vdsql.ca_file', 'vdsql.max_alloc', 'vdsql.max_parallel'],
       'allowed_hosts, ca_file, max_alloc and max_parallel are superuser settings (shown in pg_settings)', r.stdout + r.stderr)

    # -- the role outlives the extension
    r = psql('DROP EXTENSION vdsql')
    r2 = psql("SELECT count(*) FROM pg_roles WHERE rolname = 'vdsql_network'")
    r3 = psql('CREATE EXTENSION vdsql')
    ok(r.returncode == 0 and r2.stdout.strip() == '1' and r3.returncode == 0,
       'after DROP EXTENSION vdsql_network remains (roles are cluster-wide) and CREATE EXTENSION works again',
       r.stderr + r2.stdout + r3.stderr)

    # -- the validator
    su = 'postgres'
    r = as_role(su, "CREATE SERVER bad FOREIGN DATA WRAPPER vdsql OPTIONS (azure_key 'eA==')")
    ok(refused(r, '42501', 'vdsql: azure_key is a credential: it belongs in a user mapping, not in a server'),
       'a credential among a server\'s options (readable by every role) is refused', r.stderr)
    r = as_role(su, "CREATE SERVER bad FOREIGN DATA WRAPPER vdsql OPTIONS (s3_endpoint 'http://127.0.0.1:1/?X-Amz-Signature=ab')")
    r2 = as_role(su, "CREATE SERVER bad FOREIGN DATA WRAPPER vdsql OPTIONS (s3_endpoint 'http://key:secret@127.0.0.1:1/')")
    r3 = as_role(su, "CREATE SERVER bad FOREIGN DATA WRAPPER vdsql OPTIONS (s3_endpoint 'http://127.0.0.1:1/x?a=1&sig=ab')")
    ok(all(refused(x, '42501', 'vdsql: option s3_endpoint of a server carries credentials in its URL') for x in (r, r2, r3)),
       'a server option whose URL carries credentials (X-Amz-Signature=, user:password@, sig=) is refused',
       r.stderr + r2.stderr + r3.stderr)
    r = as_role(su, "CREATE SERVER bad FOREIGN DATA WRAPPER vdsql OPTIONS (nosuch '1')")
    ok(refused(r, 'HV00D', 'vdsql: nosuch is not an option of a server') and 'Valid options there: cache_ttl,' in r.stderr
       and 'azure_key' not in r.stderr.split('Valid options')[1],
       'an unknown option is refused with the valid ones (no credential among them)', r.stderr)
    r = as_role(su, "CREATE SERVER ok1 FOREIGN DATA WRAPPER vdsql OPTIONS (http_timeout 'soon')")
    ok(refused(r, '22023', 'expected a number'), 'a server option\'s value is checked by the core (22023)', r.stderr)
    psql("CREATE SERVER ok1 FOREIGN DATA WRAPPER vdsql")
    r = as_role(su, "CREATE USER MAPPING FOR bob SERVER ok1 OPTIONS (cache_ttl '5')")
    ok(refused(r, 'HV00D', 'vdsql: cache_ttl is not an option of a user mapping'),
       'a user mapping takes credentials only', r.stderr)

    # -- vdsql.server
    r = as_role('bob', "SET vdsql.server = 'nothing'; SELECT vdsql_version()")
    psql('CREATE FOREIGN DATA WRAPPER other; CREATE SERVER elsewhere FOREIGN DATA WRAPPER other')
    r2 = as_role('bob', "SET vdsql.server = 'elsewhere'; SELECT vdsql_version()")
    ok(refused(r, '42704', 'vdsql: vdsql.server names "nothing", which is no foreign server')
       and refused(r2, '42704', 'a server of the foreign-data wrapper other, not vdsql'),
       'vdsql.server naming no server, or a server of another wrapper: 42704', r.stderr + r2.stderr)
    r = as_role('bob', "SET vdsql.server = 'ok1'; SELECT vdsql_version()")
    ok(refused(r, '42501', 'vdsql: using server "ok1" (vdsql.server) needs USAGE on it'),
       'naming a server without USAGE on it is refused', r.stderr)

    # -- credentials: the environment (superusers only) and user mappings, against Azurite
    if not azurite.started:
        for what in ('environment', 'mapping', 'cache'):
            ok(True, f'# SKIP Azurite did not start ({what}): ' + (azurite.error.splitlines() or [''])[-1][:200])
    else:
        srv, az = azurite, Az(azurite)
        lt = os.path.join(data, 'lindi', 'small.lindi.tar')
        code = az('PUT', f'/{srv.account}/{srv.container}/small.lindi.tar', headers={'x-ms-blob-type': 'BlockBlob'},
                  body=open(lt, 'rb').read())[0]
        url = f'az://{srv.container}/small.lindi.tar'
        files = f"SELECT count(*) FROM lindi_files('{url}')"
        want = psql(f"SELECT count(*) FROM lindi_files('{lt}')").stdout.strip()
        r = psql(files)
        r2 = as_role('bob', files)
        ok(code == 201 and r.returncode == 0 and r.stdout.strip() == want and r2.returncode != 0
           and 'Azure credentials: none given' in r2.stderr,
           'the server\'s AZURE_STORAGE_* environment signs for a superuser, never for another role '
           '(a vdsql_network member gets "none given")', f'{code} {r.stdout} {r.stderr} {r2.stderr}')
        good = srv.env['AZURE_STORAGE_CONNECTION_STRING']
        wrong = good.replace(srv.key, 'AAAA' + srv.key[4:]) if not srv.key.startswith('AAAA') else good.replace(srv.key, 'BBBB' + srv.key[4:])
        psql(f"CREATE SERVER azs FOREIGN DATA WRAPPER vdsql OPTIONS (cache_ttl '600'); "
             f"GRANT USAGE ON FOREIGN SERVER azs TO alice, bob; GRANT vdsql_network TO alice; "
             f"CREATE USER MAPPING FOR alice SERVER azs OPTIONS (azure_connection_string '{good}'); "
             f"CREATE USER MAPPING FOR bob SERVER azs OPTIONS (azure_connection_string '{wrong}')")
        r = as_role('alice', f"SET vdsql.server = 'azs'; {files}")
        r2 = as_role('bob', f"SET vdsql.server = 'azs'; {files}")
        ok(r.returncode == 0 and r.stdout.strip() == want and r2.returncode != 0 and '403' in r2.stderr
           and srv.key not in r2.stderr,
           'with vdsql.server each role signs with its own mapping: the right key reads, a wrong key gets '
           'Azurite\'s 403', r.stdout + r.stderr + r2.stderr)
        # one session: alice's read fills the cache (cache_ttl 600 on the server), bob's must not be served from it
        r = psql(f"SET vdsql.server = 'azs'; SET ROLE alice; {files}; SET ROLE bob; {files}")
        ok(r.returncode != 0 and r.stdout.strip() == want and '403' in r.stderr,
           'after SET ROLE to a role with other credentials the same URL is fetched again (refused), not served from '
           'the first role\'s cached documents', r.stdout + r.stderr)
finally:
    stop()
    azurite.stop()
done()
