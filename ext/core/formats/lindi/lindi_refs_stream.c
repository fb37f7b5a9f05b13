/* lindi.json's refs as a stream (see lindi_refs_stream.h).
 *
 * Why a small tokenizer of its own rather than a library: lindi.json is Python's JSON
 * (json.dumps, allow_nan: NaN and Infinity are numbers there), and lindi_refs gives
 * values byte for byte as written (a \u0000 in a string, 1.0, 1e+300); yajl, Debian's
 * streaming JSON reader, refuses NaN and Infinity, and cJSON builds a whole tree (what
 * made a 512 MiB padded lindi.json cost 890 MiB). The shape is fixed (an object holding
 * "refs", an object of values), so the parse is a handful of resumable steps over a
 * window of the text: each step (a separator, a key and its value) starts at a mark and
 * either completes or asks for more bytes and is run again from its mark. Values are
 * validated as they are skipped and kept as their text spans; columns decode them.
 *
 * Reads: the text is fetched in ranges that grow with what was read (1/25 of it, at
 * least 64 KiB, at most 8 MiB, more only while one value outgrows the window), so the
 * bytes fetched past the document's closing brace are at most 4% of it (or 64 KiB): of
 * lindi's padding (up to 4 times the text) no more is asked for (over http the source,
 * lindi_refs_src.c, reads ahead of that, never past the text). Rows are handed out as
 * they are parsed, so a fault further on comes after the rows before it. */
#include "lindi_refs_stream.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "lindi.h"
#include "util/utf8.h"

#define MIN_CHUNK ((int64_t)64 << 10)
#define MAX_CHUNK ((int64_t)8 << 20)
#define NEST 1000 /* cJSON's nesting limit: what it took before, this takes */

enum { P_START, P_TOP_KEY, P_TOP_SEP, P_REFS_KEY, P_REFS_SEP, P_DONE };
enum { R_OK = 0, R_NEED = 1, R_ROW = 2, R_ERR = -1 };

typedef const unsigned char uc;

void lrs_init(lrs *s, lrs_read_fn read, void *ud, const char *where, int64_t max_alloc) {
  memset(s, 0, sizeof *s);
  s->read = read;
  s->ud = ud;
  s->max = max_alloc;
  snprintf(s->where, sizeof s->where, "%s", where);
}

void lrs_free(lrs *s) {
  if (s->ud_free) s->ud_free(s->ud);
  vd_buf_free(&s->win);
  vd_buf_free(&s->key);
  vd_buf_free(&s->guess);
  for (int i = 0; i < s->nt; i++) free(s->tval[i]);
  free(s->tval);
  free(s->tlen);
  vd_strmap_free(&s->tmap);
  memset(s, 0, sizeof *s);
}

static int64_t at(const lrs *s, uc *p) { return s->base + (int64_t)(p - s->win.data); }

