/* Read-only HDF5 file driver over the vdsql store, for remote VTKHDF files; and the rules
 * every URL the VTKHDF reader may request or show follows. */
#ifndef VD_VTKHDF_VFD_H
#define VD_VTKHDF_VFD_H

#include <hdf5.h>
#include <stddef.h>

#include "vd_ctx.h"

/* A file-access property list that reads through ctx's store (caller closes it); base is
 * the main file's URL. HDF5 hands it on to the sub-files behind external links and
 * virtual datasets. */
hid_t vh_vfd_fapl(vd_ctx *ctx, const char *base);
/* The same for local files (vtkhdf_vfd_local.c): HDF5's plain reads, counted in ctx's
 * vdsql_stats() and opened only when they are regular files. */
hid_t vh_local_fapl(vd_ctx *ctx);
/* Between begin and end, sub-files HDF5 opens on this thread read through ctx, under
 * the rule of vh_url_check against base (the main file's URL). */
void vh_vfd_begin(vd_ctx *ctx, const char *base);
void vh_vfd_end(void);
/* Drops the sub-files kept for ctx's reads (when the file that uses them is closed);
 * whole small files stay in the store's cache for cache_ttl. */
void vh_vfd_forget(vd_ctx *ctx);
/* Makes the first requests for urls (sub-files about to be opened, each already checked
 * with vh_url_check) at once, in parallel, for those not known yet: their opens then
 * take the answers instead of asking one after another. vh_vfd_prefetch_end drops the
 * answers no open took (call it before the next batch: they hold up to vtkhdf_prefix
 * bytes each). */
void vh_vfd_prefetch(vd_ctx *ctx, const char *const *urls, int n);
void vh_vfd_prefetch_end(vd_ctx *ctx);
/* How many of bytes [off, off + len) of the file behind obj (any id in it) are not held
 * (in its head or cached blocks), so that reading them would ask the server; 0 for a
 * file this driver does not read. */
int64_t vh_vfd_missing(hid_t obj, int64_t off, int64_t len);
/* How many bytes of that file were received (head and blocks), -1 for a file this
 * driver does not read. */
int64_t vh_vfd_read(hid_t obj);
/* The blocks holding bytes [off[i], off[i] + len[i]) of the file behind obj[i] that are
 * not held yet, fetched in one parallel round (runs of blocks coalesced; at most half a
 * file's block cache, 8 MiB, in all, the first ranges first): what reads that would each
 * wait for the one before need, asked for at once. 0, or -1 when a request failed (the reads that need
 * the bytes then ask again and report it). Nothing for a file this driver does not read. */
int vh_vfd_want(const hid_t *obj, const int64_t *off, const int64_t *len, int n);
/* 1 when url is known through ctx for a file still open (opened, or its whole bytes
 * cached): it exists, no need to ask the server again; -1 when it is known not to exist;
 * 0 not known. */
int vh_vfd_known(vd_ctx *ctx, const char *url);
/* Why the driver's last open or read failed on this thread ("" if it did not), and its
 * code (VD_NOTFOUND: the server said the file is not there). */
const char *vh_vfd_last_error(void);
vd_code vh_vfd_last_code(void);
/* Whether that failure is a fact about the file: the server said it is not there (404,
 * 410) or refused it for good (any other 4xx but 408 and 429: 401, 403, ...), or it is
 * empty, or its name was never asked for (not a URL, another host). 0 when it says
 * nothing of the file, so a read must fail with vh_vfd_last_error(): a fault in transit
 * (a reset, a timeout), a 5xx, 408 or 429 after the retries, an answer vdsql refused (a
 * wrong Content-Range, a short or over-long body), no memory. */
int vh_vfd_last_fact(void);
/* The URL the driver opens for url, a name HDF5 composed from the main file's URL base:
 * base's ?query carried (vd_url_carry_query), and when that query holds a '/' (HDF5 then
 * joins sub-file names after it, inside the query) the name put back next to the main
 * file (vd_url_sibling). malloc'd. */
char *vh_vfd_derived(const char *base, const char *url);
/* Whether s names a remote object (the store decides: vd_store_is_remote). */
int vh_is_url(const char *s);
/* The URL in a name HDF5 hands the driver: the name itself, or what follows HDF5's
 * "<current directory>/" prefix; NULL when the name holds none (or another shape). */
const char *vh_vfd_url(const char *name);

/* The rule for every sub-file of a remote main file (base): url must be a well-formed
 * http(s) URL (no URL inside it, nothing joined after a ?query) that vd_url_allowed
 * accepts: the same scheme, host and port as base, or a host of
 * vdsql_config('allowed_hosts'). A URL that breaks it is never requested; the error
 * names both URLs, redacted. */
vd_code vh_url_check(vd_ctx *ctx, const char *base, const char *url, vd_err *err);

/* s as it may be shown (in a result column or an error): every URL in it through
 * vd_url_redact (no userinfo, no query), also a URL inside a name ("h/http://u:p@h/x"). */
void vh_show(const char *s, char *out, size_t n);
char *vh_shown(const char *s); /* the same, malloc'd (NULL for NULL or no memory) */
/* The same for a message: a URL ends at a blank or a quote there, the text after it
 * stays. */
void vh_show_text(const char *s, char *out, size_t n);

#endif
