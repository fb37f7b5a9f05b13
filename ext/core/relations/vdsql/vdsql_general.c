/* vdsql_version(), vdsql_config(key [, value]) and the vdsql_stats() relation. */
#include <stdio.h>
#include <stdlib.h>

#include "vd_catalog.h"

#define VDSQL_VERSION "0.1.0"

static vd_code version(vd_ctx *ctx, const vd_value *a, int n, vd_value *out, vd_err *err) {
  (void)ctx, (void)a, (void)n, (void)err;
  *out = vd_text(VDSQL_VERSION);
  return VD_OK;
}

static vd_code config(vd_ctx *ctx, const vd_value *a, int n, vd_value *out, vd_err *err) {
  char *key = vd_value_strdup(&a[0]), *val = NULL, *res = NULL;
  if (!key) return vd_fail(err, VD_INVALID, "vdsql_config: the key must be text");
  if (n > 1 && a[1].type != VD_NULL) {
    if (a[1].type == VD_TEXT) {
      val = vd_value_strdup(&a[1]);
    } else if (a[1].type == VD_INT || a[1].type == VD_REAL) {
      val = malloc(64);
      if (val && a[1].type == VD_INT) snprintf(val, 64, "%lld", (long long)a[1].i);
      if (val && a[1].type == VD_REAL) snprintf(val, 64, "%.17g", a[1].r);
    }
    if (!val) {
      vd_fail(err, VD_INVALID, "vdsql_config('%s'): the value must be text or a number", key);
      free(key);
      return VD_INVALID;
    }
  }
  vd_code rc = vd_config_apply(ctx, key, val, &res, err);
  free(key);
  free(val);
  if (!rc) *out = vd_owned_text(res);
  return rc;
}

const vd_function vd_fn_vdsql_version = {
    .name = "vdsql_version",
    .min_args = 0,
    .max_args = 0,
    .flags = 0,
    .result = VD_TEXT,
    .arg_types = {VD_NULL},
    .call = version,
    .args = "",
    .doc = "the extension's version"};
const vd_function vd_fn_vdsql_config = {
    .name = "vdsql_config",
    .min_args = 1,
    .max_args = 2,
    .flags = VD_FN_SETTER,
    .result = VD_TEXT,
    .arg_types = {VD_TEXT, VD_TEXT},
    .call = config,
    .args = "key [, value]",
    .doc = "a setting's value; with a value, sets it (or runs an action: 'stats' 'reset', 'cache' 'clear'); "
        "vdsql_config() as a table lists them all"};

/* vdsql_stats(): one row per backend. */
static const vd_colspec cols[] = {{"backend", VD_TEXT, 0}, {"requests", VD_INT, 0}, {"bytes", VD_INT, 0},
                                  {"retries", VD_INT, 0}, {"cache_hits", VD_INT, 0}};

typedef struct {
  vd_ctx *ctx;
  int row;
} stats_cur;

static vd_code st_open(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)a, (void)na, (void)f, (void)nf;
  stats_cur *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  c->ctx = ctx;
  *out = c;
  return VD_OK;
}
static vd_code st_next(void *cur, vd_err *err) {
  (void)err;
  ((stats_cur *)cur)->row++;
  return VD_OK;
}
static int st_eof(void *cur) { return ((stats_cur *)cur)->row >= VD_BE_COUNT; }
static int64_t st_rowid(void *cur) { return ((stats_cur *)cur)->row; }
static void st_close(void *cur) { free(cur); }
static vd_code st_column(void *cur, int col, vd_value *v, vd_err *err) {
  (void)err;
  stats_cur *c = cur;
  const vd_stats *s = &c->ctx->stats[c->row];
  switch (col) {
    case 0: *v = vd_text(vd_backend_name((vd_backend_id)c->row)); break;
    case 1: *v = vd_int(s->requests); break;
    case 2: *v = vd_int(s->bytes); break;
    case 3: *v = vd_int(s->retries); break;
    default: *v = vd_int(s->cache_hits); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_vdsql_stats = {
    .name = "vdsql_stats",
    VD_COLS(cols),
    .flags = VD_REL_BACKEND,
    .rows = 4, .requests = 0,
    .order_col = -1,
    .open = st_open,
    .next = st_next,
    .eof = st_eof,
    .column = st_column,
    .rowid = st_rowid,
    .close = st_close,
    .doc = "requests, bytes, retries and cache hits per backend (file, http, s3, az) of this connection"};
