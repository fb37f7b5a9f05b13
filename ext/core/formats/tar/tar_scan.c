/* Every header of a tar archive in the store, found by walking it from the start (any
 * ustar/GNU/pax tar; LINDI's trash included), with the extended headers before each
 * member applied as GNU tar, libarchive and tarfile apply them (see tar_scan.h). Headers
 * are read through a window of 64 KiB, so small members cost no extra request; after a
 * member larger than the window only the next header is read. */
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
  int64_t want = c->stored > WINDOW ? 4096 : WINDOW;
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

/* The n bytes at off (n <= TAR_PAX_MAX), all of them, into out. */
static vd_code read_all(tar_scan *c, int64_t off, int64_t n, vd_buf *out, vd_err *err) {
  vd_code rc = n ? vd_get(c->ctx, c->url, off, n, out, NULL, err) : VD_OK;
  if (rc == VD_INVALID || (!rc && (int64_t)out->len < n))
    return tar_corrupt(err, c->where, c->off, "its data (%lld bytes) runs past the end of the archive", (long long)n);
  return rc;
}

/* A GNU 'L' / 'K' name: its data up to the first NUL, as GNU tar and tarfile take it. */
static vd_code long_name(tar_scan *c, char **slot, vd_err *err) {
  vd_buf b = {0};
  vd_code rc = read_all(c, c->off + TAR_BLOCK, c->h.size, &b, err);
  if (rc) return rc;
  size_t n = b.len;
  const unsigned char *z = memchr(b.data, 0, n);
  if (z) n = (size_t)(z - b.data);
  free(*slot);
  if ((*slot = malloc(n + 1))) {
    if (n) memcpy(*slot, b.data, n);
    (*slot)[n] = 0;
  }
  vd_buf_free(&b);
  return *slot ? VD_OK : vd_nomem(err);
}

/* An 'x'/'X' header's records into the pending ones, or a 'g' header's checked (its
 * keywords are not applied: as libarchive, see docs/lindi.md). */
static vd_code pax_records(tar_scan *c, vd_err *err) {
  vd_buf b = {0};
  vd_code rc = read_all(c, c->off + TAR_BLOCK, c->h.size, &b, err);
  if (rc) return rc;
  tar_pax global, *into = c->h.type == 'g' ? &global : &c->pax;
  tar_pax_init(&global);
  size_t at;
  const char *why = "";
  int r = tar_pax_parse(b.data, b.len, into, &at, &why);
  tar_pax_free(&global);
  vd_buf_free(&b);
  if (r == -2) return vd_nomem(err);
  if (r) return tar_corrupt(err, c->where, c->off, "bad pax record at byte %zu of its data: %s", at, why);
  return VD_OK;
}

/* Old GNU sparse: the extension blocks of the map after the header; the data after them. */
static vd_code gnu_sparse(tar_scan *c, vd_err *err) {
  int64_t at = c->off + TAR_BLOCK;
  for (int more = c->h.gnu_extended; more; at += TAR_BLOCK) {
    vd_code rc;
    const unsigned char *b = block(c, at, err, &rc);
    if (rc) return rc;
    if (!b) return tar_corrupt(err, c->where, c->off, "the archive ends inside its GNU sparse map");
    more = tar_sparse_ext_more(b);
  }
  c->data_off = at;
  c->size = c->h.gnu_realsize;
  return VD_OK;
}

/* GNU sparse 1.0: the map at the start of the data; the data after it. */
static vd_code sparse10(tar_scan *c, vd_err *err) {
  int64_t len = 0, want = 4096;
  int r;
  for (;;) {
    if (want > c->stored) want = c->stored;
    vd_buf b = {0};
    vd_code rc = read_all(c, c->off + TAR_BLOCK, want, &b, err);
    if (rc) return rc;
    r = tar_sparse10_len(b.data, b.len, &len);
    vd_buf_free(&b);
    if (r != 0 || want == c->stored) break; /* found, malformed, or cut short by the member's end */
    if (want >= TAR_MAP_MAX) return tar_corrupt(err, c->where, c->off, "its GNU sparse 1.0 map is over %d bytes", TAR_MAP_MAX);
    want *= 4;
  }
  if (r != 1 || len > c->stored) return tar_corrupt(err, c->where, c->off, "its GNU sparse 1.0 map is malformed");
  c->data_off = c->off + TAR_BLOCK + len;
  c->stored -= len;
  return VD_OK;
}

