/* Azure credentials and URLs: connection strings (Azure's and Azurite's shapes),
 * account + key / SAS, the vdsql_config keys (secrets shown as '(set)'), environment
 * read only when asked, az:// -> blob and List Blobs URLs with hostile names. Expected
 * URLs follow RFC 3986 (unreserved bytes kept, '/' kept in paths, the rest %XX). */
#include <stdlib.h>
#include <string.h>

#include "store/azure_auth.h"
#include "tap.h"
#include "vd_ctx.h"

#define KEY "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
#define KEY2 "c2VjcmV0LWtleS1ieXRlcw==" /* "secret-key-bytes" */

static vd_code cs(const char *s, vd_az_cred *c, vd_err *err) {
  vd_az_settings st = {s, NULL, NULL, NULL, 0};
  return vd_az_cred_parse(&st, c, err);
}

static void good_cs(const char *s, const char *account, const char *endpoint, size_t keylen, const char *sas) {
  vd_az_cred c;
  vd_err err = {0};
  vd_code rc = cs(s, &c, &err);
  if (!ok(rc == VD_OK && strcmp(c.account, account) == 0 && strcmp(c.endpoint, endpoint) == 0 && c.keylen == keylen &&
              strcmp(c.sas, sas) == 0,
          "connection string -> %s %s key %zu sas '%s'", account, endpoint, keylen, sas))
    diag("rc %d %s | %s %s %zu %s", rc, err.msg, c.account, c.endpoint, c.keylen, c.sas);
}

/* the error names the fault and never a secret's bytes */
static void bad_cs(const char *s, const char *want, const char *secret) {
  vd_az_cred c;
  vd_err err = {0};
  vd_code rc = cs(s, &c, &err);
  ok(rc == VD_INVALID && strstr(err.msg, want) && strstr(err.msg, "AZURE_STORAGE_CONNECTION_STRING") &&
         (!secret || !strstr(err.msg, secret)) && c.keylen == 0,
     "refused (%s): %s", want, err.msg);
}

static void url_is(const vd_az_cred *c, const char *az, const char *want) {
  char *u = NULL;
  vd_err err = {0};
  vd_code rc = vd_az_blob_url(c, az, 0, &u, &err);
  if (!ok(rc == VD_OK && u && strcmp(u, want) == 0, "%s -> %s", az, want)) diag("rc %d %s got %s", rc, err.msg, u ? u : "");
  free(u);
}

static void url_bad(const vd_az_cred *c, const char *az, const char *want) {
  char *u = NULL;
  vd_err err = {0};
  vd_code rc = vd_az_blob_url(c, az, 0, &u, &err);
  ok(rc == VD_INVALID && !u && strstr(err.msg, want) && !strstr(err.msg, "sig="), "%s refused: %s", az, err.msg);
}

static void list_is(const vd_az_cred *c, const char *az, const char *marker, int max, const char *want) {
  char *u = NULL;
  vd_err err = {0};
  vd_code rc = vd_az_list_url(c, az, 0, 0, marker, max, &u, &err);
  if (!ok(rc == VD_OK && u && strcmp(u, want) == 0, "list URL of %s (marker %s, max %d) -> %s", az, marker ? marker : "none", max, want))
    diag("rc %d %s got %s", rc, err.msg, u ? u : "");
  free(u);
}

/* vdsql_config(key[, value]) answers want */
static int cfg_is(vd_ctx *ctx, const char *key, const char *value, const char *want) {
  char *out = NULL;
  vd_err err = {0};
  int good = vd_config_apply(ctx, key, value, &out, &err) == VD_OK && out && strcmp(out, want) == 0;
  if (!good) diag("%s: %s", key, out ? out : err.msg);
  free(out);
  return good;
}

