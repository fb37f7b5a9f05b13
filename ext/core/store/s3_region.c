/* The region of each S3 bucket as the service named it (s3_region.h). A list per
 * context: a session meets a handful of buckets, and each entry is a name and a region. */
#include "s3_region.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xml_min.h"

typedef struct s3_region {
  struct s3_region *next;
  char region[33];
  size_t bn;
  char bucket[]; /* bn bytes, NUL-terminated */
} s3_region;

static s3_region *find(const vd_ctx *ctx, const char *b, size_t bn) {
  for (s3_region *r = ctx->s3_regions; r; r = r->next)
    if (r->bn == bn && memcmp(r->bucket, b, bn) == 0) return r;
  return NULL;
}

const char *vd_s3_region_of(const vd_ctx *ctx, const char *b, size_t bn) {
  s3_region *r = find(ctx, b, bn);
  return r ? r->region : NULL;
}

int vd_s3_region_set(vd_ctx *ctx, const char *b, size_t bn, const char *region) {
  s3_region *r = find(ctx, b, bn);
  if (!r) {
    if (!(r = malloc(sizeof *r + bn + 1))) return -1;
    memcpy(r->bucket, b, bn);
    r->bucket[bn] = 0;
    r->bn = bn;
    r->next = ctx->s3_regions;
    ctx->s3_regions = r;
  }
  snprintf(r->region, sizeof r->region, "%s", region);
  return 0;
}

void vd_s3_regions_clear(vd_ctx *ctx) {
  for (s3_region *r = ctx->s3_regions, *n; r; r = n) {
    n = r->next;
    free(r);
  }
  ctx->s3_regions = NULL;
}

/* s[0, n) is a region name: it becomes part of a host name and of the signed scope, so
 * nothing else a server might send ('.', '/', '@', ':') gets through. */
static int region_name(const char *s, size_t n) {
  if (n < 1 || n > 32) return 0;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-')) return 0;
  return 1;
}

int vd_s3_region_answer(long status, const char *hdr, const char *body, size_t len, char *out, size_t n) {
  if ((status != 301 && status != 400) || n < 33) return -1;
  if (hdr) {
    size_t hl = strlen(hdr);
    if (!region_name(hdr, hl)) return -1;
    memcpy(out, hdr, hl + 1);
    return 0;
  }
  /* a HEAD has no body: only the header can say it */
  vd_xml *root = len ? vd_xml_parse(body, len) : NULL;
  vd_xml *code = vd_xml_is(root, "Error") ? vd_xml_child(root, "Code") : NULL;
  vd_xml *reg = code ? vd_xml_child(root, "Region") : NULL;
  int found = reg && code->text &&
              (strcmp(code->text, status == 301 ? "PermanentRedirect" : "AuthorizationHeaderMalformed") == 0) &&
              region_name(reg->text, reg->textl);
  if (found) memcpy(out, reg->text, reg->textl + 1);
  vd_xml_free(root);
  return found ? 0 : -1;
}
