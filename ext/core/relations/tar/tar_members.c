/* tar_members(url): every header of a tar archive, found by walking it from the start
 * (any ustar/GNU tar; LINDI trash included), with whether the LINDI index lists it.
 * Headers are read through a window of 64 KiB so small members cost no extra request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/lindi/lindi.h"
#include "formats/tar/tar.h"
#include "store/store.h"
#include "vd_catalog.h"

static const vd_colspec cols[] = {
    {"name", VD_TEXT, 0},     {"header_offset", VD_INT, 0}, {"data_offset", VD_INT, 0}, {"size", VD_INT, 0},
    {"type", VD_TEXT, 0},     {"mode", VD_INT, 0},          {"mtime", VD_INT, 0},       {"checksum_ok", VD_INT, 0},
    {"in_index", VD_INT, 0},  {"url", VD_TEXT, VD_COL_ARG}};

#define WINDOW (64 << 10)

typedef struct {
  vd_ctx *ctx;
  char *url;
  char where[600];
  vd_buf win;
  int64_t wstart;
  int at_end;           /* read past the end of the object */
  int64_t off;          /* current header */
  int64_t next;         /* the header after it (checked by tar_next) */
  tar_header h;
  char longname[4096];  /* GNU 'L' / pax path for the next member */
  int done, last;       /* eof; current row is the last (bad checksum) */
  int lindi;            /* index loaded */
  lindi_index ix;
} cur_t;

/* 512 bytes at off, or NULL at the end of the object. */
static const unsigned char *block(cur_t *c, int64_t off, vd_err *err, vd_code *rc) {
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

static const char *type_name(char t) {
  switch (t) {
    case '0': return "file";
    case '1': return "hardlink";
    case '2': return "symlink";
    case '3': return "chardev";
    case '4': return "blockdev";
    case '5': return "dir";
    case '6': return "fifo";
    case '7': return "contiguous";
    case 'x': return "pax";
    case 'g': return "pax_global";
    case 'L': return "gnu_longname";
    case 'K': return "gnu_longlink";
    default: return "other";
  }
}

/* Reads a member's data (for long names / pax records), at most n bytes. */
static vd_code read_data(cur_t *c, int64_t off, int64_t size, char *out, size_t n, vd_err *err) {
  vd_buf b = {0};
  int64_t want = size < (int64_t)n - 1 ? size : (int64_t)n - 1;
  vd_code rc = vd_get(c->ctx, c->url, off, want, &b, NULL, err);
  if (rc) return rc;
  memcpy(out, b.data, b.len);
  out[b.len] = 0;
  vd_buf_free(&b);
  return VD_OK;
}

static vd_code load(cur_t *c, vd_err *err) {
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

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  cur_t *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  *out = c;
  c->ctx = ctx;
  c->wstart = -1;
  if (a[0].type == VD_NULL) {
    c->done = 1;
    return VD_OK;
  }
  if (!(c->url = vd_value_strdup(&a[0]))) return vd_fail(err, VD_INVALID, "tar_members: the archive url must be text");
  vd_url_redact(c->url, c->where, sizeof c->where);
  vd_err why;
  vd_code rc = lindi_open(ctx, c->url, &c->ix, &why);
  if (rc == VD_UNSUPPORTED) { /* a .lindi.json: no tar at all, said as lindi_files says it */
    *err = why;
    return rc;
  }
  c->lindi = rc == VD_OK; /* not LINDI: in_index is NULL */
  return load(c, err);
}

static vd_code next(void *cur, vd_err *err) {
  cur_t *c = cur;
  if (c->last) {
    c->done = 1;
    return VD_OK;
  }
  c->off = c->next;
  return load(c, err);
}

static int eof(void *cur) { return ((cur_t *)cur)->done; }
static int64_t rowid(void *cur) { return ((cur_t *)cur)->off; }

static void close_(void *cur) {
  cur_t *c = cur;
  if (!c) return;
  vd_buf_free(&c->win);
  lindi_index_free(&c->ix);
  free(c->url);
  free(c);
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  cur_t *c = cur;
  const lindi_file *f;
  switch (col) {
    case 0: *v = vd_text(c->h.name); break;
    case 1: *v = vd_int(c->off); break;
    case 2: *v = vd_int(c->off + TAR_BLOCK); break;
    case 3: *v = vd_int(c->h.size); break;
    case 4: *v = vd_text(type_name(c->h.type)); break;
    case 5: *v = vd_int(c->h.mode); break;
    case 6: *v = vd_int(c->h.mtime); break;
    case 7: *v = vd_int(c->h.checksum_ok); break;
    default:
      f = c->lindi ? lindi_find(&c->ix, c->h.name) : NULL;
      *v = c->lindi ? vd_int(f && f->o == c->off) : vd_null();
      break;
  }
  return VD_OK;
}

const vd_relation vd_rel_tar_members = {"tar_members", cols, sizeof cols / sizeof *cols, VD_REL_IO, 1, NULL,
                                        open_, next, eof, column, rowid, close_,
    .doc = "every tar header of an archive, trash included: offsets, size, type, checksum, whether the index lists it"};