/* The one wording of malformed text: where, the byte offset in the text, the fault. */
static int bad(lrs *s, uc *p, vd_err *err, const char *fmt, ...) {
  char what[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  vd_fail(err, VD_INVALID, "%s: malformed JSON at byte %lld: %s", s->where, (long long)at(s, p), what);
  return R_ERR;
}

static int unexpected(lrs *s, uc *p, vd_err *err) {
  if (*p >= 0x21 && *p < 0x7f) return bad(s, p, err, "unexpected '%c'", *p);
  return bad(s, p, err, "unexpected byte 0x%02x", *p);
}

static uc *ws(uc *p, uc *e) {
  while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
  return p;
}

static int hex4(uc *p, unsigned *u) {
  *u = 0;
  for (int i = 0; i < 4; i++) {
    unsigned c = p[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 16;
    if (d == 16) return -1;
    *u = *u << 4 | d;
  }
  return 0;
}

/* Past the string literal at *pp ('"'), validated: no raw control character, JSON's
 * escapes only, \u with four hex digits, surrogates in pairs (cJSON refuses a lone one). */
static int scan_str(lrs *s, uc **pp, uc *e, vd_err *err) {
  uc *p = *pp + 1;
  for (;;) {
    while (p < e && *p >= 0x20 && *p != '"' && *p != '\\') p++;
    if (p >= e) return R_NEED;
    if (*p == '"') break;
    if (*p < 0x20) return bad(s, p, err, "a raw control character (byte 0x%02x) in a string", *p);
    if (p + 1 >= e) return R_NEED;
    if (p[1] && strchr("\"\\/bfnrt", p[1])) {
      p += 2;
      continue;
    }
    if (p[1] != 'u') return bad(s, p, err, "a bad escape in a string");
    unsigned u, v;
    if (e - p < 6) return R_NEED;
    /* at the u, where Python's json puts these faults */
    if (hex4(p + 2, &u)) return bad(s, p + 1, err, "a \\u escape without four hex digits");
    if (u >= 0xdc00 && u <= 0xdfff) return bad(s, p + 1, err, "a lone surrogate in a \\u escape");
    if (u >= 0xd800 && u <= 0xdbff) {
      if (e - p < 12) return R_NEED;
      if (p[6] != '\\' || p[7] != 'u' || hex4(p + 8, &v) || v < 0xdc00 || v > 0xdfff)
        return bad(s, p + 1, err, "a lone surrogate in a \\u escape");
      p += 6;
    }
    p += 6;
  }
  *pp = p + 1;
  return R_OK;
}

static int scan_word(lrs *s, uc **pp, uc *e, const char *w, vd_err *err) {
  uc *p = *pp;
  for (; *w; w++, p++) {
    if (p >= e) return R_NEED;
    if (*p != (unsigned char)*w) return bad(s, *pp, err, "not a JSON value"); /* at its start, as Python */
  }
  *pp = p;
  return R_OK;
}

/* JSON's number grammar, and Python's NaN, Infinity and -Infinity. */
static int scan_num(lrs *s, uc **pp, uc *e, vd_err *err) {
  uc *p = *pp, *q;
  if (*p == 'N') return scan_word(s, pp, e, "NaN", err);
  if (*p == '-' && ++p >= e) return R_NEED;
  if (*p == 'I') {
    *pp = p;
    return scan_word(s, pp, e, "Infinity", err);
  }
  if (*p == '0') p++;
  else if (*p >= '1' && *p <= '9') while (p < e && *p >= '0' && *p <= '9') p++;
  else return unexpected(s, p, err);
  if (p >= e) return R_NEED;
  if (*p == '.') { /* a '.' or an 'e' without digits after it: the fault is at it, as Python says */
    uc *dot = p;
    for (q = ++p; p < e && *p >= '0' && *p <= '9';) p++;
    if (p >= e) return R_NEED;
    if (p == q) return unexpected(s, dot, err);
  }
  if (*p == 'e' || *p == 'E') {
    uc *ex = p;
    if (++p >= e) return R_NEED;
    if (*p == '+' || *p == '-') p++;
    for (q = p; p < e && *p >= '0' && *p <= '9';) p++;
    if (p >= e) return R_NEED;
    if (p == q) return unexpected(s, ex, err);
  }
  *pp = p;
  return R_OK;
}

/* A key and its colon: *pp at the key's quote; on return, past the colon and spaces. */
static int scan_key(lrs *s, uc **pp, uc *e, vd_err *err) {
  uc *p = *pp;
  if (*p != '"') return unexpected(s, p, err);
  int r = scan_str(s, &p, e, err);
  if (r) return r;
  if ((p = ws(p, e)) >= e) return R_NEED;
  if (*p != ':') return unexpected(s, p, err);
  if ((p = ws(p + 1, e)) >= e) return R_NEED;
  *pp = p;
  return R_OK;
}

/* Past the value at *pp (not whitespace), validated. row (when not NULL) gets its kind
 * and spans: a ref is an array of exactly a string and two numbers. */
static int scan_value(lrs *s, uc **pp, uc *e, lrs_row *row, vd_err *err) {
  unsigned char stack[NEST];
  int depth = 0, nel = 0, r;
  char kinds[3] = {0};
  uc *p = *pp, *start = p;
  for (;;) { /* p: at a value */
    if ((p = ws(p, e)) >= e) return R_NEED;
    uc *vs = p;
    char kind = 'o';
    if (*p == '"') {
      r = scan_str(s, &p, e, err);
      kind = 's';
    } else if (*p == '{' || *p == '[') {
      if (depth == NEST) return bad(s, p, err, "values nested deeper than %d levels", NEST);
      unsigned char close = *p == '{' ? '}' : ']';
      stack[depth++] = close;
      if ((p = ws(p + 1, e)) >= e) return R_NEED;
      if (*p != close) {
        if (close == '}' && (r = scan_key(s, &p, e, err))) return r;
        continue;
      }
      p++;
      depth--;
      r = R_OK;
    } else if (*p == '-' || (*p >= '0' && *p <= '9') || *p == 'N' || *p == 'I') {
      r = scan_num(s, &p, e, err);
      kind = 'n';
    } else if (*p == 't' || *p == 'f' || *p == 'n') {
      r = scan_word(s, &p, e, *p == 't' ? "true" : *p == 'f' ? "false" : "null", err);
    } else {
      return unexpected(s, p, err);
    }
    if (r) return r;
    for (;;) { /* a value ended at p; depth is that of its container */
      if (row && depth == 1 && stack[0] == ']') {
        if (nel < 3) row->el[nel] = (const char *)vs, row->eln[nel] = (size_t)(p - vs), kinds[nel] = kind;
        nel++;
      }
      if (depth == 0) {
        if (row) {
          row->v = (const char *)start;
          row->vn = (size_t)(p - start);
          row->kind = *start == '"' ? LRS_STRING
                    : *start == '[' && nel == 3 && kinds[0] == 's' && kinds[1] == 'n' && kinds[2] == 'n' ? LRS_REF
                    : LRS_JSON;
        }
        *pp = p;
        return R_OK;
      }
      if ((p = ws(p, e)) >= e) return R_NEED;
      if (*p == ',') {
        if ((p = ws(p + 1, e)) >= e) return R_NEED;
        if (stack[depth - 1] == '}' && (r = scan_key(s, &p, e, err))) return r;
        break; /* the next element */
      }
      if (*p != stack[depth - 1]) return unexpected(s, p, err);
      p++;
      depth--;
      vs = NULL; /* a container ended: an element of the ref array, no span needed */
      kind = 'o';
    }
  }
}

/* A string literal's bytes (validated). out gets them with a NUL after. */
int lrs_decode(const char *lit, size_t n, vd_buf *out) {
  out->len = 0;
  if (vd_buf_reserve(out, n + 1)) return -1; /* decoding never lengthens */
  uc *p = (uc *)lit + 1, *e = (uc *)lit + n - 1;
  unsigned char *o = out->data;
  while (p < e) {
    uc *run = p;
    while (p < e && *p != '\\') p++;
    memcpy(o, run, (size_t)(p - run));
    o += p - run;
    if (p >= e) break;
    unsigned c = p[1], u, v;
    p += 2;
    switch (c) {
      case 'b': *o++ = '\b'; continue;
      case 'f': *o++ = '\f'; continue;
      case 'n': *o++ = '\n'; continue;
      case 'r': *o++ = '\r'; continue;
      case 't': *o++ = '\t'; continue;
      case 'u': break;
      default: *o++ = (unsigned char)c; continue;
    }
    hex4(p, &u);
    p += 4;
    if (u >= 0xd800 && u <= 0xdbff && p + 6 <= e && p[0] == '\\' && p[1] == 'u' && !hex4(p + 2, &v)) {
      u = 0x10000 + ((u - 0xd800) << 10) + (v - 0xdc00);
      p += 6;
    }
    o += vd_utf8_put(o, u);
  }
  out->len = (size_t)(o - out->data);
  out->data[out->len] = 0;
  return 0;
}

int lrs_compact(const char *v, size_t n, vd_buf *out) {
  out->len = 0;
  if (vd_buf_reserve(out, n + 1)) return -1;
  unsigned char *o = out->data;
  int in = 0;
  for (uc *p = (uc *)v, *e = p + n; p < e; p++) {
    if (in) {
      *o++ = *p;
      if (*p == '\\') *o++ = *++p;
      else if (*p == '"') in = 0;
    } else if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') {
      *o++ = *p;
      in = *p == '"';
    }
  }
  out->len = (size_t)(o - out->data);
  out->data[out->len] = 0;
  return 0;
}

/* The templates object at [a, b) (validated): each string by name, first one wins. */
static int collect_templates(lrs *s, uc *a, uc *b, vd_err *err) {
  s->templates_seen = 1;
  if (*a != '{') return R_OK; /* not an object: no templates, as lindi would find none */
  vd_buf name = {0};
  int rc = R_OK;
  for (uc *p = ws(a + 1, b); p < b && *p == '"';) {
    uc *k = p, *v;
    scan_str(s, &p, b, err); /* validated: cannot fail */
    if (lrs_decode((const char *)k, (size_t)(p - k), &name)) goto nomem;
    p = ws(ws(p, b) + 1, b); /* the colon */
    v = p;
    scan_value(s, &p, b, NULL, err);
    if (vd_strmap_get(&s->tmap, (const char *)name.data) < 0) {
      if (s->nt == s->tcap) {
        int cap = s->tcap ? s->tcap * 2 : 8;
        char **tv = realloc(s->tval, (size_t)cap * sizeof *tv);
        if (tv) s->tval = tv;
        size_t *tl = tv ? realloc(s->tlen, (size_t)cap * sizeof *tl) : NULL;
        if (!tl) goto nomem;
        s->tlen = tl;
        s->tcap = cap;
      }
      char *val = NULL;
      vd_buf d = {0};
      if (*v == '"') {
        if (lrs_decode((const char *)v, (size_t)(p - v), &d)) goto nomem;
        val = (char *)d.data;
      }
      s->tval[s->nt] = val;
      s->tlen[s->nt] = val ? d.len : 0;
      if (vd_strmap_put(&s->tmap, (const char *)name.data, s->nt)) {
        free(val);
        goto nomem;
      }
      s->nt++;
    }
    p = ws(p, b);
    if (p < b && *p == ',') p = ws(p + 1, b);
  }
  vd_buf_free(&name);
  return rc;
nomem:
  vd_buf_free(&name);
  vd_nomem(err);
  return R_ERR;
}

static int is_key(const lrs *s, const char *k) { return strcmp((const char *)s->key.data, k) == 0; }

/* The key literal at k (scanned already) decoded into s->key. */
static int key_of(lrs *s, uc *k, uc *e, vd_err *err) {
  uc *ke = k;
  scan_str(s, &ke, e, err);
  if (lrs_decode((const char *)k, (size_t)(ke - k), &s->key)) {
    vd_nomem(err);
    return R_ERR;
  }
  return R_OK;
}

/* The one wording of templates taken from the tail that the stream finds were not the
 * document's (a look-alike, or the text changed meanwhile): rows already given used
 * them, so the query cannot go on. real: the top-level "templates" value, or NULL. */
static int not_guessed(lrs *s, uc *real, vd_err *err) {
  char there[64];
  if (real) snprintf(there, sizeof there, "are at byte %lld", (long long)at(s, real));
  else snprintf(there, sizeof there, "are none");
  vd_fail(err, VD_INVALID,
          "%s: the \"templates\" found near the end of the text (at byte %lld) are not its top-level \"templates\" "
          "(they %s), and refs were already expanded with them",
          s->where, (long long)s->guess_at, there);
  return R_ERR;
}

/* One step from the mark: R_OK (phase advanced), R_ROW (a ref in s->row), R_NEED, R_ERR. */
static int step(lrs *s, uc **pp, uc *e, vd_err *err) {
  uc *p = ws(*pp, e), *k, *v;
  int r, next;
  if (p >= e) return R_NEED;
  switch (s->phase) {
    case P_START:
      if (*p != '{') { /* JSON, but no object: no "refs" in it */
        if ((r = scan_value(s, &p, e, NULL, err))) return r;
        next = P_DONE;
        break;
      }
      if ((p = ws(p + 1, e)) >= e) return R_NEED;
      if (*p == '}') p++, next = P_DONE;
      else next = P_TOP_KEY;
      break;
    case P_TOP_KEY:
      k = p;
      if ((r = scan_key(s, &p, e, err))) return r;
      v = p;
      if (key_of(s, k, e, err)) return R_ERR;
      if (!s->refs_seen && is_key(s, "refs")) {
        if (*p != '{') { /* the first "refs" is what cJSON's lookup found: not an object */
          if ((r = scan_value(s, &p, e, NULL, err))) return r;
          s->phase = P_DONE;
          *pp = p;
          return R_OK; /* refs_seen stays 0: the caller names the fault */
        }
        if ((p = ws(p + 1, e)) >= e) return R_NEED;
        s->refs_seen = 1;
        if (*p == '}') p++, next = P_TOP_SEP;
        else next = P_REFS_KEY;
        break;
      }
      if ((r = scan_value(s, &p, e, NULL, err))) return r;
      next = P_TOP_SEP;
      if (!s->top_templates && is_key(s, "templates")) { /* the first one: cJSON's lookup finds it */
        s->top_templates = 1;
        if (s->guessed) {
          if (at(s, v) != s->guess_at || (size_t)(p - v) != s->guess.len || memcmp(v, s->guess.data, s->guess.len))
            return not_guessed(s, v, err);
        } else if (!s->templates_seen) {
          if (collect_templates(s, v, p, err)) return R_ERR;
          if (s->templates_only) next = P_DONE;
        }
      }
      break;
    case P_TOP_SEP:
    case P_REFS_SEP:
      if (*p == ',') {
        if ((p = ws(p + 1, e)) >= e) return R_NEED;
        next = s->phase == P_TOP_SEP ? P_TOP_KEY : P_REFS_KEY;
        *pp = p;
        s->phase = next;
        return R_OK;
      }
      if (*p != '}') return unexpected(s, p, err);
      if (s->phase == P_TOP_SEP && s->guessed && !s->top_templates) return not_guessed(s, NULL, err);
      p++;
      next = s->phase == P_TOP_SEP ? P_DONE : P_TOP_SEP;
      break;
    case P_REFS_KEY:
      k = p;
      if ((r = scan_key(s, &p, e, err))) return r;
      v = p;
      if ((r = scan_value(s, &p, e, s->templates_only ? NULL : &s->row, err))) return r;
      s->phase = P_REFS_SEP;
      *pp = p;
      if (s->templates_only) return R_OK;
      if (key_of(s, k, e, err)) return R_ERR;
      s->row.key = (const char *)s->key.data;
      s->row.at = at(s, v);
      return R_ROW;
    default:
      return R_OK;
  }
  s->phase = next;
  *pp = p;
  return R_OK;
}

/* More text into the window: the bytes before the mark are dropped first. */
static vd_code more(lrs *s, vd_err *err) {
  size_t pending = s->win.len - s->mark;
  if ((int64_t)pending >= s->max)
    return vd_fail(err, VD_INVALID, "%s: a key and value at byte %lld take more than %lld bytes (the max_alloc setting)",
                   s->where, (long long)at(s, s->win.data + s->mark), (long long)s->max);
  if (s->mark) {
    memmove(s->win.data, s->win.data + s->mark, pending);
    s->base += (int64_t)s->mark;
    s->win.len = pending;
    s->mark = 0;
  }
  int64_t chunk = s->fetched / 25;
  if (chunk < MIN_CHUNK) chunk = MIN_CHUNK;
  if (chunk > MAX_CHUNK) chunk = MAX_CHUNK;
  if (chunk < (int64_t)pending / 2) chunk = (int64_t)pending / 2; /* one long value: fewer rescans */
  if (chunk > s->max - (int64_t)pending) chunk = s->max - (int64_t)pending;
  size_t before = s->win.len;
  vd_code rc = s->read(s->ud, s->base + (int64_t)s->win.len, chunk, &s->win, &s->eof, err);
  if (rc) return rc;
  s->fetched += (int64_t)(s->win.len - before);
  if (s->win.len == before) s->eof = 1;
  return VD_OK;
}

vd_code lrs_next(lrs *s, const lrs_row **row, vd_err *err) {
  *row = NULL;
  if (!s->win.data && vd_buf_reserve(&s->win, 1)) return vd_nomem(err); /* pointers into it from the start */
  for (;;) {
    if (s->phase == P_DONE) return VD_OK;
    uc *p = s->win.data + s->mark, *e = s->win.data + s->win.len;
    int r = s->win.len ? step(s, &p, e, err) : R_NEED;
    if (r == R_ERR) return err->code;
    if (r == R_OK || r == R_ROW) {
      s->mark = (size_t)(p - s->win.data);
      if (r == R_ROW) {
        *row = &s->row;
        return VD_OK;
      }
      continue;
    }
    if (s->eof) {
      bad(s, e, err, "the text ends before its top-level object closes");
      return err->code;
    }
    if (more(s, err)) return err->code;
  }
}

/* Does the top-level object's last members start at k, a key in t's window? Then its
 * value is [*v, *ve): the rest, to the window's last byte, must be ", key: value" pairs
 * and the object's closing brace. A look-alike inside a nested object would be followed
 * by more closing braces; inside a string its quotes would be escaped (and a key's quote
 * follows only whitespace, ',' or '{'). What still gets through (a nested one before a
 * run of spaces the probes took for the padding; a key ending in \"templates whose
 * backslash is just before the window) is caught by the check in step(). */
static int tail_member(lrs *t, uc *k, uc *e, uc **v, uc **ve) {
  vd_err scratch;
  uc *p = k;
  if (scan_key(t, &p, e, &scratch)) return 0;
  *v = p;
  if (scan_value(t, &p, e, NULL, &scratch)) return 0;
  *ve = p;
  for (;;) {
    p = ws(p, e);
    if (p == e - 1 && *p == '}') return 1;
    if (p >= e || *p != ',') return 0;
    if ((p = ws(p + 1, e)) >= e || scan_key(t, &p, e, &scratch) || scan_value(t, &p, e, NULL, &scratch)) return 0;
  }
}

/* Templates from the text's tail. Why: lindi writes the keys sorted, so "templates" comes
 * after "refs", and a ref's url names one ({{u1}}) from the first ref on; a second pass
 * over the refs to reach them reads the text twice. The padding after the text is only
 * whitespace, so its end can be found with a few small probes (lrs_text_end) and the
 * templates read from a window before it: 32 KiB (the probes leave up to 16 KiB of
 * padding in it; lindi's templates and "version" take a few hundred bytes), then 512
 * KiB. The guess is kept and checked when the stream reaches the real top-level
 * "templates" (step()). 1 found, 0 not (the caller makes the second pass), R_ERR. */
static const int64_t TAIL[] = {(int64_t)32 << 10, (int64_t)512 << 10}; /* a second, larger try */
static int tail_window(lrs *s, int64_t lo, int64_t hi, int64_t size, vd_err *err);
static int tail_templates(lrs *s, vd_err *err) {
  int64_t lo = s->base + (int64_t)s->win.len, hi = -1;
  if (s->end(s->ud, lo, &hi, err)) return R_ERR;
  if (hi <= lo) return 0; /* unknown, or the end is in the window: the stream is about to reach it */
  int r = 0;
  for (int i = 0; i < 2 && !r; i++) {
    r = tail_window(s, lo, hi, TAIL[i], err);
    if (hi - TAIL[i] <= s->base + (int64_t)s->mark) break; /* that window held all there is */
  }
  return r;
}

/* One try of tail_templates: the window of size bytes before hi. */
static int tail_window(lrs *s, int64_t lo, int64_t hi, int64_t size, vd_err *err) {
  int64_t start = hi - size > s->base + (int64_t)s->mark ? hi - size : s->base + (int64_t)s->mark;
  lrs t;
  lrs_init(&t, NULL, NULL, s->where, s->max);
  t.base = start;
  int eof = 0, found = 0;
  vd_code rc = VD_OK;
  if (start < lo && vd_buf_append(&t.win, s->win.data + (start - s->base), (size_t)(lo - start))) rc = vd_nomem(err);
  int64_t from = start > lo ? start : lo;
  if (!rc) rc = s->read(s->ud, from, hi - from, &t.win, &eof, err);
  if (!rc && t.win.len) {
    uc *b = t.win.data, *e = b + t.win.len, *v = NULL, *ve = NULL;
    while (e > b && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\r' || e[-1] == '\t')) e--;
    static const char key[] = "\"templates\"";
    for (uc *k = b; e > b && e[-1] == '}' && (k = memmem(k, (size_t)(e - k), key, sizeof key - 1)); k++) {
      if (k > b && (!k[-1] || !strchr(" \n\r\t,{", k[-1]))) continue; /* a key follows these only */
      if ((found = tail_member(&t, k, e, &v, &ve))) break;
    }
    if (found) {
      if (collect_templates(&t, v, ve, err)) {
        rc = err->code;
      } else if (vd_buf_append(&s->guess, v, (size_t)(ve - v))) {
        rc = vd_nomem(err);
      } else {
        s->guessed = s->templates_seen = 1;
        s->guess_at = t.base + (int64_t)(v - b);
        s->tmap = t.tmap, s->tval = t.tval, s->tlen = t.tlen, s->nt = t.nt, s->tcap = t.tcap;
        memset(&t.tmap, 0, sizeof t.tmap);
        t.tval = NULL, t.tlen = NULL, t.nt = 0;
      }
    }
  }
  lrs_free(&t);
  return rc ? R_ERR : found;
}

vd_code lrs_templates(lrs *s, vd_err *err) {
  if (s->templates_seen) return VD_OK;
  if (s->phase == P_DONE) { /* read to the end: there are none */
    s->templates_seen = 1;
    return VD_OK;
  }
  if (s->end && !s->tail_tried) {
    s->tail_tried = 1;
    int r = tail_templates(s, err);
    if (r == R_ERR) return err->code;
    if (r) return VD_OK;
  }
  lrs t;
  lrs_init(&t, s->read, s->ud, s->where, s->max);
  t.templates_only = 1;
  t.refs_seen = s->refs_seen;
  t.phase = s->phase; /* a step boundary: the state is the phase and the offset */
  t.base = s->base + (int64_t)s->mark;
  const lrs_row *row;
  vd_code rc;
  while (!(rc = lrs_next(&t, &row, err)) && t.phase != P_DONE) {}
  if (!rc) { /* the fork's templates become the cursor's */
    s->templates_seen = 1;
    s->tmap = t.tmap, s->tval = t.tval, s->tlen = t.tlen, s->nt = t.nt, s->tcap = t.tcap;
    memset(&t.tmap, 0, sizeof t.tmap);
    t.tval = NULL, t.tlen = NULL, t.nt = 0;
  }
  lrs_free(&t);
  return rc;
}

const char *lrs_template(const lrs *s, const char *name, size_t *n) {
  int i = vd_strmap_get(&s->tmap, name);
  if (i < 0 || !s->tval[i]) return NULL;
  *n = s->tlen[i];
  return s->tval[i];
}
