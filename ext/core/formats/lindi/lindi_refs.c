/* lindi.json's refs as rows, for every front end: one reader over the stream of an
 * archive's (or a standalone .lindi.json's) lindi.json, or over a writer's tree, that
 * expands templates, decodes values and checks offsets and sizes only when asked; and the
 * refs a writer stores (lindi's own forms of inline values and [target, offset, size]).
 * Values are read byte for byte: the stream keeps memory flat and never reads the
 * padding after the text (lindi_refs_stream.h). */
#include "lindi_refs.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lindi_refs_stream.h"
#include "store/store.h"
#include "util/base64.h"
#include "util/pyjson.h"
#include "util/strmap.h"
#include "util/utf8.h"

struct lindi_refs {
  vd_ctx *ctx;
  lindi_index ix;
  lrs rs;           /* the stream (lindi_refs_open) ... */
  const lrs_row *r; /* ... and its current ref, NULL past the last */
  int streaming;
  cJSON *doc;       /* or a writer's tree (lindi_refs_open_writer) */
  const cJSON *refs, *templates, *cur;
  char where[600];
  char *url;        /* expanded url of the current ref row, made when asked for ... */
  int url_ok;       /* ... (when set; else it is the last one made) */
  vd_buf url_src;   /* the url it was made from */
  int64_t row;
  int json_form;    /* a standalone .lindi.json: no members */
  vd_buf bytes;     /* the current row's string, decoded */
  vd_buf num;       /* scratch for a number's text */
  lindi_writer *w;  /* that writer, whose scan this is */
  int tmap_built;   /* tmap/tlist hold the tree's templates (built on the first expansion) */
  vd_strmap tmap;   /* template name -> position in tlist */
  const cJSON **tlist;
};

/* The tree's templates, indexed by name once per cursor (the first of a repeated name
 * wins, as cJSON's lookup would): a url with many placeholders costs one hash lookup each. */
static vd_code build_tmap(lindi_refs *c, vd_err *err) {
  c->tmap_built = 1;
  int n = cJSON_IsObject(c->templates) ? cJSON_GetArraySize(c->templates) : 0, i = 0;
  if (!n) return VD_OK;
  if (!(c->tlist = calloc((size_t)n, sizeof *c->tlist))) return vd_nomem(err);
  for (const cJSON *t = c->templates->child; t; t = t->next, i++) {
    c->tlist[i] = t;
    if (t->string && vd_strmap_get(&c->tmap, t->string) < 0 && vd_strmap_put(&c->tmap, t->string, i))
      return vd_nomem(err);
  }
  return VD_OK;
}

/* The string template `name` (n bytes) stands for, or NULL (unknown or not a string). */
static const char *tmpl(lindi_refs *c, const char *name, size_t n, vd_buf *scratch, size_t *len) {
  scratch->len = 0;
  if (vd_buf_append(scratch, name, n) || vd_buf_append(scratch, "", 1)) return NULL;
  if (c->streaming) return lrs_template(&c->rs, (const char *)scratch->data, len);
  int i = vd_strmap_get(&c->tmap, (const char *)scratch->data);
  const char *t = i >= 0 && cJSON_IsString(c->tlist[i]) ? c->tlist[i]->valuestring : NULL;
  if (t) *len = strlen(t);
  return t;
}

/* {{name}} -> templates[name], plain string replacement as lindi does; an unknown
 * template is left as written. Two passes: the length first, so that a url whose
 * templates would make more than max_alloc bytes is refused before anything is
 * allocated (a 100 KB template named 20,000 times in one url would make 2 GB). The
 * templates are looked for only when a url names one (lindi.json's come after its refs). */
