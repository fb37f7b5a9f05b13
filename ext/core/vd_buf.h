/* Growable byte buffer and reference-counted immutable blobs (what the cache hands out). */
#ifndef VD_BUF_H
#define VD_BUF_H

#include <stddef.h>

typedef struct vd_buf {
  unsigned char *data;
  size_t len, cap;
} vd_buf;

int vd_buf_reserve(vd_buf *b, size_t extra); /* 0 ok, -1 out of memory */
int vd_buf_append(vd_buf *b, const void *p, size_t n);
void vd_buf_free(vd_buf *b);

/* Immutable bytes shared between the cache and cursors; freed at the last unref. */
typedef struct vd_blob {
  int refs;
  size_t len;
  unsigned char data[];
} vd_blob;

vd_blob *vd_blob_new(const void *p, size_t n); /* refs = 1 */
vd_blob *vd_blob_from_buf(vd_buf *b);          /* takes b's bytes, leaves b empty */
vd_blob *vd_blob_ref(vd_blob *b);
void vd_blob_unref(vd_blob *b);

#endif
