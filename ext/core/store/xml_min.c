/* The bounded XML reader of the object stores' answers (see xml_min.h for why not libxml2). */
#include "xml_min.h"

#include "util/utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32


void vd_xml_free(vd_xml *n) {
  while (n) {
    vd_xml *nx = n->next;
    vd_xml_free(n->child);
    free(n->text);
    free(n);
    n = nx;
  }
}

typedef struct {
  const char *p, *end;
} cur;

static int ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static int name_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':' || c == '-' ||
         c == '.' || c >= 0x80;
}

/* Appends the decoded text of [a, b) to n->text; -1 on a bad reference. A reference is
 * never shorter than what it decodes to (&#x10FFFF; is 10 bytes for 4), so the text never
 * outgrows its source. */
static int add_text(vd_xml *n, const char *a, const char *b) {
  if (a == b) return 0;
  char *t = realloc(n->text, n->textl + (size_t)(b - a) + 1);
  if (!t) return -1;
  n->text = t;
  char *w = t + n->textl;
  for (const char *p = a; p < b;) {
    if (*p != '&') {
      *w++ = *p++;
      continue;
    }
    const char *semi = memchr(p, ';', (size_t)(b - p));
    if (!semi || semi - p > 12) return -1;
    size_t l = (size_t)(semi - p - 1);
    const char *e = p + 1;
    if (l == 2 && !memcmp(e, "lt", 2)) *w++ = '<';
    else if (l == 2 && !memcmp(e, "gt", 2)) *w++ = '>';
    else if (l == 3 && !memcmp(e, "amp", 3)) *w++ = '&';
    else if (l == 4 && !memcmp(e, "quot", 4)) *w++ = '"';
    else if (l == 4 && !memcmp(e, "apos", 4)) *w++ = '\'';
    else if (l >= 2 && e[0] == '#') {
      int hex = e[1] == 'x';
      uint32_t cp = 0;
      const char *d = e + 1 + hex;
      if (d == semi) return -1;
      for (; d < semi; d++) {
        int v = *d >= '0' && *d <= '9' ? *d - '0' : hex && *d >= 'a' && *d <= 'f' ? *d - 'a' + 10 : hex && *d >= 'A' && *d <= 'F' ? *d - 'A' + 10 : -1;
        if (v < 0 || cp > 0x10FFFF) return -1;
        cp = cp * (hex ? 16 : 10) + (uint32_t)v;
      }
      if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1; /* not XML characters */
      w += vd_utf8_put((unsigned char *)w, cp);
    } else {
      return -1; /* an entity no DTD declared (and DTDs are refused) */
    }
    p = semi + 1;
  }
  *w = 0;
  n->textl = (size_t)(w - t);
  return 0;
}

/* Skips comments and processing instructions (the <?xml ...?> declaration); -1 on a DTD,
 * CDATA or an unterminated one; 0 when the next thing is not one of them. */
static int skip_misc(cur *c) {
  for (;;) {
    if (c->end - c->p >= 4 && !memcmp(c->p, "<!--", 4)) {
      const char *e = memmem(c->p + 4, (size_t)(c->end - c->p - 4), "-->", 3);
      if (!e) return -1;
      c->p = e + 3;
    } else if (c->end - c->p >= 2 && !memcmp(c->p, "<?", 2)) {
      const char *e = memmem(c->p + 2, (size_t)(c->end - c->p - 2), "?>", 2);
      if (!e) return -1;
      c->p = e + 2;
    } else if (c->end - c->p >= 2 && !memcmp(c->p, "<!", 2)) {
      return -1;
    } else {
      return 0;
    }
  }
}

