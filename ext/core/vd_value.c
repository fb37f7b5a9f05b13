/* Constructors and conversions for vd_value (see vd_value.h). */
#include "vd_value.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

vd_value vd_text(const char *s) { return s ? vd_textn(s, strlen(s)) : vd_null(); }

vd_value vd_textn(const char *s, size_t n) {
  vd_value v = {0};
  v.type = VD_TEXT;
  v.p = s;
  v.n = n;
  return v;
}

vd_value vd_blob_val(const void *p, size_t n) {
  vd_value v = {0};
  v.type = VD_BLOB;
  v.p = p;
  v.n = n;
  return v;
}

vd_value vd_owned_text(char *s) {
  vd_value v = vd_text(s);
  if (s) v.dtor = free;
  return v;
}

vd_value vd_owned_blob(void *p, size_t n) {
  vd_value v = vd_blob_val(p, n);
  v.dtor = free;
  return v;
}

int vd_value_as_int(const vd_value *v, int64_t *out) {
  if (v->type == VD_INT) { *out = v->i; return 0; }
  if (v->type == VD_REAL) {
    if (!isfinite(v->r) || v->r != floor(v->r) || fabs(v->r) > 9.0e18) return -1;
    *out = (int64_t)v->r;
    return 0;
  }
  if (v->type == VD_TEXT && v->n > 0 && v->n < 64) {
    char tmp[64], *end;
    memcpy(tmp, v->p, v->n);
    tmp[v->n] = 0;
    errno = 0;
    long long x = strtoll(tmp, &end, 10);
    if (errno || *end) return -1;
    *out = x;
    return 0;
  }
  return -1;
}

int vd_value_as_real(const vd_value *v, double *out) {
  if (v->type == VD_INT) { *out = (double)v->i; return 0; }
  if (v->type == VD_REAL) { *out = v->r; return 0; }
  if (v->type == VD_TEXT && v->n > 0 && v->n < 64) {
    char tmp[64], *end;
    memcpy(tmp, v->p, v->n);
    tmp[v->n] = 0;
    double x = strtod(tmp, &end);
    if (*end) return -1;
    *out = x;
    return 0;
  }
  return -1;
}

char *vd_value_strdup(const vd_value *v) {
  if (v->type != VD_TEXT) return NULL;
  char *s = malloc(v->n + 1);
  if (!s) return NULL;
  memcpy(s, v->p, v->n);
  s[v->n] = 0;
  return s;
}
