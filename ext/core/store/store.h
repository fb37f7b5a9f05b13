/* The store interface: every byte vdsql reads or writes goes through here, whatever
 * holds it (local files, http(s); S3 and Azure later). Requests are counted per backend
 * in ctx->stats; many requests are run in parallel where the backend allows it. */
#ifndef VD_STORE_H
#define VD_STORE_H

#include <stdint.h>

#include "vd_buf.h"
#include "vd_ctx.h"
#include "vd_err.h"

typedef struct vd_kv {
  char *key, *value;
} vd_kv;

/* What a HEAD (or a GET asked for it) tells about an object. */
typedef struct vd_objinfo {
  int64_t size;     /* whole object, -1 unknown */
  char etag[128];
  int64_t mtime;    /* seconds since the epoch, 0 unknown */
  int nmeta;
  vd_kv *meta;      /* user metadata, keys without the backend's prefix, lower-case */
} vd_objinfo;

void vd_objinfo_free(vd_objinfo *i);
/* User metadata whose key ends with suffix (case-insensitive), as OpenVDS matches it. */
const char *vd_objinfo_meta(const vd_objinfo *i, const char *suffix);
int vd_objinfo_add_meta(vd_objinfo *i, const char *key, size_t klen, const char *val, size_t vlen);

typedef struct vd_getreq {
  const char *url;
  int64_t off, len;   /* len < 0: from off to the end */
  int want_info;      /* also fill info (size, etag, user metadata) */
  int head;           /* a HEAD: info only, no body (off and len unused): parallel HEADs */
  vd_buf body;
  vd_objinfo info;
  vd_code rc;
  vd_err err;
  /* The status of the server's final answer when it was an error (>= 400) that vdsql
   * took as given (http-based backends; not a transport failure, not an answer vdsql
   * refused, such as a wrong Content-Range); 0 otherwise. rc alone cannot tell a 403 (the server
   * refuses this object) from a 503 (it could not answer now): both are VD_IO. */
  long status;
} vd_getreq;

/* Runs every request (in parallel where possible); each gets its own rc/err. Returns
 * VD_OK when all succeeded, else the first failing request's code. */
vd_code vd_get_many(vd_ctx *ctx, vd_getreq *reqs, int n);
vd_code vd_get(vd_ctx *ctx, const char *url, int64_t off, int64_t len, vd_buf *out, vd_objinfo *info,
               vd_err *err);
vd_code vd_head(vd_ctx *ctx, const char *url, vd_objinfo *info, vd_err *err);

/* Writes, listings and deletes (backends with VD_CAP_WRITE / VD_CAP_LIST; the others
 * refuse with one wording, naming the URL). The conventions all backends keep (etags,
 * preconditions, metadata keys, listing order) are in backend.h. */
typedef struct vd_putreq {
  const char *url;
  const void *body;
  size_t len;
  const vd_kv *meta;  /* user metadata (replaces the object's), keys as given */
  int nmeta;
  const char *if_match; /* put only over an object with this etag (NULL: whatever is there) */
  int if_none_match;    /* put only when no object exists yet (create-only) */
  /* A server-side copy instead of a body: the object at copy_from (same backend and
   * bucket or container), its user metadata included (meta and body unused). Local
   * files: a hard link, so no byte is copied. A missing source is VD_NOTFOUND. */
  const char *copy_from;
  /* A DELETE of url instead (vd_put_many only: many deletes in parallel on the http
   * transport; a missing object is no error, as for vd_delete). */
  int del;
  /* Inside the store only: the body's Content-Type of a backend's own POST (a batch of
   * deletes, backend.h); NULL everywhere else. */
  const char *content_type;
  char etag[128];       /* out: the new object's etag (none after a copy on S3) */
} vd_putreq;
/* A failed If-Match / If-None-Match is VD_PRECONDITION: nothing was written. */
vd_code vd_put(vd_ctx *ctx, vd_putreq *p, vd_err *err);
/* Many puts at once: over the http transport they run in parallel (max_parallel in
 * flight, each with the transport's retries); elsewhere one after the other. Each p[i]
 * gets its own code in rc[i] and message in errs[i]; returns the first failing code. */
