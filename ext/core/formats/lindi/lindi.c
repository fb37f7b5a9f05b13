/* LINDI entry/index documents and archive opening (see lindi.h). */
#include "lindi.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/json.h"
#include "util/pyjson.h"
#include "util/utf8.h"

vd_code lindi_parse_entry(const char *text, size_t len, const char *where, int64_t *o, int64_t *d, int64_t *s,
                          vd_err *err) {
  cJSON *doc;
  if (vd_json_parse(text, len, where, &doc, err)) return err->code;
  const cJSON *ix = cJSON_GetObjectItemCaseSensitive(doc, "index");
  const char *n = NULL;
  vd_code rc = VD_OK;
  if (!cJSON_IsObject(ix))
    rc = vd_fail(err, VD_INVALID, "%s: .tar_entry.json has no \"index\" object", where);
  else if (vd_json_str(ix, "n", where, ".tar_entry.json index", &n, err) ||
           vd_json_int(ix, "o", where, ".tar_entry.json index", o, err) ||
           vd_json_int(ix, "d", where, ".tar_entry.json index", d, err) ||
           vd_json_int(ix, "s", where, ".tar_entry.json index", s, err))
    rc = err->code;
  else if (strcmp(n, LINDI_INDEX_NAME) != 0 || *o < 0 || *d < *o || *s < 0)
    rc = vd_fail(err, VD_INVALID, "%s: .tar_entry.json points at an implausible index (%s at %lld)", where, n,
                 (long long)*d);
  cJSON_Delete(doc);
  return rc;
}


static void put_str(vd_buf *b, const char *s) { vd_buf_append(b, s, strlen(s)); }

static void put_int(vd_buf *b, int64_t v) { /* snprintf per number dominated big index writes */
  char tmp[24], *e = tmp + sizeof tmp, *p = e;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do *--p = (char)('0' + u % 10); while (u /= 10);
  if (v < 0) *--p = '-';
  vd_buf_append(b, p, (size_t)(e - p));
}

static void entry_obj(vd_buf *b, const char *indent, const char *name, int64_t o, int64_t d, int64_t s) {
  put_str(b, "{\n"), put_str(b, indent), put_str(b, "  \"d\": "), put_int(b, d);
  put_str(b, ",\n"), put_str(b, indent), put_str(b, "  \"n\": "), vd_pyjson_string(b, name);
  put_str(b, ",\n"), put_str(b, indent), put_str(b, "  \"o\": "), put_int(b, o);
  put_str(b, ",\n"), put_str(b, indent), put_str(b, "  \"s\": "), put_int(b, s);
  put_str(b, "\n"), put_str(b, indent), put_str(b, "}");
}

vd_code lindi_format_entry(int64_t o, int64_t d, int64_t s, unsigned char out[LINDI_ENTRY_SIZE], vd_err *err) {
  vd_buf b = {0};
  vd_buf_append(&b, "{\n  \"index\": ", 13);
  entry_obj(&b, "  ", LINDI_INDEX_NAME, o, d, s);
  vd_buf_append(&b, "\n}", 2);
  if (!b.data) return vd_nomem(err);
  memset(out, ' ', LINDI_ENTRY_SIZE);
  memcpy(out, b.data, b.len);
  vd_buf_free(&b);
  return VD_OK;
}

vd_code lindi_format_entry_spare(int64_t o, int64_t d, int64_t s, const int64_t spare[4], int64_t gen,
                                 unsigned char out[LINDI_ENTRY_SIZE], vd_err *err) {
  vd_buf b = {0};
  put_str(&b, "{\n  \"index\": ");
  entry_obj(&b, "  ", LINDI_INDEX_NAME, o, d, s);
  if (gen > 0) put_str(&b, ",\n  \"vdsql_gen\": "), put_int(&b, gen);
  if (spare && spare[2] > 0) {
    put_str(&b, ",\n  \"vdsql_spare\": {\n    \"d\": "), put_int(&b, spare[1]);
    put_str(&b, ",\n    \"o\": "), put_int(&b, spare[0]);
    put_str(&b, ",\n    \"s\": "), put_int(&b, spare[2]);
    put_str(&b, ",\n    \"t\": "), put_int(&b, spare[3]);
    put_str(&b, "\n  }");
  }
  put_str(&b, "\n}");
  if (!b.data) return vd_nomem(err);
  if (b.len > LINDI_ENTRY_SIZE) { /* cannot happen with 19-digit numbers; never write a cut entry */
    vd_buf_free(&b);
    return vd_fail(err, VD_ERROR, ".tar_entry.json would exceed %d bytes", LINDI_ENTRY_SIZE);
  }
  memset(out, ' ', LINDI_ENTRY_SIZE);
  memcpy(out, b.data, b.len);
  vd_buf_free(&b);
  return VD_OK;
}

