/* Python-style JSON output (see pyjson.h). cJSON's own printer uses tabs and keeps
 * insertion order, so lindi's layout needs this small writer. */
#include "pyjson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

static int cmp(const void *a, const void *b) {
  return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

static int indent(vd_buf *o, int level) {
  int bad = vd_buf_append(o, "\n", 1);
  for (int i = 0; i < level; i++) bad |= vd_buf_append(o, "  ", 2);
  return bad;
}

/* Appends a JSON string the way Python's json.dumps writes it (ensure_ascii): \" \\ \b \f
 * \n \r \t as two characters, other control characters, DEL and everything past ASCII
 * as \u escapes (lowercase hex, surrogate pairs past U+FFFF). Bytes that are not UTF-8
 * (never in what vdsql writes: names and keys are checked) become \u0080..\u00ff, so
 * the output is always JSON that readers accept. */
int vd_pyjson_string_n(vd_buf *out, const char *s, size_t len) {
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

int vd_pyjson_string(vd_buf *out, const char *s) { return vd_pyjson_string_n(out, s, strlen(s)); }

/* A non-integral finite double as Python's repr writes it (json.dumps uses float.__repr__):
 * the fewest significant digits that read back as the same double, in fixed notation
 * when the decimal exponent is in [-4, 16), else as d.ddde[+-]XX. libc has no shortest
 * round-trip format, so the digits are found by trying 1..17 of them with %.*e and
 * strtod (at most 17 tries, each exact). */
static void py_repr(double d, char *out, size_t cap) {
  char e[40];
  int prec = 1;
  for (; prec < 17; prec++) {
    snprintf(e, sizeof e, "%.*e", prec - 1, d);
    if (strtod(e, NULL) == d) break;
  }
  snprintf(e, sizeof e, "%.*e", prec - 1, d);
  char digits[24];
  int nd = 0, neg = e[0] == '-';
  const char *q = e + neg;
  for (; *q && *q != 'e'; q++)
    if (*q >= '0' && *q <= '9') digits[nd++] = *q;
  while (nd > 1 && digits[nd - 1] == '0') nd--; /* %.*e may pad the last try */
  digits[nd] = 0;
  int exp10 = atoi(q + 1), decpt = exp10 + 1; /* digits "d1d2.." times 10^(decpt - nd) */
  char *w = out, *end = out + cap - 1; /* cap >= 40: the longest result is 24 bytes */
  if (neg) *w++ = '-';
  if (decpt > -4 && decpt <= 16) { /* fixed: 0.000ddd, ddd000.0 or dd.ddd */
    if (decpt <= 0) {
      *w++ = '0', *w++ = '.';
      for (int i = 0; i < -decpt; i++) *w++ = '0';
      for (int i = 0; i < nd; i++) *w++ = digits[i];
    } else {
      for (int i = 0; i < decpt; i++) *w++ = i < nd ? digits[i] : '0';
      *w++ = '.';
      if (decpt >= nd) *w++ = '0';
      for (int i = decpt; i < nd; i++) *w++ = digits[i];
    }
    *w = 0;
  } else { /* d.ddde+XX, the exponent at least two digits */
    *w++ = digits[0];
    if (nd > 1) *w++ = '.';
    for (int i = 1; i < nd; i++) *w++ = digits[i];
    snprintf(w, (size_t)(end - w) + 1, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
  }
}

static int put_number(double d, vd_buf *o) {
  char tmp[64];
  if (d == floor(d) && fabs(d) < 9.0e15)
    snprintf(tmp, sizeof tmp, "%lld", (long long)d);
  else if (isfinite(d))
    py_repr(d, tmp, sizeof tmp);
  else
    snprintf(tmp, sizeof tmp, "%s", isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
  return vd_buf_append(o, tmp, strlen(tmp));
}

/* 0 ok, -1 out of memory (a failed append anywhere: never a silently shortened text) */
static int emit(const cJSON *v, vd_buf *o, int level) {
  if (cJSON_IsRaw(v)) return vd_buf_append(o, v->valuestring, strlen(v->valuestring));
  if (cJSON_IsNull(v) || cJSON_IsInvalid(v)) return vd_buf_append(o, "null", 4);
  if (cJSON_IsTrue(v)) return vd_buf_append(o, "true", 4);
  if (cJSON_IsFalse(v)) return vd_buf_append(o, "false", 5);
  if (cJSON_IsNumber(v)) return put_number(v->valuedouble, o);
  if (cJSON_IsString(v)) return vd_pyjson_string_n(o, v->valuestring, strlen(v->valuestring));
  if (!cJSON_IsArray(v) && !cJSON_IsObject(v)) return 0;
  int obj = cJSON_IsObject(v), n = cJSON_GetArraySize(v), i = 0, bad = 0;
  if (!n) return vd_buf_append(o, obj ? "{}" : "[]", 2);
  const cJSON **items = malloc(n * sizeof *items), *c;
  if (!items) return -1;
  cJSON_ArrayForEach(c, v) items[i++] = c;
  if (obj) qsort(items, n, sizeof *items, cmp);
  bad |= vd_buf_append(o, obj ? "{" : "[", 1);
  for (i = 0; i < n && !bad; i++) {
    if (i) bad |= vd_buf_append(o, ",", 1);
    bad |= indent(o, level + 1);
    if (obj) {
      bad |= vd_pyjson_string_n(o, items[i]->string, strlen(items[i]->string));
      bad |= vd_buf_append(o, ": ", 2);
    }
    bad |= emit(items[i], o, level + 1);
  }
  free(items);
  bad |= indent(o, level);
  bad |= vd_buf_append(o, obj ? "}" : "]", 1);
  return bad ? -1 : 0;
}

int vd_pyjson(const cJSON *v, vd_buf *out) {
  out->len = 0;
  if (emit(v, out, 0)) return -1;
  return out->data ? 0 : -1;
}

/* --- kept literals --- */

typedef struct {
  const char *text, *p, *end;
  vd_buf tmp;
  int rc;
  size_t bad; /* where the string that is not JSON starts */
} walk_t;

static void ws(walk_t *w) { /* what cJSON skips: every byte up to the space */
  while (w->p < w->end && (unsigned char)*w->p <= 32) w->p++;
}

/* Past the string literal at p, as cJSON delimits it (a backslash takes the next byte
 * with it); NULL when there is none. */
static const char *str_end(const char *p, const char *end) {
  if (p >= end || *p != '"') return NULL;
  for (p++; p < end && *p != '"'; p++)
    if (*p == '\\' && ++p == end) return NULL;
  return p < end ? p + 1 : NULL;
}

static void to_raw(walk_t *w, cJSON *v, const char *a, size_t n) {
  char *s = malloc(n + 1);
  if (!s) {
    w->rc = -1;
    return;
  }
  memcpy(s, a, n);
  s[n] = 0;
  free(v->valuestring); /* NULL for a number */
  v->valuestring = s;
  v->type = cJSON_Raw;
}

/* JSON's escapes only: cJSON reads a \u with a bad hex digit as U+0000 and goes on, so
 * a literal with one would not decode to what cJSON made of it. */
static int escapes_ok(const char *a, const char *b) {
  for (const char *q = a + 1; q < b - 1; q++) {
    if (*q != '\\') continue;
    if (q + 1 < b - 1 && q[1] && strchr("\"\\/bfnrt", q[1])) {
      q++;
      continue;
    }
    if (q + 6 > b - 1 || q[1] != 'u') return 0;
    for (int k = 2; k < 6; k++)
      if (!q[k] || !strchr("0123456789abcdefABCDEF", q[k])) return 0;
    q += 5;
  }
  return 1;
}

/* The scalar v, written as text[a..b): kept when vd_pyjson would write it otherwise. */
static void scalar(walk_t *w, cJSON *v, const char *a, const char *b) {
  size_t n = (size_t)(b - a);
  int plain = 1; /* the common literals, which need no comparison */
  if (cJSON_IsString(v)) {
    for (const unsigned char *q = (const unsigned char *)a + 1; q < (const unsigned char *)b - 1 && plain; q++)
      plain = *q >= 0x20 && *q < 0x7f && *q != '\\';
    if (!plain && (memchr(a, 0, n) || !escapes_ok(a, b))) {
      w->rc = -2;
      w->bad = (size_t)(a - w->text);
      return;
    }
  } else { /* an integer of up to 15 digits, no leading zero, no "-0" */
    const char *q = a + (*a == '-');
    plain = n <= 15 && q < b && (*q != '0' || (b - q == 1 && q == a));
    for (; q < b && plain; q++) plain = *q >= '0' && *q <= '9';
  }
  if (plain) return;
  w->tmp.len = 0;
  int bad = cJSON_IsString(v) ? vd_pyjson_string_n(&w->tmp, v->valuestring, strlen(v->valuestring))
                              : put_number(v->valuedouble, &w->tmp);
  if (bad) w->rc = -1;
  else if (w->tmp.len != n || memcmp(w->tmp.data, a, n) != 0) to_raw(w, v, a, n);
}

static int expect(walk_t *w, char c) {
  ws(w);
  if (w->p >= w->end || *w->p != c) return w->rc = -3;
  w->p++;
  return 0;
}

/* Walks the text of v in step with its tree: cJSON keeps members and elements in text
 * order (duplicate keys included), and the text is known to parse. */
static void walk(walk_t *w, cJSON *v, int on, const char *member) {
  ws(w);
  const char *a = w->p, *b = NULL;
  if (w->p >= w->end) {
    w->rc = -3;
  } else if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
    int obj = cJSON_IsObject(v);
    if (expect(w, obj ? '{' : '[')) return;
    for (cJSON *c = v->child; c && !w->rc; c = c->next) {
      if (obj) {
        ws(w);
        if (!(b = str_end(w->p, w->end))) {
          w->rc = -3;
          return;
        }
        w->p = b;
        if (expect(w, ':')) return;
      }
      walk(w, c, on || (member && c->string && strcmp(c->string, member) == 0), NULL);
      if (!w->rc && c->next) expect(w, ',');
    }
    if (!w->rc) expect(w, obj ? '}' : ']');
  } else if (cJSON_IsString(v)) {
    if (!(b = str_end(a, w->end))) w->rc = -3;
    else if (on) scalar(w, v, a, b);
    w->p = b;
  } else if (cJSON_IsNumber(v)) {
    for (b = a; b < w->end && *b && strchr("0123456789+-eE.", *b); b++) {}
    if (b == a) w->rc = -3;
    else if (on) scalar(w, v, a, b);
    w->p = b;
  } else {
    const char *word = cJSON_IsTrue(v) ? "true" : cJSON_IsFalse(v) ? "false" : cJSON_IsNull(v) ? "null" : NULL;
    size_t n = word ? strlen(word) : 0;
    if (!word || (size_t)(w->end - a) < n || memcmp(a, word, n) != 0) w->rc = -3;
    else w->p = a + n;
  }
}

int vd_pyjson_keep(cJSON *root, const char *text, size_t len, const char *member, size_t *bad) {
  walk_t w = {text, text, text + len, {0}, 0, 0};
  if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) w.p += 3; /* cJSON skips a UTF-8 BOM */
  walk(&w, root, member == NULL, member);
  vd_buf_free(&w.tmp);
  if (bad) *bad = w.bad;
  return w.rc;
}

int vd_pyjson_is_string(const cJSON *j) {
  return cJSON_IsString(j) || (cJSON_IsRaw(j) && j->valuestring && j->valuestring[0] == '"');
}

/* A kept string literal is decoded by cJSON piece by piece, split at its \u0000
 * escapes (cJSON decodes every other escape, surrogate pairs included, and cannot hold
 * a NUL): the one escape vdsql decodes itself is the one cJSON cannot return. */
static int piece(vd_buf *out, vd_buf *tmp, const char *a, const char *b) {
  tmp->len = 0;
  if (vd_buf_append(tmp, "\"", 1) || vd_buf_append(tmp, a, (size_t)(b - a)) || vd_buf_append(tmp, "\"", 1))
    return -1;
  cJSON *s = cJSON_ParseWithLength((const char *)tmp->data, tmp->len);
  int rc = !cJSON_IsString(s) ? -1 : vd_buf_append(out, s->valuestring, strlen(s->valuestring));
  cJSON_Delete(s);
  return rc;
}

int vd_pyjson_bytes(const cJSON *j, vd_buf *out) {
  out->len = 0;
  int rc = 0;
  if (cJSON_IsString(j)) {
    rc = vd_buf_append(out, j->valuestring, strlen(j->valuestring));
  } else if (vd_pyjson_is_string(j) && strlen(j->valuestring) >= 2) {
    const char *lit = j->valuestring, *end = lit + strlen(lit) - 1, *from = lit + 1, *q = from;
    vd_buf tmp = {0};
    while (q < end && !rc) {
      if (*q != '\\') {
        q++;
      } else if (q + 6 <= end && memcmp(q, "\\u0000", 6) == 0) {
        rc = (q > from && piece(out, &tmp, from, q)) || vd_buf_append(out, "", 1);
        from = q += 6;
      } else {
        q += q[1] == 'u' ? 6 : 2;
      }
    }
    if (!rc && end > from) rc = piece(out, &tmp, from, end);
    vd_buf_free(&tmp);
  } else {
    return 1;
  }
  if (rc || vd_buf_reserve(out, 1)) return -1;
  out->data[out->len] = 0;
  return 0;
}

int vd_pyjson_number(const cJSON *j, double *d) {
  if (cJSON_IsNumber(j)) {
    *d = j->valuedouble;
    return 0;
  }
  if (!cJSON_IsRaw(j) || !j->valuestring || j->valuestring[0] == '"') return 1;
  cJSON *n = cJSON_Parse(j->valuestring); /* cJSON's own reading of the number */
  int rc = cJSON_IsNumber(n) ? (*d = n->valuedouble, 0) : 1;
  cJSON_Delete(n);
  return rc;
}

cJSON *vd_pyjson_string_node(const void *p, size_t n) {
  if (!n || !memchr(p, 0, n)) {
    char *s = malloc(n + 1);
    if (!s) return NULL;
    if (n) memcpy(s, p, n);
    s[n] = 0;
    cJSON *j = cJSON_CreateString(s);
    free(s);
    return j;
  }
  vd_buf lit = {0};
  cJSON *j = NULL;
  if (!vd_pyjson_string_n(&lit, p, n) && !vd_buf_append(&lit, "", 1)) j = cJSON_CreateRaw((const char *)lit.data);
  vd_buf_free(&lit);
  return j;
}
