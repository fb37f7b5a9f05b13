/* Test driver for tests/store/azure_sign.t: sends ONE Azure Blob request whose URL,
 * Shared Key signature and answer parsing are vdsql's (store/azure_*.h), over plain
 * libcurl easy calls (the backend's transport is not used here), and prints the answer
 * as JSON. Credentials come from the environment (AZURE_STORAGE_*), as the backend
 * reads them.
 *   azdrive [-m name=value]... [-H 'Header: value']... [-d bodyfile] VERB az://container/key
 *   azdrive -l [-k marker] [-n maxresults] az://container/prefix      (List Blobs)
 * Output: {"url": redacted, "status": N, "headers": {...lower-case...}, "body_b64": ...,
 *          "error_code": ..., "error": vdsql's wording, "list": {"blobs": [...], "next_marker": ...}} */
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/azure_auth.h"
#include "store/azure_sign.h"
#include "store/azure_xml.h"
#include "store/store.h"
#include "util/base64.h"
#include "vd_buf.h"

typedef struct {
  const unsigned char *p;
  size_t n, at;
} src;

static size_t rd(char *b, size_t sz, size_t nm, void *u) {
  src *s = u;
  size_t k = sz * nm < s->n - s->at ? sz * nm : s->n - s->at;
  memcpy(b, s->p + s->at, k);
  s->at += k;
  return k;
}

static size_t wr(char *b, size_t sz, size_t nm, void *u) { return vd_buf_append(u, b, sz * nm) ? 0 : sz * nm; }

static size_t hdr(char *b, size_t sz, size_t nm, void *u) {
  cJSON **h = u;
  size_t n = sz * nm;
  if (n >= 5 && strncmp(b, "HTTP/", 5) == 0) { /* a new answer (after 100 Continue): start over */
    cJSON_Delete(*h);
    *h = cJSON_CreateObject();
    return n;
  }
  const char *c = memchr(b, ':', n);
  if (!c) return n;
  char name[256], val[8192];
  size_t nl = (size_t)(c - b) < sizeof name - 1 ? (size_t)(c - b) : sizeof name - 1;
  for (size_t i = 0; i < nl; i++) name[i] = (char)tolower((unsigned char)b[i]);
  name[nl] = 0;
  const char *v = c + 1, *e = b + n;
  while (v < e && (*v == ' ' || *v == '\t')) v++;
  while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' ')) e--;
  snprintf(val, sizeof val, "%.*s", (int)(e - v), v);
  cJSON_DeleteItemFromObject(*h, name);
  cJSON_AddStringToObject(*h, name, val);
  return n;
}

static void die(const char *msg) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "error", msg);
  cJSON_AddNumberToObject(o, "status", 0); /* refused before any request */
  char *s = cJSON_PrintUnformatted(o);
  puts(s);
  free(s);
  cJSON_Delete(o);
  exit(2);
}