static vd_code expand(lindi_refs *c, const char *key, const char *s, char **out, vd_err *err) {
  *out = NULL;
  if (strstr(s, "{{")) {
    if (c->streaming ? lrs_templates(&c->rs, err) : !c->tmap_built && build_tmap(c, err)) return err->code;
  }
  vd_buf name = {0}, b = {0};
  int64_t max = c->ctx ? c->ctx->cfg.max_alloc : (int64_t)256 << 20, len = 0;
  vd_code rc = VD_OK;
  for (int pass = 0; pass < 2 && !rc; pass++) {
    if (pass == 1 && vd_buf_reserve(&b, (size_t)len + 1)) {
      rc = vd_nomem(err);
      break;
    }
    int64_t pieces = 0;
    for (const char *p = s; *p;) {
      /* a url of millions of placeholders costs seconds per row: a cancel is asked for
       * between them */
      if ((++pieces & 4095) == 0 && (rc = vd_ctx_check_interrupt(c->ctx, err))) break;
      const char *open = strstr(p, "{{"), *close = open ? strstr(open + 2, "}}") : NULL, *t = NULL;
      const char *piece = p;
      size_t n;
      if (!open || !close) {
        n = strlen(p);
        p += n;
      } else if (open > p) {
        n = (size_t)(open - p);
        p = open;
      } else {
        size_t tn = 0;
        t = tmpl(c, open + 2, (size_t)(close - open - 2), &name, &tn);
        piece = t ? t : open;
        n = t ? tn : (size_t)(close + 2 - open);
        p = close + 2;
      }
      if (pass == 0) {
        if ((int64_t)n > max - 1 - len) {
          rc = vd_fail(err, VD_INVALID,
                       "%s: lindi.json ref \"%s\": its target expands to more than %lld bytes with its templates "
                       "(the max_alloc setting)",
                       c->where, key, (long long)max);
          break;
        }
        len += (int64_t)n;
      } else {
        vd_buf_append(&b, piece, n);
      }
    }
  }
  vd_buf_free(&name);
  if (!rc) vd_buf_append(&b, "", 1);
  if (!rc && !b.data) rc = vd_nomem(err);
  if (rc) {
    vd_buf_free(&b);
    return rc;
  }
  *out = (char *)b.data;
  return VD_OK;
}

/* --- the current row, from the stream or from the tree --- */

/* Strings and numbers of the tree may be kept literals (cJSON_Raw): read through vd_pyjson_*. */
static int is_ref(const cJSON *j) {
  double d;
  return cJSON_IsArray(j) && cJSON_GetArraySize(j) == 3 && vd_pyjson_is_string(cJSON_GetArrayItem(j, 0)) &&
         !vd_pyjson_number(cJSON_GetArrayItem(j, 1), &d) && !vd_pyjson_number(cJSON_GetArrayItem(j, 2), &d);
}

static const char *row_key(const lindi_refs *c) { return c->streaming ? c->r->key : c->cur->string; }

static int row_kind(const lindi_refs *c) {
  if (c->streaming) return c->r->kind;
  return is_ref(c->cur) ? LRS_REF : vd_pyjson_is_string(c->cur) ? LRS_STRING : LRS_JSON;
}

/* The bytes of the row's string (el -1) or of its ref's url (el 0) into c->bytes. */
static vd_code row_bytes(lindi_refs *c, int el, vd_err *err) {
  int bad = c->streaming ? lrs_decode(el < 0 ? c->r->v : c->r->el[0], el < 0 ? c->r->vn : c->r->eln[0], &c->bytes)
                         : vd_pyjson_bytes(el < 0 ? c->cur : cJSON_GetArrayItem(c->cur, 0), &c->bytes);
  return bad ? vd_nomem(err) : VD_OK;
}

/* A ref's offset (i 1) or size (i 2), as a double (cJSON's reading of the literal,
 * strtod's; NaN and Infinity are Python's numbers). */