static vd_code set_text(char **buf, const char *s, const char **out, vd_err *err) {
  free(*buf);
  if (!(*buf = strdup(s))) return vd_nomem(err);
  *out = *buf;
  return VD_OK;
}

/* The member after its extended headers: names, type, where its bytes are, its size. */
static vd_code member(tar_scan *c, vd_err *err) {
  const tar_pax *p = &c->pax;
  const char *name = p->sparse_name ? p->sparse_name : p->path ? p->path : c->longname ? c->longname : c->h.name;
  const char *link = p->linkpath ? p->linkpath : c->longlink ? c->longlink : c->h.link;
  vd_code rc;
  if ((rc = set_text(&c->namebuf, name, &c->name, err)) || (rc = set_text(&c->linkbuf, link, &c->link, err))) return rc;
  size_t n = strlen(c->name);
  if (c->h.type == '0' && n && c->name[n - 1] == '/') c->h.type = '5'; /* v7: a directory is a name ending in '/' */
  c->stored = p->has_size ? p->size : c->h.size;
  c->size = c->stored;
  if (c->h.type == '5') { /* no data follows a directory, whatever its size field says */
    c->stored = c->size = 0;
  } else if (c->h.type == 'S') {
    if ((rc = gnu_sparse(c, err))) return rc;
  } else if (p->sparse) {
    if (p->major == 1 && (rc = sparse10(c, err))) return rc;
    c->size = p->has_realsize ? p->realsize : c->stored;
  }
  return VD_OK;
}

static void forget_pending(tar_scan *c) {
  free(c->longname);
  free(c->longlink);
  c->longname = c->longlink = NULL;
  tar_pax_free(&c->pax);
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
  if (c->off == 0 && !c->h.checksum_ok) /* cpio, zip, text: a garbage row would be all it gave */
    return vd_fail(err, VD_INVALID, "%s: not a tar archive (the block at byte 0 is no tar header: its checksum is wrong)",
                   c->where);
  if (r < 0) return tar_corrupt(err, c->where, c->off, "the size field is no octal or non-negative base-256 number");
  c->data_off = c->off + TAR_BLOCK;
  c->stored = c->size = c->h.size;
  c->name = c->h.name;
  c->link = c->h.link;
  if (!c->h.checksum_ok) { /* its size cannot be trusted: report it and stop */
    c->last = 1;
    return VD_OK;
  }
  int ext = c->h.type && strchr("xXgLKA", c->h.type);
  int most = c->h.type == 'L' || c->h.type == 'K' ? TAR_NAME_MAX : TAR_PAX_MAX;
  if (ext && c->h.size > most)
    return tar_corrupt(err, c->where, c->off, "an extended header of %lld bytes (at most %d)", (long long)c->h.size, most);
  if (c->h.type == 'L') rc = long_name(c, &c->longname, err);
  else if (c->h.type == 'K') rc = long_name(c, &c->longlink, err);
  else if (c->h.type != 'A' && ext) rc = pax_records(c, err); /* an 'A' ACL names nothing a walk needs */
  else {
    rc = member(c, err);
    forget_pending(c);
  }
  if (rc) return rc;
  tar_header at_data = c->h; /* the next header follows the stored bytes */
  at_data.size = c->stored;
  return tar_next(c->where, c->data_off - TAR_BLOCK, &at_data, &c->next, err);
}

vd_code tar_scan_open_at(vd_ctx *ctx, const char *url, const unsigned char *p, size_t n, tar_scan **out,
                         vd_err *err) {
  tar_scan *c = calloc(1, sizeof *c);
  *out = c;
  if (!c) return vd_nomem(err);
  c->ctx = ctx;
  c->wstart = -1;
  tar_pax_init(&c->pax);
  if (!(c->url = strdup(url))) return vd_nomem(err);
  vd_url_redact(c->url, c->where, sizeof c->where);
  if (n) {
    if (vd_buf_append(&c->win, p, n)) return vd_nomem(err);
    c->wstart = 0;
  }
  return load(c, err);
}

vd_code tar_scan_open(vd_ctx *ctx, const char *url, tar_scan **out, vd_err *err) {
  return tar_scan_open_at(ctx, url, NULL, 0, out, err);
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
  forget_pending(c);
  vd_buf_free(&c->win);
  free(c->namebuf);
  free(c->linkbuf);
  free(c->url);
  free(c);
}
