#!/usr/bin/env python3
"""vdsql's settings as GUCs, as TAP: every vdsql_config key (but the actions) is a GUC
vdsql.<key> from the core's one table; SET is checked by the core with vdsql_config's
words and reaches the queries; RESET gives the core's default back; secrets are
superuser-only, never shown (SHOW gives '(set)'), and missing from pg_settings.
Each session loads the module first (LOAD, or any vdsql function): before that, a
vdsql.* name is only PostgreSQL's placeholder, which the module checks when it loads
(docs: shared_preload_libraries or session_preload_libraries make it load at once)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgtest import done, ok, psql, run, sqlite, stop, top  # noqa: E402

try:
    r = psql('CREATE EXTENSION vdsql')
    ok(r.returncode == 0, 'CREATE EXTENSION vdsql', r.stderr)
    keys = sqlite("SELECT key FROM vdsql_config() WHERE key NOT IN ('stats', 'cache') ORDER BY 1").stdout.split()
    secrets = [k for k in keys if k in ('s3_secret_access_key', 's3_session_token', 'azure_connection_string',
                                        'azure_key', 'azure_sas_token')]
    r = psql("LOAD 'vdsql_pg'; SELECT name FROM pg_settings WHERE name LIKE 'vdsql.%' ORDER BY 1")
    shown = [x[len('vdsql.'):] for x in r.stdout.split() if x != 'vdsql.server']  # PostgreSQL's own (privileges.t)
    ok(r.returncode == 0 and shown == [k for k in keys if k not in secrets],
       f'pg_settings lists vdsql.<key> for the {len(keys) - len(secrets)} settings of vdsql_config() that are '
       f'not secrets', f'{r.stderr}\nmissing: {sorted(set(keys) - set(secrets) - set(shown))}; '
       f'extra: {sorted(set(shown) - set(keys))}')
    r = psql("LOAD 'vdsql_pg'; SET vdsql.max_parallel = 4; SELECT vdsql_config('max_parallel')")
    ok(r.returncode == 0 and r.stdout.strip() == '4', 'SET vdsql.max_parallel = 4 reaches the core', r.stdout + r.stderr)
    r = psql("LOAD 'vdsql_pg'; SET vdsql.max_parallel = 999")
    ok(r.returncode != 0 and "expected a whole number from 1 to 256" in r.stderr,
       'SET vdsql.max_parallel = 999 is refused with vdsql_config\'s words', r.stderr)
    r = psql("SET vdsql.max_parallel = 4; RESET vdsql.max_parallel; SELECT vdsql_config('max_parallel')")
    default = sqlite("SELECT vdsql_config('max_parallel')").stdout.strip()
    ok(r.returncode == 0 and r.stdout.strip() == default, f'RESET gives the core\'s default back ({default})',
       r.stdout + r.stderr)
    r = psql("LOAD 'vdsql_pg'; SET vdsql.s3_endpoint = 'ftp://127.0.0.1:9/'")
    ok(r.returncode != 0 and 'expected an http:// or https:// URL' in r.stderr,
       'an s3_endpoint that is not http(s) is refused at SET', r.stderr)
    r = psql("LOAD 'vdsql_pg'; SET vdsql.azure_key = 'c2VjcmV0'; SHOW vdsql.azure_key; SELECT vdsql_config('azure_key')")
    ok(r.returncode == 0 and r.stdout.split() == ['(set)', '(set)'] and 'c2VjcmV0' not in r.stdout,
       'a secret set by a superuser is used and shown as (set) by SHOW and vdsql_config', r.stdout + r.stderr)
    r = psql("LOAD 'vdsql_pg'; SET vdsql.azure_key = 'c2VjcmV0'; SELECT vdsql_config('azure_key'); "
             "RESET vdsql.azure_key; SELECT 'after:' || vdsql_config('azure_key')")
    ok(r.returncode == 0 and r.stdout.split() == ['(set)', 'after:'], 'RESET of a secret clears it in the core',
       r.stdout + r.stderr)
    r = psql("LOAD 'vdsql_pg'; SET vdsql.azure_key = 'c2VjcmV0'; SHOW ALL")
    ok(r.returncode == 0 and not any(f'vdsql.{k}' in r.stdout for k in secrets) and 'vdsql.max_parallel' in r.stdout
       and 'c2VjcmV0' not in r.stdout, 'SHOW ALL lists vdsql settings but no secret', r.stderr)
    r = psql("CREATE ROLE vdsql_test_user LOGIN")
    r = run(['psql', '-X', '-q', '-A', '-t', '-U', 'vdsql_test_user', '-c', "SELECT vdsql_version()",
             '-c', "SET vdsql.azure_key = 'eA=='"], env=dict(os.environ, **__import__('pgtest').env))
    ok(r.returncode != 0 and 'permission denied to set parameter "vdsql.azure_key"' in r.stderr,
       'a role that is not a superuser cannot set a secret', r.stderr)
    r = run(['psql', '-X', '-q', '-A', '-t', '-U', 'vdsql_test_user', '-c', "SELECT vdsql_version()",
             '-c', "SET vdsql.http_timeout = 2", '-c', 'SHOW vdsql.http_timeout'],
            env=dict(os.environ, **__import__('pgtest').env))
    ok(r.returncode == 0 and r.stdout.split()[-1:] == ['2'], 'it can set the settings that are neither secret nor '
       'privileged (vdsql.http_timeout)', r.stdout + r.stderr)
finally:
    stop()
done()
