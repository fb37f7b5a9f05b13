/* lindi_refs(url): one row per ref of the archive's lindi.json (kerchunk-style
 * reference file system), or of a standalone .lindi.json (LINDI's JSON form): inline
 * text, base64 or JSON values, and [url, offset, size] refs with templates expanded and
 * ./member refs resolved to absolute archive offsets. Values are read byte for byte:
 * lindi_refs(url) streams lindi.json one ref at a time (lindi_refs_stream.h: memory
 * stays flat, the padding after the text is never read) and decodes a value only when
 * a column asks for it.
 * As a named table, CREATE VIRTUAL TABLE r USING lindi_refs('x.lindi.tar'), it takes
 * INSERT / INSERT OR REPLACE / DELETE of refs, committed with the archive's members. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/lindi/lindi.h"
#include "formats/lindi/lindi_refs_stream.h"
#include "formats/lindi/lindi_writer.h"
#include "store/store.h"
#include "util/base64.h"
#include "util/json.h"
#include "util/pyjson.h"
#include "util/strmap.h"
#include "util/utf8.h"
#include "vd_catalog.h"

static const vd_colspec cols[] = {{"key", VD_TEXT, 0},    {"kind", VD_TEXT, 0},     {"value", VD_NULL, 0},
                                  {"target", VD_TEXT, 0}, {"offset", VD_INT, 0},    {"size", VD_INT, 0},
                                  {"member", VD_TEXT, 0}, {"archive_offset", VD_INT, 0},
                                  {"url", VD_TEXT, VD_COL_ARG}};

typedef struct {
  vd_ctx *ctx;
  lindi_index ix;
  lrs rs;           /* the stream (lindi_refs(url)) ... */
  const lrs_row *r; /* ... and its current ref, NULL past the last */
  int streaming;
  cJSON *doc;       /* or a writer's tree (the named table) */
  const cJSON *refs, *templates, *cur;
  char where[600];
  char *url;        /* expanded url of the current ref row, made when a column needs it ... */
  int url_ok;       /* ... (when set; else it is the last one made) */
  vd_buf url_src;   /* the url it was made from */
  int row;
  int json_form;    /* url is a standalone .lindi.json: no members */
  vd_buf bytes;     /* the current row's string, decoded */
  vd_buf num;       /* scratch for a number's text */
  struct lindi_writer *w; /* that writer, whose scan this is */
  int tmap_built;   /* tmap/tlist hold the tree's templates (built on the first expansion) */
  vd_strmap tmap;   /* template name -> position in tlist */
  const cJSON **tlist;
} cur_t;

/* Largest offset or size a ref may hold: JSON numbers are doubles (lindi's are Python
 * ints, but every reader in between parses doubles), exact up to 2^53. */
#define REF_MAX 9007199254740992.0

/* The tree's templates, indexed by name once per cursor (the first of a repeated name
 * wins, as cJSON's lookup would): a url with many placeholders costs one hash lookup each. */
