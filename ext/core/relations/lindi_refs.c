/* lindi_refs(url): one row per ref of the archive's lindi.json (kerchunk-style
 * reference file system): inline text, base64 or JSON values, and [url, offset, size]
 * refs with templates expanded and ./member refs resolved to absolute archive offsets.
 * As a named table, CREATE VIRTUAL TABLE r USING lindi_refs('x.lindi.tar'), it takes
 * INSERT / INSERT OR REPLACE / DELETE of refs, committed with the archive's members. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../formats/lindi.h"
#include "../formats/lindi_writer.h"
#include "../store/store.h"
#include "../util/base64.h"
#include "../util/json.h"
#include "../vd_catalog.h"

static const vd_colspec cols[] = {{"key", VD_TEXT, 0},    {"kind", VD_TEXT, 0},     {"value", VD_NULL, 0},
                                  {"url", VD_TEXT, 0},    {"offset", VD_INT, 0},    {"size", VD_INT, 0},
                                  {"member", VD_TEXT, 0}, {"archive_offset", VD_INT, 0},
                                  {"archive", VD_TEXT, VD_COL_ARG}};

typedef struct {
  lindi_index ix;
  cJSON *doc;
  const cJSON *refs, *templates, *cur;
  char where[600];
  char *url;        /* expanded ref url of the current row */
  int row;
  int borrowed;     /* doc belongs to a writer */
} cur_t;

/* {{name}} -> templates[name], plain string replacement as lindi does. */
static char *expand(const cJSON *templates, const char *s) {
  vd_buf b = {0};
  while (*s) {
    const char *open = strstr(s, "{{"), *close = open ? strstr(open + 2, "}}") : NULL;
    if (!open || !close) {
      vd_buf_append(&b, s, strlen(s));
      break;
    }
    vd_buf_append(&b, s, (size_t)(open - s));
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(close - open - 2), open + 2);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(templates, name);
    if (cJSON_IsString(t))
      vd_buf_append(&b, t->valuestring, strlen(t->valuestring));
    else
      vd_buf_append(&b, open, (size_t)(close + 2 - open)); /* unknown template: left as written */
    s = close + 2;
  }
  vd_buf_append(&b, "", 1);
  return (char *)b.data;
}

static int is_ref(const cJSON *j) {
  return cJSON_IsArray(j) && cJSON_GetArraySize(j) == 3 && cJSON_IsString(cJSON_GetArrayItem(j, 0)) &&
         cJSON_IsNumber(cJSON_GetArrayItem(j, 1)) && cJSON_IsNumber(cJSON_GetArrayItem(j, 2));
}

static void settle(cur_t *c) {
  free(c->url);
  c->url = NULL;
  if (c->cur && is_ref(c->cur)) c->url = expand(c->templates, cJSON_GetArrayItem(c->cur, 0)->valuestring);
}

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  cur_t *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  *out = c;
  if (a[0].type == VD_NULL) return VD_OK;
  char *url = vd_value_strdup(&a[0]);
  if (!url) return vd_fail(err, VD_INVALID, "lindi_refs: the archive url must be text");
  vd_url_redact(url, c->where, sizeof c->where);
  vd_buf b = {0};
  vd_code rc = lindi_open(ctx, url, &c->ix, err);
  const lindi_file *lj = rc ? NULL : lindi_find(&c->ix, LINDI_JSON_NAME);
  if (!rc && !lj) rc = vd_fail(err, VD_NOTFOUND, "%s: no lindi.json in the index", c->where);
  if (!rc && lj->s > 0) rc = vd_get(ctx, url, lj->d, lj->s, &b, NULL, err);
  free(url);
  if (rc) {
    vd_buf_free(&b);
    return rc;
  }
  char where[700];
  snprintf(where, sizeof where, "%s: lindi.json", c->where);
  rc = vd_json_parse((const char *)b.data, b.len, where, &c->doc, err);
  vd_buf_free(&b);
  if (rc) return rc;
  c->refs = cJSON_GetObjectItemCaseSensitive(c->doc, "refs");
  if (!cJSON_IsObject(c->refs)) return vd_fail(err, VD_INVALID, "%s has no \"refs\" object", where);
  c->templates = cJSON_GetObjectItemCaseSensitive(c->doc, "templates");
  c->cur = c->refs->child;
  settle(c);
  return VD_OK;
}