vd_code vd_put_many(vd_ctx *ctx, vd_putreq **p, int n, vd_code *rc, vd_err *errs);
/* The directories an object at url needs, made where the backend has directories
 * (local files: a put into a missing directory is refused, as it should be for a typo,
 * so writers of layouts with sub-folders, OpenVDS's, make them first); nothing for
 * object stores. */
vd_code vd_store_make_dirs(const char *url, vd_err *err);
/* Deleting a missing object is not an error. */
vd_code vd_delete(vd_ctx *ctx, const char *url, vd_err *err);
/* Many deletes in as few requests as each service allows: S3 DeleteObjects (1000 keys a
 * request, one per bucket), Azure Blob Batch (256 blobs a request, one per container),
 * those requests in parallel; local files one unlink each. Every d[i] gets its own
 * code and message: VD_OK when the object is gone, a missing one included; otherwise
 * the error names its URL (redacted). Returns the first failing code, VD_OK when none.
 * vdsql_stats counts each batch as one request. */
typedef struct vd_delreq {
  const char *url;
  vd_code rc;
  vd_err err;
} vd_delreq;
vd_code vd_delete_many(vd_ctx *ctx, vd_delreq *d, int n);
/* Removes what puts that were interrupted (kill -9) left in the folder url, older than
 * age seconds: the file backend's temporary files, which no listing shows; *n gets how
 * many. how: VD_SWEEP_DEEP also in its sub-folders, VD_SWEEP_PRUNE (with DEEP) also the
 * sub-folders left empty (a scratch area's). Nothing to do on object stores (an
 * unfinished upload leaves nothing). */
enum { VD_SWEEP_DEEP = 1, VD_SWEEP_PRUNE = 2 };
vd_code vd_store_sweep(vd_ctx *ctx, const char *url, double age, int how, int64_t *n, vd_err *err);
/* Removes the folder url once it is empty, where folders exist (local files): what
 * vd_store_make_dirs made for objects that are all deleted now. Nothing elsewhere. */
void vd_store_remove_dir(const char *url);

typedef struct vd_listent {
  char *key;       /* relative to the listed URL's directory (its part up to the last '/') */
  vd_objinfo info; /* size, etag, mtime; user metadata when has_meta */
  int has_meta;    /* 0: the listing does not give metadata (S3): a HEAD does */
} vd_listent;
typedef struct vd_listing {
  vd_listent *ent;
  int n;
  char *next; /* opaque continuation token for the next page; NULL: this was the last */
  char **prefixes; /* VD_LIST_FOLDER only: the sub-folders, relative as keys are, ending in '/' */
  int nprefixes;
} vd_listing;
/* The objects whose URL starts with url (a directory ending in '/', or a directory and a
 * key prefix), recursively, in byte order of their keys, at most max (> 0) of them,
 * starting after token (NULL: from the first). */
vd_code vd_list(vd_ctx *ctx, const char *url, const char *token, int max, vd_listing *out, vd_err *err);
/* The same with flags:
 * - VD_LIST_FOLDER: one folder's level only (the delimiter '/'): the objects directly in
 *   it whose URL starts with url, and its sub-folders as prefixes (out->prefixes, in byte
 *   order); at most max of both together per page. What a walk of folders lists instead
 *   of every key below them.
 * - VD_LIST_NO_META: the caller reads no user metadata; a backend for which it costs
 *   more (local files: extended attributes, two calls per file) may leave it out
 *   (has_meta 0).
 * - VD_LIST_KEYS_ONLY: the caller reads only the keys; a backend may leave size (-1),
 *   etag, time and metadata out where they cost more (local files: a stat per file). */
enum { VD_LIST_FOLDER = 1, VD_LIST_NO_META = 2, VD_LIST_KEYS_ONLY = 4 };
vd_code vd_list_with(vd_ctx *ctx, const char *url, const char *token, int max, int flags, vd_listing *out,
                     vd_err *err);
void vd_listing_free(vd_listing *l);

/* Capability queries, so that formats never look at a scheme themselves. Unknown
 * schemes are neither local nor remote (vd_url_check refuses them). */
