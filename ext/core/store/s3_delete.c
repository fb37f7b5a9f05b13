/* S3 DeleteObjects, the batch delete: the request's XML body and the reading of the
 * per-key answer (../shared/spec/object-stores.md). Pure (no request is made here), so
 * the answer's reader is fuzzed (tests/fuzz/fuzz_s3delete.c). Not Quiet mode: the answer
 * names every key, so a key the service never mentions is told apart from one deleted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_delete.h"
#include "util/strmap.h"
#include "util/utf8.h"
#include "xml_min.h"

int vd_s3_delete_key_ok(const char *key) {
  size_t n = strlen(key);
  if (!n || !vd_utf8_valid(key, n)) return 0;
  for (const unsigned char *p = (const unsigned char *)key; *p; p++)
    if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') return 0; /* XML 1.0 has no way to write them */
  return 1;
}

/* key with XML's special characters and the white space an XML reader would fold
 * written as references. -1 when out of memory. */
static int put_escaped(vd_buf *out, const char *key) {
  for (const char *p = key; *p; p++) {
    char ref[8];
    const char *r = NULL;
    switch (*p) {
      case '&': r = "&amp;"; break;
      case '<': r = "&lt;"; break;
      case '>': r = "&gt;"; break;
      case '"': r = "&quot;"; break;
      case '\t': case '\n': case '\r': snprintf(ref, sizeof ref, "&#%d;", *p); r = ref; break;
      default: break;
    }
    if (r ? vd_buf_append(out, r, strlen(r)) : vd_buf_append(out, p, 1)) return -1;
  }
  return 0;
}

int vd_s3_delete_body(const char *const *keys, int n, vd_buf *out) {
  static const char head[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                             "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>false</Quiet>";
  static const char tail[] = "</Delete>";
  if (vd_buf_append(out, head, sizeof head - 1)) return -1;
  for (int i = 0; i < n; i++)
    if (vd_buf_append(out, "<Object><Key>", 13) || put_escaped(out, keys[i]) || vd_buf_append(out, "</Key></Object>", 15))
      return -1;
  return vd_buf_append(out, tail, sizeof tail - 1);
}

/* The service's error code, letters, digits and dots only (nothing else a server chose
 * to echo reaches a message). */
static void clean_code(const vd_xml *e, char *out, size_t n) {
  vd_xml *c = vd_xml_child(e, "Code");
  size_t o = 0;
  for (const char *p = c ? c->text : NULL; p && *p && o + 1 < n; p++)
    if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.') out[o++] = *p;
  out[o] = 0;
}

vd_code vd_s3_parse_delete(const char *body, size_t len, const char *const *keys, int n, const char *const *where,
                           vd_code *rc, vd_err *errs) {
  vd_strmap m = {0};
  vd_xml *root = NULL;
  vd_code bad = VD_OK;
  vd_err whole;
  for (int i = 0; i < n && !bad; i++)
    if (vd_strmap_get(&m, keys[i]) < 0 && vd_strmap_put(&m, keys[i], i)) bad = vd_nomem(&whole);
  if (!bad) {
    root = vd_xml_parse(body, len);
    if (!vd_xml_is(root, "DeleteResult")) bad = VD_IO;
  }
  int *seen = bad ? NULL : calloc(n ? (size_t)n : 1, sizeof *seen);
  if (!bad && !seen) bad = vd_nomem(&whole);
  for (vd_xml *c = root && !bad ? root->child : NULL; c; c = c->next) {
    int del = vd_xml_is(c, "Deleted");
    if (!del && !vd_xml_is(c, "Error")) continue;
    vd_xml *k = vd_xml_child(c, "Key");
    int i = k && k->text ? vd_strmap_get(&m, k->text) : -1;
    if (i < 0 || seen[i]) continue; /* a key not asked for, or told twice: the first word stands */
    seen[i] = 1;
    char code[64];
    clean_code(c, code, sizeof code);
    if (del || strcmp(code, "NoSuchKey") == 0) /* already gone: deleted all the same */
      rc[i] = VD_OK;
    else
      rc[i] = vd_fail(&errs[i], VD_IO, "%s: not deleted: DeleteObjects answers %s for it", where[i], code[0] ? code : "an Error without a Code");
  }
  for (int i = 0; i < n; i++) {
    int first = vd_strmap_get(&m, keys[i]);
    if (bad == VD_NOMEM) {
      rc[i] = VD_NOMEM;
      errs[i] = whole;
    } else if (bad) {
      rc[i] = vd_fail(&errs[i], VD_IO, "%s: the DeleteObjects answer is not a DeleteResult document", where[i]);
    } else if (first != i) { /* the same key twice in one request: one answer for both */
      rc[i] = rc[first];
      errs[i] = errs[first];
    } else if (!seen[i]) {
      rc[i] = vd_fail(&errs[i], VD_IO, "%s: the DeleteObjects answer does not mention it (neither Deleted nor Error)",
                      where[i]);
    }
  }
  free(seen);
  vd_xml_free(root);
  vd_strmap_free(&m);
  return bad;
}