static vd_code row_number(lindi_refs *c, int i, double *d, vd_err *err) {
  *d = 0;
  if (!c->streaming) {
    vd_pyjson_number(cJSON_GetArrayItem(c->cur, i), d); /* is_ref checked it is one */
    return VD_OK;
  }
  const char *p = c->r->el[i];
  size_t n = c->r->eln[i], k = 0;
  if (n <= 15) { /* lindi's offsets and sizes: plain integers, exact as doubles without strtod */
    int64_t v = 0;
    while (k < n && p[k] >= '0' && p[k] <= '9') v = v * 10 + (p[k++] - '0');
    if (k == n) {
      *d = (double)v;
      return VD_OK;
    }
  }
  c->num.len = 0;
  if (vd_buf_append(&c->num, p, n) || vd_buf_append(&c->num, "", 1)) return vd_nomem(err);
  *d = strtod((const char *)c->num.data, NULL);
  return VD_OK;
}

/* A JSON value's text as the column gives it: compact, literals as written. */
static vd_code row_json(lindi_refs *c, char **out, vd_err *err) {
  vd_buf t = {0}, b = {0};
  int bad = c->streaming ? lrs_compact(c->r->v, c->r->vn, &b)
                         : vd_pyjson(c->cur, &t) || lrs_compact((const char *)t.data, t.len, &b);
  vd_buf_free(&t);
  if (bad) {
    vd_buf_free(&b);
    return vd_nomem(err);
  }
  *out = (char *)b.data;
  return VD_OK;
}

/* The expanded url of the current row (a ref), made on first use. The last one is kept
 * with the url it came from: lindi's chunk refs of one dataset all name the same url
 * ("{{u1}}"), and the templates do not change during a scan, so a row whose url is the
 * previous row's costs a compare, not an expansion and an allocation. */
static vd_code ref_url(lindi_refs *c, const char **out, vd_err *err) {
  if (!c->url_ok) {
    if (row_bytes(c, 0, err)) return err->code;
    if (memchr(c->bytes.data, 0, c->bytes.len))
      return vd_fail(err, VD_INVALID, "%s: lindi.json ref \"%s\": its target holds a NUL character", c->where,
                     row_key(c));
    if (!c->url || c->url_src.len != c->bytes.len || memcmp(c->url_src.data, c->bytes.data, c->bytes.len)) {
      free(c->url);
      c->url = NULL;
      c->url_src.len = 0;
      if (expand(c, row_key(c), (const char *)c->bytes.data, &c->url, err)) return err->code;
      if (vd_buf_append(&c->url_src, c->bytes.data, c->bytes.len)) return vd_nomem(err);
    }
    c->url_ok = 1;
  }
  *out = c->url;
  return VD_OK;
}

/* Offset (i 1) or size (i 2) of the current row (a ref): an integer from 0 to 2^53,
 * anything else (1.5, -1, 1e300, NaN) an error naming the ref, never a wild cast. */
static vd_code ref_num(lindi_refs *c, int i, int64_t *out, vd_err *err) {
  double d = 0;
  if (row_number(c, i, &d, err)) return err->code;
  if (!(d >= 0 && d <= LINDI_REF_MAX) || d != floor(d)) {
    char num[48]; /* whole numbers as written (up to 1e20), others as %g */
    snprintf(num, sizeof num, fabs(d) < 1e20 && d == floor(d) ? "%.0f" : "%g", d);
    return vd_fail(err, VD_INVALID, "%s: lindi.json ref \"%s\": %s %s is not an integer from 0 to 2^53", c->where,
                   row_key(c), i == 1 ? "offset" : "size", num);
  }
  *out = (int64_t)d;
  return VD_OK;
}

static void settle(lindi_refs *c) { /* a new row: nothing of it is computed until a column asks */
  c->url_ok = 0;
}

static vd_code start(lindi_refs *c, vd_err *err) {
  c->refs = cJSON_GetObjectItemCaseSensitive(c->doc, "refs");
  if (!cJSON_IsObject(c->refs)) return vd_fail(err, VD_INVALID, "%s: lindi.json has no \"refs\" object", c->where);
  c->templates = cJSON_GetObjectItemCaseSensitive(c->doc, "templates");
  c->cur = c->refs->child;
  settle(c);
  return VD_OK;
}

