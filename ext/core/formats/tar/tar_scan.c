/* Every header of a tar archive in the store, found by walking it from the start (any
 * ustar/GNU tar; LINDI's trash included), with GNU long names and pax paths applied
 * (see tar_scan.h). Headers are read through a window of 64 KiB, so small members cost
 * no extra request; after a member larger than the window only the next header is read. */
#include "tar_scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

#define WINDOW (64 << 10)

/* 512 bytes at off, or NULL at the end of the object. */
static const unsigned char *block(tar_scan *c, int64_t off, vd_err *err, vd_code *rc) {
  *rc = VD_OK;
  if (off >= c->wstart && off - c->wstart <= (int64_t)c->win.len - TAR_BLOCK) return c->win.data + (off - c->wstart);
  c->win.len = 0;
  c->wstart = off;
  vd_buf b = {0};
  vd_err e2;
  /* after a member larger than the window the next one is likely large too: read just
   * its header rather than a window that would be mostly data */
  int64_t want = c->h.size > WINDOW ? 4096 : WINDOW;
  if (want > INT64_MAX - off) want = INT64_MAX - off; /* off + want stays an offset */
  vd_code r = vd_get(c->ctx, c->url, off, want, &b, NULL, &e2);
  if (r == VD_INVALID) return NULL; /* range past the end: end of the object */
  if (r) {
    *err = e2;
    *rc = r;
    return NULL;
  }
  vd_buf_free(&c->win);
  c->win = b;
  return c->win.len >= TAR_BLOCK ? c->win.data : NULL;
}

/* Reads a member's data (for long names / pax records), at most n bytes. */
static vd_code read_data(tar_scan *c, int64_t off, int64_t size, char *out, size_t n, vd_err *err) {
  vd_buf b = {0};
  int64_t want = size < (int64_t)n - 1 ? size : (int64_t)n - 1;
  vd_code rc = vd_get(c->ctx, c->url, off, want, &b, NULL, err);
  if (rc) return rc;
  memcpy(out, b.data, b.len);
  out[b.len] = 0;
  vd_buf_free(&b);
  return VD_OK;
}

static vd_code load(tar_scan *c, vd_err *err) {
  vd_code rc;
  const unsigned char *b = block(c, c->off, err, &rc);
  if (rc) return rc;
  if (!b) return vd_fail(err, VD_INVALID, "%s: the archive ends before byte %lld, without end-of-archive blocks", c->where,
                         (long long)c->off);
  int r = tar_parse(b, &c->h);
  if (r == 1) {
    c->done = 1;
    return VD_OK;
  }
  if (r < 0) return tar_corrupt(err, c->where, c->off, "the size field is no octal or non-negative base-256 number");
  if (!c->h.checksum_ok) c->last = 1; /* its size cannot be trusted: report it and stop */
  else if ((rc = tar_next(c->where, c->off, &c->h, &c->next, err))) return rc;
  char pending[4096];
  memcpy(pending, c->longname, sizeof pending);
  c->longname[0] = 0;
  if (c->h.type == 'L' && c->h.checksum_ok) {
    if ((rc = read_data(c, c->off + TAR_BLOCK, c->h.size, c->longname, sizeof c->longname, err))) return rc;
  } else if (c->h.type == 'x' && c->h.checksum_ok) {
    char rec[4096];
    if ((rc = read_data(c, c->off + TAR_BLOCK, c->h.size, rec, sizeof rec, err))) return rc;
    char *p = strstr(rec, " path=");
    if (p) {
      p += 6;
      char *e = strchr(p, '\n');
      if (e) *e = 0;
      snprintf(c->longname, sizeof c->longname, "%s", p);
    }
  } else if (pending[0]) {
    snprintf(c->h.name, sizeof c->h.name, "%.*s", (int)sizeof c->h.name - 1, pending);
  }
  return VD_OK;
}

vd_code tar_scan_open(vd_ctx *ctx, const char *url, tar_scan **out, vd_err *err) {
  tar_scan *c = calloc(1, sizeof *c);
  *out = c;
  if (!c) return vd_nomem(err);
  c->ctx = ctx;
  c->wstart = -1;
  if (!(c->url = strdup(url))) return vd_nomem(err);
  vd_url_redact(c->url, c->where, sizeof c->where);
  return load(c, err);
}

vd_code tar_scan_next(tar_scan *c, vd_err *err) {
  if (c->last) {
    c->done = 1;
    return VD_OK;
  }
  c->off = c->next;
  return load(c, err);
}

void tar_scan_close(tar_scan *c) {
  if (!c) return;
  vd_buf_free(&c->win);
  free(c->url);
  free(c);
}
