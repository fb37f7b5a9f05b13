/* The backend interface of the store: one table of operations per kind of store, found
 * by URL scheme in one place (the scheme table of store_url.c; vd_backend_of in store.c
 * gives the operations). Everything above the store asks the store (vd_get, vd_put,
 * vd_list, ..., vd_store_is_local); only the store looks at a URL's scheme, and only
 * through that table.
 *
 * Conventions every backend keeps, so that S3 (radosgw) and Azure (Azurite) fit without
 * changing callers (their quirks: tests/store/servers.t, ../shared/spec/object-stores.md):
 * - An etag is the quoted form HEAD gives (S3 "md5", Azure "0x..."); a backend that gets
 *   it otherwise (Azure listings: unquoted) quotes it, and one whose service wants it
 *   otherwise in If-Match (radosgw: unquoted) converts it when sending.
 * - A failed precondition is VD_PRECONDITION whatever the service says (S3 412, Azure
 *   412 for If-Match and 409 BlobAlreadyExists for a create-only put).
 * - Deleting a missing object is not an error (S3 answers 204; Azure's 404 is mapped).
 * - User metadata keys are lower-case without the service's prefix (x-amz-meta-,
 *   x-ms-meta-, user.); values as stored. A put replaces all of an object's metadata.
 * - Ranges are always explicit "a-b" or "a-" (never suffix ranges: Azurite breaks them).
 * - Listings are recursive, in byte order of the keys, paged through an opaque
 *   continuation token (S3 NextContinuationToken, Azure NextMarker; the file backend's is
 *   the last key or prefix of the page). flags: VD_LIST_* (store.h); with VD_LIST_FOLDER
 *   '/' is the delimiter: one folder's own objects, and its sub-folders as prefixes
 *   ending in '/' (S3 CommonPrefixes, Azure BlobPrefix, local sub-directories, empty ones
 *   too); a page holds at most max of both together, as S3 counts them. */
#ifndef VD_BACKEND_H
#define VD_BACKEND_H

#include "store.h"

enum {
  VD_CAP_LOCAL = 1, /* objects are local files: a path can be opened directly */
  VD_CAP_WRITE = 2, /* put and delete */
  VD_CAP_LIST = 4,  /* list */
  VD_CAP_QUERY = 8  /* a ?query is part of the URL (presigned / SAS) and is carried to
                       every object derived from it; for files '?' is a name's byte */
};

/* A backend whose objects are reached over HTTP through the shared transport
 * (store_http.c: curl multi, retries, Content-Range checks, limits, counters) although
 * its URLs are not http URLs (s3://; az:// can use the same): the transport asks the
 * hook, once per attempt, to set the request up. */
typedef struct curl_slist vd_curl_slist;
typedef void vd_curl;
typedef struct vd_http_hook {
  vd_backend_id id; /* the row of vdsql_stats() */
  /* On the curl easy handle h (already set up for method on url): the real URL, the
   * signing options and headers; headers go in *hdrs (the transport owns and frees
   * them). range: the bytes a GET asks for ("a-b" or "a-"), NULL for the whole object;
   * the transport sets it as CURLOPT_RANGE unless range_header (then prepare sends it
   * as a header of its own: Shared Key signs the Range header). Errors name url
   * redacted, never a credential. */
  vd_code (*prepare)(vd_ctx *ctx, vd_curl *h, const char *url, const char *method, const char *range,
                     const vd_putreq *put, vd_curl_slist **hdrs, vd_err *err);
  int range_header;
  /* The response header carrying the service's error code (Azure's x-ms-error-code:
   * HEAD answers have no body to hold it); NULL: none. */
  const char *error_header;
  /* The service's error code, from that header's value (hdr, NULL when absent) or the
   * start of an error answer's body (S3's <Code>), into out (n bytes); 0 when found.
   * NULL: none. */
  int (*error_code)(const char *hdr, const char *body, size_t len, char *out, size_t n);
  /* The backend's own reading of a final error answer (status >= 400, retries done):
   * its code and its one wording, naming where (the redacted URL). VD_OK: the answer
   * means success for this method (Azure: DELETE of a missing blob). NULL: the
   * transport's wording ("HTTP 403 Forbidden (Code)", 404 VD_NOTFOUND, 412
   * VD_PRECONDITION). */
  vd_code (*answer)(vd_err *err, const char *where, const char *method, long status, const char *code);
  /* The backend's own refusals of a put before any request (metadata names the service
   * or this libcurl cannot carry), naming where; NULL: none. */
  vd_code (*check_put)(const vd_putreq *p, const char *where, vd_err *err);
  /* A final answer the backend may send again itself, set up anew by prepare: S3's
   * 301 or 400 naming the bucket's region (its header reroute_header, hdr here, NULL when
   * absent; or the start of the answer's body). 1: send the request again, at most once
   * per request, counted as a request like any other; 0: the answer stands. NULL: never.
   * Not a redirect: no Location is followed (prepare builds the URL, from the backend's
   * own rule). */
  const char *reroute_header;
  int (*reroute)(vd_ctx *ctx, const char *url, long status, const char *hdr, const char *body, size_t len);
} vd_http_hook;

