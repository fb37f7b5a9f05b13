/* Fuzzes the streaming reader of lindi.json (formats/lindi/lindi_refs_stream.c). The first
 * input byte picks how many bytes each read hands over (1..64: every step is cut and run
 * again from its mark), the rest is the text. Properties: the cut-up stream gives the same
 * rows and the same outcome (error text included) as one read of the whole text, with its
 * templates asked for after the first row (the second, refs-skipping pass); and where
 * cJSON with kept literals (lindi_parse_refs, the writer's reading) takes the document
 * too, the same keys in order, kinds, string bytes, ref numbers and templates. Then the
 * first byte also picks the end search's probe length and where it stops, and the templates
 * are taken from the text's tail (lrs_text_end over the input): the same rows and
 * templates as the whole stream's, or a failure naming a look-alike; the search's answer
 * is checked against its promise. */
#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/lindi/lindi.h"
#include "formats/lindi/lindi_refs_stream.h"
#include "fuzz_input.h"
#include "util/pyjson.h"

typedef struct {
  const uint8_t *p;
  size_t n, step;
  int64_t plen, settled; /* the end search's probes (small: the inputs are) */
} mem;

static vd_code mem_read(void *ud, int64_t off, int64_t len, vd_buf *out, int *eof, vd_err *err) {
  mem *m = ud;
  if (off >= (int64_t)m->n) {
    *eof = 1;
    return VD_OK;
  }
  size_t k = (size_t)len < m->step ? (size_t)len : m->step;
  if (k > m->n - (size_t)off) k = m->n - (size_t)off;
  if (vd_buf_append(out, m->p + off, k)) return vd_nomem(err);
  if ((size_t)off + k >= m->n) *eof = 1;
  return VD_OK;
}

static vd_code mem_probe(void *ud, const int64_t *off, int n, int64_t len, vd_buf *out, vd_err *err) {
  mem *m = ud;
  for (int i = 0; i < n; i++) {
    if (off[i] < 0 || len < 0) __builtin_trap();
    int64_t k = off[i] >= (int64_t)m->n ? 0 : (int64_t)m->n - off[i] < len ? (int64_t)m->n - off[i] : len;
    if (k && vd_buf_append(&out[i], m->p + off[i], (size_t)k)) return vd_nomem(err);
  }
  return VD_OK;
}

