/* A command line over the store interface (vd_list, vd_head, vd_get), for the object
 * store suites (tests/store/s3.t): what no SQL relation exposes yet (listings) is
 * checked against an independent client this way. Settings from the environment.
 *   storetool list URL PAGE [folder]
 *                             every page: "page N", then "key<TAB>size<TAB>etag", each
 *                             followed by "meta<TAB>key<TAB>value" lines when the listing
 *                             gives metadata (Azure); with folder (VD_LIST_FOLDER) the
 *                             page's sub-folders follow as "prefix<TAB>name/"
 *   storetool head URL        "size<TAB>etag", then "meta<TAB>key<TAB>value" lines
 *   storetool get URL [OFF LEN]  the bytes to stdout
 *   storetool put URL [--if-match ETAG | --if-none-match] [KEY=VALUE...] < body
 *                             prints the new etag
 *   storetool del URL
 *   storetool delmany URL < names
 *                             deletes URL joined with each line's name (vd_delete_many), and
 *                             prints one line per name, in order: "ok", or "error<TAB>msg"
 * Last line on stderr: "requests N" of the URL's backend; errors: "error: msg", exit
 * status 10 + the vd_code. STORETOOL_CONFIG="key=value;key=value": vdsql_config settings
 * applied first (those the environment has no variable for: connect_to, ca_file). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

/* exit status 10 + the vd_code, so a test can tell VD_PRECONDITION from other faults */
static int fail(vd_err *e) {
  fprintf(stderr, "error: %s\n", e->msg);
  return 10 + (int)e->code;
}

/* STORETOOL_CONFIG's settings applied to ctx: VD_OK, or the first refusal. */
static vd_code configure(vd_ctx *ctx, vd_err *err) {
  const char *cfg = getenv("STORETOOL_CONFIG");
  char *all = cfg ? strdup(cfg) : NULL, *save = NULL;
  vd_code rc = VD_OK;
  for (char *kv = all ? strtok_r(all, ";", &save) : NULL; kv && !rc; kv = strtok_r(NULL, ";", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq) {
      rc = vd_fail(err, VD_INVALID, "STORETOOL_CONFIG: '%s' is not key=value", kv);
    } else {
      *eq = 0;
      rc = vd_config_apply(ctx, kv, eq + 1, NULL, err);
    }
  }
  free(all);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: storetool list URL PAGE [folder] | head URL | get URL [OFF LEN]\n");
    return 2;
  }
  vd_ctx *ctx = vd_ctx_new();
  vd_err err = {0};
  const char *url = argv[2];
  int rc = 0;
  if (configure(ctx, &err)) return fail(&err);
  if (strcmp(argv[1], "list") == 0 && (argc == 4 || (argc == 5 && strcmp(argv[4], "folder") == 0))) {
    char *token = NULL;
    for (int page = 1;; page++) {
      vd_listing l;
      if (vd_list_with(ctx, url, token, atoi(argv[3]), argc == 5 ? VD_LIST_FOLDER : 0, &l, &err)) {
        rc = fail(&err);
        break;
      }
      printf("page %d\n", page);
      for (int i = 0; i < l.n; i++) {
        printf("%s\t%lld\t%s\n", l.ent[i].key, (long long)l.ent[i].info.size, l.ent[i].info.etag);
        for (int k = 0; l.ent[i].has_meta && k < l.ent[i].info.nmeta; k++) /* listings that give it (Azure) */
          printf("meta\t%s\t%s\n", l.ent[i].info.meta[k].key, l.ent[i].info.meta[k].value);
      }
      for (int i = 0; i < l.nprefixes; i++) printf("prefix\t%s\n", l.prefixes[i]);
      free(token);
      token = l.next ? strdup(l.next) : NULL;
      vd_listing_free(&l);
      if (!token) break;
    }
    free(token);
  } else if (strcmp(argv[1], "head") == 0) {
    vd_objinfo i;
    if (vd_head(ctx, url, &i, &err)) {
      rc = fail(&err);
    } else {
      printf("%lld\t%s\n", (long long)i.size, i.etag);
      for (int k = 0; k < i.nmeta; k++) printf("meta\t%s\t%s\n", i.meta[k].key, i.meta[k].value);
      vd_objinfo_free(&i);
    }
  } else if (strcmp(argv[1], "get") == 0) {
    vd_buf b = {0};
    if (vd_get(ctx, url, argc > 4 ? atoll(argv[3]) : 0, argc > 4 ? atoll(argv[4]) : -1, &b, NULL, &err)) {
      rc = fail(&err);
    } else {
      if (b.len) fwrite(b.data, 1, b.len, stdout); /* data is NULL when empty */
      vd_buf_free(&b);
    }
  } else if (strcmp(argv[1], "put") == 0) {
    vd_buf body = {0};
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, stdin)) > 0) vd_buf_append(&body, chunk, k);
    vd_putreq p = {0};
    vd_kv meta[32];
    p.url = url;
    p.body = body.data;
    p.len = body.len;
    p.meta = meta;
    for (int i = 3; i < argc; i++) {
      if (strcmp(argv[i], "--if-match") == 0 && i + 1 < argc) {
        p.if_match = argv[++i];
      } else if (strcmp(argv[i], "--if-none-match") == 0) {
        p.if_none_match = 1;
      } else if (strchr(argv[i], '=') && p.nmeta < 32) {
        char *eq = strchr(argv[i], '=');
        *eq = 0;
        meta[p.nmeta].key = argv[i];
        meta[p.nmeta++].value = eq + 1;
      }
    }
    if (vd_put(ctx, &p, &err))
      rc = fail(&err);
    else
      printf("%s\n", p.etag);
    vd_buf_free(&body);
  } else if (strcmp(argv[1], "del") == 0) {
    if (vd_delete(ctx, url, &err)) rc = fail(&err);
  } else if (strcmp(argv[1], "delmany") == 0) {
    vd_delreq *d = NULL;
    int n = 0, cap = 0;
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
      line[strcspn(line, "\n")] = 0;
      if (n == cap && !(d = realloc(d, (size_t)(cap = cap ? 2 * cap : 256) * sizeof *d))) return 3;
      memset(&d[n], 0, sizeof d[n]);
      if (!(d[n++].url = vd_url_join(url, line))) return 3;
    }
    vd_code first = vd_delete_many(ctx, d, n);
    for (int i = 0; i < n; i++) {
      if (d[i].rc)
        printf("error\t%s\n", d[i].err.msg);
      else
        printf("ok\n");
      free((char *)d[i].url);
    }
    free(d);
    if (first) rc = 10 + (int)first;
  } else {
    fprintf(stderr, "storetool: unknown command %s\n", argv[1]);
    rc = 2;
  }
  fprintf(stderr, "requests %lld\n", (long long)ctx->stats[vd_url_backend(url)].requests);
  vd_ctx_free(ctx);
  return rc;
}