typedef struct vd_backend_ops {
  vd_backend_id id; /* the row of vdsql_stats() its requests count in */
  /* Whole objects or ranges, many at once (in parallel where the backend can); each
   * request carries its own rc/err. */
  vd_code (*get_many)(vd_ctx *ctx, vd_getreq **reqs, int n);
  vd_code (*head)(vd_ctx *ctx, const char *url, vd_objinfo *info, vd_err *err);
  /* NULL where the backend is read-only (the store refuses with one wording). */
  vd_code (*put)(vd_ctx *ctx, vd_putreq *p, vd_err *err);
  vd_code (*list)(vd_ctx *ctx, const char *url, const char *token, int max, int flags, vd_listing *out, vd_err *err);
  vd_code (*del)(vd_ctx *ctx, const char *url, vd_err *err);
  const vd_http_hook *hook; /* set: requests go through the http transport with it */
  /* Many puts in parallel, each with its own rc[i] / errs[i] (NULL: vd_put_many puts one
   * after the other). Callers have checked every URL with vd_url_check. */
  void (*put_many)(vd_ctx *ctx, vd_putreq **p, int n, vd_code *rc, vd_err *errs);
  /* Many deletes in few requests (vd_delete_many; URLs checked, cached copies dropped),
   * each d[i] its own rc and err. NULL: one del after the other. */
  void (*del_many)(vd_ctx *ctx, vd_delreq *d, int n);
} vd_backend_ops;

/* What a URL's scheme is (store_url.c): its length ("scheme://"; 0 for a path), whether
 * a backend serves it, that backend's VD_CAP_* (0: none) and its label in messages. */
size_t vd_url_scheme_len(const char *url);
int vd_url_known(const char *url);
unsigned vd_url_caps(const char *url);
const char *vd_url_label(const char *url);
/* The code that serves url (a path is a local file); NULL for a scheme no backend
 * serves (store.c). */
const vd_backend_ops *vd_backend_of(const char *url);

extern const vd_backend_ops vd_file_ops, vd_http_ops, vd_s3_ops, vd_az_ops;

/* The file backend's pieces (store_file*.c). */
struct stat;
/* "<path>: no such file (...)" for ENOENT/ENOTDIR (VD_NOTFOUND), else "<path>: <what> (...)" */
vd_code vd_file_error(vd_err *e, const char *path, int errnum, const char *what);
void vd_file_etag(const struct stat *st, char *out, size_t n);
void vd_file_fill_info(int fd, const struct stat *st, vd_objinfo *info);
/* The same for a file not opened: st from lstat, the attributes read by path. */
void vd_file_fill_info_path(const char *path, const struct stat *st, vd_objinfo *info);
vd_code vd_file_put(vd_ctx *ctx, vd_putreq *p, vd_err *err);
vd_code vd_file_delete(vd_ctx *ctx, const char *url, vd_err *err);
vd_code vd_file_list(vd_ctx *ctx, const char *url, const char *token, int max, int flags, vd_listing *out,
                     vd_err *err);

/* The transport's entries for a backend on it: each request goes with the backend's own
 * hook (NULL: plain http(s)), which the backend passes itself (VD_HTTP_BACKEND), so
 * the transport never looks a URL's backend up. */
vd_code vd_http_get_many(vd_ctx *ctx, vd_getreq **reqs, int n, const vd_http_hook *hook);
vd_code vd_http_head(vd_ctx *ctx, const char *url, vd_objinfo *info, const vd_http_hook *hook, vd_err *err);
/* A PUT (put: body, metadata, conditions; put->etag set) or DELETE (put NULL) of url
 * through the http transport and the backend's hook: any 2xx is success, 412 is
 * VD_PRECONDITION, 404 VD_NOTFOUND; errors carry the service's code. */
vd_code vd_http_send(vd_ctx *ctx, const char *method, const char *url, vd_putreq *put, const vd_http_hook *hook,
                     vd_err *err);
