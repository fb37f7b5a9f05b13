/* Azure Shared Key: vd_az_string_to_sign / vd_az_sign against known answers computed with
 * Python's hmac from the spec's recipe (tests/gen/mkazsign.py -> t_azure_vectors.h), and
 * the faults the signer refuses. */
#include <string.h>

#include "store/azure_sign.h"
#include "t_azure_vectors.h"
#include "tap.h"
#include "util/base64.h"

int main(void) {
  for (size_t i = 0; i < sizeof az_vectors / sizeof *az_vectors; i++) {
    const az_vector *v = &az_vectors[i];
    vd_err err = {0};
    char *sts = NULL, *auth = NULL;
    unsigned char *key = NULL;
    size_t kl = 0;
    vd_base64_decode(v->key, strlen(v->key), &key, &kl);
    vd_code rc = vd_az_string_to_sign(v->account, v->verb, v->url, v->headers, v->nh, &sts, &err);
    if (!ok(rc == VD_OK && sts && strcmp(sts, v->sts) == 0, "string-to-sign: %s", v->what))
      diag("rc %d %s\ngot:\n%s\nwant:\n%s", rc, err.msg, sts ? sts : "(null)", v->sts);
    rc = vd_az_sign(v->account, key, kl, v->verb, v->url, v->headers, v->nh, &auth, &err);
    if (!ok(rc == VD_OK && auth && strcmp(auth, v->auth) == 0, "Authorization: %s", v->what))
      diag("got %s want %s", auth ? auth : "(null)", v->auth);
    free(sts);
    free(auth);
    free(key);
  }

  vd_err err = {0};
  char *auth = NULL;
  const unsigned char k[] = "0123456789abcdef";
  const char *twice[] = {"x-ms-date: a", "X-MS-Date: b"};
  ok(vd_az_sign("a", k, 16, "GET", "https://h/c/b", twice, 2, &auth, &err) == VD_INVALID && !auth &&
         strstr(err.msg, "x-ms-date given twice"),
     "an x-ms header given twice (any case) is refused: %s", err.msg);
  const char *twice2[] = {"Range: bytes=0-1", "range: bytes=2-3"};
  ok(vd_az_sign("a", k, 16, "GET", "https://h/c/b", twice2, 2, &auth, &err) == VD_INVALID &&
         strstr(err.msg, "Range given twice"),
     "a standard header given twice is refused: %s", err.msg);
  const char *crlf[] = {"x-ms-meta-a: 1\r\nx-ms-meta-b: 2"};
  ok(vd_az_sign("a", k, 16, "GET", "https://h/c/b", crlf, 1, &auth, &err) == VD_INVALID && strstr(err.msg, "line break"),
     "a header value with a line break (injection) is refused: %s", err.msg);
  const char *noname[] = {": x"};
  ok(vd_az_sign("a", k, 16, "GET", "https://h/c/b", noname, 1, &auth, &err) == VD_INVALID,
     "a header without a name is refused: %s", err.msg);
  ok(vd_az_sign("a", k, 0, "GET", "https://h/c/b", NULL, 0, &auth, &err) == VD_INVALID && strstr(err.msg, "no account key"),
     "no key: %s", err.msg);
  /* the key never appears in an error, whatever went wrong */
  const unsigned char secret[] = "SECRETKEYBYTES!!";
  vd_az_sign("a", secret, 16, "GET", "https://h/c/b", twice, 2, &auth, &err);
  ok(!strstr(err.msg, "SECRET"), "errors never carry the key");

  char d[32];
  vd_az_date(1795528800, d); /* 2026-11-24 14:00:00 UTC (date -u -d @1795528800) */
  ok(strcmp(d, "Tue, 24 Nov 2026 14:00:00 GMT") == 0, "x-ms-date is RFC 1123 GMT: %s", d);
  vd_az_date(0, d);
  ok(strcmp(d, "Thu, 01 Jan 1970 00:00:00 GMT") == 0, "x-ms-date of the epoch: %s", d);
  return done_testing();
}
