/* A read-only HDF5 virtual file driver over vdsql's store (vd_get range reads), so VTKHDF
 * files behind http(s) URLs (and later S3/Azure) are read with the same code as local
 * files and every byte is counted in vdsql_stats. HDF5 issues many small reads (object
 * headers, B-tree nodes, a few bytes each), each depending on the one before; so a file
 * is first asked for with one range GET of its first vtkhdf_prefix bytes (1 MiB), whose
 * answer also tells the file's size (Content-Range): a smaller file arrives whole in
 * that one round trip, no HEAD ever. Reads beyond that head go through a block cache that
 * turns them into a few aligned range requests, coalescing runs of missing blocks. */
#include "vtkhdf.h"
#include "vtkhdf_vfd.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "store/store.h"

#define BLOCK (64 * 1024)
#define NCACHE 256 /* 16 MiB per open file at most */

typedef struct vfd_fapl {
  vd_ctx *ctx;
  const char *base; /* the main file's URL (owned by the reader, outlives the fapl's use) */
} vfd_fapl;

typedef struct vfd_file {
  H5FD_t pub; /* must be first: HDF5 casts */
  vd_ctx *ctx;
  char *url;
  haddr_t eoa, eof;
  vd_blob *head; /* bytes [0, head->len) of the file, from the first request (NULL: none) */
  int kept;      /* closed by HDF5, kept for its reopen */
  int64_t blk[NCACHE]; /* block index held in each slot, -1 empty */
  unsigned char *data[NCACHE];
  size_t len[NCACHE];
  int next; /* round-robin eviction */
  int64_t got; /* bytes received past the head, for the read-ahead's measure */
} vfd_file;

static _Thread_local vd_err last_err; /* why the last open or read failed, for vh_open's message */
static _Thread_local int last_fact;   /* last_err is a fact about the file (vh_vfd_last_fact) */
static hid_t driver_id = -1;
static _Thread_local vd_ctx *cur_ctx;
static _Thread_local const char *cur_base;

/* Every file of this thread's driver that is open or kept. HDF5 opens and closes a
 * virtual dataset's source files for every read, and opens a sub-file again while it is
 * still open (once per virtual dataset that maps into it, before it notices the file is
 * the same); so closed files are kept (size, head and cached blocks), at most NKEPT of
 * them, until the file that uses them is closed (vh_vfd_forget), and a second open of a
 * file that is open shares its head: neither asks the server again, also across the
 * windowed reads of a streamed leaf. */
#define NKEPT 64
static _Thread_local vfd_file **files;
static _Thread_local int nfiles, capfiles, nkept;

static void file_free(vfd_file *f) {
  for (int i = 0; i < NCACHE; i++) free(f->data[i]);
  for (int i = 0; i < nfiles; i++)
    if (files[i] == f) {
      files[i] = files[--nfiles];
      break;
    }
  vd_blob_unref(f->head);
  free(f->url);
  free(f);
}

void vh_vfd_begin(vd_ctx *ctx, const char *base) { cur_ctx = ctx, cur_base = base; }
void vh_vfd_end(void) { cur_ctx = NULL, cur_base = NULL; }

/* What the server said of the files asked for through a ctx whose reads are still in
 * progress, beyond what the files above hold: the size of a file bigger than its head
 * (a reopen then fetches only the blocks it needs), or that it does not exist (size
 * GONE: HDF5 tries to open a missing virtual-dataset source at every read, and must not
 * ask again). One entry per file asked for, so it grows with the requests made. */
#define UNKNOWN (-1)
#define GONE (-2)
typedef struct known {
  vd_ctx *ctx;
  char *url;
  int64_t size;
} known;
static _Thread_local known *sizes;
static _Thread_local int nsizes, capsizes;

static int64_t known_size(vd_ctx *ctx, const char *url) {
  for (int i = 0; i < nsizes; i++)
    if (sizes[i].ctx == ctx && !strcmp(sizes[i].url, url)) return sizes[i].size;
  return UNKNOWN;
}