int main(void) {
  /* Azurite's, as scripts/azurite-test-server writes it (path style, trailing ';') */
  good_cs("DefaultEndpointsProtocol=http;AccountName=vdsqltest;AccountKey=" KEY ";BlobEndpoint=http://127.0.0.1:41234/vdsqltest;",
          "vdsqltest", "http://127.0.0.1:41234/vdsqltest", 64, "");
  good_cs("DefaultEndpointsProtocol=https;AccountName=myacct;AccountKey=" KEY2 ";EndpointSuffix=core.windows.net", "myacct",
          "https://myacct.blob.core.windows.net", 16, "");
  good_cs("AccountName=myacct;AccountKey=" KEY2, "myacct", "https://myacct.blob.core.windows.net", 16, "");
  good_cs("accountname=myacct; ACCOUNTKEY=" KEY2 " ;EndpointSuffix=blob.example.cn;DefaultEndpointsProtocol=http", "myacct",
          "http://myacct.blob.blob.example.cn", 16, "");
  good_cs("BlobEndpoint=https://myacct.blob.core.windows.net/;SharedAccessSignature=sv=2021-08-06&sp=rl&sig=a%2Bb%3D",
          "", "https://myacct.blob.core.windows.net", 0, "sv=2021-08-06&sp=rl&sig=a%2Bb%3D");
  good_cs("UseDevelopmentStorage=true", "devstoreaccount1", "http://127.0.0.1:10000/devstoreaccount1", 64, "");
  good_cs("AccountName=a;AccountKey=" KEY2 ";QueueEndpoint=https://q;TableEndpoint=https://t;;", "a",
          "https://a.blob.core.windows.net", 16, "");
  /* a key and a SAS: Shared Key is used, the SAS dropped */
  good_cs("AccountName=a;AccountKey=" KEY2 ";SharedAccessSignature=sig=x", "a", "https://a.blob.core.windows.net", 16, "");

  bad_cs("AccountName=a;AccountKey=not*base64!", "AccountKey that is not base64", "not*base64");
  bad_cs("AccountName=a;AccountKey=" KEY2 ";c2VjcmV0LWtleS1ieXRl", "part that is not Name=value", "c2VjcmV0LWtleS1ieXRl");
  bad_cs("AccountName=a", "neither AccountKey nor SharedAccessSignature", NULL);
  bad_cs("AccountKey=" KEY2, "neither AccountName nor BlobEndpoint", KEY2);
  bad_cs("BlobEndpoint=http://h/x;AccountKey=" KEY2, "AccountKey but no AccountName", KEY2);
  bad_cs("AccountName=a;AccountName=b;AccountKey=" KEY2, "gives AccountName twice", KEY2);
  bad_cs("AccountName=a b;AccountKey=" KEY2, "AccountName that is not", KEY2);
  bad_cs("AccountName=a;AccountKey=" KEY2 ";DefaultEndpointsProtocol=ftp", "DefaultEndpointsProtocol other", KEY2);
  bad_cs("AccountName=a;AccountKey=" KEY2 ";BlobEndpoint=ftp://h", "BlobEndpoint that is not", KEY2);
  bad_cs("AccountName=a;AccountKey=" KEY2 ";BlobEndpoint=http://u:p@h/a", "BlobEndpoint that is not", KEY2);
  bad_cs("AccountName=a;AccountKey=" KEY2 ";BlobEndpoint=http://h/a?x=1", "BlobEndpoint that is not", KEY2);
  bad_cs("BlobEndpoint=http://h/a;SharedAccessSignature=sv=1&sp=r", "SharedAccessSignature that is not", NULL);
  bad_cs("BlobEndpoint=http://h/a;SharedAccessSignature=sig=abc def", "SharedAccessSignature that is not", "abc def");
  bad_cs("AccountName=a;AccountKey=" KEY2 ";EndpointSuffix=x/y", "EndpointSuffix that is not a host name", KEY2);
  bad_cs("UseDevelopmentStorage=yes", "UseDevelopmentStorage other than true", NULL);
  bad_cs("", "Azure credentials", NULL); /* (empty: "none given" names every variable) */

  /* account + key / SAS (environment names in errors) */
  vd_az_cred c;
  vd_err err = {0};
  vd_az_settings st = {NULL, "myacct", KEY2, NULL, 0};
  ok(vd_az_cred_parse(&st, &c, &err) == VD_OK && c.keylen == 16 && memcmp(c.key, "secret-key-bytes", 16) == 0 &&
         strcmp(c.endpoint, "https://myacct.blob.core.windows.net") == 0,
     "AZURE_STORAGE_ACCOUNT + AZURE_STORAGE_KEY: key decoded, endpoint %s", c.endpoint);
  vd_az_settings st2 = {NULL, "myacct", NULL, "?sv=2021-08-06&sig=abc%3D", 0};
  ok(vd_az_cred_parse(&st2, &c, &err) == VD_OK && c.keylen == 0 && strcmp(c.sas, "sv=2021-08-06&sig=abc%3D") == 0,
     "AZURE_STORAGE_SAS_TOKEN: a leading '?' dropped: %s", c.sas);
  vd_az_settings st3 = {NULL, "myacct", "%%%%", NULL, 0};
  ok(vd_az_cred_parse(&st3, &c, &err) == VD_INVALID && strstr(err.msg, "AZURE_STORAGE_KEY is not base64") &&
         !strstr(err.msg, "%%%%"),
     "a key that is not base64: %s", err.msg);
  vd_az_settings st4 = {NULL, "myacct", NULL, NULL, 0};
  ok(vd_az_cred_parse(&st4, &c, &err) == VD_INVALID && strstr(err.msg, "without AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN"),
     "an account alone: %s", err.msg);
  vd_az_settings st5 = {NULL, NULL, KEY2, NULL, 1};
  ok(vd_az_cred_parse(&st5, &c, &err) == VD_INVALID && strstr(err.msg, "'azure_key' or 'azure_sas_token' is set without 'azure_account'") &&
         !strstr(err.msg, KEY2),
     "settings name the vdsql_config keys: %s", err.msg);

  /* vdsql_config: secrets shown as '(set)'; set settings replace the environment */
  vd_ctx *ctx = vd_ctx_new();
  char *out = NULL;
  setenv("AZURE_STORAGE_CONNECTION_STRING", "AccountName=envacct;AccountKey=" KEY2, 1);
  ok(vd_az_cred_load(&ctx->cfg, &c, &err) == VD_OK && strcmp(c.account, "envacct") == 0,
     "nothing set with vdsql_config: the environment is read when asked (%s)", c.account);
  vd_ctx_env_credentials(ctx, 0);
  ok(vd_az_cred_load(&ctx->cfg, &c, &err) == VD_INVALID && strstr(err.msg, "none given"),
     "with env_credentials off (PostgreSQL, not a superuser) the environment is not read: %s", err.msg);
  vd_ctx_env_credentials(ctx, 1);
  ok(cfg_is(ctx, "azure_key", KEY, "(set)"), "vdsql_config('azure_key', ...) answers '(set)', not the key");
  ok(cfg_is(ctx, "azure_key", NULL, "(set)"), "reading it back: '(set)'");
  ok(cfg_is(ctx, "azure_sas_token", NULL, ""), "an unset secret reads ''");
  ok(cfg_is(ctx, "azure_account", "cfgacct", "cfgacct"), "the account is not a secret: 'cfgacct'");
  ok(vd_az_cred_load(&ctx->cfg, &c, &err) == VD_OK && strcmp(c.account, "cfgacct") == 0 && c.keylen == 64,
     "settings given with vdsql_config replace the environment as a whole (%s)", c.account);
  ok(cfg_is(ctx, "azure_connection_string", "AccountName=x;AccountKey=" KEY2, "(set)"), "azure_connection_string is a secret too");
  ok(vd_az_cred_load(&ctx->cfg, &c, &err) == VD_OK && strcmp(c.account, "x") == 0, "a connection string wins over account + key");
  char big[5000];
  memset(big, 'A', sizeof big - 1);
  big[sizeof big - 1] = 0;
  ok(vd_config_apply(ctx, "azure_sas_token", big, &out, &err) == VD_INVALID && !strstr(err.msg, "AAAA"),
     "a value too long is refused without echoing it: %s", err.msg);
  { /* a shorter secret replacing a longer one leaves none of the old one's bytes in the field */
    const char *old = "LONGSECRETVALUE-0123456789";
    int was = vd_config_apply(ctx, "azure_sas_token", old, NULL, &err) == VD_OK;
    int now = vd_config_apply(ctx, "azure_sas_token", "s", NULL, &err) == VD_OK;
    const char *f = ctx->cfg.azure_sas_token;
    size_t left = 0;
    for (size_t i = 2; i < sizeof ctx->cfg.azure_sas_token; i++) left += f[i] != 0;
    ok(was && now && f[0] == 's' && f[1] == 0 && left == 0,
       "replacing a secret clears the field: no byte of the old one after the new one (%zu left)", left);
  }
  vd_ctx_free(ctx);
  unsetenv("AZURE_STORAGE_CONNECTION_STRING");

  /* az:// -> blob URL */
  vd_az_cred az;
  cs("AccountName=vdsqltest;AccountKey=" KEY ";BlobEndpoint=http://127.0.0.1:41234/vdsqltest", &az, &err);
  url_is(&az, "az://cont/dir/a.bin", "http://127.0.0.1:41234/vdsqltest/cont/dir/a.bin");
  url_is(&az, "az://cont/odd key+=é(1).bin", "http://127.0.0.1:41234/vdsqltest/cont/odd%20key%2B%3D%C3%A9%281%29.bin");
  url_is(&az, "az://cont/100%/a%20b", "http://127.0.0.1:41234/vdsqltest/cont/100%25/a%2520b");
  url_is(&az, "az://cont/a#b;c&d", "http://127.0.0.1:41234/vdsqltest/cont/a%23b%3Bc%26d");
  url_is(&az, "az://cont/..a/b../.../x", "http://127.0.0.1:41234/vdsqltest/cont/..a/b../.../x");
  url_is(&az, "az://cont/a//b/", "http://127.0.0.1:41234/vdsqltest/cont/a//b/");
  url_is(&az, "az://cont", "http://127.0.0.1:41234/vdsqltest/cont");
  url_is(&az, "az://cont/k?sv=1&sig=x%2B", "http://127.0.0.1:41234/vdsqltest/cont/k?sv=1&sig=x%2B");
  url_is(&az, "az://$root/k", "http://127.0.0.1:41234/vdsqltest/$root/k");
  { /* the backend decodes the store's URLs once (vd_url_join encodes names) */
    char *u = NULL;
    vd_err err = {0};
    vd_code rc = vd_az_blob_url(&az, "az://cont/100%25/a%20b%3Fc", 1, &u, &err);
    ok(rc == VD_OK && u && !strcmp(u, "http://127.0.0.1:41234/vdsqltest/cont/100%25/a%20b%3Fc"), "decoded: %s", u ? u : err.msg);
    free(u);
    u = NULL;
    rc = vd_az_blob_url(&az, "az://cont/a%0Ab", 1, &u, &err);
    ok(rc == VD_INVALID && !u && strstr(err.msg, "control character"), "decoded control character refused: %s", err.msg);
    rc = vd_az_list_url(&az, "az://cont/d%20x/", 1, 0, NULL, 0, &u, &err);
    ok(rc == VD_OK && u && strstr(u, "&prefix=d%20x%2F"), "decoded list prefix: %s", u ? u : err.msg);
    free(u);
  }
  url_bad(&az, "az://cont/a/../b", "'.' or '..' segment");
  url_bad(&az, "az://cont/..", "'.' or '..' segment");
  url_bad(&az, "az://cont/./b", "'.' or '..' segment");
  url_bad(&az, "az://Cont/b", "container name");
  url_bad(&az, "az://co/b", "container name");
  url_bad(&az, "az://c_t/b", "container name");
  url_bad(&az, "az:///b", "container name");
  url_bad(&az, "s3://cont/b", "not an az://");
  url_bad(&az, "az://cont/a\001b", "control character");
  url_bad(&az, "az://cont/k?sig=a b", "the query has a space");
  char longk[1100] = "az://cont/";
  memset(longk + 10, 'k', 1025);
  longk[1035] = 0;
  url_bad(&az, longk, "at most 1024 bytes");
  vd_az_cred sas;
  cs("BlobEndpoint=https://acct.blob.core.windows.net;SharedAccessSignature=sv=2021-08-06&sig=s%2B", &sas, &err);
  url_is(&sas, "az://cont/a b", "https://acct.blob.core.windows.net/cont/a%20b?sv=2021-08-06&sig=s%2B");
  url_is(&sas, "az://cont/a?sig=mine", "https://acct.blob.core.windows.net/cont/a?sig=mine");

  /* List Blobs URL */
  list_is(&az, "az://cont/list/a b+", "list/k02", 3,
          "http://127.0.0.1:41234/vdsqltest/cont?restype=container&comp=list&include=metadata&prefix=list%2Fa%20b%2B"
          "&marker=list%2Fk02&maxresults=3");
  list_is(&sas, "az://cont", NULL, 0,
          "https://acct.blob.core.windows.net/cont?restype=container&comp=list&include=metadata&sv=2021-08-06&sig=s%2B");
  vd_az_cred_clear(&az);
  ok(az.keylen == 0 && az.key[0] == 0, "vd_az_cred_clear wipes the key");
  return done_testing();
}