int lindi_parse_spare(const char *text, size_t len, int64_t spare[4], int64_t *gen) {
  cJSON *doc = cJSON_ParseWithLength(text, len);
  const cJSON *sp = cJSON_GetObjectItemCaseSensitive(doc, "vdsql_spare"),
              *g = cJSON_GetObjectItemCaseSensitive(doc, "vdsql_gen");
  *gen = cJSON_IsNumber(g) && g->valuedouble >= 0 && g->valuedouble < 9e15 ? (int64_t)g->valuedouble : 0;
  static const char *const keys[4] = {"o", "d", "s", "t"};
  int rc = cJSON_IsObject(sp) ? 0 : -1;
  for (int i = 0; i < 4 && !rc; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(sp, keys[i]);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 9e15) || v->valuedouble != floor(v->valuedouble))
      rc = -1; /* in range and whole before the cast (NaN fails the range test) */
    else spare[i] = (int64_t)v->valuedouble;
  }
  cJSON_Delete(doc);
  return rc;
}

vd_code lindi_format_index(const lindi_file *files, int n, vd_buf *out, vd_err *err) {
  out->len = 0;
  vd_buf_append(out, "{\n  \"files\": [", 14);
  for (int i = 0; i < n; i++) {
    vd_buf_append(out, i ? ",\n    " : "\n    ", i ? 6 : 5);
    entry_obj(out, "    ", files[i].name, files[i].o, files[i].d, files[i].s);
  }
  vd_buf_append(out, n ? "\n  ]\n}" : "]\n}", n ? 6 : 3);
  if (!out->data) return vd_nomem(err);
  return VD_OK;
}

vd_code lindi_stream_index(vd_ctx *vctx, const lindi_file *files, int n, lindi_sink sink, void *ctx, int64_t *len,
                           vd_err *err) {
  vd_buf b = {0};
  vd_code rc = VD_OK;
  *len = 0;
  vd_buf_append(&b, "{\n  \"files\": [", 14);
  for (int i = 0; i <= n && !rc; i++) {
    if (i == n)
      vd_buf_append(&b, n ? "\n  ]\n}" : "]\n}", n ? 6 : 3);
    else {
      vd_buf_append(&b, i ? ",\n    " : "\n    ", i ? 6 : 5);
      entry_obj(&b, "    ", files[i].name, files[i].o, files[i].d, files[i].s);
    }
    if (!b.data) return vd_nomem(err);
    if (b.len >= (1 << 20) || i == n) {
      *len += (int64_t)b.len;
      rc = vd_ctx_check_interrupt(vctx, err);
      if (!rc && sink) rc = sink(ctx, b.data, b.len, err);
      b.len = 0;
    }
  }
  vd_buf_free(&b);
  return rc;
}

int64_t lindi_grow(int64_t len) {
  int64_t s = LINDI_INITIAL_SIZE;
  while (s < 4 * len) s *= 2;
  return s;
}

static char *key(const char *what, const char *url) {
  char *k = malloc(strlen(what) + strlen(url) + 2);
  if (k) sprintf(k, "%s:%s", what, url);
  return k;
}

void lindi_invalidate(vd_ctx *ctx, const char *url) {
  char *k1 = key("lindi-prefix", url), *k2 = key("lindi-index", url), *k3 = key("lindi-size", url);
  if (k1) vd_store_invalidate(ctx, k1);
  if (k2) vd_store_invalidate(ctx, k2);
  if (k3) vd_store_invalidate(ctx, k3);
  free(k1);
  free(k2);
  free(k3);
}

/* The prefix through the cache, and the object's size that its answer gave (a 206's
 * Content-Range) kept beside it: a .lindi.json bigger than the prefix is then known
 * whole without asking again (the refs stream probes its end at once). */
