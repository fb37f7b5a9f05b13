/* LINDI entry/index documents and archive opening (see lindi.h). */
#include "lindi.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../store/store.h"
#include "../util/json.h"
#include "../util/pyjson.h"
#include "../util/utf8.h"

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

int lindi_index_add(lindi_index *ix, const char *name, int64_t o, int64_t d, int64_t s) {
  if (ix->n == ix->cap) {
    int cap = ix->cap ? ix->cap * 2 : 64;
    lindi_file *f = realloc(ix->files, cap * sizeof *f);
    if (!f) return -1;
    ix->files = f;
    ix->cap = cap;
  }
  char *nm = strdup(name);
  if (!nm) return -1;
  ix->files[ix->n++] = (lindi_file){nm, o, d, s};
  return 0;
}

static const lindi_index *sort_ix;
static int by_name_cmp(const void *a, const void *b) {
  return strcmp(sort_ix->files[*(const int *)a].name, sort_ix->files[*(const int *)b].name);
}

void lindi_index_sort(lindi_index *ix) {
  free(ix->by_name);
  ix->by_name = malloc((ix->n ? ix->n : 1) * sizeof *ix->by_name);
  if (!ix->by_name) return;
  for (int i = 0; i < ix->n; i++) ix->by_name[i] = i;
  sort_ix = ix; /* qsort has no context argument; the core is single-threaded per context */
  qsort(ix->by_name, ix->n, sizeof *ix->by_name, by_name_cmp);
}

const lindi_file *lindi_find(const lindi_index *ix, const char *name) {
  if (!ix->by_name) {
    for (int i = 0; i < ix->n; i++)
      if (strcmp(ix->files[i].name, name) == 0) return &ix->files[i];
    return NULL;
  }
  int a = 0, b = ix->n;
  while (a < b) {
    int m = (a + b) / 2, c = strcmp(ix->files[ix->by_name[m]].name, name);
    if (c == 0) return &ix->files[ix->by_name[m]];
    if (c < 0) a = m + 1; else b = m;
  }
  return NULL;
}

void lindi_index_free(lindi_index *ix) {
  for (int i = 0; i < ix->n; i++) free(ix->files[i].name);
  free(ix->files);
  free(ix->by_name);
  memset(ix, 0, sizeof *ix);
}

vd_code lindi_parse_index(const char *text, size_t len, const char *where, lindi_index *ix, vd_err *err) {
  cJSON *doc;
  if (vd_json_parse(text, len, where, &doc, err)) return err->code;
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(doc, "files"), *f;
  vd_code rc = VD_OK;
  if (!cJSON_IsArray(files)) {
    rc = vd_fail(err, VD_INVALID, "%s: .tar_index.json has no \"files\" list", where);
    goto done;
  }
  int i = 0;
  cJSON_ArrayForEach(f, files) {
    char ctx[48];
    snprintf(ctx, sizeof ctx, "files[%d]", i++);
    const char *n;
    int64_t o, d, s;
    if (!cJSON_IsObject(f)) {
      rc = vd_fail(err, VD_INVALID, "%s: %s is not an object", where, ctx);
      goto done;
    }
    if (vd_json_str(f, "n", where, ctx, &n, err) || vd_json_int(f, "o", where, ctx, &o, err) ||
        vd_json_int(f, "d", where, ctx, &d, err) || vd_json_int(f, "s", where, ctx, &s, err)) {
      rc = err->code;
      goto done;
    }
    if (o < 0 || d < o + 512 || s < 0) {
      rc = vd_fail(err, VD_INVALID, "%s: %s (%s) has impossible offsets", where, ctx, n);
      goto done;
    }
    if (lindi_index_add(ix, n, o, d, s)) {
      rc = vd_nomem(err);
      goto done;
    }
  }
  lindi_index_sort(ix);
  if (!ix->by_name) {
    rc = vd_nomem(err);
    goto done;
  }
  for (int k = 1; k < ix->n; k++) { /* sorted by name: a name listed twice sits next to itself */
    const char *a = ix->files[ix->by_name[k - 1]].name, *b = ix->files[ix->by_name[k]].name;
    if (strcmp(a, b) == 0) {
      rc = vd_fail(err, VD_INVALID, "%s: the index lists \"%s\" twice (files[%d] and files[%d])", where, b,
                   ix->by_name[k - 1] < ix->by_name[k] ? ix->by_name[k - 1] : ix->by_name[k],
                   ix->by_name[k - 1] < ix->by_name[k] ? ix->by_name[k] : ix->by_name[k - 1]);
      goto done;
    }
  }
  const lindi_file *e = lindi_find(ix, LINDI_ENTRY_NAME), *x = lindi_find(ix, LINDI_INDEX_NAME);
  if (!e || e->o != 0 || e->d != 512 || e->s != LINDI_ENTRY_SIZE)
    rc = vd_fail(err, VD_INVALID, "%s: the index does not list .tar_entry.json at 0/512/1024", where);
  else if (!x || x->o != ix->io || x->d != ix->id || x->s != ix->is)
    rc = vd_fail(err, VD_INVALID, "%s: the index's own entry disagrees with .tar_entry.json", where);
done:
  cJSON_Delete(doc);
  if (rc) lindi_index_free(ix);
  return rc;
}