/* Many PUTs through the transport at once (max_parallel in flight); each its own rc/err. */
void vd_http_put_many(vd_ctx *ctx, vd_putreq **puts, int n, const vd_http_hook *hook, vd_code *rc, vd_err *errs);
/* The put, put_many and del of a backend on the transport (s3://, az://): the hook's
 * check_put passes each put first, and the cached copy of what is written or deleted
 * is dropped. */
vd_code vd_http_put_one(vd_ctx *ctx, vd_putreq *p, const vd_http_hook *hook, vd_err *err);
void vd_http_put_many_checked(vd_ctx *ctx, vd_putreq **p, int n, const vd_http_hook *hook, vd_code *rc,
                              vd_err *errs);
vd_code vd_http_del(vd_ctx *ctx, const char *url, const vd_http_hook *hook, vd_err *err);
/* Many POSTs through the transport at once (max_parallel in flight): p[i]'s body, its
 * content_type given to the hook's prepare (method "POST"), to p[i]->url. ans[i] gets
 * the outcome (rc, err) and a 2xx answer's body (at most max_alloc bytes; the caller
 * frees ans[i].body). What a backend's batch requests go through. */
void vd_http_post_many(vd_ctx *ctx, vd_putreq **p, vd_getreq *ans, int n, const vd_http_hook *hook);
/* One batch request of a backend's del_many: the objects d[idx[0, m)], its body POSTed to
 * put.url with put.content_type (which may point to type). */
typedef struct vd_batch {
  int *idx, m;
  vd_buf body;
  vd_putreq put;
  char type[96];
} vd_batch;
/* Reads the answer to batch b: rc[j] / errs[j] for its j-th object, whose messages start
 * with where[j] (its URL, redacted); arg is the caller's. */
typedef void (*vd_batch_read)(const char *body, size_t len, const vd_batch *b, const char *const *where, void *arg,
                              vd_code *rc, vd_err *errs);
/* The batches bs[0, nb) POSTed (in parallel, vd_http_post_many) and each answer read into
 * its objects' d[].rc / d[].err; a batch failed as a whole fails each of its objects, each
 * message naming its own (where[i] for d[i]). */
void vd_http_send_batches(vd_ctx *ctx, vd_batch *bs, int nb, const vd_http_hook *hook, vd_batch_read read, void *arg,
                          vd_delreq *d, char *const *where);
/* The operations table of a backend served by the transport with hook HOOK (s3, az): its
 * get_many, head, put, del and put_many, named PFX_get_many and so on. */
#define VD_HTTP_BACKEND(PFX, HOOK)                                                                          \
  static vd_code PFX##_get_many(vd_ctx *ctx, vd_getreq **reqs, int n) {                                     \
    return vd_http_get_many(ctx, reqs, n, HOOK);                                                           \
  }                                                                                                        \
  static vd_code PFX##_head(vd_ctx *ctx, const char *url, vd_objinfo *info, vd_err *err) {                  \
    return vd_http_head(ctx, url, info, HOOK, err);                                                        \
  }                                                                                                        \
  static vd_code PFX##_put(vd_ctx *ctx, vd_putreq *p, vd_err *err) { return vd_http_put_one(ctx, p, HOOK, err); } \
  static vd_code PFX##_del(vd_ctx *ctx, const char *url, vd_err *err) { return vd_http_del(ctx, url, HOOK, err); } \
  static void PFX##_put_many(vd_ctx *ctx, vd_putreq **p, int n, vd_code *rc, vd_err *errs) {                \
    vd_http_put_many_checked(ctx, p, n, HOOK, rc, errs);                                                   \
  }
/* One GET of r->url, a real http(s) URL that a backend built itself (an Azure listing,
 * whose query is the service's), through that backend's hook: prepare gets r->url as it
 * is and only signs it. */
vd_code vd_http_get_hooked(vd_ctx *ctx, vd_getreq *r, const vd_http_hook *hook);
/* A listing page's GET (r->url, through the backend's hook, as vd_http_get_hooked): a failure is named after the listed URL, where ("<where>: listing: ..."), not the
 * request's own form. */
vd_code vd_http_get_listing(vd_ctx *ctx, vd_getreq *r, const vd_http_hook *hook, const char *where, vd_err *err);

/* The reason phrase of an HTTP status ("Not Found"), "" for one it does not know: every
 * failed answer of an http-based backend is worded "<url>: HTTP <status> <reason>[ (<the
 * service's code>)]", whichever backend words it. */
const char *vd_http_reason(long status);

/* One ListObjectsV2 answer into out (store_s3.c; fuzzed): keys relative to dir. */
vd_code vd_s3_parse_list(const char *body, size_t len, const char *dir, size_t dlen, vd_listing *out,
                         const char *where, vd_err *err);

#endif