static vd_code fetch_prefix(vd_ctx *ctx, const char *url, const char *kp, vd_blob **out, vd_err *err) {
  if ((*out = vd_cache_lookup(ctx, url, kp))) return VD_OK;
  vd_buf b = {0};
  vd_objinfo info;
  memset(&info, 0, sizeof info);
  info.size = -1;
  vd_code rc = vd_get(ctx, url, 0, ctx->cfg.lindi_prefix, &b, &info, err);
  int64_t size = info.size;
  vd_objinfo_free(&info);
  if (rc) return rc;
  if (!(*out = vd_blob_from_buf(&b))) {
    vd_buf_free(&b);
    return vd_nomem(err);
  }
  vd_cache_store(ctx, kp, *out);
  char *ks = key("lindi-size", url), num[24];
  vd_buf sb = {0};
  if (ks && size >= 0 && !vd_buf_append(&sb, num, (size_t)snprintf(num, sizeof num, "%lld", (long long)size))) {
    vd_blob *v = vd_blob_from_buf(&sb);
    if (v) vd_cache_store(ctx, ks, v), vd_blob_unref(v);
    else vd_buf_free(&sb);
  }
  free(ks);
  return VD_OK;
}

int64_t lindi_size(vd_ctx *ctx, const char *url) {
  char *ks = key("lindi-size", url), num[24];
  vd_blob *v = ks ? vd_cache_lookup(ctx, url, ks) : NULL;
  int64_t size = -1;
  if (v && v->len < sizeof num) {
    memcpy(num, v->data, v->len);
    num[v->len] = 0;
    size = strtoll(num, NULL, 10);
  }
  vd_blob_unref(v);
  free(ks);
  return size;
}

int lindi_is_json_form(const unsigned char *p, size_t n) {
  if (n >= 262 && memcmp(p + 257, "ustar", 5) == 0) return 0; /* a tar, whatever its first name */
  size_t i = 0;
  while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++; /* JSON's whitespace */
  return i < n && p[i] == '{';
}

vd_code lindi_json_form_fail(vd_err *err, const char *where) {
  return vd_fail(err, VD_UNSUPPORTED, "%s: a .lindi.json (LINDI's JSON form) has no tar members; lindi_refs reads it",
                 where);
}

vd_code lindi_prefix(vd_ctx *ctx, const char *url, vd_blob **out, vd_err *err) {
  char *kp = key("lindi-prefix", url);
  vd_code rc = kp ? fetch_prefix(ctx, url, kp, out, err) : vd_nomem(err);
  free(kp);
  return rc;
}

vd_code lindi_parse_refs(const char *text, size_t len, const char *where, cJSON **doc, vd_err *err) {
  if (vd_json_parse(text, len, where, doc, err)) return err->code;
  size_t at = 0;
  int k = vd_pyjson_keep(*doc, text, len, "refs", &at);
  if (!k) return VD_OK;
  cJSON_Delete(*doc);
  *doc = NULL;
  if (k == -1) return vd_nomem(err);
  if (k == -2)
    return vd_fail(err, VD_INVALID, "%s: malformed JSON near byte %zu of %zu: a string with a raw NUL byte or a bad escape",
                   where, at, len);
  return vd_fail(err, VD_ERROR, "%s: vdsql's reading of the refs disagrees with cJSON's (a bug)", where);
}

/* The index's text from the archive: what the prefix already holds, then ranges that
 * start at s/4 (a freshly appended index holds at most s/4 of text: growth rule) and
 * double, each at most LINDI_PIECE so that memory stays flat whatever the index's size;
 * the reader asks for the next one only while its JSON value is incomplete. */
#define LINDI_PIECE (2 << 20)
typedef struct index_src {
  vd_ctx *ctx;
  const char *url, *where;
  const vd_blob *prefix;
  int64_t id, is, have, step;
  vd_buf part;
} index_src;

static vd_code index_more(void *arg, const unsigned char **p, size_t *n, vd_err *err) {
  index_src *s = arg;
  *n = 0;
  if (s->have == 0 && (int64_t)s->prefix->len > s->id) {
    int64_t k = (int64_t)s->prefix->len - s->id < s->is ? (int64_t)s->prefix->len - s->id : s->is;
    *p = s->prefix->data + s->id, *n = (size_t)k;
    s->have = k;
    return VD_OK;
  }
  if (s->have >= s->is) return VD_OK;
  int64_t k = s->is - s->have < s->step ? s->is - s->have : s->step;
  s->step = s->step * 2 < LINDI_PIECE ? s->step * 2 : LINDI_PIECE;
  vd_buf_free(&s->part);
  vd_code rc = vd_get(s->ctx, s->url, s->id + s->have, k, &s->part, NULL, err);
  if (rc) return rc;
  if ((int64_t)s->part.len != k)
    return vd_fail(err, VD_INVALID, "%s: the archive ends inside .tar_index.json (at byte %lld)", s->where,
                   (long long)(s->id + s->have + (int64_t)s->part.len));
  *p = s->part.data, *n = s->part.len;
  s->have += k;
  return VD_OK;
}