static void remember_size(vd_ctx *ctx, const char *url, int64_t size) {
  if ((size < 0 && size != GONE) || known_size(ctx, url) != UNKNOWN) return;
  if (nsizes == capsizes) {
    int nc = capsizes ? capsizes * 2 : 64;
    known *t = realloc(sizes, (size_t)nc * sizeof *t);
    if (!t) return; /* a failed allocation only loses a shortcut: the open will ask the server */
    sizes = t, capsizes = nc;
  }
  if ((sizes[nsizes].url = strdup(url))) sizes[nsizes].ctx = ctx, sizes[nsizes++].size = size;
}

/* A whole small file (not more than vtkhdf_prefix bytes) is kept in the store's cache
 * under this key, like a document: fresh for cache_ttl, so a repeat costs no request. The
 * head of a bigger file is not: blocks read later from a file changed meanwhile would not
 * match it. */
static char *whole_key(const char *url) {
  char *k = malloc(strlen(url) + 16);
  if (k) sprintf(k, "vtkhdf-file:%s", url);
  return k;
}

static vd_blob *cached_whole(vd_ctx *ctx, const char *url, int count) {
  char *k = whole_key(url);
  vd_blob *b = !k ? NULL : count ? vd_cache_lookup(ctx, url, k) : vd_cache_peek(ctx, k);
  free(k);
  return b;
}

static vfd_file *live_file(vd_ctx *ctx, const char *url, int kept) {
  for (int i = 0; i < nfiles; i++)
    if (files[i]->ctx == ctx && files[i]->kept == kept && !strcmp(files[i]->url, url)) return files[i];
  return NULL;
}

int vh_vfd_known(vd_ctx *ctx, const char *url) {
  int64_t k = known_size(ctx, url);
  if (k == GONE) return -1;
  if (k >= 0 || live_file(ctx, url, 0) || live_file(ctx, url, 1)) return 1;
  vd_blob *b = cached_whole(ctx, url, 0);
  vd_blob_unref(b);
  return b != NULL;
}

void vh_vfd_forget(vd_ctx *ctx) {
  vh_vfd_prefetch_end(ctx);
  for (int i = nfiles - 1; i >= 0; i--)
    if (i < nfiles && files[i]->ctx == ctx && files[i]->kept) nkept--, file_free(files[i]);
  for (int i = nsizes - 1; i >= 0; i--)
    if (sizes[i].ctx == ctx) free(sizes[i].url), sizes[i] = sizes[--nsizes];
  if (!nfiles) free(files), files = NULL, capfiles = 0;
  if (!nsizes) free(sizes), sizes = NULL, capsizes = 0;
}

const char *vh_vfd_last_error(void) { return last_err.msg; }
vd_code vh_vfd_last_code(void) { return last_err.msg[0] ? last_err.code : VD_OK; }
int vh_vfd_last_fact(void) { return last_err.msg[0] && last_fact; }

/* A failure that tells nothing of the file also goes onto HDF5's error stack, innermost,
 * so the error of whatever HDF5 call it broke carries the store's own words (the URL and
 * the fault) rather than HDF5's "read failed". */
static void push_fault(void) {
  if (last_err.msg[0] && !last_fact)
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_VFL, H5E_READERROR, "%s", last_err.msg);
}

/* Whether the server's failed answer r to a file's first request is a fact about the
 * file: not there, or refused for good. The store words a 403 and a 503 alike (VD_IO),
 * so its status tells them apart; a 408 or 429 is "not now", like a 5xx. */
static int answer_is_fact(const vd_getreq *r) {
  if (r->rc == VD_NOTFOUND) return 1;
  return r->status >= 400 && r->status < 500 && r->status != 408 && r->status != 429;
}

/* HDF5 composes sub-file names by prefixing the parent's directory, and for a name that
 * is not an absolute path it prefixes the current directory too ("/cwd/http://h/d/x",
 * as H5_build_extpath does). So a name is ours when it is a URL, or the current
 * directory, a '/' and a URL; anything else (a stored "h/http://other/x", HDF5's plain
 * local tries) is not, and is never requested. NULL: not ours. */
const char *vh_vfd_url(const char *name) {
  if (vh_is_url(name)) return name;
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return NULL;
  size_t n = strlen(cwd);
  if (!n || strncmp(name, cwd, n)) return NULL;
  const char *p = name + n;
  if (cwd[n - 1] != '/' && *p++ != '/') return NULL;
  return vh_is_url(p) ? p : NULL;
}