/* The stream's next ref (c->r NULL after the last). */
static vd_code advance(lindi_refs *c, vd_err *err) {
  settle(c);
  if (lrs_next(&c->rs, &c->r, err)) return err->code;
  if (!c->r && !c->rs.refs_seen) return vd_fail(err, VD_INVALID, "%s: lindi.json has no \"refs\" object", c->where);
  return VD_OK;
}

vd_code lindi_refs_open(vd_ctx *ctx, const char *url, lindi_refs **out, vd_err *err) {
  lindi_refs *c = calloc(1, sizeof *c);
  *out = c;
  if (!c) return vd_nomem(err);
  c->ctx = ctx;
  vd_url_redact(url, c->where, sizeof c->where);
  vd_code rc = lindi_open(ctx, url, &c->ix, err);
  const lindi_file *lj = NULL;
  if (rc == VD_UNSUPPORTED) { /* the JSON form: the file is lindi.json */
    vd_err_clear(err);
    c->json_form = 1;
    rc = VD_OK;
  } else {
    lj = rc ? NULL : lindi_find(&c->ix, LINDI_JSON_NAME);
    if (!rc && !lj) rc = vd_fail(err, VD_NOTFOUND, "%s: no lindi.json in the index", c->where);
  }
  char where[700];
  snprintf(where, sizeof where, c->json_form ? "%s" : "%s: lindi.json", c->where);
  if (!rc) rc = lrs_open_url(&c->rs, ctx, url, c->json_form ? NULL : lj, where, err);
  if (rc) return rc;
  c->streaming = 1;
  return advance(c, err);
}

vd_code lindi_refs_open_writer(vd_ctx *ctx, lindi_writer *w, lindi_refs **out, vd_err *err) {
  lindi_refs *c = calloc(1, sizeof *c);
  *out = c;
  if (!c) return vd_nomem(err);
  c->ctx = ctx;
  snprintf(c->where, sizeof c->where, "%s", lindi_writer_path(w));
  vd_code rc = lindi_writer_scan_start(w, err);
  if (rc) return rc;
  c->w = w;
  rc = lindi_writer_refs(w, &c->doc, err);
  if (rc) return rc;
  for (int i = 0; i < lindi_writer_count(w); i++) { /* members as of now, staged ones included */
    const lindi_file *f = lindi_writer_file(w, i);
    if (f && lindi_index_add(&c->ix, f->name, f->o, f->d, f->s)) return vd_nomem(err);
  }
  lindi_index_sort(&c->ix);
  return start(c, err);
}

vd_code lindi_refs_next(lindi_refs *c, vd_err *err) {
  c->row++;
  if (c->streaming) return advance(c, err);
  c->cur = c->cur->next;
  settle(c);
  return VD_OK;
}

int lindi_refs_eof(const lindi_refs *c) { return c->streaming ? c->r == NULL : c->cur == NULL; }
int64_t lindi_refs_row(const lindi_refs *c) { return c->row; }

void lindi_refs_close(lindi_refs *c) {
  if (!c) return;
  if (c->w) lindi_writer_scan_end(c->w);
  lrs_free(&c->rs);
  lindi_index_free(&c->ix);
  vd_strmap_free(&c->tmap);
  free(c->tlist);
  free(c->url);
  vd_buf_free(&c->url_src);
  vd_buf_free(&c->bytes);
  vd_buf_free(&c->num);
  free(c);
}

const char *lindi_refs_key(const lindi_refs *c) { return row_key(c); }
int lindi_refs_is_ref(const lindi_refs *c) { return row_kind(c) == LRS_REF; }