vd_code lindi_open(vd_ctx *ctx, const char *url, lindi_index *ix, vd_err *err) {
  memset(ix, 0, sizeof *ix);
  char where[600];
  vd_url_redact(url, where, sizeof where);
  char *kp = key("lindi-prefix", url), *ki = key("lindi-index", url);
  vd_blob *prefix = NULL, *packed = NULL;
  vd_code rc = VD_OK;
  if (!kp || !ki) {
    rc = vd_nomem(err);
    goto done;
  }
  if ((rc = fetch_prefix(ctx, url, kp, &prefix, err))) goto done;
  if (lindi_is_json_form(prefix->data, prefix->len)) {
    rc = lindi_json_form_fail(err, where);
    goto done;
  }
  if (prefix->len < 1536 || memcmp(prefix->data + 257, "ustar", 5) != 0) {
    rc = vd_fail(err, VD_INVALID, "%s: not a LINDI archive (no ustar .tar_entry.json at the start)", where);
    goto done;
  }
  if ((rc = lindi_parse_entry((const char *)prefix->data + 512, LINDI_ENTRY_SIZE, where, &ix->io, &ix->id, &ix->is,
                              err)))
    goto done;
  char iwhere[700];
  snprintf(iwhere, sizeof iwhere, "%s: .tar_index.json at %lld", where, (long long)ix->id);
  /* the cache keeps the parsed index packed (about a third of its JSON text), shared by
   * every cursor; it is checked against the entry again, which may have changed */
  if ((packed = vd_cache_lookup(ctx, url, ki))) {
    lindi_index_borrow(ix, packed);
    rc = lindi_index_check(ix, iwhere, err);
    goto done;
  }
  index_src src = {ctx, url, where, prefix, ix->id, ix->is, 0, ix->is / 4 > 4096 ? ix->is / 4 : 4096, {0}};
  if (src.step > LINDI_PIECE) src.step = LINDI_PIECE;
  rc = lindi_read_index(index_more, &src, ix->is, iwhere, ix, NULL, err);
  vd_buf_free(&src.part);
  if (!rc && !(packed = lindi_index_pack(ix))) rc = vd_nomem(err);
  if (!rc) vd_cache_store(ctx, ki, packed);
done:
  if (rc) lindi_index_free(ix);
  vd_blob_unref(prefix);
  vd_blob_unref(packed);
  free(kp);
  free(ki);
  return rc;
}

vd_code lindi_read_member(vd_ctx *ctx, const char *url, const char *name, int64_t off, int64_t size, int size_given,
                          vd_buf *out, vd_err *err) {
  lindi_index ix = {0};
  vd_buf b = {0};
  char where[600];
  vd_url_redact(url, where, sizeof where);
  vd_code rc = lindi_open(ctx, url, &ix, err);
  if (rc) goto done;
  const lindi_file *f = lindi_find(&ix, name);
  if (!f) {
    rc = vd_fail(err, VD_NOTFOUND, "%s: no member \"%s\" in the index", where, name);
    goto done;
  }
  if (size < 0 && off >= 0 && off <= f->s) size = f->s - off; /* off in range first: f->s - off cannot wrap */
  if (off < 0 || size < 0 || off > f->s || size > f->s - off) {
    int64_t end; /* for the message only, saturated where off + size would wrap */
    if (!size_given) end = f->s; /* no size given: to the end of the member */
    else if (__builtin_add_overflow(off, size, &end)) end = off < 0 ? INT64_MIN : INT64_MAX;
    rc = vd_fail(err, VD_INVALID, "%s: bytes %lld..%lld are outside member \"%s\" (%lld bytes)", where, (long long)off,
                 (long long)end, name, (long long)f->s);
    goto done;
  }
  if (size > 0 && (rc = vd_get(ctx, url, f->d + off, size, &b, NULL, err))) goto done;
  if ((int64_t)b.len != size) {
    rc = vd_fail(err, VD_INVALID, "%s: the archive ends inside member \"%s\"", where, name);
    goto done;
  }
  *out = b;
  b = (vd_buf){0};
done:
  vd_buf_free(&b);
  lindi_index_free(&ix);
  return rc;
}
