/* LINDI's .tar_index.json read as a stream (see lindi.h), and the lindi_index it fills.
 *
 * Why a tokenizer of our own and not cJSON or a Debian streaming library: a 100,000-member
 * index is ~10 MB of text, and a DOM of it (cJSON) cost ~75 MiB; the reader must keep
 * only the four fields of each entry. yajl (libyajl-dev) streams, but reports error
 * offsets only roughly (one past the offending byte for some errors, at the end of the
 * next token for others), while the index's errors name the exact byte; and stopping at
 * the end of the value, so that the padding after it is never read, needs a callback
 * that cancels its parse. The grammar the index needs is small: one object, a "files"
 * array of flat objects, other values only checked and skipped. The reader pulls its text
 * from a source one piece at a time (a range request, a pread), so a token split between
 * pieces needs no state machine; it is fuzzed in random-sized pieces against the whole
 * text (tests/fuzz/fuzz_lindi.c).
 *
 * JSON as RFC 8259 has it, with cJSON's nesting limit (1000); what it accepted before is
 * accepted the same way: an integer is any number whose value is a whole number up to
 * 9e15 (2.0 and 1e3 too), the first of two equal keys counts, bytes past the value are
 * not read. Names live in one arena; after a successful read the index is packed into one
 * blob that the cache shares with every cursor (lindi_index_pack). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lindi.h"
#include "util/utf8.h"

#define NEST_LIMIT 1000 /* cJSON's CJSON_NESTING_LIMIT */

/* ---- the index container ----------------------------------------------------------- */

typedef struct lindi_names {
  struct lindi_names *next;
  size_t used, cap;
  char data[];
} lindi_names;

static char *name_copy(lindi_index *ix, const char *s, size_t n) {
  lindi_names *a = ix->names;
  if (!a || a->cap - a->used < n + 1) {
    size_t cap = n + 1 > 65536 ? n + 1 : 65536;
    if (!(a = malloc(sizeof *a + cap))) return NULL;
    a->next = ix->names;
    a->used = 0;
    a->cap = cap;
    ix->names = a;
  }
  char *p = a->data + a->used;
  memcpy(p, s, n);
  p[n] = 0;
  a->used += n + 1;
  return p;
}

/* A packed index (files and by_name inside the shared blob) gets its own files array
 * before it changes; its names stay in the blob, which it keeps a reference to. */
static int unshare(lindi_index *ix) {
  if (!ix->shared) return 0;
  lindi_file *f = malloc((ix->n ? ix->n : 1) * sizeof *f);
  if (!f) return -1;
  if (ix->n) memcpy(f, ix->files, ix->n * sizeof *f);
  ix->files = f;
  ix->cap = ix->n;
  ix->by_name = NULL; /* lindi_find searches linearly until the next lindi_index_sort */
  ix->shared = 0;
  return 0;
}

static int add_n(lindi_index *ix, const char *name, size_t len, int64_t o, int64_t d, int64_t s) {
  if (unshare(ix)) return -1;
  if (ix->n == ix->cap) {
    int cap = ix->cap ? ix->cap * 2 : 64;
    lindi_file *f = realloc(ix->files, cap * sizeof *f);
    if (!f) return -1;
    ix->files = f;
    ix->cap = cap;
  }
  char *nm = name_copy(ix, name, len);
  if (!nm) return -1;
  ix->files[ix->n++] = (lindi_file){nm, o, d, s};
  return 0;
}

int lindi_index_add(lindi_index *ix, const char *name, int64_t o, int64_t d, int64_t s) {
  return add_n(ix, name, strlen(name), o, d, s);
}

static const lindi_index *sort_ix;
static int by_name_cmp(const void *a, const void *b) {
  return strcmp(sort_ix->files[*(const int *)a].name, sort_ix->files[*(const int *)b].name);
}

void lindi_index_sort(lindi_index *ix) {
  if (ix->shared) return; /* packed: sorted when packed, unchanged since */
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
  if (!ix->shared) {
    free(ix->files);
    free(ix->by_name);
  }
  for (lindi_names *a = ix->names, *next; a; a = next) {
    next = a->next;
    free(a);
  }
  vd_blob_unref(ix->packed);
  memset(ix, 0, sizeof *ix);
}