/* Where a URL's scheme starts when s + i is the "://" after it (letters, digits, + - .) */
static size_t scheme_start(const char *s, size_t i) {
  while (i > 0 && (isalnum((unsigned char)s[i - 1]) || strchr("+-.", s[i - 1]))) i--;
  return i;
}

/* The next URL in s at or after from: its start, or NULL */
static const char *next_url(const char *s, const char *from) {
  for (const char *p = strstr(from, "://"); p; p = strstr(p + 3, "://")) {
    size_t st = scheme_start(s, (size_t)(p - s));
    if (s + st < p && s + st >= from) return s + st;
  }
  return NULL;
}

static void put(char *out, size_t n, size_t *o, const char *s, size_t k) {
  if (!n) return;
  if (*o + k >= n) k = *o < n - 1 ? n - 1 - *o : 0;
  memcpy(out + *o, s, k);
  *o += k;
  out[*o] = 0;
}

/* One piece that starts with a URL and holds no other: vd_url_redact. Returns 1 when the
 * query was cut (what follows in s belongs to it and is dropped). */
static int show_url(const char *u, size_t len, char *out, size_t n, size_t *o) {
  char seg[2048], red[2048];
  snprintf(seg, sizeof seg, "%.*s", (int)len, u);
  vd_url_redact(seg, red, sizeof red);
  put(out, n, o, red, strlen(red));
  return memchr(seg, '?', strlen(seg)) || memchr(seg, '#', strlen(seg));
}

/* Every URL in s through vd_url_redact. In a name (text 0) a URL runs to the next URL;
 * in a message (text 1) it ends at a blank or a quote, and the text after it stays. */
static void show_all(const char *s, char *out, size_t n, int text) {
  size_t o = 0;
  if (n) out[0] = 0;
  if (!s) return;
  const char *p = s;
  while (*p) {
    const char *u = next_url(s, p);
    if (!u) {
      put(out, n, &o, p, strlen(p));
      break;
    }
    put(out, n, &o, p, (size_t)(u - p));
    if (text) {
      size_t len = strcspn(u, " \t\n'\"<>");
      while (len > 0 && strchr(":,;)", u[len - 1])) len--; /* "URL: message", "(URL)" */
      char piece[2048], shown[2048];
      snprintf(piece, sizeof piece, "%.*s", (int)len, u);
      show_all(piece, shown, sizeof shown, 0);
      put(out, n, &o, shown, strlen(shown));
      p = u + (len ? len : 1);
    } else {
      const char *nx = next_url(s, strstr(u, "://") + 3);
      size_t len = nx ? (size_t)(nx - u) : strlen(u);
      if (show_url(u, len, out, n, &o)) break;
      p = u + len;
    }
  }
}

void vh_show(const char *s, char *out, size_t n) { show_all(s, out, n, 0); }
void vh_show_text(const char *s, char *out, size_t n) { show_all(s, out, n, 1); }

char *vh_shown(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 8;
  char *out = malloc(n);
  if (out) vh_show(s, out, n);
  return out;
}

void vh_err_redact(vd_err *err) {
  if (!strstr(err->msg, "://")) return;
  char buf[sizeof err->msg];
  vh_show_text(err->msg, buf, sizeof buf);
  memcpy(err->msg, buf, sizeof buf);
}

vd_code vh_url_check(vd_ctx *ctx, const char *base, const char *url, vd_err *err) {
  if (!strcmp(base, url)) return VD_OK;
  const char *sep = strstr(url, "://"), *q = strpbrk(url, "?#"), *bq = strpbrk(base, "?#");
  const char *inner = sep ? strstr(sep + 3, "://") : NULL;
  /* a '/' in a query: a name HDF5 joined after it, unless it is the main file's own query carried over */
  int joined = q && strchr(q, '/') && !(bq && strcmp(q, bq) == 0);
  if (!vh_is_url(url) || (inner && (!q || inner < q)) || joined) {
    char wb[600], wu[600];
    vh_show(base, wb, sizeof wb);
    vh_show(url, wu, sizeof wu);
    return vd_fail(err, VD_UNSUPPORTED,
                   "%s: refers to %s, which is not a well-formed URL (a URL inside a URL, or a name joined after a "
                   "?query): not requested",
                   wb, wu);
  }
  return vd_url_allowed(ctx, base, url, err);
}