int vd_store_is_local(const char *url);  /* a local file: a path or file:// */
/* A local path that names no absolute place: "rel/p", and "file:NAME" or "file:/p" (no
 * "//": not a file URL, so a path, and a relative one). A server's working directory is
 * its data directory, so its front end refuses these; this is the one place that says
 * which paths are relative. */
int vd_url_relative(const char *url);
int vd_store_is_remote(const char *url); /* served by a non-local backend (http(s), ...) */
int vd_store_can_write(const char *url); /* its backend has put and delete */
/* Its requests go through the http transport (so they can be left in flight with
 * vd_http_async): http(s) and the object stores. */
int vd_store_on_http(const char *url);

/* Whole small objects (JSON documents, metadata pages) through the document cache. */
vd_code vd_fetch_doc(vd_ctx *ctx, const char *url, vd_blob **out, vd_err *err);
/* The same for many at once; all-or-nothing: on failure every out[i] is NULL. */
vd_code vd_fetch_docs(vd_ctx *ctx, const char *const *urls, int n, vd_blob **out, vd_err *err);
/* The same, each document on its own: out[i] NULL where it failed, with rcs[i] and
 * errs[i] saying why; the return value is only an out-of-memory of the whole. */
vd_code vd_fetch_docs_each(vd_ctx *ctx, const char *const *urls, int n, vd_blob **out, vd_code *rcs, vd_err *errs,
                           vd_err *err);
/* With cache = 0 fresh cached copies are still used but what is fetched is not kept. */
vd_code vd_fetch_docs_opt(vd_ctx *ctx, const char *const *urls, int n, vd_blob **out, int cache, vd_err *err);
/* A byte range through the cache, under a caller-chosen key (a short read at the end
 * of the object is not an error). */
vd_code vd_fetch_range(vd_ctx *ctx, const char *url, int64_t off, int64_t len, const char *key, vd_blob **out,
                       vd_err *err);
/* Whole objects fetched ahead, answered in the order asked, for sequential scans: over
 * http up to `window` requests stay in flight while the caller works on the objects
 * already taken, so it never waits for more than the slowest answer in a window. A
 * fresh cached copy is used without a request; what is fetched is kept in the cache
 * only with cache set. Memory: at most `window` objects are held. */
typedef struct vd_ahead vd_ahead;
vd_code vd_ahead_open(vd_ctx *ctx, int window, int cache, vd_ahead **out, vd_err *err);
/* How many more objects may be pushed before one is taken. */
int vd_ahead_room(const vd_ahead *a);
/* How many were pushed and not yet taken. */
int vd_ahead_pending(const vd_ahead *a);
vd_code vd_ahead_push(vd_ahead *a, const char *url, vd_err *err);
/* The same for bytes [off, off + len) of url (a short answer at the object's end is no
 * error); never from nor into the cache, which holds whole objects. */
vd_code vd_ahead_push_range(vd_ahead *a, const char *url, int64_t off, int64_t len, vd_err *err);
/* The oldest object pushed and not yet taken (waits for it): a new reference. */
vd_code vd_ahead_take(vd_ahead *a, vd_blob **out, vd_err *err);
void vd_ahead_close(vd_ahead *a);
/* Direct cache access for derived documents: lookup counts a hit for url's backend. */
vd_blob *vd_cache_lookup(vd_ctx *ctx, const char *url, const char *key);
void vd_cache_store(vd_ctx *ctx, const char *key, vd_blob *b);
/* A fresh entry under key, without counting a hit: a new reference, or NULL. */
vd_blob *vd_cache_peek(vd_ctx *ctx, const char *key);
/* Forget a cached document (after a write through vdsql). */
void vd_store_invalidate(vd_ctx *ctx, const char *url);

/* URL helpers. */
vd_backend_id vd_url_backend(const char *url);
/* base + "/" + name, keeping a ?query of base at the end (presigned / SAS URLs). */
char *vd_url_join(const char *base, const char *name);
/* Percent-encoding, the one copy every URL builder and signer uses: every byte of s[0, n)
 * outside RFC 3986's unreserved set (and '/' unless keep_slash is 0) becomes %XX. out
 * has room for 3 * n + 1; it is NUL-terminated; returns the end (the NUL). */