vd_code lindi_refs_kind(lindi_refs *c, int *kind, vd_err *err) {
  int k = row_kind(c);
  *kind = k == LRS_REF ? LINDI_KIND_REF : k == LRS_JSON ? LINDI_KIND_JSON : LINDI_KIND_TEXT;
  if (k != LRS_STRING) return VD_OK;
  if (row_bytes(c, -1, err)) return err->code;
  if (c->bytes.len >= 7 && memcmp(c->bytes.data, "base64:", 7) == 0) *kind = LINDI_KIND_BASE64;
  return VD_OK;
}

vd_code lindi_refs_value(lindi_refs *c, unsigned char **p, size_t *n, int *text, vd_err *err) {
  *p = NULL, *n = 0, *text = 0;
  int kind;
  if (lindi_refs_kind(c, &kind, err)) return err->code;
  if (kind == LINDI_KIND_REF) return VD_OK;
  if (kind == LINDI_KIND_BASE64) {
    if (vd_base64_decode((const char *)c->bytes.data + 7, c->bytes.len - 7, p, n))
      return vd_fail(err, VD_INVALID, "%s: lindi.json ref \"%s\" is not valid base64", c->where, row_key(c));
    return VD_OK;
  }
  if (kind == LINDI_KIND_TEXT) { /* lindi reads a string as its UTF-8 bytes: text when SQL text can hold them */
    *text = !memchr(c->bytes.data, 0, c->bytes.len) && vd_utf8_valid(c->bytes.data, c->bytes.len);
    char *copy = malloc(c->bytes.len + 1); /* owned: c->bytes serves the row's other columns */
    if (!copy) return vd_nomem(err);
    memcpy(copy, c->bytes.data, c->bytes.len + 1);
    *p = (unsigned char *)copy, *n = c->bytes.len;
    return VD_OK;
  }
  char *s = NULL;
  if (row_json(c, &s, err)) return err->code;
  *p = (unsigned char *)s, *n = strlen(s), *text = 1;
  return VD_OK;
}

vd_code lindi_refs_target(lindi_refs *c, const char **url, vd_err *err) { return ref_url(c, url, err); }

vd_code lindi_refs_number(lindi_refs *c, int i, int64_t *out, vd_err *err) { return ref_num(c, i, out, err); }

const char *lindi_refs_member(const lindi_refs *c, const char *url) {
  return !c->json_form && strncmp(url, "./", 2) == 0 ? url + 2 : NULL;
}

int lindi_refs_archive_offset(const lindi_refs *c, const char *url, int64_t off, int64_t *out) {
  const lindi_file *m = strncmp(url, "./", 2) == 0 ? lindi_find(&c->ix, url + 2) : NULL;
  if (m) *out = m->d + off;
  return m != NULL;
}

/* --- what a writer stores --- */

/* The value to store for an inline ref, as lindi stores one: bytes all below 0x80 as a
 * string (NUL bytes as \u0000, which only a kept literal holds), other bytes (and text
 * that itself starts with "base64:") as base64. JSON keeps its literals as given. */
cJSON *lindi_ref_inline(const void *bytes, size_t n, int as_json, vd_err *err) {
  if (as_json) {
    cJSON *j = cJSON_ParseWithLength(bytes, n);
    if (!j) vd_fail(err, VD_INVALID, "lindi_refs: value is not valid JSON (kind 'json')");
    int k = j ? vd_pyjson_keep(j, bytes, n, NULL, NULL) : 0;
    if (k == -2) vd_fail(err, VD_INVALID, "lindi_refs: value is not valid JSON (kind 'json')");
    if (k) {
      cJSON_Delete(j);
      j = NULL;
    }
    return j;
  }
  const unsigned char *p = bytes;
  int ascii = !(n >= 7 && memcmp(p, "base64:", 7) == 0);
  for (size_t i = 0; i < n && ascii; i++) ascii = p[i] < 0x80;
  if (ascii) return vd_pyjson_string_node(p, n);
  char *b = vd_base64_encode(p, n), *s = b ? malloc(strlen(b) + 8) : NULL;
  cJSON *j = NULL;
  if (s) {
    sprintf(s, "base64:%s", b);
    j = cJSON_CreateString(s);
  }
  free(b);
  free(s);
  return j;
}