static int64_t prefix_of(const vd_ctx *ctx) {
  return ctx->cfg.vtkhdf_prefix < ctx->cfg.max_alloc ? ctx->cfg.vtkhdf_prefix : ctx->cfg.max_alloc;
}

static int track(vfd_file *f) {
  if (nfiles == capfiles) {
    int nc = capfiles ? capfiles * 2 : 16;
    vfd_file **t = realloc(files, (size_t)nc * sizeof *t);
    if (!t) return 0;
    files = t, capfiles = nc;
  }
  files[nfiles++] = f;
  return 1;
}

/* What the answer to a file's first request (a range GET of its first vtkhdf_prefix
 * bytes, r) says: the file's head, and in *size how big the file is (a 206's
 * Content-Range total, or a 200's whole body from a server that ignores Range), so no
 * HEAD; only a server that says neither is asked with one. A file no bigger than the
 * prefix has then arrived whole and is cached. NULL on failure (last_err says why; a 404
 * is remembered). Takes r's body and info. */
static vd_blob *take_head(vd_ctx *ctx, const char *url, vd_getreq *r, int64_t *size) {
  char shown[600];
  vd_buf buf = r->body;
  vd_objinfo info = {0};
  memset(&r->body, 0, sizeof r->body);
  *size = r->info.size;
  vd_objinfo_free(&r->info);
  if (r->rc) {
    last_err = r->err;
    last_fact = answer_is_fact(r);
    if (r->rc == VD_NOTFOUND) remember_size(ctx, url, GONE);
    vd_buf_free(&buf);
    return NULL;
  }
  if (*size < 0 && !vd_head(ctx, url, &info, &last_err)) {
    *size = info.size;
    vd_objinfo_free(&info);
  } else if (*size < 0) {
    vd_buf_free(&buf);
    return NULL;
  }
  vh_show(url, shown, sizeof shown);
  if ((int64_t)buf.len > *size) buf.len = (size_t)(*size > 0 ? *size : 0); /* the store checked the answer */
  if (*size < 0) {
    vd_buf_free(&buf);
    vd_fail(&last_err, VD_IO, "%s: the server does not say how big the file is", shown);
    return NULL;
  }
  if (*size == 0) { /* HDF5 would only say that it finds no signature */
    vd_buf_free(&buf);
    vd_fail(&last_err, VD_INVALID, "%s: not an HDF5 file (it is empty)", shown);
    last_fact = 1;
    return NULL;
  }
  vd_blob *head = vd_blob_from_buf(&buf);
  if (!head) {
    vd_buf_free(&buf);
    vd_nomem(&last_err);
    return NULL;
  }
  if ((int64_t)head->len == *size) { /* the whole file */
    char *k = whole_key(url);
    if (k) vd_cache_store(ctx, k, head);
    free(k);
  } else {
    remember_size(ctx, url, *size);
  }
  return head;
}

static void first_request(vd_getreq *r, vd_ctx *ctx, const char *url) {
  memset(r, 0, sizeof *r);
  r->url = url;
  r->len = prefix_of(ctx);
  r->want_info = 1;
}

/* Answers to first requests made ahead (vh_vfd_prefetch), for the opens that follow. */
typedef struct ahead {
  vd_ctx *ctx;
  char *url;
  vd_getreq r;
} ahead;
static _Thread_local ahead *aheads;
static _Thread_local int naheads;

static void ahead_free(ahead *a) {
  vd_buf_free(&a->r.body);
  vd_objinfo_free(&a->r.info);
  free(a->url);
}

void vh_vfd_prefetch_end(vd_ctx *ctx) {
  for (int i = naheads - 1; i >= 0; i--)
    if (aheads[i].ctx == ctx) ahead_free(&aheads[i]), aheads[i] = aheads[--naheads];
  if (!naheads) free(aheads), aheads = NULL;
}

