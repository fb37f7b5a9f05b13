/* The page layer's state, shared by its read side (openvds_pages.c) and its write side
 * (openvds_pages_write.c); nothing else looks inside. */
#ifndef VD_OPENVDS_PAGES_IMPL_H
#define VD_OPENVDS_PAGES_IMPL_H

#include "openvds_pages.h"

#define VDS_PAGES_WINDOW_MAX 64

typedef struct vds_dirty_entry {
  int64_t chunk;
  unsigned char raw[28], old[28]; /* this writer's entry; what the base page held */
  int64_t object_bytes;
  int64_t old_bytes;              /* size of the object the old entry stood for (8-byte layers) */
} vds_dirty_entry;

typedef struct vds_dirty_page {
  int64_t page, name;    /* page index; stored name it is written under */
  unsigned char *bytes;  /* full-size page: the base as read, this writer's entries applied */
  char etag[128];        /* of the base; "" when the base is a page not stored yet */
  int holds;             /* the base as read already held every entry of this writer */
  vds_dirty_entry *ent;
  int nent, cap;
} vds_dirty_page;

struct vds_pages {
  vd_ctx *ctx;
  const vds_dataset *ds;
  const vds_layer *l;
  size_t page_bytes;
  int64_t *dir;          /* stored names after a write-back (NULL: the layer's) */
  int dir_own;
  /* the page the last lookup used */
  vd_blob *page;
  int64_t page_of;
  int64_t page_first;    /* page_of's first chunk, when page is set (a scan's fast path) */
  unsigned char cur[28]; /* the last entry's bytes (e.levels points here) */
  /* scan */
  vds_pages_next_fn next;
  void *arg;
  int64_t last_page;
  int64_t stop_page;     /* pages after it are not fetched ahead (a LIMIT filled there) */
  int selective;
  vd_ahead *ahead;
  int64_t apage[VDS_PAGES_WINDOW_MAX]; /* pages pushed, not yet taken (a ring) */
  int ahead_head, ahead_n;
  int64_t next_push;
  /* writes */
  vds_dirty_page *dirty; /* sorted by page */
  int ndirty, dcap;
  vd_blob *status;       /* LayerStatus as last read or written, and its etag */
  char status_etag[128];
  /* pages put by vds_pages_write_pages since the last LayerStatus write: their counts
   * and stored names, for vds_pages_write_status */
  vds_counts done;
  vds_fence_fn fence;    /* see vds_pages_set_fence */
  void *fence_arg;
  int64_t *wpages, *wnames;
  int nw, wcap;
};

int64_t vds_pages_stored(const vds_pages *pl, int64_t page);
char *vds_pages_url(const vds_pages *pl, int64_t name); /* the page object stored as name */
/* vds_page_check naming the page by its (redacted) URL. */
vd_code vds_pages_check(const vds_pages *pl, int64_t p, const char *url, size_t len, vd_err *err);
vds_dirty_page *vds_pages_find_dirty(const vds_pages *pl, int64_t page);
void vds_dirty_page_free(vds_dirty_page *d); /* its copies; the page struct itself is the array's */

#endif
