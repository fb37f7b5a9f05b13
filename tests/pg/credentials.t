#!/usr/bin/env python3
"""Credentials go only where their owner sent them (issue 28, item 3; docs/postgresql.md,
"Threat model"), as TAP, against radosgw on 127.0.0.1 (which checks every signature)
and loopback relays in front of it that record which access key id signed each request
that reached them (the relay stands for a port a role chose):
  - a foreign scan keeps the identity it started with: a superuser's SECURITY DEFINER
    function calling vdsql between its rows does not make it sign with the server's AWS_*
    environment, and two servers' tables joined in one query each sign as their own;
  - an endpoint travels with its credentials: a USERSET vdsql.s3_endpoint gets neither a
    definer function's environment credentials nor a PUBLIC mapping's, through a function
    (vdsql.server) or a foreign table;
  - vdsql_config() shows a PUBLIC mapping's s3_access_key_id as pg_user_mappings does (NULL);
  - secrets refused in ALTER ROLE / ALTER DATABASE / CREATE FUNCTION ... SET;
  - the validator refuses every credential-bearing query parameter.
   env: PG_CONFIG (tests/pg/pgtest.py)"""
import http.client
import http.server
import os
import re
import socketserver
import subprocess
import sys
import threading

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from taplib import Radosgw  # noqa: E402

# radosgw first: the cluster (started when pgtest is imported) inherits its AWS_*
# variables, as a server configured with credentials in its environment would
rgw = Radosgw()
if rgw.started:
    for k in ('AWS_ENDPOINT_URL', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION'):
        os.environ[k] = rgw.env[k]

sys.path.insert(0, here)
from pgtest import done, ok, psql, run, stop, top, work  # noqa: E402

CRED = re.compile(r'Credential=([^/,\s]+)/')


class Relay:
    """A loopback relay to radosgw, Host header and all (radosgw checks the signature):
    records (method, path, key id that signed it or '' when unsigned, session token sent)."""

    def __init__(self, upstream_port):
        seen = self.seen = []

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *a):
                pass

            def relay(self):
                n = int(self.headers.get('Content-Length') or 0)
                body = self.rfile.read(n) if n else None
                m = CRED.search(self.headers.get('Authorization', ''))
                seen.append((self.command, self.path, m.group(1) if m else '',
                             'X-Amz-Security-Token' in self.headers))
                c = http.client.HTTPConnection('127.0.0.1', upstream_port, timeout=30)
                hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ('connection', 'keep-alive')}
                c.request(self.command, self.path, body=body, headers=hdrs)
                r = c.getresponse()
                data = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ('connection', 'keep-alive', 'transfer-encoding', 'content-length'):
                        self.send_header(k, v)
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                if self.command != 'HEAD':
                    self.wfile.write(data)
                c.close()

            do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = relay

        class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.srv = S(('127.0.0.1', 0), H)
        self.url = f'http://127.0.0.1:{self.srv.server_address[1]}'
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def keys(self):
        return {k for _, _, k, _ in self.seen}

    def signed_with(self, key):
        return sum(1 for _, _, k, _ in self.seen if k == key)

    def stop(self):
        self.srv.shutdown()


def as_role(role, sql):
    return run(['psql', '-X', '-q', '-A', '-t', '-U', role, '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose',
                '-c', sql], env=pgenv)


def refused(r, sqlstate, words):
    return r.returncode != 0 and sqlstate in r.stderr and words in r.stderr


from pgtest import env as pgenv  # noqa: E402