static vd_code next(void *cur, vd_err *err) {
  cur_t *c = cur;
  c->cur = c->cur->next;
  c->row++;
  settle(c);
  return VD_OK;
}
static int eof(void *cur) { return ((cur_t *)cur)->cur == NULL; }
static int64_t rowid(void *cur) { return ((cur_t *)cur)->row; }
static void close_(void *cur) {
  cur_t *c = cur;
  if (!c) return;
  if (!c->borrowed) cJSON_Delete(c->doc);
  lindi_index_free(&c->ix);
  free(c->url);
  free(c);
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  cur_t *c = cur;
  const cJSON *j = c->cur;
  int ref = is_ref(j), b64 = cJSON_IsString(j) && strncmp(j->valuestring, "base64:", 7) == 0;
  const lindi_file *m = ref && strncmp(c->url, "./", 2) == 0 ? lindi_find(&c->ix, c->url + 2) : NULL;
  int64_t off = ref ? (int64_t)cJSON_GetArrayItem(j, 1)->valuedouble : 0;
  switch (col) {
    case 0: *v = vd_text(j->string); break;
    case 1: *v = vd_text(ref ? "ref" : b64 ? "base64" : cJSON_IsString(j) ? "text" : "json"); break;
    case 2:
      if (ref) {
        *v = vd_null();
      } else if (b64) {
        unsigned char *bytes;
        size_t n;
        if (vd_base64_decode(j->valuestring + 7, strlen(j->valuestring + 7), &bytes, &n))
          return vd_fail(err, VD_INVALID, "%s: lindi.json ref \"%s\" is not valid base64", c->where, j->string);
        *v = vd_owned_blob(bytes, n);
      } else if (cJSON_IsString(j)) {
        *v = vd_text(j->valuestring);
      } else {
        char *s = cJSON_PrintUnformatted(j);
        if (!s) return vd_nomem(err);
        *v = vd_owned_text(s);
      }
      break;
    case 3: *v = ref ? vd_text(c->url) : vd_null(); break;
    case 4: *v = ref ? vd_int(off) : vd_null(); break;
    case 5: *v = ref ? vd_int((int64_t)cJSON_GetArrayItem(j, 2)->valuedouble) : vd_null(); break;
    case 6: *v = ref && strncmp(c->url, "./", 2) == 0 ? vd_text(c->url + 2) : vd_null(); break;
    default: *v = m ? vd_int(m->d + off) : vd_null(); break;
  }
  return VD_OK;
}

/* --- the named, writable table --- */

static vd_code t_connect(vd_ctx *ctx, const char *const *args, int nargs, void **tab, vd_err *err) {
  if (nargs != 1) return vd_fail(err, VD_INVALID, "lindi_refs takes one argument: the archive path");
  return lindi_writer_open(ctx, args[0], (lindi_writer **)tab, err);
}

static vd_code t_open(void *tab, void **out, vd_err *err) {
  lindi_writer *w = tab;
  cur_t *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  *out = c;
  c->borrowed = 1;
  snprintf(c->where, sizeof c->where, "%s", lindi_writer_path(w));
  vd_code rc = lindi_writer_refs(w, &c->doc, err);
  if (rc) return rc;
  for (int i = 0; i < lindi_writer_count(w); i++) { /* members as of now, staged ones included */
    const lindi_file *f = lindi_writer_file(w, i);
    if (f && lindi_index_add(&c->ix, f->name, f->o, f->d, f->s)) return vd_nomem(err);
  }
  lindi_index_sort(&c->ix);
  c->refs = cJSON_GetObjectItemCaseSensitive(c->doc, "refs");
  c->templates = cJSON_GetObjectItemCaseSensitive(c->doc, "templates");
  c->cur = c->refs->child;
  settle(c);
  return VD_OK;
}

/* The value to store for an inline ref, as lindi stores one: bytes all below 0x80 as a
 * string, other bytes (and text that itself starts with "base64:") as base64. */
static cJSON *inline_value(const vd_value *v, int as_json, vd_err *err) {
  if (as_json) {
    cJSON *j = cJSON_ParseWithLength(v->p, v->n);
    if (!j) vd_fail(err, VD_INVALID, "lindi_refs: value is not valid JSON (kind 'json')");
    return j;
  }
  const unsigned char *p = v->p;
  int ascii = !(v->n >= 7 && memcmp(p, "base64:", 7) == 0);
  for (size_t i = 0; i < v->n && ascii; i++) ascii = p[i] < 0x80 && p[i] != 0;
  if (ascii) {
    char *s = vd_value_strdup(&(vd_value){.type = VD_TEXT, .p = v->p, .n = v->n});
    cJSON *j = s ? cJSON_CreateString(s) : NULL;
    free(s);
    return j;
  }
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
  char *key = vd_value_strdup(&row[0]), *kind = vd_value_strdup(&row[1]), *url = vd_value_strdup(&row[3]),
       *member = vd_value_strdup(&row[6]);
  int64_t off = 0, size = 0;
  int has_range = row[4].type != VD_NULL && row[5].type != VD_NULL && !vd_value_as_int(&row[4], &off) &&
                  !vd_value_as_int(&row[5], &size) && off >= 0 && size >= 0;
  if (url || member) {
    const lindi_file *f = member ? lindi_writer_find(w, member) : NULL;
    char shown[600];
    vd_url_redact(url ? url : member, shown, sizeof shown);
    if (!has_range)
      rc = vd_fail(err, VD_CONSTRAINT, "lindi_refs: a ref to %s needs a non-negative offset and size", shown);
    else if (member && !f)
      rc = vd_fail(err, VD_CONSTRAINT, "lindi_refs: member %s is not in the archive", member);
    else if (member && off + size > f->s)
      rc = vd_fail(err, VD_CONSTRAINT, "lindi_refs: bytes %lld..%lld are outside member %s (%lld bytes)", (long long)off,
                   (long long)(off + size), member, (long long)f->s);
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
    rc = vd_fail(err, VD_CONSTRAINT, "lindi_refs: give a value, or url/member with offset and size");
  }
  if (!rc && !val && !err->code) rc = vd_nomem(err);
  if (!rc && err->code) rc = err->code;
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
                                 lindi_tx_rollback, lindi_tx_savepoint, lindi_tx_rollback_to};

const vd_relation vd_rel_lindi_refs = {"lindi_refs", cols, sizeof cols / sizeof *cols, VD_REL_IO, -1, NULL,
                                       open_, next, eof, column, rowid, close_, &ops};