char *vd_pct_encode(char *out, const void *s, size_t n, int keep_slash);
/* Decodes %XX in s[0, n) into out (room for n + 1; out may be s); a '%' not followed by
 * two hex digits stays as it is, as the services do. NUL-terminated; returns the length
 * (a decoded NUL byte included, so callers that need C strings compare with strlen). */
size_t vd_pct_decode(char *out, const char *s, size_t n);
/* name next to the object file_url names (file_url up to its last '/' before any
 * query, then name verbatim), file_url's ?query carried: how a main file's sub-files
 * are found (HDF5 takes names as stored, so they are not encoded). malloc'd. */
char *vd_url_sibling(const char *file_url, const char *name);
/* The folder a listing of url gives its keys relative to: url up to its last '/' (a
 * bucket or container URL without one: itself and '/'; a bare relative name: ""), its
 * ?query carried. Joined (vd_url_join) with a listed key, it names that object. */
char *vd_url_list_dir(const char *url);
/* url with base's ?query carried over (malloc'd): for objects derived from base by
 * others (HDF5 joins a sub-file's name onto the main file's directory itself). Only when
 * url has no query of its own and lies on base's scheme, host and port: a query is a
 * credential and never goes to another server. Otherwise a copy of url. */
char *vd_url_carry_query(const char *base, const char *url);
/* The one redaction of every URL that reaches an error, a result column or a log: no
 * userinfo, no query (nor fragment) values: secrets never leave. */
void vd_url_redact(const char *url, char *out, size_t n);
/* The allowed-hosts rule: a remote dataset (base) may make vdsql reach target (a link,
 * a source, a redirect) only on its own scheme, host and port, or on a host listed in
 * vdsql_config('allowed_hosts'). A local base allows anything local. The error names
 * both URLs (redacted) and the setting. */
vd_code vd_url_allowed(vd_ctx *ctx, const char *base, const char *target, vd_err *err);
/* 1 when target is an http(s) URL whose host (and port) allowed_hosts lists by name (or
 * "*"): what a check may ask about although nothing else vouches for it. */
int vd_url_host_listed(vd_ctx *ctx, const char *target);
/* Schemes the store does not know, file URLs naming a host, and "file:" without "//"
 * (a relative path that only looks like a file URL) are refused, before any backend sees
 * them (a path is only a path when it has no scheme); the error names the URL redacted. */
vd_code vd_url_check(const char *url, vd_err *err);
/* Local path of a file URL ("/p", "file:///p", "rel/p"), malloc'd. */
char *vd_url_path(const char *url);

/* The one wording of a whole object over max_alloc, for every backend: size < 0 when
 * it is only known to be larger (a body cut off as it passed the bound). */
vd_code vd_fail_max_alloc(vd_err *err, const char *where, int64_t size, int64_t cap);

void vd_store_config_changed(vd_ctx *ctx);
void vd_store_shutdown(vd_ctx *ctx);

/* What the file and http backends offer code above the store (store_file*.c,
 * store_http.c). */
/* For code that opens a local path itself (HDF5, the LINDI writer): VD_OK for a regular
 * file, else the store's own error ("<path>: not a regular file", "no such file", ...),
 * without ever waiting in open() (a FIFO would block it until a writer appears). */
vd_code vd_file_check_regular(const char *path, vd_err *err);
/* The same, keeping the descriptor open with flags (O_RDONLY, O_RDWR); *st filled. */
struct stat;
vd_code vd_file_open_regular(const char *path, int flags, int *fd, struct stat *st, vd_err *err);
/* Whether anything is at path (access F_OK): through the relay in the HDF5 helper. */
int vd_file_exists(const char *path);
/* The lock every vdsql writer of a local directory takes (an exclusive flock on the
 * directory, waited for at most lock_timeout, then VD_BUSY): conditional writes of the
 * file backend and the VTKHDF main-file writer. *dfd is the locked directory; closing
 * it unlocks. */
vd_code vd_file_lock_dir(vd_ctx *ctx, const char *dir, int *dfd, vd_err *err);
void vd_http_free(vd_http *h);
/* http requests left in flight between calls (what vd_ahead builds on): start sends r
 * (r must stay put until it is waited for or the set freed); wait returns when r is
 * done (r->rc, r->body); free aborts what is still under way. */
