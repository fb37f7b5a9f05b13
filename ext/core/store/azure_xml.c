/* Azure XML answers with libxml2 (see azure_xml.h). Documents with a DTD are refused:
 * the service never sends one, and a DTD is how entity expansion attacks come in; the
 * parser never touches the network (XML_PARSE_NONET) and never prints (NOERROR). */
#include "azure_xml.h"

#include <curl/curl.h>
#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XML_OPTS (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)

static xmlDocPtr parse(const char *body, size_t len) {
  if (!body || len == 0 || len > INT_MAX) return NULL;
  xmlInitParser();
  xmlDocPtr d = xmlReadMemory(body, (int)len, NULL, NULL, XML_OPTS);
  if (d && (d->intSubset || d->extSubset)) {
    xmlFreeDoc(d);
    return NULL;
  }
  return d;
}

static int is(xmlNodePtr n, const char *name) {
  return n && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static xmlNodePtr child(xmlNodePtr n, const char *name) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
    if (is(c, name)) return c;
  return NULL;
}

/* The text of an element (malloc'd, NUL-terminated; *len excludes the NUL). */
static char *text(xmlNodePtr n, size_t *len) {
  xmlChar *t = xmlNodeGetContent(n);
  if (!t) return NULL;
  char *s = strdup((const char *)t);
  xmlFree(t);
  if (s && len) *len = strlen(s);
  return s;
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

static vd_code blob(const char *where, xmlNodePtr b, vd_az_blob *o, vd_err *err) {
  xmlNodePtr nm = child(b, "Name"), props = child(b, "Properties"), md = child(b, "Metadata");
  o->info.size = -1;
  size_t nl = 0;
  if (!nm || !(o->name = text(nm, &nl))) return vd_fail(err, VD_INVALID, "%s: a List Blobs entry without a Name", where);
  /* names with characters XML cannot carry come percent-encoded, marked Encoded="true" */
  xmlChar *enc = xmlGetProp(nm, (const xmlChar *)"Encoded");
  int encoded = enc && strcmp((const char *)enc, "true") == 0;
  xmlFree(enc);
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
  for (xmlNodePtr m = md ? md->children : NULL; m; m = m->next) {
    if (m->type != XML_ELEMENT_NODE) continue;
    size_t vl = 0;
    char *v = text(m, &vl);
    if (!v) return vd_nomem(err);
    int r = vd_objinfo_add_meta(&o->info, (const char *)m->name, strlen((const char *)m->name), v, vl);
    free(v);
    if (r) return vd_nomem(err);
  }
  return VD_OK;
}

vd_code vd_az_parse_list(const char *where, const char *body, size_t len, vd_az_list *out, vd_err *err) {
  memset(out, 0, sizeof *out);
  xmlDocPtr d = parse(body, len);
  if (!d) return vd_fail(err, VD_INVALID, "%s: the List Blobs answer is not XML (or has a DTD)", where);
  xmlNodePtr root = xmlDocGetRootElement(d);
  vd_code rc = VD_OK;
  if (!is(root, "EnumerationResults")) {
    rc = vd_fail(err, VD_INVALID, "%s: the List Blobs answer is not an EnumerationResults", where);
    goto out;
  }
  int cap = 0;
  for (xmlNodePtr b = child(root, "Blobs") ? child(root, "Blobs")->children : NULL; b; b = b->next) {
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
  xmlNodePtr nm = child(root, "NextMarker");
  if (nm) {
    size_t l = 0;
    out->next_marker = text(nm, &l);
    if (out->next_marker && !l) { /* an empty <NextMarker/> ends the listing */
      free(out->next_marker);
      out->next_marker = NULL;
    }
  }
out:
  xmlFreeDoc(d);
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
  xmlDocPtr d = parse(body, len);
  if (!d) return;
  xmlNodePtr root = xmlDocGetRootElement(d);
  if (is(root, "Error")) {
    size_t l = 0;
    char *c = text(child(root, "Code"), &l);
    if (c) clean_code(c, l, out);
    free(c);
  }
  xmlFreeDoc(d);
}

vd_code vd_az_fail(vd_err *err, const char *where, long status, const char *code) {
  vd_code c = status == 404 ? VD_NOTFOUND
              : status == 412 || (status == 409 && code && strcmp(code, "BlobAlreadyExists") == 0) ? VD_PRECONDITION
                                                                                                   : VD_IO;
  return vd_fail(err, c, "%s: Azure Blob answered %ld%s%s", where, status, code && *code ? " " : "", code ? code : "");
}