static int ws_byte(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* The search's promise: hi within [lo, n], and at least the text's end unless a run of
 * plen whitespace bytes lies between lo and it. */
static vd_code mem_end(void *ud, int64_t lo, int64_t *hi, vd_err *err) {
  mem *m = ud;
  vd_code rc = lrs_text_end(mem_probe, NULL, m, lo, (int64_t)m->n, m->plen, m->settled, hi, err);
  if (rc) return rc;
  int64_t e = (int64_t)m->n, run = 0, longest = 0;
  while (e > 0 && ws_byte(m->p[e - 1])) e--;
  for (int64_t i = lo > 0 ? lo : 0; i < e; i++) {
    run = ws_byte(m->p[i]) ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  if (*hi > (int64_t)m->n || (*hi < lo && lo <= (int64_t)m->n) || (longest < m->plen && lo <= e && *hi < e))
    __builtin_trap();
  return VD_OK;
}

typedef struct {
  vd_buf log;  /* every row, then the outcome */
  vd_err err;
  vd_code rc;
  int refs_seen;
} run_t;

static void put(vd_buf *b, const void *p, size_t n) {
  uint32_t k = (uint32_t)n;
  vd_buf_append(b, &k, sizeof k);
  vd_buf_append(b, p, n);
}

static void run(mem *m, int ask_templates, run_t *r, lrs *s) {
  lrs_init(s, mem_read, m, "fuzz", 1 << 20);
  if (ask_templates == 2) s->end = mem_end;
  const lrs_row *row;
  int first = 1;
  memset(r, 0, sizeof *r);
  while (!(r->rc = lrs_next(s, &row, &r->err)) && row) {
    put(&r->log, row->key, strlen(row->key));
    put(&r->log, &row->kind, sizeof row->kind);
    put(&r->log, row->v, row->vn);
    if (first && ask_templates && (r->rc = lrs_templates(s, &r->err))) break;
    first = 0;
  }
  r->refs_seen = s->refs_seen;
  put(&r->log, &r->rc, sizeof r->rc);
  if (r->rc) put(&r->log, r->err.msg, strlen(r->err.msg));
}

/* The stream's rows against the cJSON tree's refs, row by row. */
static void compare(const uint8_t *text, size_t n, const cJSON *doc) {
  const cJSON *refs = cJSON_GetObjectItemCaseSensitive(doc, "refs"), *tm = cJSON_GetObjectItemCaseSensitive(doc, "templates");
  if (!cJSON_IsObject(refs)) return;
  mem m = {text, n, n ? n : 1};
  lrs s;
  lrs_init(&s, mem_read, &m, "fuzz", 1 << 20);
  const lrs_row *row;
  vd_err err;
  vd_buf a = {0}, b = {0}, num = {0};
  const cJSON *c = refs->child;
  vd_code rc;
  while (!(rc = lrs_next(&s, &row, &err)) && row) {
    if (!c || strcmp(row->key, c->string) != 0) __builtin_trap();
    int kind = cJSON_IsArray(c) && cJSON_GetArraySize(c) == 3 && vd_pyjson_is_string(cJSON_GetArrayItem(c, 0)) &&
                       !vd_pyjson_number(cJSON_GetArrayItem(c, 1), &(double){0}) &&
                       !vd_pyjson_number(cJSON_GetArrayItem(c, 2), &(double){0})
                   ? LRS_REF
               : vd_pyjson_is_string(c) ? LRS_STRING : LRS_JSON;
    if (kind != row->kind) __builtin_trap();
    if (kind == LRS_STRING) {
      if (vd_pyjson_bytes(c, &a) || lrs_decode(row->v, row->vn, &b) || a.len != b.len || memcmp(a.data, b.data, a.len))
        __builtin_trap();
    } else if (kind == LRS_REF) {
      if (vd_pyjson_bytes(cJSON_GetArrayItem(c, 0), &a) || lrs_decode(row->el[0], row->eln[0], &b) || a.len != b.len ||
          memcmp(a.data, b.data, a.len))
        __builtin_trap();
      for (int i = 1; i < 3; i++) {
        double x = 0, y;
        vd_pyjson_number(cJSON_GetArrayItem(c, i), &x);
        num.len = 0;
        vd_buf_append(&num, row->el[i], row->eln[i]);
        vd_buf_append(&num, "", 1);
        y = strtod((const char *)num.data, NULL);
        if (!(x == y || (isnan(x) && isnan(y)))) __builtin_trap();
      }
    }
    c = c->next;
  }
  if (rc || c) __builtin_trap(); /* cJSON took the whole text: so does the stream, every ref */
  if (lrs_templates(&s, &err)) __builtin_trap();
  for (const cJSON *t = cJSON_IsObject(tm) ? tm->child : NULL; t; t = t->next) {
    if (!cJSON_IsString(t) || cJSON_GetObjectItemCaseSensitive(tm, t->string) != t) continue; /* first of a name */
    size_t len = 0;
    const char *v = lrs_template(&s, t->string, &len);
    if (!v || len < strlen(t->valuestring) || memcmp(v, t->valuestring, strlen(t->valuestring)) != 0) __builtin_trap();
  }
  vd_buf_free(&a);
  vd_buf_free(&b);
  vd_buf_free(&num);
  lrs_free(&s);
}

/* Bytes cJSON takes where Python's JSON (the stream) does not: raw control characters in
 * strings and numbers outside JSON's grammar; only there may the two disagree. */
static int python_json(const uint8_t *p, size_t n) {
  int in = 0;
  for (size_t i = 0; i < n; i++) {
    if (in) {
      if (p[i] < 0x20) return 0;
      if (p[i] == '\\') i++;
      else if (p[i] == '"') in = 0;
    } else if (p[i] == '"') {
      in = 1;
    } else if ((p[i] == '0' && i + 1 < n && p[i + 1] >= '0' && p[i + 1] <= '9' && (i == 0 || p[i - 1] < '0' || p[i - 1] > '9')) ||
               (p[i] == '.' && (i + 1 >= n || p[i + 1] < '0' || p[i + 1] > '9')) || p[i] == '+') {
      return 0;
    }
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  in s = {data, size};
  size_t step = byte(&s) % 64 + 1;
  mem cut = {s.p, s.n, step}, whole = {s.p, s.n, s.n ? s.n : 1};
  run_t a, b;
  lrs sa, sb;
  run(&cut, 1, &a, &sa);
  run(&whole, 0, &b, &sb);
  /* the templates' pass reads only text the whole stream reads too: the same outcome, and
   * when both succeed the same rows (the error texts may differ: the pass stops first) */
  if (!a.rc != !b.rc) __builtin_trap();
  if (!a.rc && (a.log.len != b.log.len || memcmp(a.log.data, b.log.data, a.log.len) != 0)) __builtin_trap();
  lrs_free(&sa);
  lrs_free(&sb);
  vd_buf_free(&a.log);
  run(&cut, 0, &a, &sa);
  if (a.log.len != b.log.len || memcmp(a.log.data, b.log.data, a.log.len) != 0) __builtin_trap();
  lrs_free(&sa);
  vd_buf_free(&a.log);
  /* the templates from the tail (the end found by probes): the same rows and outcome,
   * or, where the whole text reads, a failure that names a look-alike; and when it
   * succeeds, the templates the whole stream collects */
  vd_buf_free(&b.log);
  cut.plen = (int64_t)(step % 16) + 1; /* from the first byte too: the text stays as it is */
  cut.settled = (int64_t)(step * 7 % 32);
  run(&whole, 0, &b, &sb);
  run(&cut, 2, &a, &sa);
  if (a.rc && !b.rc && !strstr(a.err.msg, "found near the end of the text")) __builtin_trap();
  if (!a.rc && (b.rc || a.log.len != b.log.len || memcmp(a.log.data, b.log.data, a.log.len) != 0)) __builtin_trap();
  if (!a.rc && b.refs_seen) {
    if (sa.nt != sb.nt) __builtin_trap();
    for (int i = 0; i < sb.nt; i++) {
      const char *name = NULL;
      for (size_t k = 0; k < sb.tmap.cap && !name; k++) /* sb's names, through its map */
        if (sb.tmap.keys && sb.tmap.keys[k] && sb.tmap.vals[k] == i) name = sb.tmap.keys[k];
      size_t la = 0, lb = 0;
      const char *va = name ? lrs_template(&sa, name, &la) : NULL, *vb = name ? lrs_template(&sb, name, &lb) : NULL;
      if (!name || !va != !vb || la != lb || (va && memcmp(va, vb, la))) __builtin_trap();
    }
  }
  lrs_free(&sa);
  lrs_free(&sb);
  vd_buf_free(&a.log);
  vd_buf_free(&b.log);

  cJSON *doc = NULL;
  vd_err err;
  if (!b.rc && b.refs_seen && python_json(s.p, s.n) &&
      lindi_parse_refs((const char *)s.p, s.n, "fuzz", &doc, &err) == VD_OK)
    compare(s.p, s.n, doc);
  cJSON_Delete(doc);
  return 0;
}