void vh_vfd_prefetch(vd_ctx *ctx, const char *const *urls, int n) {
  vh_vfd_prefetch_end(ctx);
  ahead *a = calloc(n > 0 ? (size_t)n : 1, sizeof *a);
  vd_getreq *reqs = calloc(n > 0 ? (size_t)n : 1, sizeof *reqs);
  int m = 0;
  for (int i = 0; a && reqs && i < n; i++) {
    int dup = 0;
    for (int j = 0; j < m && !dup; j++) dup = !strcmp(a[j].url, urls[i]);
    if (dup || vh_vfd_known(ctx, urls[i])) continue;
    if (!(a[m].url = strdup(urls[i]))) break;
    a[m].ctx = ctx;
    first_request(&reqs[m], ctx, a[m].url);
    m++;
  }
  ahead *all = m > 1 ? realloc(aheads, (size_t)(naheads + m) * sizeof *all) : NULL;
  if (all) { /* (one alone gains nothing: its open asks for it) */
    aheads = all;
    vd_get_many(ctx, reqs, m); /* each answer carries its own outcome, taken by the open */
    for (int i = 0; i < m; i++) a[i].r = reqs[i], aheads[naheads++] = a[i];
  } else {
    for (int i = 0; i < m; i++) free(a[i].url);
  }
  free(a);
  free(reqs);
}

static int take_ahead(vd_ctx *ctx, const char *url, vd_getreq *r) {
  for (int i = 0; i < naheads; i++)
    if (aheads[i].ctx == ctx && !strcmp(aheads[i].url, url)) {
      *r = aheads[i].r;
      free(aheads[i].url);
      aheads[i] = aheads[--naheads];
      return 1;
    }
  return 0;
}

/* The first request for a file, unless it was made ahead. */
static vd_blob *fetch_head(vd_ctx *ctx, const char *url, int64_t *size) {
  vd_getreq r;
  if (!take_ahead(ctx, url, &r)) {
    first_request(&r, ctx, url);
    vd_get_many(ctx, &r, 1);
  }
  r.url = url; /* the ahead copy's own string is gone */
  return take_head(ctx, url, &r, size);
}

char *vh_vfd_derived(const char *base, const char *url) {
  const char *q = strchr(base, '?'), *slash = strrchr(base, '/');
  if (!strcmp(url, base)) return strdup(url);
  if (q && slash > q && strncmp(url, base, (size_t)(slash - base + 1)) == 0)
    return vd_url_sibling(base, url + (slash - base + 1));
  return vd_url_carry_query(base, url);
}

static H5FD_t *open_url(vd_ctx *ctx, const char *base, const char *url);

static H5FD_t *v_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr) {
  (void)maxaddr;
  vd_err_clear(&last_err);
  last_fact = 0;
  char shown[600];
  if (flags & (H5F_ACC_RDWR | H5F_ACC_CREAT | H5F_ACC_TRUNC)) {
    vh_show(name, shown, sizeof shown);
    vd_fail(&last_err, VD_READONLY, "%s: remote VTKHDF files are read-only", shown);
    return NULL;
  }
  /* the sub-files HDF5 opens for external links and virtual datasets get a copy of the
   * parent's access list without our driver info (1.10.8), so the context of the read in
   * progress on this thread stands in */
  const vfd_fapl *fa = H5Pget_driver_info(fapl);
  H5Eclear2(H5E_DEFAULT);
  vd_ctx *ctx = fa && fa->ctx ? fa->ctx : cur_ctx;
  const char *base = fa && fa->base ? fa->base : cur_base;
  vh_show(name, shown, sizeof shown);
  if (!ctx || !base) {
    vd_fail(&last_err, VD_ERROR, "%s: the vdsql HDF5 driver has no context", shown);
    return NULL;
  }
  const char *url = vh_vfd_url(name);
  if (!url) { /* a local name HDF5 tried (an absolute sub-file path, a name as stored): not ours */
    vd_fail(&last_err, VD_NOTFOUND, "%s: not a URL", shown);
    last_fact = 1;
    return NULL;
  }
  char *own = vh_vfd_derived(base, url);
  if (!own) {
    vd_nomem(&last_err);
    return NULL;
  }
  H5FD_t *r = open_url(ctx, base, own);
  free(own);
  if (!r) push_fault();
  return r;
}