/* One element starting at '<' (c->p), with its content; NULL when not well-formed. */
static vd_xml *element(cur *c, int depth) {
  if (depth > MAX_DEPTH || c->p >= c->end || *c->p != '<') return NULL;
  vd_xml *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  const char *p = ++c->p;
  while (p < c->end && name_char((unsigned char)*p)) p++;
  n->name = c->p;
  n->namel = (size_t)(p - c->p);
  const char *gt = p;
  char q = 0;
  for (; gt < c->end && (q || *gt != '>'); gt++) { /* quoted attribute values may hold '>' */
    if (q && *gt == q) q = 0;
    else if (!q && (*gt == '"' || *gt == '\'')) q = *gt;
    else if (!q && *gt == '<') break;
  }
  if (!n->namel || gt >= c->end || *gt != '>' || (p < gt && !ws(*p) && *p != '/')) goto bad;
  int empty = gt[-1] == '/' && gt - 1 >= p;
  n->attrs = p;
  n->attrsl = (size_t)(gt - p - (empty ? 1 : 0));
  c->p = gt + 1;
  if (empty) return n;
  for (;;) {
    const char *lt = memchr(c->p, '<', (size_t)(c->end - c->p));
    if (!lt) goto bad;
    if (add_text(n, c->p, lt)) goto bad;
    c->p = lt;
    if (c->end - c->p >= 2 && c->p[1] == '/') {
      const char *e = c->p + 2, *ne = e;
      while (ne < c->end && name_char((unsigned char)*ne)) ne++;
      if ((size_t)(ne - e) != n->namel || memcmp(e, n->name, n->namel)) goto bad;
      while (ne < c->end && ws(*ne)) ne++;
      if (ne >= c->end || *ne != '>') goto bad;
      c->p = ne + 1;
      if (!n->text && !(n->text = calloc(1, 1))) goto bad;
      return n;
    }
    if (c->end - c->p >= 2 && (c->p[1] == '!' || c->p[1] == '?')) {
      if (skip_misc(c)) goto bad;
      continue;
    }
    vd_xml *k = element(c, depth + 1);
    if (!k) goto bad;
    if (n->last) n->last->next = k;
    else n->child = k;
    n->last = k;
  }
bad:
  vd_xml_free(n);
  return NULL;
}

/* The document's root element, or NULL when it is not one well-formed element with only
 * white space, comments and processing instructions around it. */
vd_xml *vd_xml_parse(const char *body, size_t len) {
  if (!body || !len || memchr(body, 0, len)) return NULL; /* NUL is no XML character */
  cur c = {body, body + len};
  if (len >= 3 && !memcmp(body, "\xEF\xBB\xBF", 3)) c.p += 3; /* a UTF-8 byte order mark */
  for (;;) {
    while (c.p < c.end && ws(*c.p)) c.p++;
    const char *before = c.p;
    if (c.p >= c.end || skip_misc(&c)) return NULL;
    if (c.p == before) break;
  }
  vd_xml *root = element(&c, 0);
  for (; root;) { /* after the root: only white space, comments and processing instructions */
    while (c.p < c.end && ws(*c.p)) c.p++;
    if (c.p >= c.end) return root;
    const char *before = c.p;
    if (skip_misc(&c) || c.p == before) break;
  }
  vd_xml_free(root);
  return NULL;
}

int vd_xml_is(const vd_xml *n, const char *name) { return n && strlen(name) == n->namel && !memcmp(n->name, name, n->namel); }

vd_xml *vd_xml_child(const vd_xml *n, const char *name) {
  for (vd_xml *c = n ? n->child : NULL; c; c = c->next)
    if (vd_xml_is(c, name)) return c;
  return NULL;
}

/* A copy of the element's text (malloc'd), NULL without the element. */
char *vd_xml_text(const vd_xml *n, size_t *len) {
  if (!n) return NULL;
  char *s = malloc(n->textl + 1);
  if (!s) return NULL;
  memcpy(s, n->text ? n->text : "", n->textl);
  s[n->textl] = 0;
  if (len) *len = n->textl;
  return s;
}

/* Whether the element has attribute name="value" (either quote). */
int vd_xml_has_attr(const vd_xml *n, const char *name, const char *value) {
  size_t nl = strlen(name), vl = strlen(value);
  for (const char *p = n->attrs, *e = n->attrs + n->attrsl; p < e;) {
    while (p < e && ws(*p)) p++;
    const char *ns = p;
    while (p < e && name_char((unsigned char)*p)) p++;
    const char *ne = p;
    while (p < e && ws(*p)) p++;
    if (p >= e || *p != '=') return 0;
    p++;
    while (p < e && ws(*p)) p++;
    if (p >= e || (*p != '"' && *p != '\'')) return 0;
    const char *ve = memchr(p + 1, *p, (size_t)(e - p - 1));
    if (!ve) return 0;
    if ((size_t)(ne - ns) == nl && !memcmp(ns, name, nl) && (size_t)(ve - p - 1) == vl && !memcmp(p + 1, value, vl)) return 1;
    p = ve + 1;
  }
  return 0;
}

