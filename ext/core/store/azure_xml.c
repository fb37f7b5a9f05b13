/* Azure XML answers (see azure_xml.h) read by a small bounded parser, not libxml2: on
 * Debian libxml2 pulls in ICU and libstdc++, which add about 2 MiB of resident memory to
 * every process that loads vdsql (measured: sqlite3 .load 11.0 -> 13.2 MiB peak RSS,
 * enough to break the 32 MiB budget of tests/lindi/memory.t), for documents that are
 * flat and simple: elements, attributes, text, the five predefined entities and
 * character references. Anything else (a DTD, CDATA, an undeclared entity, mismatched
 * tags, nesting deeper than MAX_DEPTH) is refused as "not XML": the service never sends
 * it, and a DTD is how entity expansion attacks come in. Memory is bounded by the
 * answer's size (one node per tag, decoded text never longer than its source). */
#include "azure_xml.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32

typedef struct node {
  const char *name, *attrs; /* into the document; attrs: the raw text after the name */
  size_t namel, attrsl;
  char *text;               /* decoded character data directly inside, NUL-terminated */
  size_t textl;
  struct node *child, *last, *next;
} node;

static void free_node(node *n) {
  while (n) {
    node *nx = n->next;
    free_node(n->child);
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

static void put_utf8(char **w, uint32_t cp) {
  unsigned char *o = (unsigned char *)*w;
  if (cp < 0x80) {
    *o++ = (unsigned char)cp;
  } else if (cp < 0x800) {
    *o++ = (unsigned char)(0xC0 | cp >> 6), *o++ = (unsigned char)(0x80 | (cp & 63));
  } else if (cp < 0x10000) {
    *o++ = (unsigned char)(0xE0 | cp >> 12), *o++ = (unsigned char)(0x80 | (cp >> 6 & 63)), *o++ = (unsigned char)(0x80 | (cp & 63));
  } else {
    *o++ = (unsigned char)(0xF0 | cp >> 18), *o++ = (unsigned char)(0x80 | (cp >> 12 & 63));
    *o++ = (unsigned char)(0x80 | (cp >> 6 & 63)), *o++ = (unsigned char)(0x80 | (cp & 63));
  }
  *w = (char *)o;
}

/* Appends the decoded text of [a, b) to n->text; -1 on a bad reference. A reference is
 * never shorter than what it decodes to (&#x10FFFF; is 10 bytes for 4), so the text never
 * outgrows its source. */
static int add_text(node *n, const char *a, const char *b) {
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
      put_utf8(&w, cp);
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
static node *element(cur *c, int depth) {
  if (depth > MAX_DEPTH || c->p >= c->end || *c->p != '<') return NULL;
  node *n = calloc(1, sizeof *n);
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
    node *k = element(c, depth + 1);
    if (!k) goto bad;
    if (n->last) n->last->next = k;
    else n->child = k;
    n->last = k;
  }
bad:
  free_node(n);
  return NULL;
}

/* The document's root element, or NULL when it is not one well-formed element with only
 * white space, comments and processing instructions around it. */
static node *parse(const char *body, size_t len) {
  if (!body || !len || memchr(body, 0, len)) return NULL; /* NUL is no XML character */
  cur c = {body, body + len};
  if (len >= 3 && !memcmp(body, "\xEF\xBB\xBF", 3)) c.p += 3; /* a UTF-8 byte order mark */
  for (;;) {
    while (c.p < c.end && ws(*c.p)) c.p++;
    const char *before = c.p;
    if (c.p >= c.end || skip_misc(&c)) return NULL;
    if (c.p == before) break;
  }
  node *root = element(&c, 0);
  for (; root;) { /* after the root: only white space, comments and processing instructions */
    while (c.p < c.end && ws(*c.p)) c.p++;
    if (c.p >= c.end) return root;
    const char *before = c.p;
    if (skip_misc(&c) || c.p == before) break;
  }
  free_node(root);
  return NULL;
}

static int is(const node *n, const char *name) { return n && strlen(name) == n->namel && !memcmp(n->name, name, n->namel); }

static node *child(const node *n, const char *name) {
  for (node *c = n ? n->child : NULL; c; c = c->next)
    if (is(c, name)) return c;
  return NULL;
}

/* A copy of the element's text (malloc'd), NULL without the element. */
static char *text(const node *n, size_t *len) {
  if (!n) return NULL;
  char *s = malloc(n->textl + 1);
  if (!s) return NULL;
  memcpy(s, n->text ? n->text : "", n->textl);
  s[n->textl] = 0;
  if (len) *len = n->textl;
  return s;
}

/* Whether the element has attribute name="value" (either quote). */
static int has_attr(const node *n, const char *name, const char *value) {
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

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

void vd_az_list_free(vd_az_list *l) {
  for (int i = 0; i < l->n; i++) {
    free(l->blobs[i].name);
    vd_objinfo_free(&l->blobs[i].info);
  }
  free(l->blobs);
  free(l->next_marker);
  memset(l, 0, sizeof *l);
}

static vd_code blob(const char *where, const node *b, vd_az_blob *o, vd_err *err) {
  node *nm = child(b, "Name"), *props = child(b, "Properties"), *md = child(b, "Metadata");
  o->info.size = -1;
  size_t nl = 0;
  if (!nm || !(o->name = text(nm, &nl))) return vd_fail(err, VD_INVALID, "%s: a List Blobs entry without a Name", where);
  /* names with characters XML cannot carry come percent-encoded, marked Encoded="true" */
  int encoded = has_attr(nm, "Encoded", "true");
  if (encoded) {
    char *w = o->name;
    for (size_t i = 0; i < nl; i++) {
      int h, l;
      if (o->name[i] == '%' && i + 2 < nl && (h = hexval(o->name[i + 1])) >= 0 && (l = hexval(o->name[i + 2])) >= 0) {
        *w++ = (char)(h * 16 + l);
        i += 2;
      } else {
        *w++ = o->name[i];
      }
    }
    *w = 0;
    if ((size_t)(w - o->name) != strlen(o->name) || w == o->name)
      return vd_fail(err, VD_INVALID, "%s: a List Blobs entry with an encoded Name holding a NUL byte", where);
  }
  if (!*o->name) return vd_fail(err, VD_INVALID, "%s: a List Blobs entry with an empty Name", where);
  char *cl = props ? text(child(props, "Content-Length"), NULL) : NULL, *end = NULL;
  errno = 0;
  long long size = cl && *cl >= '0' && *cl <= '9' ? strtoll(cl, &end, 10) : -1;
  int good = cl && end && !*end && !errno && size >= 0;
  free(cl);
  if (!good) return vd_fail(err, VD_INVALID, "%s: List Blobs entry %.200s has no valid Content-Length", where, o->name);
  o->info.size = size;
  /* the listing's Etag is unquoted (0x...), the ETag header quoted: keep the header's
   * form, so that a listing and a HEAD agree and If-Match takes either */
  char *et = props ? text(child(props, "Etag"), NULL) : NULL;
  if (et && *et) {
    int q = et[0] == '"';
    if (strlen(et) + (q ? 0 : 2) >= sizeof o->info.etag) {
      free(et);
      return vd_fail(err, VD_INVALID, "%s: List Blobs entry %.200s has an Etag of over 125 bytes", where, o->name);
    }
    snprintf(o->info.etag, sizeof o->info.etag, q ? "%s" : "\"%s\"", et);
  }
  free(et);
  char *lm = props ? text(child(props, "Last-Modified"), NULL) : NULL;
  time_t t = lm ? curl_getdate(lm, NULL) : -1; /* RFC 1123, as libcurl parses HTTP dates */
  o->info.mtime = t > 0 ? (int64_t)t : 0;
  free(lm);
  for (node *m = md ? md->child : NULL; m; m = m->next) {
    size_t vl = 0;
    char *v = text(m, &vl);
    if (!v) return vd_nomem(err);
    int r = vd_objinfo_add_meta(&o->info, m->name, m->namel, v, vl);
    free(v);
    if (r) return vd_nomem(err);
  }
  return VD_OK;
}

vd_code vd_az_parse_list(const char *where, const char *body, size_t len, vd_az_list *out, vd_err *err) {
  memset(out, 0, sizeof *out);
  node *root = parse(body, len);
  if (!root) return vd_fail(err, VD_INVALID, "%s: the List Blobs answer is not XML (or has a DTD)", where);
  vd_code rc = VD_OK;
  if (!is(root, "EnumerationResults")) {
    rc = vd_fail(err, VD_INVALID, "%s: the List Blobs answer is not an EnumerationResults", where);
    goto out;
  }
  int cap = 0;
  for (node *b = child(root, "Blobs") ? child(root, "Blobs")->child : NULL; b; b = b->next) {
    if (!is(b, "Blob")) continue; /* BlobPrefix entries come only with a delimiter */
    if (out->n == cap) {
      int nc = cap ? cap * 2 : 16;
      vd_az_blob *nb = realloc(out->blobs, (size_t)nc * sizeof *nb);
      if (!nb) {
        rc = vd_nomem(err);
        goto out;
      }
      out->blobs = nb;
      cap = nc;
    }
    memset(&out->blobs[out->n], 0, sizeof *out->blobs);
    rc = blob(where, b, &out->blobs[out->n], err);
    out->n++;
    if (rc) goto out;
  }
  node *nm = child(root, "NextMarker");
  if (nm) {
    size_t l = 0;
    out->next_marker = text(nm, &l);
    if (out->next_marker && !l) { /* an empty <NextMarker/> ends the listing */
      free(out->next_marker);
      out->next_marker = NULL;
    }
  }
out:
  free_node(root);
  if (rc) vd_az_list_free(out);
  return rc;
}

static void clean_code(const char *s, size_t n, char out[64]) {
  size_t w = 0;
  for (size_t i = 0; i < n && w < 63; i++) {
    char c = s[i];
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')
      out[w++] = c;
  }
  out[w] = 0;
}

void vd_az_error_code(const char *header, const char *body, size_t len, char out[64]) {
  out[0] = 0;
  if (header && *header) {
    clean_code(header, strlen(header), out);
    if (*out) return;
  }
  node *root = parse(body, len);
  if (!root) return;
  if (is(root, "Error")) {
    size_t l = 0;
    char *c = text(child(root, "Code"), &l);
    if (c) clean_code(c, l, out);
    free(c);
  }
  free_node(root);
}

vd_code vd_az_fail(vd_err *err, const char *where, long status, const char *code) {
  vd_code c = status == 404 ? VD_NOTFOUND
              : status == 412 || (status == 409 && code && strcmp(code, "BlobAlreadyExists") == 0) ? VD_PRECONDITION
                                                                                                   : VD_IO;
  return vd_fail(err, c, "%s: Azure Blob answered %ld%s%s", where, status, code && *code ? " " : "", code ? code : "");
}