/* The open of url (a sub-file derived from the main file base, or base itself). */
static H5FD_t *open_url(vd_ctx *ctx, const char *base, const char *url) {
  char shown[600];
  /* a sub-file: only on the main file's scheme, host and port (or allowed_hosts) */
  if (vh_url_check(ctx, base, url, &last_err)) return (last_fact = 1), NULL;
  vfd_file *f = live_file(ctx, url, 1);
  if (f) { /* closed by HDF5 during this read: everything it learnt is still good */
    f->kept = 0, nkept--;
    H5FD_t fresh = {0};
    f->pub = fresh; /* HDF5 fills the public part again */
    f->eoa = 0;
    return &f->pub;
  }
  vd_blob *head = NULL;
  int64_t size = UNKNOWN;
  vfd_file *open = live_file(ctx, url, 0);
  if (open) { /* HDF5's second open of a file it has open */
    head = vd_blob_ref(open->head);
    size = (int64_t)open->eof;
  } else if ((head = cached_whole(ctx, url, 1))) {
    size = (int64_t)head->len;
  } else if ((size = known_size(ctx, url)) == GONE) {
    vh_show(url, shown, sizeof shown);
    vd_fail(&last_err, VD_NOTFOUND, "%s: not found", shown);
    last_fact = 1;
    return NULL;
  } else if (size < 0 || size <= prefix_of(ctx)) { /* the first request: it tells the size */
    if (!(head = fetch_head(ctx, url, &size))) return NULL;
  } /* else a big file asked for before in this read: its blocks as HDF5 needs them */
  if (!(f = calloc(1, sizeof *f)) || !(f->url = strdup(url)) || !track(f)) {
    if (f) free(f->url);
    free(f);
    vd_blob_unref(head);
    vd_nomem(&last_err);
    return NULL;
  }
  f->ctx = ctx;
  f->eof = (haddr_t)size;
  f->head = head;
  for (int i = 0; i < NCACHE; i++) f->blk[i] = -1;
  return &f->pub;
}

static herr_t v_close(H5FD_t *file) {
  vfd_file *f = (vfd_file *)file;
  if (cur_ctx && nkept < NKEPT) { /* keep it for a reopen while the read is in progress */
    f->kept = 1, nkept++;
    return 0;
  }
  file_free(f);
  return 0;
}

static int v_cmp(const H5FD_t *a, const H5FD_t *b) { return strcmp(((const vfd_file *)a)->url, ((const vfd_file *)b)->url); }

static herr_t v_query(const H5FD_t *f, unsigned long *flags) {
  (void)f;
  /* let HDF5 gather small metadata and raw-data reads into larger ones */
  *flags = H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE;
  return 0;
}

static haddr_t v_get_eoa(const H5FD_t *file, H5FD_mem_t type) { return ((const vfd_file *)file)->eoa; }
static herr_t v_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr) {
  ((vfd_file *)file)->eoa = addr;
  return 0;
}
static haddr_t v_get_eof(const H5FD_t *file, H5FD_mem_t type) { return ((const vfd_file *)file)->eof; }

static int slot_of(const vfd_file *f, int64_t b) {
  for (int i = 0; i < NCACHE; i++)
    if (f->blk[i] == b) return i;
  return -1;
}

/* Blocks [b0, b1] into the cache from buf, the answer to a range request for them. */
static int keep_blocks(vfd_file *f, int64_t b0, int64_t b1, const vd_buf *buf) {
  f->got += (int64_t)buf->len;
  for (int64_t b = b0; b <= b1; b++) {
    size_t from = (size_t)((b - b0) * BLOCK);
    if (from >= buf->len) break;
    size_t n = buf->len - from < BLOCK ? buf->len - from : BLOCK;
    int s = f->next;
    f->next = (f->next + 1) % NCACHE;
    free(f->data[s]);
    f->data[s] = malloc(n);
    if (!f->data[s]) {
      f->blk[s] = -1;
      vd_nomem(&last_err);
      return -1;
    }
    memcpy(f->data[s], buf->data + from, n);
    f->len[s] = n;
    f->blk[s] = b;
  }
  return 0;
}

