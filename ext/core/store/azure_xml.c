/* Azure XML answers (see azure_xml.h): List Blobs pages and error codes, read with the
 * bounded reader of xml_min.h (why not libxml2: there). */
#include "azure_xml.h"
#include "xml_min.h"
#include "backend.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vd_az_list_free(vd_az_list *l) {
  for (int i = 0; i < l->n; i++) {
    free(l->blobs[i].name);
    vd_objinfo_free(&l->blobs[i].info);
  }
  free(l->blobs);
  for (int i = 0; i < l->nprefixes; i++) free(l->prefixes[i]);
  free(l->prefixes);
  free(l->next_marker);
  memset(l, 0, sizeof *l);
}

static vd_code blob(const char *where, const vd_xml *b, vd_az_blob *o, vd_err *err) {
  vd_xml *nm = vd_xml_child(b, "Name"), *props = vd_xml_child(b, "Properties"), *md = vd_xml_child(b, "Metadata");
  o->info.size = -1;
  size_t nl = 0;
  if (!nm || !(o->name = vd_xml_text(nm, &nl))) return vd_fail(err, VD_INVALID, "%s: a List Blobs entry without a Name", where);
  /* names with characters XML cannot carry come percent-encoded, marked Encoded="true" */
  int encoded = vd_xml_has_attr(nm, "Encoded", "true");
  if (encoded) {
    size_t dl = vd_pct_decode(o->name, o->name, nl);
    if (dl != strlen(o->name) || dl == 0)
      return vd_fail(err, VD_INVALID, "%s: a List Blobs entry with an encoded Name holding a NUL byte", where);
  }
  if (!*o->name) return vd_fail(err, VD_INVALID, "%s: a List Blobs entry with an empty Name", where);
  char *cl = props ? vd_xml_text(vd_xml_child(props, "Content-Length"), NULL) : NULL, *end = NULL;
  errno = 0;
  long long size = cl && *cl >= '0' && *cl <= '9' ? strtoll(cl, &end, 10) : -1;
  int good = cl && end && !*end && !errno && size >= 0;
  free(cl);
  if (!good) return vd_fail(err, VD_INVALID, "%s: List Blobs entry %.200s has no valid Content-Length", where, o->name);
  o->info.size = size;
  /* the listing's Etag is unquoted (0x...), the ETag header quoted: keep the header's
   * form, so that a listing and a HEAD agree and If-Match takes either */
  char *et = props ? vd_xml_text(vd_xml_child(props, "Etag"), NULL) : NULL;
  if (et && *et) {
    int q = et[0] == '"';
    if (strlen(et) + (q ? 0 : 2) >= sizeof o->info.etag) {
      free(et);
      return vd_fail(err, VD_INVALID, "%s: List Blobs entry %.200s has an Etag of over 125 bytes", where, o->name);
    }
    snprintf(o->info.etag, sizeof o->info.etag, q ? "%s" : "\"%s\"", et);
  }
  free(et);
  char *lm = props ? vd_xml_text(vd_xml_child(props, "Last-Modified"), NULL) : NULL;
  time_t t = lm ? curl_getdate(lm, NULL) : -1; /* RFC 1123, as libcurl parses HTTP dates */
  o->info.mtime = t > 0 ? (int64_t)t : 0;
  free(lm);
  for (vd_xml *m = md ? md->child : NULL; m; m = m->next) {
    size_t vl = 0;
    char *v = vd_xml_text(m, &vl);
    if (!v) return vd_nomem(err);
    int r = vd_objinfo_add_meta(&o->info, m->name, m->namel, v, vl);
    free(v);
    if (r) return vd_nomem(err);
  }
  return VD_OK;
}

/* A BlobPrefix's Name (plain text: Azurite and Azure send prefixes of ordinary names
 * unencoded; an Encoded one is decoded as a blob's name is). */
static vd_code blob_prefix(const char *where, const vd_xml *b, vd_az_list *out, vd_err *err) {
  vd_xml *nm = vd_xml_child(b, "Name");
  size_t nl = 0;
  char *name = nm ? vd_xml_text(nm, &nl) : NULL;
  if (!name || !nl) {
    free(name);
    return vd_fail(err, VD_INVALID, "%s: a List Blobs BlobPrefix without a Name", where);
  }
  if (vd_xml_has_attr(nm, "Encoded", "true") && vd_pct_decode(name, name, nl) != strlen(name)) {
    free(name);
    return vd_fail(err, VD_INVALID, "%s: a List Blobs BlobPrefix with an encoded Name holding a NUL byte", where);
  }
  char **np = realloc(out->prefixes, (size_t)(out->nprefixes + 1) * sizeof *np);
  if (!np) {
    free(name);
    return vd_nomem(err);
  }
  out->prefixes = np;
  np[out->nprefixes++] = name;
  return VD_OK;
}

vd_code vd_az_parse_list(const char *where, const char *body, size_t len, vd_az_list *out, vd_err *err) {
  memset(out, 0, sizeof *out);
  vd_xml *root = vd_xml_parse(body, len);
  if (!root) return vd_fail(err, VD_INVALID, "%s: the List Blobs answer is not XML (or has a DTD)", where);
  vd_code rc = VD_OK;
  if (!vd_xml_is(root, "EnumerationResults")) {
    rc = vd_fail(err, VD_INVALID, "%s: the List Blobs answer is not an EnumerationResults", where);
    goto out;
  }
  int cap = 0;
  for (vd_xml *b = vd_xml_child(root, "Blobs") ? vd_xml_child(root, "Blobs")->child : NULL; b; b = b->next) {
    if (vd_xml_is(b, "BlobPrefix")) { /* only with a delimiter: a sub-folder */
      rc = blob_prefix(where, b, out, err);
      if (rc) goto out;
      continue;
    }
    if (!vd_xml_is(b, "Blob")) continue;
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
  vd_xml *nm = vd_xml_child(root, "NextMarker");
  if (nm) {
    size_t l = 0;
    out->next_marker = vd_xml_text(nm, &l);
    if (out->next_marker && !l) { /* an empty <NextMarker/> ends the listing */
      free(out->next_marker);
      out->next_marker = NULL;
    }
  }
out:
  vd_xml_free(root);
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
  vd_xml *root = vd_xml_parse(body, len);
  if (!root) return;
  if (vd_xml_is(root, "Error")) {
    size_t l = 0;
    char *c = vd_xml_text(vd_xml_child(root, "Code"), &l);
    if (c) clean_code(c, l, out);
    free(c);
  }
  vd_xml_free(root);
}

vd_code vd_az_fail(vd_err *err, const char *where, long status, const char *code) {
  vd_code c = status == 404 ? VD_NOTFOUND
              : status == 412 || (status == 409 && code && strcmp(code, "BlobAlreadyExists") == 0) ? VD_PRECONDITION
              : status == 416 ? VD_INVALID /* as the http transport says it: a range past the end */
                              : VD_IO;
  const char *why = vd_http_reason(status);
  return vd_fail(err, c, "%s: HTTP %ld%s%s%s%s%s", where, status, *why ? " " : "", why, code && *code ? " (" : "",
                 code && *code ? code : "", code && *code ? ")" : "");
}
