/* lindi.json's refs as rows (lindi_refs.c): a reader over an archive's or a standalone
 * .lindi.json's refs (streamed) or over a writer's tree, and the refs a writer stores.
 * Everything about a ref's bytes is here; a front end maps these to columns. */
#ifndef VD_LINDI_REFS_H
#define VD_LINDI_REFS_H

#include <stddef.h>
#include <stdint.h>

#include "lindi.h"
#include "lindi_writer.h"

struct cJSON;

/* Largest offset or size a ref may hold: JSON numbers are doubles (lindi's are Python
 * ints, but every reader in between parses doubles), exact up to 2^53. */
#define LINDI_REF_MAX 9007199254740992.0

/* What a ref's value is: [target, offset, size], a string (text or "base64:..."), or
 * any other JSON value. */
enum { LINDI_KIND_REF, LINDI_KIND_TEXT, LINDI_KIND_BASE64, LINDI_KIND_JSON };

typedef struct lindi_refs lindi_refs;

/* The refs of url's lindi.json (an archive, or the file itself when it is a .lindi.json),
 * streamed; positioned on the first. *out is set even on failure (lindi_refs_close it). */
vd_code lindi_refs_open(vd_ctx *ctx, const char *url, lindi_refs **out, vd_err *err);
/* The refs of a writer's tree as they are now, staged changes included; the writer's
 * scan lasts until lindi_refs_close. */
vd_code lindi_refs_open_writer(vd_ctx *ctx, lindi_writer *w, lindi_refs **out, vd_err *err);
vd_code lindi_refs_next(lindi_refs *r, vd_err *err);
int lindi_refs_eof(const lindi_refs *r);
int64_t lindi_refs_row(const lindi_refs *r); /* 0, 1, ... in document order */
void lindi_refs_close(lindi_refs *r);

/* The current ref. Nothing is decoded before it is asked for. */
const char *lindi_refs_key(const lindi_refs *r);
int lindi_refs_is_ref(const lindi_refs *r); /* [target, offset, size]: nothing decoded */
vd_code lindi_refs_kind(lindi_refs *r, int *kind, vd_err *err); /* LINDI_KIND_* (a string is decoded) */
/* An inline value, malloc'd: a string's bytes (*text when they are UTF-8 without NUL),
 * a base64 string decoded (a blob), other JSON as compact text with its literals as
 * written; *p NULL for a ref. */
vd_code lindi_refs_value(lindi_refs *r, unsigned char **p, size_t *n, int *text, vd_err *err);
/* A ref's target with its {{templates}} expanded (valid until the next row), and its
 * offset (i 1) or size (i 2): an integer from 0 to 2^53, else an error naming the ref. */
vd_code lindi_refs_target(lindi_refs *r, const char **url, vd_err *err);
vd_code lindi_refs_number(lindi_refs *r, int i, int64_t *out, vd_err *err);
/* For a target "./name" in an archive: the member's name (NULL otherwise), and the
 * offset in the archive of byte off of it (0 when no such member). */
const char *lindi_refs_member(const lindi_refs *r, const char *url);
int lindi_refs_archive_offset(const lindi_refs *r, const char *url, int64_t off, int64_t *out);

/* The sizes of n (at most LINDI_PROBE_MAX) objects that refs name, one HEAD each, in
 * parallel where the store can: size[i] (-1 unknown), rc[i] and errs[i] per URL. */
#define LINDI_PROBE_MAX 64
void lindi_probe_sizes(vd_ctx *ctx, char *const *urls, int n, int64_t *size, vd_code *rc, vd_err *errs);

/* What a writer stores, as lindi stores it. An inline value: bytes all below 0x80 as a
 * string, others (and text starting with "base64:") as base64, JSON (as_json) parsed
 * with its literals kept; NULL with err set (or out of memory, err unset). */
struct cJSON *lindi_ref_inline(const void *bytes, size_t n, int as_json, vd_err *err);
/* [target, offset, size] for url, or for member of w's archive ("./member"); has_range:
 * off and size were given as integers from 0 to 2^53. The range must lie inside the
 * member. VD_CONSTRAINT naming the target; *val NULL when out of memory. */
vd_code lindi_ref_target(lindi_writer *w, const char *url, const char *member, int has_range, int64_t off, int64_t size,
                         struct cJSON **val, vd_err *err);
/* key = val (always taken) in w's refs: an existing key is VD_CONSTRAINT unless replace;
 * *rid the ref's position. lindi_refs_remove drops the ref at position rid. */
vd_code lindi_refs_put(lindi_writer *w, const char *key, struct cJSON *val, int replace, int64_t *rid, vd_err *err);
vd_code lindi_refs_remove(lindi_writer *w, int64_t rid, vd_err *err);

#endif