/* Fetches blocks [b0, b1] (all missing) with one range request and caches them. */
static int fetch(vfd_file *f, int64_t b0, int64_t b1) {
  int64_t off = b0 * BLOCK, len = (b1 - b0 + 1) * BLOCK;
  if (off + len > (int64_t)f->eof) len = (int64_t)f->eof - off;
  if (len <= 0) return 0;
  vd_buf buf = {0};
  last_fact = 0; /* a block of a file that answered before: any failure is a fault */
  int rc = vd_get(f->ctx, f->url, off, len, &buf, NULL, &last_err) ? -1 : keep_blocks(f, b0, b1, &buf);
  vd_buf_free(&buf);
  return rc;
}

/* Why many ranges at once: a streamed leaf reads its count datasets a window at a time,
 * and each window past the head waited for the one before (a round trip each: 7 for a
 * 1.4 MB file). The datasets' places are known from the metadata, so the windows the
 * next rows need, of every count dataset, are asked for together: one round. */
#define WANT_RUNS 64
static vfd_file *file_of(hid_t obj) {
  hid_t fid = H5Iget_file_id(obj), fapl = fid >= 0 ? H5Fget_access_plist(fid) : -1;
  void *h = NULL;
  if (fapl >= 0 && driver_id >= 0 && H5Pget_driver(fapl) == driver_id && H5Fget_vfd_handle(fid, fapl, &h) < 0) h = NULL;
  if (fapl >= 0) H5Pclose(fapl);
  if (fid >= 0) H5Fclose(fid);
  return h;
}

int64_t vh_vfd_read(hid_t obj) {
  vfd_file *f = file_of(obj);
  return f ? (f->head ? (int64_t)f->head->len : 0) + f->got : -1;
}

int64_t vh_vfd_missing(hid_t obj, int64_t off, int64_t len) {
  vfd_file *f = file_of(obj);
  if (!f || len <= 0) return 0;
  int64_t hl = f->head ? (int64_t)f->head->len : 0, end = off + len < (int64_t)f->eof ? off + len : (int64_t)f->eof;
  int64_t from = off > hl ? off : hl, n = 0;
  for (int64_t b = from / BLOCK; b * BLOCK < end; b++)
    if (slot_of(f, b) < 0) n += ((b + 1) * BLOCK < end ? (b + 1) * BLOCK : end) - (b * BLOCK > from ? b * BLOCK : from);
  return n;
}

int vh_vfd_want(const hid_t *obj, const int64_t *off, const int64_t *len, int n) {
  vfd_file *rf[WANT_RUNS];
  int64_t b0[WANT_RUNS], b1[WANT_RUNS], nblocks = 0;
  int m = 0;
  vd_err_clear(&last_err);
  last_fact = 0;
  for (int i = 0; i < n; i++) { /* the runs of missing blocks, at most half a cache in all */
    vfd_file *f = len[i] > 0 ? file_of(obj[i]) : NULL;
    if (!f) continue;
    int64_t hl = f->head ? (int64_t)f->head->len : 0, lastreal = f->eof ? (int64_t)((f->eof - 1) / BLOCK) : -1;
    int64_t from = off[i] > hl ? off[i] : hl, last = (off[i] + len[i] - 1) / BLOCK;
    for (int64_t b = from / BLOCK; from < off[i] + len[i] && b <= last && b <= lastreal && nblocks < NCACHE / 2; b++) {
      int dup = slot_of(f, b) >= 0;
      for (int k = 0; k < m && !dup; k++) dup = rf[k] == f && b >= b0[k] && b <= b1[k];
      if (dup) continue;
      if (m && rf[m - 1] == f && b1[m - 1] == b - 1) b1[m - 1] = b;
      else if (m < WANT_RUNS) rf[m] = f, b0[m] = b1[m] = b, m++;
      else continue;
      nblocks++;
    }
  }
  vd_getreq q[WANT_RUNS];
  memset(q, 0, sizeof q);
  for (int k = 0; k < m; k++) {
    q[k].url = rf[k]->url, q[k].off = b0[k] * BLOCK, q[k].len = (b1[k] - b0[k] + 1) * BLOCK;
    if (q[k].off + q[k].len > (int64_t)rf[k]->eof) q[k].len = (int64_t)rf[k]->eof - q[k].off;
  }
  int rc = m && vd_get_many(rf[0]->ctx, q, m) ? -1 : 0; /* one context: the stream's */
  for (int k = 0; k < m; k++) {
    if (q[k].rc && !last_err.msg[0]) last_err = q[k].err;
    if (!q[k].rc && keep_blocks(rf[k], b0[k], b1[k], &q[k].body)) rc = -1;
    vd_buf_free(&q[k].body);
    vd_objinfo_free(&q[k].info);
  }
  return rc;
}