vd_code lindi_ref_target(lindi_writer *w, const char *url, const char *member, int has_range, int64_t off, int64_t size,
                         cJSON **val, vd_err *err) {
  vd_code rc = VD_OK;
  *val = NULL;
  const lindi_file *f = member ? lindi_writer_find(w, member) : NULL;
  char shown[600];
  vd_url_redact(url ? url : member, shown, sizeof shown);
  if (!has_range)
    rc = vd_fail(err, VD_CONSTRAINT, "lindi_refs: a ref to %s needs an offset and a size that are integers from 0 to 2^53",
                 shown);
  else if (member && !f)
    rc = vd_fail(err, VD_CONSTRAINT, "lindi_refs: member %s is not in the archive", member);
  else if (member && (size > f->s || off > f->s - size)) /* no off + size: it could wrap */
    rc = vd_fail(err, VD_CONSTRAINT, "lindi_refs: bytes %lld..%lld are outside member %s (%lld bytes)", (long long)off,
                 (long long)(off + size), member, (long long)f->s); /* both at most 2^53: no wrap */
  else if ((*val = cJSON_CreateArray())) {
    char *target = malloc(strlen(url ? url : member) + 3);
    if (target) sprintf(target, "%s%s", url ? "" : "./", url ? url : member);
    cJSON_AddItemToArray(*val, cJSON_CreateString(target ? target : ""));
    cJSON_AddItemToArray(*val, cJSON_CreateNumber((double)off));
    cJSON_AddItemToArray(*val, cJSON_CreateNumber((double)size));
    free(target);
  }
  return rc;
}

vd_code lindi_refs_put(lindi_writer *w, const char *key, cJSON *val, int replace, int64_t *rid, vd_err *err) {
  cJSON *doc = NULL;
  vd_code rc = lindi_writer_refs(w, &doc, err);
  cJSON *refs = cJSON_GetObjectItemCaseSensitive(doc, "refs");
  if (!rc && cJSON_GetObjectItemCaseSensitive(refs, key) && !replace)
    rc = vd_fail(err, VD_CONSTRAINT, "lindi_refs: a ref named %s exists (use INSERT OR REPLACE)", key);
  if (!rc) rc = lindi_writer_refs_will_change(w, err);
  if (!rc && lindi_writer_refs(w, &doc, err) == VD_OK) { /* the savepoint copy leaves doc as it was */
    refs = cJSON_GetObjectItemCaseSensitive(doc, "refs");
    if (cJSON_GetObjectItemCaseSensitive(refs, key))
      cJSON_ReplaceItemInObjectCaseSensitive(refs, key, val);
    else
      cJSON_AddItemToObject(refs, key, val);
    val = NULL;
    lindi_writer_refs_changed(w);
    int64_t i = 0;
    for (cJSON *c = refs->child; c && strcmp(c->string, key) != 0; c = c->next) i++;
    *rid = i;
  }
  cJSON_Delete(val);
  return rc;
}

vd_code lindi_refs_remove(lindi_writer *w, int64_t rid, vd_err *err) {
  cJSON *doc;
  vd_code rc = lindi_writer_refs(w, &doc, err);
  if (rc || (rc = lindi_writer_refs_will_change(w, err))) return rc;
  cJSON *refs = cJSON_GetObjectItemCaseSensitive(doc, "refs");
  if (rid < 0 || rid >= cJSON_GetArraySize(refs)) return vd_fail(err, VD_NOTFOUND, "lindi_refs: no such row");
  cJSON_DeleteItemFromArray(refs, (int)rid);
  lindi_writer_refs_changed(w);
  return VD_OK;
}
