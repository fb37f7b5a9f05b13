/* Growable buffers and shared blobs (see vd_buf.h). */
#include "vd_buf.h"

#include <stdlib.h>
#include <string.h>

int vd_buf_reserve(vd_buf *b, size_t extra) {
  if (b->len + extra <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra) {
    if (cap > ((size_t)-1) / 2) return -1;
    cap *= 2;
  }
  unsigned char *p = realloc(b->data, cap);
  if (!p) return -1;
  b->data = p;
  b->cap = cap;
  return 0;
}

int vd_buf_append(vd_buf *b, const void *p, size_t n) {
  if (n == 0) return 0;
  if (vd_buf_reserve(b, n)) return -1;
  memcpy(b->data + b->len, p, n);
  b->len += n;
  return 0;
}

void vd_buf_free(vd_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

vd_blob *vd_blob_new(const void *p, size_t n) {
  vd_blob *b = malloc(sizeof *b + n + 1);
  if (!b) return NULL;
  b->refs = 1;
  b->len = n;
  if (n && p) memcpy(b->data, p, n); /* p NULL: the caller fills it */
  b->data[n] = 0; /* JSON parsers and strtol get a terminator for free */
  return b;
}

vd_blob *vd_blob_from_buf(vd_buf *b) {
  vd_blob *r = vd_blob_new(b->data, b->len);
  if (r) vd_buf_free(b);
  return r;
}

vd_blob *vd_blob_ref(vd_blob *b) {
  if (b) b->refs++;
  return b;
}

void vd_blob_unref(vd_blob *b) {
  if (b && --b->refs == 0) free(b);
}