static vd_code build_tmap(cur_t *c, vd_err *err) {
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
static const char *tmpl(cur_t *c, const char *name, size_t n, vd_buf *scratch, size_t *len) {
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
static vd_code expand(cur_t *c, const char *key, const char *s, char **out, vd_err *err) {
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
    for (const char *p = s; *p;) {
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

static const char *row_key(const cur_t *c) { return c->streaming ? c->r->key : c->cur->string; }

static int row_kind(const cur_t *c) {
  if (c->streaming) return c->r->kind;
  return is_ref(c->cur) ? LRS_REF : vd_pyjson_is_string(c->cur) ? LRS_STRING : LRS_JSON;
}

/* The bytes of the row's string (el -1) or of its ref's url (el 0) into c->bytes. */
static vd_code row_bytes(cur_t *c, int el, vd_err *err) {
  int bad = c->streaming ? lrs_decode(el < 0 ? c->r->v : c->r->el[0], el < 0 ? c->r->vn : c->r->eln[0], &c->bytes)
                         : vd_pyjson_bytes(el < 0 ? c->cur : cJSON_GetArrayItem(c->cur, 0), &c->bytes);
  return bad ? vd_nomem(err) : VD_OK;
}

/* A ref's offset (i 1) or size (i 2), as a double (cJSON's reading of the literal,
 * strtod's; NaN and Infinity are Python's numbers). */
static vd_code row_number(cur_t *c, int i, double *d, vd_err *err) {
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
static vd_code row_json(cur_t *c, char **out, vd_err *err) {
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
static vd_code ref_url(cur_t *c, const char **out, vd_err *err) {
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
static vd_code ref_num(cur_t *c, int i, int64_t *out, vd_err *err) {
  double d = 0;
  if (row_number(c, i, &d, err)) return err->code;
  if (!(d >= 0 && d <= REF_MAX) || d != floor(d)) {
    char num[48]; /* whole numbers as written (up to 1e20), others as %g */
    snprintf(num, sizeof num, fabs(d) < 1e20 && d == floor(d) ? "%.0f" : "%g", d);
    return vd_fail(err, VD_INVALID, "%s: lindi.json ref \"%s\": %s %s is not an integer from 0 to 2^53", c->where,
                   row_key(c), i == 1 ? "offset" : "size", num);
  }
  *out = (int64_t)d;
  return VD_OK;
}

static void settle(cur_t *c) { /* a new row: nothing of it is computed until a column asks */
  c->url_ok = 0;
}

static vd_code start(cur_t *c, vd_err *err) {
  c->refs = cJSON_GetObjectItemCaseSensitive(c->doc, "refs");
  if (!cJSON_IsObject(c->refs)) return vd_fail(err, VD_INVALID, "%s: lindi.json has no \"refs\" object", c->where);
  c->templates = cJSON_GetObjectItemCaseSensitive(c->doc, "templates");
  c->cur = c->refs->child;
  settle(c);
  return VD_OK;
}

/* The stream's next ref (c->r NULL after the last). */
static vd_code advance(cur_t *c, vd_err *err) {
  settle(c);
  if (lrs_next(&c->rs, &c->r, err)) return err->code;
  if (!c->r && !c->rs.refs_seen) return vd_fail(err, VD_INVALID, "%s: lindi.json has no \"refs\" object", c->where);
  return VD_OK;
}

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  cur_t *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  *out = c;
  c->ctx = ctx;
  if (a[0].type == VD_NULL) return VD_OK;
  char *url = vd_value_strdup(&a[0]);
  if (!url) return vd_fail(err, VD_INVALID, "lindi_refs: the archive url must be text");
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
  free(url);
  if (rc) return rc;
  c->streaming = 1;
  return advance(c, err);
}

static vd_code next(void *cur, vd_err *err) {
  cur_t *c = cur;
  c->row++;
  if (c->streaming) return advance(c, err);
  c->cur = c->cur->next;
  settle(c);
  return VD_OK;
}
static int eof(void *cur) {
  const cur_t *c = cur;
  return c->streaming ? c->r == NULL : c->cur == NULL;
}
static int64_t rowid(void *cur) { return ((cur_t *)cur)->row; }
static void close_(void *cur) {
  cur_t *c = cur;
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

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  cur_t *c = cur;
  int kind = row_kind(c), ref = kind == LRS_REF, str = kind == LRS_STRING, b64 = 0;
  if (str && (col == 1 || col == 2)) {
    if (row_bytes(c, -1, err)) return err->code;
    b64 = c->bytes.len >= 7 && memcmp(c->bytes.data, "base64:", 7) == 0;
  }
  const char *url = NULL;
  int64_t n = 0;
  if (ref && (col == 3 || col == 6 || col == 7) && ref_url(c, &url, err)) return err->code;
  if (ref && (col == 4 || col == 7) && ref_num(c, 1, &n, err)) return err->code;
  if (ref && col == 5 && ref_num(c, 2, &n, err)) return err->code;
  switch (col) {
    case 0: *v = vd_text(row_key(c)); break;
    case 1: *v = vd_text(ref ? "ref" : b64 ? "base64" : str ? "text" : "json"); break;
    case 2:
      if (ref) {
        *v = vd_null();
      } else if (b64) {
        unsigned char *bytes;
        size_t len;
        if (vd_base64_decode((const char *)c->bytes.data + 7, c->bytes.len - 7, &bytes, &len))
          return vd_fail(err, VD_INVALID, "%s: lindi.json ref \"%s\" is not valid base64", c->where, row_key(c));
        *v = vd_owned_blob(bytes, len);
      } else if (str) { /* lindi reads a string as its UTF-8 bytes: text when SQL text can hold them */
        int text = !memchr(c->bytes.data, 0, c->bytes.len) && vd_utf8_valid(c->bytes.data, c->bytes.len);
        char *copy = malloc(c->bytes.len + 1); /* owned: c->bytes serves the row's other columns */
        if (!copy) return vd_nomem(err);
        memcpy(copy, c->bytes.data, c->bytes.len + 1);
        *v = text ? vd_owned_text(copy) : vd_owned_blob(copy, c->bytes.len);
      } else {
        char *s = NULL;
        if (row_json(c, &s, err)) return err->code;
        *v = vd_owned_text(s);
      }
      break;
    case 3: *v = ref ? vd_text(url) : vd_null(); break;
    case 4:
    case 5: *v = ref ? vd_int(n) : vd_null(); break;
    case 6: *v = ref && !c->json_form && strncmp(url, "./", 2) == 0 ? vd_text(url + 2) : vd_null(); break;
    default: {
      const lindi_file *m = ref && strncmp(url, "./", 2) == 0 ? lindi_find(&c->ix, url + 2) : NULL;
      *v = m ? vd_int(m->d + n) : vd_null();
      break;
    }
  }
  return VD_OK;
}

/* --- the named, writable table --- */

static vd_code t_connect(vd_ctx *ctx, const char *const *args, int nargs, void **tab, vd_err *err) {
  if (nargs != 1) return vd_fail(err, VD_INVALID, "lindi_refs takes one argument: the archive path");
  return lindi_writer_open(ctx, args[0], (lindi_writer **)tab, err);
}

static vd_code t_open(vd_ctx *ctx, void *tab, void **out, vd_err *err) {
  lindi_writer *w = tab;
  cur_t *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  *out = c;
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

/* The value to store for an inline ref, as lindi stores one: bytes all below 0x80 as a
 * string (NUL bytes as \u0000, which only a kept literal holds), other bytes (and text
 * that itself starts with "base64:") as base64. JSON keeps its literals as given. */
static cJSON *inline_value(const vd_value *v, int as_json, vd_err *err) {
  if (as_json) {
    cJSON *j = cJSON_ParseWithLength(v->p, v->n);
    if (!j) vd_fail(err, VD_INVALID, "lindi_refs: value is not valid JSON (kind 'json')");
    int k = j ? vd_pyjson_keep(j, v->p, v->n, NULL, NULL) : 0;
    if (k == -2) vd_fail(err, VD_INVALID, "lindi_refs: value is not valid JSON (kind 'json')");
    if (k) {
      cJSON_Delete(j);
      j = NULL;
    }
    return j;
  }
  const unsigned char *p = v->p;
  int ascii = !(v->n >= 7 && memcmp(p, "base64:", 7) == 0);
  for (size_t i = 0; i < v->n && ascii; i++) ascii = p[i] < 0x80;
  if (ascii) return vd_pyjson_string_node(p, v->n);
  char *b = vd_base64_encode(p, v->n), *s = b ? malloc(strlen(b) + 8) : NULL;
  cJSON *j = NULL;
  if (s) {
    sprintf(s, "base64:%s", b);
    j = cJSON_CreateString(s);
  }
  free(b);
  free(s);
  return j;
}

static vd_code t_insert(void *tab, const vd_value *row, int replace, int64_t *rid, vd_err *err) {
  lindi_writer *w = tab;
  cJSON *doc, *val = NULL;
  vd_code rc = lindi_writer_refs(w, &doc, err);
  if (rc) return rc;
  if (row[0].type != VD_TEXT) return vd_fail(err, VD_CONSTRAINT, "lindi_refs: key must be text");
  /* written as a JSON key: UTF-8 without NUL (a C string), or readers refuse lindi.json */
  if ((row[0].n && memchr(row[0].p, 0, row[0].n)) || !vd_utf8_valid(row[0].p, row[0].n))
    return vd_fail(err, VD_CONSTRAINT, "lindi_refs: key must be UTF-8 text without NUL characters");
  char *key = vd_value_strdup(&row[0]), *kind = vd_value_strdup(&row[1]), *url = vd_value_strdup(&row[3]),
       *member = vd_value_strdup(&row[6]);
  int64_t off = 0, size = 0;
  /* kept in lindi.json as JSON numbers, which readers parse as doubles: exact to 2^53 */
  int has_range = row[4].type != VD_NULL && row[5].type != VD_NULL && !vd_value_as_int(&row[4], &off) &&
                  !vd_value_as_int(&row[5], &size) && off >= 0 && size >= 0 && off <= (int64_t)REF_MAX &&
                  size <= (int64_t)REF_MAX;
  if (url || member) {
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
    else if ((val = cJSON_CreateArray())) {
      char *target = malloc(strlen(url ? url : member) + 3);
      if (target) sprintf(target, "%s%s", url ? "" : "./", url ? url : member);
      cJSON_AddItemToArray(val, cJSON_CreateString(target ? target : ""));
      cJSON_AddItemToArray(val, cJSON_CreateNumber((double)off));
      cJSON_AddItemToArray(val, cJSON_CreateNumber((double)size));
      free(target);
    }
  } else if (row[2].type == VD_TEXT || row[2].type == VD_BLOB) {
    val = inline_value(&row[2], kind && strcmp(kind, "json") == 0, err);
  } else {
    rc = vd_fail(err, VD_CONSTRAINT, "lindi_refs: give a value, or target or member with offset and size");
  }
  if (!rc && !val && !err->code) rc = vd_nomem(err);
  if (!rc && err->code) rc = err->code;
  cJSON *refs = cJSON_GetObjectItemCaseSensitive(doc, "refs");
  if (!rc && cJSON_GetObjectItemCaseSensitive(refs, key) && replace != VD_CONFLICT_REPLACE)
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
  free(key);
  free(kind);
  free(url);
  free(member);
  return rc;
}

static vd_code t_remove(void *tab, int64_t rid, vd_err *err) {
  lindi_writer *w = tab;
  cJSON *doc;
  vd_code rc = lindi_writer_refs(w, &doc, err);
  if (rc || (rc = lindi_writer_refs_will_change(w, err))) return rc;
  cJSON *refs = cJSON_GetObjectItemCaseSensitive(doc, "refs");
  if (rid < 0 || rid >= cJSON_GetArraySize(refs)) return vd_fail(err, VD_NOTFOUND, "lindi_refs: no such row");
  cJSON_DeleteItemFromArray(refs, (int)rid);
  lindi_writer_refs_changed(w);
  return VD_OK;
}

static const vd_table_ops ops = {t_connect,      lindi_tx_disconnect, t_open,           t_insert,
                                 t_remove,       lindi_tx_begin,      lindi_tx_sync,    lindi_tx_commit,
                                 lindi_tx_rollback, lindi_tx_savepoint, lindi_tx_rollback_to,
                                 lindi_tx_release, .args = "url"};

const vd_relation vd_rel_lindi_refs = {"lindi_refs", cols, sizeof cols / sizeof *cols, VD_REL_IO, -1, NULL,
                                       open_, next, eof, column, rowid, close_, &ops,
    .doc = "one row per lindi.json ref (of an archive or a standalone .lindi.json): key, kind, value, target, offset, size; as a named table, writable"};