/* Blob layout: int64 n, lindi_file files[n] (names pointing into the blob), int
 * by_name[n], the names. Immutable once made; pointers stay valid while it lives. */
vd_blob *lindi_index_pack(lindi_index *ix) {
  if (ix->shared) return vd_blob_ref(ix->packed);
  if (!ix->by_name) return NULL;
  size_t names = 0;
  for (int i = 0; i < ix->n; i++) names += strlen(ix->files[i].name) + 1;
  size_t size = sizeof(int64_t) + (size_t)ix->n * (sizeof(lindi_file) + sizeof(int)) + names;
  vd_blob *b = vd_blob_new(NULL, size);
  if (!b) return NULL;
  *(int64_t *)(void *)b->data = ix->n;
  lindi_file *f = (lindi_file *)(void *)(b->data + sizeof(int64_t));
  int *bn = (int *)(void *)(f + ix->n);
  char *nm = (char *)(bn + ix->n);
  for (int i = 0; i < ix->n; i++) {
    size_t l = strlen(ix->files[i].name) + 1;
    memcpy(nm, ix->files[i].name, l);
    f[i] = ix->files[i];
    f[i].name = nm;
    nm += l;
  }
  if (ix->n) memcpy(bn, ix->by_name, (size_t)ix->n * sizeof *bn);
  int64_t io = ix->io, id = ix->id, is = ix->is;
  lindi_index_free(ix);
  lindi_index_borrow(ix, b);
  ix->io = io, ix->id = id, ix->is = is;
  return b;
}

void lindi_index_borrow(lindi_index *ix, vd_blob *packed) {
  ix->n = ix->cap = (int)*(const int64_t *)(const void *)packed->data;
  ix->files = (lindi_file *)(void *)(packed->data + sizeof(int64_t));
  ix->by_name = (int *)(void *)(ix->files + ix->n);
  ix->packed = vd_blob_ref(packed);
  ix->shared = 1;
}

/* ---- the reader --------------------------------------------------------------------- */

typedef struct rd {
  lindi_more more;
  void *mctx;
  const unsigned char *p, *e; /* the piece in hand */
  size_t pos;                 /* offset of *p in the text */
  int eof, bad;               /* bad: malformed at pos */
  vd_code io;                 /* the source failed (or memory ran out): err holds why */
  vd_err *err;
  const char *where;
  int sem;                    /* a fault of the index's content is in err (reported unless
                                 the JSON turns out malformed, as a DOM parse would find first) */
  vd_buf key, name;
} rd;

static int peek(rd *r) {
  while (r->p == r->e) {
    if (r->eof || r->io || r->bad) return -1;
    const unsigned char *p = NULL;
    size_t n = 0;
    if ((r->io = r->more(r->mctx, &p, &n, r->err))) return -1;
    if (!n) {
      r->eof = 1;
      return -1;
    }
    r->p = p, r->e = p + n;
  }
  return *r->p;
}

static void adv(rd *r) { r->p++, r->pos++; }
static int fail(rd *r) { /* malformed at the current byte (the end, past the last one) */
  if (!r->io) r->bad = 1;
  return -1;
}
static int oom(rd *r) {
  r->io = vd_nomem(r->err);
  return -1;
}
static void ws(rd *r) {
  for (int c = peek(r); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = peek(r)) adv(r);
}
static int digit(int c) { return c >= '0' && c <= '9'; }