static herr_t v_get_handle(H5FD_t *file, hid_t fapl, void **handle) {
  (void)fapl;
  *handle = file;
  return 0;
}

static herr_t v_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buffer) {
  vfd_file *f = (vfd_file *)file;
  unsigned char *out = buffer;
  if (!size) return 0;
  haddr_t hl = f->head ? (haddr_t)f->head->len : 0, from = addr > hl ? addr : hl;
  int64_t first = (int64_t)(from / BLOCK), last = (int64_t)((addr + size - 1) / BLOCK);
  int64_t lastreal = f->eof ? (int64_t)((f->eof - 1) / BLOCK) : -1;
  /* one request per run of missing blocks past the head (capped so the cache can hold a run) */
  for (int64_t b = first; from < addr + size && b <= last && b <= lastreal;) {
    if (slot_of(f, b) >= 0) {
      b++;
      continue;
    }
    int64_t e = b;
    while (e + 1 <= last && e + 1 <= lastreal && e - b + 1 < NCACHE / 2 && slot_of(f, e + 1) < 0) e++;
    if (fetch(f, b, e)) return push_fault(), -1;
    b = e + 1;
  }
  for (size_t done = 0; done < size;) {
    haddr_t a = addr + done;
    if (a < hl) { /* from the head */
      size_t n = hl - a < size - done ? (size_t)(hl - a) : size - done;
      memcpy(out + done, f->head->data + a, n);
      done += n;
      continue;
    }
    int64_t b = (int64_t)(a / BLOCK);
    size_t in = (size_t)(a % BLOCK), n = BLOCK - in;
    if (n > size - done) n = size - done;
    int s = b <= lastreal ? slot_of(f, b) : -1;
    if (s < 0) {
      if (b <= lastreal) { /* evicted by a run longer than the cache: fetch it alone */
        if (fetch(f, b, b) || (s = slot_of(f, b)) < 0) return push_fault(), -1;
      }
    }
    if (s >= 0 && in < f->len[s]) {
      size_t have = f->len[s] - in < n ? f->len[s] - in : n;
      memcpy(out + done, f->data[s] + in, have);
      if (have < n) memset(out + done + have, 0, n - have);
    } else {
      memset(out + done, 0, n); /* past the end of the file: HDF5 expects zeros */
    }
    done += n;
  }
  return 0;
}

static herr_t v_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buffer) {
  return -1; /* read-only */
}

static const H5FD_class_t vfd_class = {
    "vdsql_store",
    (haddr_t)INT64_MAX,
    H5F_CLOSE_WEAK,
    NULL, /* terminate */
    NULL, NULL, NULL, /* superblock */
    sizeof(vfd_fapl),
    NULL, NULL, NULL, /* fapl get/copy/free: HDF5 copies the struct */
    0, NULL, NULL,
    v_open,
    v_close,
    v_cmp,
    v_query,
    NULL, /* get_type_map */
    NULL, /* alloc */
    NULL, /* free */
    v_get_eoa,
    v_set_eoa,
    v_get_eof,
    v_get_handle,
    v_read,
    v_write,
    NULL, /* flush */
    NULL, /* truncate */
    NULL, /* lock */
    NULL, /* unlock */
    H5FD_FLMAP_DICHOTOMY,
};

hid_t vh_vfd_fapl(vd_ctx *ctx, const char *base) {
  if (driver_id < 0 || H5Iis_valid(driver_id) <= 0) driver_id = H5FDregister(&vfd_class);
  if (driver_id < 0) return -1;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  vfd_fapl fa = {ctx, base};
  if (fapl < 0 || H5Pset_driver(fapl, driver_id, &fa) < 0) {
    if (fapl >= 0) H5Pclose(fapl);
    return -1;
  }
  return fapl;
}

/* The store says which names are remote objects (http(s) today): no scheme is named here. */
int vh_is_url(const char *s) { return vd_store_is_remote(s); }
