/* libFuzzer target: the Azure parsers of untrusted text. The first byte picks one:
 * 0 a List Blobs answer (vd_az_parse_list), 1 an error body and header
 * (vd_az_error_code), 2 a connection string then an az:// URL mapped with it (the rest
 * after the first NUL), 3 a request signed (verb, URL, headers: NUL-separated).
 * Invariants: a parsed listing has sizes >= 0, quoted ETags and non-empty names; error
 * codes keep only [A-Za-z0-9._-]; mapped URLs start with the endpoint. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "store/azure_auth.h"
#include "store/azure_sign.h"
#include "store/azure_xml.h"

/* The input's bytes from *at up to the next NUL (or the end), as a C string. */
static char *field(const uint8_t *d, size_t n, size_t *at) {
  size_t s = *at;
  while (*at < n && d[*at]) (*at)++;
  char *f = malloc(*at - s + 1);
  if (!f) abort();
  memcpy(f, d + s, *at - s);
  f[*at - s] = 0;
  if (*at < n) (*at)++;
  return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  unsigned op = data[0] % 4;
  const uint8_t *d = data + 1;
  size_t n = size - 1, at = 0;
  vd_err err = {0};
  if (op == 0) {
    vd_az_list l;
    if (vd_az_parse_list("az://c/", (const char *)d, n, &l, &err) == VD_OK) {
      for (int i = 0; i < l.n; i++) {
        if (!l.blobs[i].name[0] || l.blobs[i].info.size < 0) abort();
        if (l.blobs[i].info.etag[0] && (l.blobs[i].info.etag[0] != '"' || strlen(l.blobs[i].info.etag) < 2)) abort();
      }
      if (l.next_marker && !l.next_marker[0]) abort();
    } else if (l.n || l.blobs || l.next_marker) {
      abort();
    }
    vd_az_list_free(&l);
  } else if (op == 1) {
    char *hdr = field(d, n, &at), code[64];
    vd_az_error_code(hdr, (const char *)d + at, n - at, code);
    for (const char *c = code; *c; c++)
      if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-", *c)) abort();
    free(hdr);
  } else if (op == 2) {
    char *cs = field(d, n, &at), *az = field(d, n, &at), *u = NULL;
    vd_az_settings st = {cs, NULL, NULL, NULL, 0};
    vd_az_cred c;
    if (vd_az_cred_parse(&st, &c, &err) == VD_OK) {
      for (int dec = 0; dec < 2; dec++) { /* names literal (a driver's) and decoded (the backend's) */
        if (vd_az_blob_url(&c, az, dec, &u, &err) == VD_OK && strncmp(u, c.endpoint, strlen(c.endpoint))) abort();
        free(u);
        u = NULL;
        if (vd_az_list_url(&c, az, dec, 0, az, 5, &u, &err) == VD_OK && strncmp(u, c.endpoint, strlen(c.endpoint))) abort();
        free(u);
        u = NULL;
      }
    } else if (c.keylen) {
      abort(); /* a refused credential leaves no key behind */
    }
    free(cs);
    free(az);
  } else {
    char *verb = field(d, n, &at), *url = field(d, n, &at), *hs[8];
    int nh = 0;
    while (at < n && nh < 8) hs[nh++] = field(d, n, &at);
    char *auth = NULL;
    static const unsigned char key[] = "0123456789abcdef";
    if (vd_az_sign("acct", key, 16, verb, url, (const char *const *)hs, nh, &auth, &err) == VD_OK) {
      if (strncmp(auth, "SharedKey acct:", 15) || strlen(auth) != 15 + 44) abort();
    } else if (auth) {
      abort();
    }
    free(auth);
    for (int i = 0; i < nh; i++) free(hs[i]);
    free(verb);
    free(url);
  }
  return 0;
}