relays = []
LAYER = 'Dimensions_012LOD0'
try:
    if not rgw.started:
        ok(False, 'radosgw did not start (scripts/radosgw-test-server; Debian packages radosgw ceph-mon ceph-osd): '
           + (rgw.error.splitlines() or [''])[-1][:300])
        raise SystemExit
    try:
        import boto3
    except ImportError:
        ok(False, 'boto3 for /usr/bin/python3 (Debian package python3-boto3)')
        raise SystemExit
    key = rgw.key
    s3 = boto3.client('s3', endpoint_url=rgw.endpoint, aws_access_key_id=rgw.key, aws_secret_access_key=rgw.secret,
                      region_name=rgw.region)
    # one OpenVDS layer of 300 chunk-metadata pages (some stored), read lazily by vds_chunks: private, and a
    # public-read copy (anonymous reads work, so an unsigned scan has something to read)
    ds = os.path.join(work, 'holes')
    subprocess.run([sys.executable, os.path.join(top, 'tests/gen/mkvds.py'), 'holes', '300', ds], check=True,
                   capture_output=True)
    for root, _, files in os.walk(ds):
        for f in files:
            p = os.path.join(root, f)
            rel = os.path.relpath(p, ds)
            s3.put_object(Bucket=rgw.bucket, Key='private/holes/' + rel, Body=open(p, 'rb').read())
            s3.put_object(Bucket=rgw.bucket, Key='public/holes/' + rel, Body=open(p, 'rb').read(), ACL='public-read')
    # anonymous reads of a missing key get 404, not 403 (the commit record an OpenVDS read looks for)
    s3.put_bucket_acl(Bucket=rgw.bucket, ACL='public-read')
    private, public = f's3://{rgw.bucket}/private/holes', f's3://{rgw.bucket}/public/holes'
    port = int(rgw.endpoint.rsplit(':', 1)[1])
    ra, rb, re_ = Relay(port), Relay(port), Relay(port)  # two servers' endpoints, and a role's own port
    relays += [ra, rb, re_]
    r = psql(f"CREATE EXTENSION vdsql; CREATE ROLE bob LOGIN; CREATE ROLE alice LOGIN; "
             f"GRANT vdsql_network TO bob, alice; SELECT count(*) FROM vds_chunks('{ds}', '{LAYER}')")
    want = r.stdout.strip().splitlines()[-1] if r.returncode == 0 else '?'
    ok(r.returncode == 0 and int(want) > 300 * 64, f'the layer has {want} chunks on local disk (a superuser reads it)',
       r.stderr)
    r = psql(f"SELECT count(*) FROM vds_chunks('{private}', '{LAYER}')")
    ok(r.returncode == 0 and r.stdout.strip() == want,
       'a superuser reads the private copy on radosgw with the server\'s AWS_* environment', r.stdout + r.stderr)
    r = as_role('bob', f"SELECT count(*) FROM vds_chunks('{public}', '{LAYER}')")
    r2 = as_role('bob', f"SELECT count(*) FROM vds_chunks('{private}', '{LAYER}')")
    ok(r.returncode == 0 and r.stdout.strip() == want and r2.returncode != 0 and '403' in r2.stderr,
       'bob (vdsql_network, no credentials) reads the public copy unsigned and is refused the private one',
       r.stdout + r.stderr + r2.stderr)

    # -- a scan keeps its identity: a definer function between its rows
    psql(f"""CREATE SERVER pub FOREIGN DATA WRAPPER vdsql OPTIONS (s3_endpoint '{ra.url}', cache_ttl '0');
GRANT USAGE ON FOREIGN SERVER pub TO bob;
CREATE FOREIGN TABLE pubchunks (chunk bigint, status text) SERVER pub
  OPTIONS (relation 'vds_chunks', url '{public}', layer '{LAYER}');
GRANT SELECT ON pubchunks TO bob;
CREATE FUNCTION su_touch(bigint) RETURNS bigint SECURITY DEFINER LANGUAGE plpgsql
  AS $$ BEGIN PERFORM vdsql_version(); RETURN $1; END $$;
GRANT EXECUTE ON FUNCTION su_touch(bigint) TO bob;""")
    # status is read from the chunk-metadata pages: 16 fetched ahead at the start, the rest as rows go by
    shape = psql(f"SELECT count(*), count(status), count(DISTINCT status) FROM vds_chunks('{ds}', '{LAYER}')").stdout
    r = as_role('bob', 'SELECT count(su_touch(chunk)), count(status), count(DISTINCT status) FROM pubchunks')
    ok(r.returncode == 0 and r.stdout.strip() == shape.strip() and len(ra.seen) > 20 and ra.keys() == {''},
       'a foreign scan started as bob stays unsigned after a superuser\'s SECURITY DEFINER function called vdsql '
       f'between its rows (requests at the server\'s endpoint: {len(ra.seen)}, signed with: {ra.keys()})',
       r.stdout + r.stderr)

    # -- two servers in one query: each scan signs as its own server's mapping
    psql(f"""CREATE SERVER priv FOREIGN DATA WRAPPER vdsql OPTIONS (s3_endpoint '{rb.url}', cache_ttl '0');
GRANT USAGE ON FOREIGN SERVER priv TO bob;
CREATE USER MAPPING FOR bob SERVER priv OPTIONS (s3_access_key_id '{rgw.key}', s3_secret_access_key '{rgw.secret}');
CREATE FOREIGN TABLE privchunks (chunk bigint, status text) SERVER priv
  OPTIONS (relation 'vds_chunks', url '{private}', layer '{LAYER}');
GRANT SELECT ON privchunks TO bob;""")
    ra.seen.clear()
    r = as_role('bob', "SET enable_hashjoin = off; SET enable_mergejoin = off; "
                "SELECT count(*) FROM privchunks p JOIN pubchunks q ON q.chunk = p.chunk AND q.status = p.status "
                "WHERE p.chunk % 997 = 0")
    n = as_role('bob', "SELECT count(*) FROM privchunks WHERE chunk % 997 = 0 AND status IS NOT NULL").stdout.strip()
    ok(r.returncode == 0 and r.stdout.strip() == n and ra.keys() == {''} and rb.keys() == {key},
       'a nested loop over two servers\' tables: the private one signs every request with its mapping\'s key at '
       f'its endpoint, the public one none at its own (signed at A: {ra.keys()}, at B: {rb.keys()})',
       r.stdout + r.stderr)

    # -- an endpoint set by a role serves none of a superuser's credentials
    psql(f"""CREATE FUNCTION su_count(url text) RETURNS bigint SECURITY DEFINER LANGUAGE sql
  AS $$ SELECT count(*) FROM vds_chunks(url, '{LAYER}') $$;
GRANT EXECUTE ON FUNCTION su_count(text) TO bob;""")
    re_.seen.clear()
    r = as_role('bob', f"SET vdsql.s3_endpoint = '{re_.url}'; SELECT su_count('{private}')")
    ok(re_.signed_with(key) == 0,
       'a definer function called with bob\'s vdsql.s3_endpoint does not send the server\'s AWS_* credentials there '
       f'(requests at bob\'s port: {len(re_.seen)}, signed with: {re_.keys()})', r.stdout + r.stderr)
    re_.seen.clear()
    r = psql(f"SET vdsql.s3_endpoint = '{re_.url}'; SELECT count(*) FROM vds_chunks('{private}', '{LAYER}')")
    ok(r.returncode == 0 and r.stdout.strip() == want and re_.signed_with(key) > 0,
       'a superuser\'s own vdsql.s3_endpoint gets the environment\'s credentials (the relay sees them: it would see '
       'a leak)', r.stdout + r.stderr)

    psql(f"""CREATE SERVER shared FOREIGN DATA WRAPPER vdsql OPTIONS (cache_ttl '0');
GRANT USAGE ON FOREIGN SERVER shared TO bob, alice;
CREATE USER MAPPING FOR PUBLIC SERVER shared OPTIONS (s3_access_key_id '{rgw.key}', s3_secret_access_key '{rgw.secret}');
CREATE USER MAPPING FOR alice SERVER shared OPTIONS (s3_access_key_id 'ALICEKEY', s3_secret_access_key 'x');
CREATE FOREIGN TABLE sharedchunks (chunk bigint, status text) SERVER shared
  OPTIONS (relation 'vds_chunks', url '{private}', layer '{LAYER}');
GRANT SELECT ON sharedchunks TO bob;""")
    re_.seen.clear()
    r = as_role('bob', f"SET vdsql.s3_endpoint = '{re_.url}'; SET vdsql.server = 'shared'; "
                f"SELECT count(*) FROM vds_chunks('{private}', '{LAYER}')")
    r2 = as_role('bob', f"SET vdsql.s3_endpoint = '{re_.url}'; SELECT count(*) FROM sharedchunks")
    ok(re_.signed_with(key) == 0 and r.returncode == 0 and r.stdout.strip() == want and r2.stdout.strip() == want,
       'a PUBLIC mapping\'s credentials go to its server\'s endpoint (none given: the environment\'s AWS_ENDPOINT_URL '
       'here), never to bob\'s vdsql.s3_endpoint: through vdsql.server and through a foreign table '
       f'(signed at bob\'s port: {re_.signed_with(key)})', r.stdout + r.stderr + r2.stderr)

    # -- vdsql_config shows what pg_user_mappings shows
    um = as_role('bob', "SELECT coalesce(umoptions::text, 'NULL') FROM pg_user_mappings WHERE srvname = 'shared' "
                 "AND usename = 'public'").stdout.strip()
    r = as_role('bob', "SET vdsql.server = 'shared'; SELECT coalesce(vdsql_config('s3_access_key_id'), 'NULL'); "
                "SELECT coalesce(value, 'NULL') FROM vdsql_config() WHERE key = 's3_access_key_id'")
    r2 = as_role('alice', "SET vdsql.server = 'shared'; SELECT vdsql_config('s3_access_key_id')")
    r3 = psql("SET vdsql.server = 'shared'; SELECT vdsql_config('s3_access_key_id')")
    ok(um == 'NULL' and r.stdout.split() == ['NULL', 'NULL'] and key not in r.stdout
       and r2.stdout.strip() == 'ALICEKEY' and r3.stdout.strip() == key,
       'vdsql_config() shows a PUBLIC mapping\'s s3_access_key_id as pg_user_mappings does: NULL to bob, the key to '
       'a superuser; alice sees her own mapping\'s', f'{um} {r.stdout} {r.stderr} {r2.stdout} {r3.stdout}')

    # -- secrets are not kept where every role reads them
    r = as_role('postgres', "LOAD 'vdsql_pg'; ALTER ROLE bob SET vdsql.s3_secret_access_key = 'leak1'")
    r2 = as_role('postgres', "LOAD 'vdsql_pg'; ALTER DATABASE postgres SET vdsql.azure_key = 'bGVhazI='")
    r3 = as_role('postgres', "LOAD 'vdsql_pg'; CREATE FUNCTION leaky() RETURNS int LANGUAGE sql "
              "SET vdsql.s3_session_token = 'leak3' AS 'SELECT 1'")
    rows = psql("SELECT count(*) FROM pg_db_role_setting WHERE array_to_string(setconfig, ',') LIKE '%leak%'").stdout
    ok(all(refused(x, '42501', 'is a secret: it cannot be kept in ALTER ROLE/DATABASE') for x in (r, r2, r3))
       and rows.strip() == '0',
       'a secret is refused in ALTER ROLE ... SET, ALTER DATABASE ... SET and CREATE FUNCTION ... SET (42501); '
       'pg_db_role_setting holds none', r.stderr + r2.stderr + r3.stderr + rows)
    r = psql("LOAD 'vdsql_pg'; ALTER ROLE bob SET vdsql.s3_region = 'eu-west-1'; ALTER ROLE bob RESET ALL")
    ok(r.returncode == 0, 'a setting that is no secret is still taken by ALTER ROLE ... SET', r.stderr)

    # -- the validator: every credential-bearing query parameter
    bad = ['?Signature=abc&AWSAccessKeyId=AKIA', '?AWSAccessKeyId=AKIA', '?X-Amz-Security-Token=tok',
           '?x=1&X-Amz-Credential=AKIA%2F2026', '?sv=2021&%73ig=abc', '?X-Goog-Signature=ab', '?access_token=t',
           ';x?a=1;Signature=z']
    got = []
    for q in bad:
        r = psql(f"CREATE SERVER badq FOREIGN DATA WRAPPER vdsql OPTIONS (s3_endpoint 'http://127.0.0.1:1/{q}')")
        r2 = psql(f"CREATE FOREIGN TABLE badt (chunk bigint) SERVER pub OPTIONS (relation 'vds_chunks', "
                  f"url 'http://127.0.0.1:1/ds{q}', layer 'L')")
        got.append((q, 'carries credentials in its URL' in r.stderr and r.returncode != 0,
                    'carries credentials in its URL' in r2.stderr and r2.returncode != 0))
    ok(all(a and b for _, a, b in got),
       'a server option or a foreign table\'s url with Signature=, AWSAccessKeyId=, X-Amz-Security-Token=, '
       'X-Amz-Credential=, sig= (percent-encoded too), X-Goog-Signature=, access_token= is refused', got)
    r = psql("CREATE SERVER fineq FOREIGN DATA WRAPPER vdsql OPTIONS (s3_endpoint 'http://127.0.0.1:1/?versionId=3')")
    ok(r.returncode == 0, 'a query parameter that carries nothing (versionId=) is taken', r.stderr)
finally:
    for x in relays:
        x.stop()
    stop()
    rgw.stop()
done()