int main(int argc, char **argv) {
  const char *hs[64];
  int nh = 0, list = 0, maxres = 0, opt;
  const char *marker = NULL, *bodyfile = NULL;
  static char metabuf[16][512];
  int nmeta = 0;
  while ((opt = getopt(argc, argv, "m:H:d:lk:n:")) != -1) {
    if (nh >= 48) die("too many headers");
    if (opt == 'm' && nmeta < 16) {
      const char *eq = strchr(optarg, '=');
      if (!eq) die("-m name=value");
      snprintf(metabuf[nmeta], sizeof metabuf[nmeta], "x-ms-meta-%.*s: %s", (int)(eq - optarg), optarg, eq + 1);
      hs[nh++] = metabuf[nmeta++];
    } else if (opt == 'H') {
      hs[nh++] = optarg;
    } else if (opt == 'd') {
      bodyfile = optarg;
    } else if (opt == 'l') {
      list = 1;
    } else if (opt == 'k') {
      marker = optarg;
    } else if (opt == 'n') {
      maxres = atoi(optarg);
    } else {
      die("usage: azdrive [-m n=v] [-H h] [-d file] VERB az://c/k | azdrive -l [-k marker] [-n max] az://c/prefix");
    }
  }
  if (optind + (list ? 1 : 2) != argc) die("usage: azdrive [-m n=v] [-H h] [-d file] VERB az://c/k | azdrive -l ...");
  const char *verb = list ? "GET" : argv[optind], *az = argv[argc - 1];

  vd_config cfg;
  memset(&cfg, 0, sizeof cfg); /* no azure_* settings: the environment */
  cfg.env_credentials = 1;     /* as vd_ctx_new's default: the environment stands in */
  vd_az_cred cred;
  vd_err err = {0};
  char *url = NULL;
  if (vd_az_cred_load(&cfg, &cred, &err)) die(err.msg);
  if ((list ? vd_az_list_url(&cred, az, 0, marker, maxres, &url, &err) : vd_az_blob_url(&cred, az, 0, &url, &err))) die(err.msg);

  vd_buf body = {0};
  if (bodyfile) {
    FILE *f = fopen(bodyfile, "rb");
    char b[65536];
    size_t k;
    if (!f) die("cannot open the body file");
    while ((k = fread(b, 1, sizeof b, f)) > 0) vd_buf_append(&body, b, k);
    fclose(f);
  }
  char date[64], dh[96], clen[64];
  vd_az_date(time(NULL), date);
  snprintf(dh, sizeof dh, "x-ms-date: %s", date);
  hs[nh++] = dh;
  hs[nh++] = "x-ms-version: " VD_AZ_VERSION;
  if (strcmp(verb, "PUT") == 0) {
    snprintf(clen, sizeof clen, "Content-Length: %zu", body.len);
    hs[nh++] = clen;
    if (body.len) hs[nh++] = "Content-Type: application/octet-stream";
    hs[nh++] = "x-ms-blob-type: BlockBlob"; /* Put Blob creates a block blob */
  }
  /* libcurl adds an Accept header (not signed, so harmless) and nothing else that is signed:
   * an upload (CURLOPT_UPLOAD) sends no Content-Type of its own */
  char *auth = NULL, authh[512];
  if (cred.keylen) {
    if (vd_az_sign(cred.account, cred.key, cred.keylen, verb, url, hs, nh, &auth, &err)) die(err.msg);
    snprintf(authh, sizeof authh, "Authorization: %s", auth);
    hs[nh++] = authh;
  }

  CURL *c = curl_easy_init();
  struct curl_slist *sl = NULL;
  for (int i = 0; i < nh; i++) sl = curl_slist_append(sl, hs[i]);
  vd_buf out = {0};
  cJSON *h = cJSON_CreateObject();
  src in = {body.data, body.len, 0};
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, sl);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, wr);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, hdr);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &h);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
  if (strcmp(verb, "PUT") == 0) {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, rd);
    curl_easy_setopt(c, CURLOPT_READDATA, &in);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)body.len);
  } else if (strcmp(verb, "HEAD") == 0) {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (strcmp(verb, "GET") != 0) {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, verb);
  }
  CURLcode cc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);

  cJSON *o = cJSON_CreateObject();
  char where[600];
  vd_url_redact(url, where, sizeof where);
  cJSON_AddStringToObject(o, "url", where);
  cJSON_AddStringToObject(o, "signed", cred.keylen ? "shared key" : "sas");
  if (cc != CURLE_OK) cJSON_AddStringToObject(o, "curl_error", curl_easy_strerror(cc));
  cJSON_AddNumberToObject(o, "status", (double)status);
  cJSON_AddItemToObject(o, "headers", h);
  char *b64 = vd_base64_encode(out.data ? out.data : (const unsigned char *)"", out.len);
  cJSON_AddStringToObject(o, "body_b64", b64);
  free(b64);
  if (status >= 300) {
    char code[64];
    cJSON *ec = cJSON_GetObjectItem(h, "x-ms-error-code");
    vd_az_error_code(cJSON_IsString(ec) ? ec->valuestring : NULL, (const char *)out.data, out.len, code);
    cJSON_AddStringToObject(o, "error_code", code);
    vd_err e2 = {0};
    char azr[600];
    vd_url_redact(az, azr, sizeof azr); /* an az:// URL may carry a SAS */
    vd_az_fail(&e2, azr, status, code);
    cJSON_AddStringToObject(o, "error", e2.msg);
  } else if (list) {
    vd_az_list l;
    cJSON *lj = cJSON_AddObjectToObject(o, "list");
    if (vd_az_parse_list(where, (const char *)out.data, out.len, &l, &err)) {
      cJSON_AddStringToObject(lj, "error", err.msg);
    } else {
      cJSON *arr = cJSON_AddArrayToObject(lj, "blobs");
      for (int i = 0; i < l.n; i++) {
        cJSON *b = cJSON_CreateObject(), *m = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "name", l.blobs[i].name);
        cJSON_AddNumberToObject(b, "size", (double)l.blobs[i].info.size);
        cJSON_AddStringToObject(b, "etag", l.blobs[i].info.etag);
        cJSON_AddNumberToObject(b, "mtime", (double)l.blobs[i].info.mtime);
        for (int k = 0; k < l.blobs[i].info.nmeta; k++)
          cJSON_AddStringToObject(m, l.blobs[i].info.meta[k].key, l.blobs[i].info.meta[k].value);
        cJSON_AddItemToObject(b, "metadata", m);
        cJSON_AddItemToArray(arr, b);
      }
      if (l.next_marker) cJSON_AddStringToObject(lj, "next_marker", l.next_marker);
      vd_az_list_free(&l);
    }
  }
  char *s = cJSON_PrintUnformatted(o);
  puts(s);
  free(s);
  cJSON_Delete(o);
  curl_slist_free_all(sl);
  curl_easy_cleanup(c);
  vd_buf_free(&out);
  vd_buf_free(&body);
  free(auth);
  free(url);
  vd_az_cred_clear(&cred);
  return 0;
}