typedef struct vd_http_async vd_http_async;
vd_code vd_http_async_new(vd_ctx *ctx, vd_http_async **out, vd_err *err);
struct vd_http_hook;
/* hook: the backend's (vd_backend_of(r->url)->hook; NULL for plain http) */
vd_code vd_http_async_start(vd_http_async *a, vd_getreq *r, const struct vd_http_hook *hook, vd_err *err);
void vd_http_async_wait(vd_http_async *a, vd_getreq *r);
/* A PUT (or DELETE: p->del) of p->url started on the set, r carrying its answer (r->url
 * and r->len are set here); p and its body must stay put until r is handed back. The
 * hook's refusal of the put comes back at once, with nothing sent. */
vd_code vd_http_async_put(vd_http_async *a, vd_getreq *r, vd_putreq *p, const struct vd_http_hook *hook,
                          vd_err *err);
/* A request of the set that finished (*out; its put's etag set), taken out of the set;
 * with block, waits for one. *out NULL: none finished (without block), or the set is
 * empty. VD_INTERRUPTED when the front end asked to stop (what is in flight stays). */
vd_code vd_http_async_next(vd_http_async *a, int block, vd_getreq **out, vd_err *err);
void vd_http_async_free(vd_http_async *a);

/* Uploads that keep the pipe full: puts pushed one at a time as a writer makes them,
 * max_parallel of them in flight at once over the http transport, and as each finishes
 * the next one queued starts in the same turn, so the link never waits for the slowest
 * of a batch. Memory is bounded: the queue holds at most `window` puts (in flight and
 * waiting; each body moved in, freed when its put finishes) and, beyond the first,
 * `max_bytes` of bodies; a push waits while it is full. Local files (and any backend
 * off the transport) are put when pushed. The first put that fails stops the queue:
 * nothing not yet started is sent any more (those are handed back as VD_INTERRUPTED
 * "not sent"), and every later push returns that first error, which names the put's URL. */
typedef struct vd_putq vd_putq;
vd_code vd_putq_open(vd_ctx *ctx, int window, size_t max_bytes, vd_putq **out, vd_err *err);
/* Queues a put of url with *body (moved in: *body is left empty) and user metadata
 * (copied), under the caller's tag (one put of a tag at a time: vd_putq_busy). Every
 * push is handed back once by vd_putq_take, refused ones too. VD_OK, or the queue's
 * first failure. */
vd_code vd_putq_push(vd_putq *q, const char *url, vd_buf *body, const vd_kv *meta, int nmeta, int64_t tag,
                     vd_err *err);
/* The same, put create-only (If-None-Match): when an object is at url already, the
 * same body and metadata go to fallback instead (a plain put), and the push is handed
 * back with *fell set. A writer's way to put an object at its final key when nothing
 * is there, and aside otherwise, at the cost of one refused request. */
vd_code vd_putq_push_create(vd_putq *q, const char *url, const char *fallback, vd_buf *body, const vd_kv *meta,
                            int nmeta, int64_t tag, vd_err *err);
/* A finished put, without waiting: 1 with its tag, code and error, and (fell, may be
 * NULL) whether it went to its fallback; 0 when none is. */
int vd_putq_take(vd_putq *q, int64_t *tag, int *fell, vd_code *rc, vd_err *err);
/* Whether a put of tag was pushed and has not finished yet. */
int vd_putq_busy(const vd_putq *q, int64_t tag);
/* Waits until the put of tag has finished (VD_OK), or every put when tag < 0; VD_INTERRUPTED
 * when the front end asks to stop (then the puts in flight are abandoned: whether they
 * landed is unknown; they are handed back as VD_INTERRUPTED). */
vd_code vd_putq_wait(vd_putq *q, int64_t tag, vd_err *err);
/* No more puts start (a rollback): those waiting are handed back "not sent". */
void vd_putq_stop(vd_putq *q);
/* Frees the queue, abandoning what is in flight. */
void vd_putq_close(vd_putq *q);

#endif