__attribute__((format(printf, 2, 3))) static void content(rd *r, const char *fmt, ...) {
  if (r->sem) return;
  char msg[sizeof r->err->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  vd_fail(r->err, VD_INVALID, "%s", msg);
  r->sem = 1;
}

static int hex4(rd *r, unsigned *v) {
  *v = 0;
  for (int i = 0; i < 4; i++) {
    int c = peek(r);
    unsigned x = digit(c) ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
               : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;
    if (x == 16) return fail(r);
    *v = *v << 4 | x;
    adv(r);
  }
  return 0;
}

/* A string (at its '"'); its bytes, escapes decoded to UTF-8, go to out (NULL: checked
 * only). Surrogates must pair up, as cJSON required. */
static int string(rd *r, vd_buf *out) {
  adv(r);
  for (;;) {
    int c = peek(r);
    if (c < 0x20) return fail(r); /* the end, or a raw control character */
    if (c == '"') {
      adv(r);
      return 0;
    }
    if (c != '\\') { /* a run within this piece in one go */
      const unsigned char *s = r->p;
      while (r->p < r->e && *r->p >= 0x20 && *r->p != '"' && *r->p != '\\') r->p++;
      r->pos += (size_t)(r->p - s);
      if (out && vd_buf_append(out, s, (size_t)(r->p - s))) return oom(r);
      continue;
    }
    adv(r);
    c = peek(r);
    unsigned u;
    const char *simple = strchr("\"\\/bfnrt", c > 0 ? c : 'x');
    if (c > 0 && simple) {
      static const char to[] = "\"\\/\b\f\n\r\t";
      char ch = to[simple - "\"\\/bfnrt"];
      adv(r);
      if (out && vd_buf_append(out, &ch, 1)) return oom(r);
      continue;
    }
    if (c != 'u') return fail(r);
    adv(r);
    if (hex4(r, &u)) return -1;
    if (u >= 0xdc00 && u <= 0xdfff) return fail(r);
    if (u >= 0xd800 && u <= 0xdbff) {
      unsigned lo;
      if (peek(r) != '\\') return fail(r);
      adv(r);
      if (peek(r) != 'u') return fail(r);
      adv(r);
      if (hex4(r, &lo)) return -1;
      if (lo < 0xdc00 || lo > 0xdfff) return fail(r);
      u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
    }
    unsigned char b[4];
    size_t n = vd_utf8_put(b, u);
    if (out && vd_buf_append(out, b, n)) return oom(r);
  }
}

/* A number; its literal goes to lit (cap bytes with the NUL), *len its full length. */
static int number(rd *r, char *lit, size_t cap, size_t *len) {
  size_t n = 0;
  int c = peek(r);
#define TAKE() (n + 1 < cap ? (void)(lit[n] = (char)c) : (void)0, n++, adv(r), c = peek(r))
  if (c == '-') TAKE();
  if (c == '0') TAKE();
  else if (digit(c)) while (digit(c)) TAKE();
  else return fail(r);
  if (c == '.') {
    TAKE();
    if (!digit(c)) return fail(r);
    while (digit(c)) TAKE();
  }
  if (c == 'e' || c == 'E') {
    TAKE();
    if (c == '+' || c == '-') TAKE();
    if (!digit(c)) return fail(r);
    while (digit(c)) TAKE();
  }
#undef TAKE
  lit[n < cap ? n : cap - 1] = 0;
  *len = n;
  return r->io ? -1 : 0;
}

/* The integers the index holds, as vd_json_int took them from cJSON's doubles: whole,
 * finite, at most 9e15 either way. A plain integer literal is read exactly. */
static int as_int(const char *lit, size_t len, size_t cap, int64_t *v) {
  if (len >= cap) return -1; /* 40+ characters: a whole number under 9e15 has fewer */
  if (!strpbrk(lit, ".eE")) {
    const char *p = lit + (lit[0] == '-');
    if (strlen(p) > 16) return -1;
    int64_t x = 0;
    for (; *p; p++) x = x * 10 + (*p - '0');
    if (x > 9000000000000000LL) return -1;
    *v = lit[0] == '-' ? -x : x;
    return 0;
  }
  double d = strtod(lit, NULL);
  if (!isfinite(d) || d != floor(d) || fabs(d) > 9.0e15) return -1;
  *v = (int64_t)d;
  return 0;
}

static int word(rd *r, const char *w) {
  for (; *w; w++) {
    if (peek(r) != *w) return fail(r);
    adv(r);
  }
  return 0;
}

/* Any value, checked and dropped; depth: the containers around it. */
static int skip(rd *r, int depth) {
  int c = peek(r);
  if (c == '"') return string(r, NULL);
  if (c == 't') return word(r, "true");
  if (c == 'f') return word(r, "false");
  if (c == 'n') return word(r, "null");
  if (c == '-' || digit(c)) {
    char lit[2];
    size_t n;
    return number(r, lit, sizeof lit, &n);
  }
  if (c != '{' && c != '[') return fail(r);
  if (depth >= NEST_LIMIT) return fail(r);
  int close = c == '{' ? '}' : ']';
  adv(r);
  ws(r);
  if (peek(r) == close) {
    adv(r);
    return 0;
  }
  for (;;) {
    if (c == '{') {
      if (peek(r) != '"') return fail(r);
      if (string(r, NULL)) return -1;
      ws(r);
      if (peek(r) != ':') return fail(r);
      adv(r);
      ws(r);
    }
    if (skip(r, depth + 1)) return -1;
    ws(r);
    int k = peek(r);
    if (k == close) {
      adv(r);
      return 0;
    }
    if (k != ',') return fail(r);
    adv(r);
    ws(r);
  }
}

/* One object's members: each key to r->key, then member(ctx, r) reads the value. */
static int members(rd *r, int depth, int (*member)(void *, rd *), void *mctx) {
  if (depth >= NEST_LIMIT) return fail(r);
  adv(r);
  ws(r);
  if (peek(r) == '}') {
    adv(r);
    return 0;
  }
  for (;;) {
    if (peek(r) != '"') return fail(r);
    r->key.len = 0;
    if (string(r, &r->key)) return -1;
    ws(r);
    if (peek(r) != ':') return fail(r);
    adv(r);
    ws(r);
    if (member(mctx, r)) return -1;
    ws(r);
    int k = peek(r);
    if (k == '}') {
      adv(r);
      return 0;
    }
    if (k != ',') return fail(r);
    adv(r);
    ws(r);
  }
}

typedef struct entry_st {
  int state[4]; /* "n", "o", "d", "s": 0 absent, 1 read, 2 of the wrong type */
  int64_t v[4];
  int nul;      /* the name holds a NUL byte */
} entry_st;

static int entry_member(void *ctx, rd *r) {
  entry_st *e = ctx;
  const char *k = r->key.len == 1 ? strchr("nods", r->key.data[0]) : NULL;
  int i = k && *k ? (int)(k - "nods") : -1;
  if (i < 0 || e->state[i] || r->sem) return skip(r, 3); /* the first of equal keys counts */
  int c = peek(r);
  if (i == 0) {
    if (c != '"') return e->state[0] = 2, skip(r, 3);
    r->name.len = 0;
    if (string(r, &r->name)) return -1;
    e->nul = r->name.len && memchr(r->name.data, 0, r->name.len) != NULL;
    e->state[0] = 1;
    return 0;
  }
  if (c != '-' && !digit(c)) return e->state[i] = 2, skip(r, 3);
  char lit[40];
  size_t len;
  if (number(r, lit, sizeof lit, &len)) return -1;
  e->state[i] = as_int(lit, len, sizeof lit, &e->v[i]) ? 2 : 1;
  return 0;
}

typedef struct top_st {
  lindi_index *ix;
  int files;  /* 0 no "files" yet, 1 an array, 2 something else */
} top_st;

static int entry(rd *r, lindi_index *ix, int i) {
  char ctx[48];
  snprintf(ctx, sizeof ctx, "files[%d]", i);
  if (peek(r) != '{') {
    if (peek(r) >= 0) content(r, "%s: %s is not an object", r->where, ctx);
    return skip(r, 2);
  }
  entry_st e = {0};
  if (members(r, 2, entry_member, &e)) return -1;
  if (r->sem) return 0;
  static const char *const keys[4] = {"n", "o", "d", "s"};
  for (int k = 0; k < 4; k++) {
    if (e.state[k] == 0) return content(r, "%s: %s has no \"%s\"", r->where, ctx, keys[k]), 0;
    if (e.state[k] == 2)
      return content(r, "%s: %s: \"%s\" must be %s", r->where, ctx, keys[k], k ? "an integer" : "a string"), 0;
  }
  if (r->name.len == 0 || r->name.data[r->name.len - 1] != 0) /* a C string for what follows */
    if (vd_buf_append(&r->name, "", 1)) return oom(r);
  const char *n = (const char *)r->name.data;
  if (e.nul) return content(r, "%s: %s: \"n\" holds a NUL byte", r->where, ctx), 0;
  int64_t o = e.v[1], d = e.v[2], s = e.v[3];
  if (o < 0 || d < o + 512 || s < 0) return content(r, "%s: %s (%s) has impossible offsets", r->where, ctx, n), 0;
  if (add_n(ix, n, strlen(n), o, d, s)) return oom(r);
  return 0;
}

static int top_member(void *ctx, rd *r) {
  top_st *t = ctx;
  if (t->files || r->key.len != 5 || memcmp(r->key.data, "files", 5) != 0) return skip(r, 1);
  if (peek(r) != '[') return t->files = 2, skip(r, 1);
  t->files = 1;
  adv(r);
  ws(r);
  if (peek(r) == ']') {
    adv(r);
    return 0;
  }
  for (int i = 0;; i++) {
    if (entry(r, t->ix, i)) return -1;
    ws(r);
    int k = peek(r);
    if (k == ']') {
      adv(r);
      return 0;
    }
    if (k != ',') return fail(r);
    adv(r);
    ws(r);
  }
}

vd_code lindi_read_index(lindi_more more, void *mctx, int64_t total, const char *where, lindi_index *ix,
                         int64_t *text_len, vd_err *err) {
  rd r = {.more = more, .mctx = mctx, .err = err, .where = where};
  top_st t = {ix, 0};
  vd_code rc = VD_OK;
  ws(&r);
  int c = peek(&r);
  if (c < 0 && !r.io && r.pos == 0) {
    rc = vd_fail(err, VD_INVALID, "%s: empty document", where);
    goto done;
  }
  if (c == '{' ? members(&r, 0, top_member, &t) : skip(&r, 0)) {
    rc = r.io ? r.io
              : vd_fail(err, VD_INVALID, "%s: malformed JSON near byte %zu of %lld", where, r.pos, (long long)total);
    goto done;
  }
  if (text_len) *text_len = (int64_t)r.pos;
  if (r.sem) {
    rc = VD_INVALID; /* err holds it */
    goto done;
  }
  if (t.files != 1) {
    rc = vd_fail(err, VD_INVALID, "%s: .tar_index.json has no \"files\" list", where);
    goto done;
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
  rc = lindi_index_check(ix, where, err);
done:
  vd_buf_free(&r.key);
  vd_buf_free(&r.name);
  if (rc) lindi_index_free(ix);
  return rc;
}

vd_code lindi_index_check(const lindi_index *ix, const char *where, vd_err *err) {
  const lindi_file *e = lindi_find(ix, LINDI_ENTRY_NAME), *x = lindi_find(ix, LINDI_INDEX_NAME);
  if (!e || e->o != 0 || e->d != 512 || e->s != LINDI_ENTRY_SIZE)
    return vd_fail(err, VD_INVALID, "%s: the index does not list .tar_entry.json at 0/512/1024", where);
  if (!x || x->o != ix->io || x->d != ix->id || x->s != ix->is)
    return vd_fail(err, VD_INVALID, "%s: the index's own entry disagrees with .tar_entry.json", where);
  return VD_OK;
}

typedef struct whole {
  const char *text;
  size_t len;
} whole;

static vd_code whole_more(void *ctx, const unsigned char **p, size_t *n, vd_err *err) {
  whole *w = ctx;
  *p = (const unsigned char *)w->text, *n = w->len;
  w->len = 0;
  return VD_OK;
}

vd_code lindi_parse_index(const char *text, size_t len, const char *where, lindi_index *ix, vd_err *err) {
  whole w = {text, len};
  return lindi_read_index(whole_more, &w, (int64_t)len, where, ix, NULL, err);
}