/* Appends a JSON string the way Python's json.dumps writes it (ensure_ascii): \" \\ \b \f
 * \n \r \t as two characters, other control characters, DEL and everything past ASCII
 * as \u escapes (lowercase hex, surrogate pairs past U+FFFF). Bytes that are not UTF-8
 * (never in what vdsql writes: names and keys are checked) become \u0080..\u00ff, so
 * the output is always JSON that readers accept. */
int lindi_json_string_n(vd_buf *out, const char *s, size_t len) {
  int bad = vd_buf_append(out, "\"", 1);
  const unsigned char *p = (const unsigned char *)s, *end = p + len;
  char tmp[16];
  while (p < end) {
    const unsigned char *run = p; /* plain printable ASCII is copied in one go */
    while (p < end && *p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\') p++;
    if (p > run) bad |= vd_buf_append(out, run, (size_t)(p - run));
    if (p == end) break;
    unsigned c = *p;
    int n = 1;
    if (c >= 0x80 && !(n = vd_utf8_seq(p, (size_t)(end - p), &c))) n = 1, c = *p;
    const char *e = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b" : c == '\f' ? "\\f"
                  : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
    if (e) {
      bad |= vd_buf_append(out, e, 2);
    } else if (c < 0x10000) {
      snprintf(tmp, sizeof tmp, "\\u%04x", c);
      bad |= vd_buf_append(out, tmp, 6);
    } else {
      c -= 0x10000;
      snprintf(tmp, sizeof tmp, "\\u%04x\\u%04x", 0xd800 + (c >> 10), 0xdc00 + (c & 0x3ff));
      bad |= vd_buf_append(out, tmp, 12);
    }
    p += n;
  }
  bad |= vd_buf_append(out, "\"", 1);
  return bad ? -1 : 0;
}

void lindi_json_string(vd_buf *out, const char *s) { lindi_json_string_n(out, s, strlen(s)); }

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
  put_str(b, ",\n"), put_str(b, indent), put_str(b, "  \"n\": "), lindi_json_string(b, name);
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

vd_code lindi_stream_index(const lindi_file *files, int n, lindi_sink sink, void *ctx, int64_t *len, vd_err *err) {
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
      if (sink) rc = sink(ctx, b.data, b.len, err);
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
  char *k1 = key("lindi-prefix", url), *k2 = key("lindi-index", url);
  if (k1) vd_store_invalidate(ctx, k1);
  if (k2) vd_store_invalidate(ctx, k2);
  free(k1);
  free(k2);
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
  vd_code rc = kp ? vd_fetch_range(ctx, url, 0, ctx->cfg.lindi_prefix, kp, out, err) : vd_nomem(err);
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

/* A complete JSON value (then only whitespace) in p[0..n)? Parses to find out. */
static int complete(const char *p, size_t n) {
  cJSON *j = cJSON_ParseWithLengthOpts(p, n, NULL, 0);
  cJSON_Delete(j);
  return j != NULL;
}

vd_code lindi_open(vd_ctx *ctx, const char *url, lindi_index *ix, vd_err *err) {
  memset(ix, 0, sizeof *ix);
  char where[600];
  vd_url_redact(url, where, sizeof where);
  char *kp = key("lindi-prefix", url), *ki = key("lindi-index", url);
  vd_blob *prefix = NULL, *itext = NULL;
  vd_buf acc = {0};
  vd_code rc = VD_OK;
  if (!kp || !ki) {
    rc = vd_nomem(err);
    goto done;
  }
  if ((rc = vd_fetch_range(ctx, url, 0, ctx->cfg.lindi_prefix, kp, &prefix, err))) goto done;
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
  itext = vd_cache_lookup(ctx, url, ki);
  if (!itext) {
    /* the index's JSON text starts at d and is followed by spaces: read only until it
     * is complete, starting with what the prefix already holds */
    int64_t have = (int64_t)prefix->len > ix->id ? (int64_t)prefix->len - ix->id : 0;
    if (have > ix->is) have = ix->is;
    if (have && vd_buf_append(&acc, prefix->data + ix->id, (size_t)have)) {
      rc = vd_nomem(err);
      goto done;
    }
    /* a freshly appended index holds at most s/4 of text (growth rule): start there */
    int64_t step = ix->is / 4 > 4096 ? ix->is / 4 : 4096;
    while (!(have && complete((const char *)acc.data, acc.len)) && have < ix->is) {
      int64_t n = ix->is - have < step ? ix->is - have : step;
      vd_buf part = {0};
      if ((rc = vd_get(ctx, url, ix->id + have, n, &part, NULL, err))) goto done;
      if ((int64_t)part.len != n) {
        vd_buf_free(&part);
        rc = vd_fail(err, VD_INVALID, "%s: the archive ends inside .tar_index.json (at byte %lld)", where,
                     (long long)(ix->id + have + (int64_t)part.len));
        goto done;
      }
      vd_buf_append(&acc, part.data, part.len);
      vd_buf_free(&part);
      have += n;
      step *= 2;
    }
    if (!(itext = vd_blob_from_buf(&acc))) {
      rc = vd_nomem(err);
      goto done;
    }
    vd_cache_store(ctx, ki, itext);
  }
  char iwhere[700];
  snprintf(iwhere, sizeof iwhere, "%s: .tar_index.json at %lld", where, (long long)ix->id);
  rc = lindi_parse_index((const char *)itext->data, itext->len, iwhere, ix, err);
done:
  if (rc) lindi_index_free(ix);
  vd_blob_unref(prefix);
  vd_blob_unref(itext);
  vd_buf_free(&acc);
  free(kp);
  free(ki);
  return rc;
}
