/* lindi_refs(url): one row per ref of the archive's lindi.json (kerchunk-style
 * reference file system): inline text, base64 or JSON values, and [url, offset, size]
 * refs with templates expanded and ./member refs resolved to absolute archive offsets. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../formats/lindi.h"
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
  cJSON_Delete(c->doc);
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

const vd_relation vd_rel_lindi_refs = {"lindi_refs", cols, sizeof cols / sizeof *cols, VD_REL_IO, -1, NULL,
                                       open_, next, eof, column, rowid, close_};
