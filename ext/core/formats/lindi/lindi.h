/* LINDI tar archives (shared/spec/lindi.md): the .tar_entry.json / .tar_index.json
 * documents, lindi's padding growth rule, and opening an archive's index through the
 * store with as few requests as possible. */
#ifndef VD_LINDI_H
#define VD_LINDI_H

#include <stdint.h>

#include "vd_buf.h"
#include "vd_ctx.h"
#include "vd_err.h"

#define LINDI_ENTRY_NAME ".tar_entry.json"
#define LINDI_INDEX_NAME ".tar_index.json"
#define LINDI_JSON_NAME "lindi.json"
#define LINDI_ENTRY_SIZE 1024
#define LINDI_INITIAL_SIZE 8192

typedef struct lindi_file {
  char *name;
  int64_t o, d, s; /* header offset, data offset, data size */
} lindi_file;

typedef struct lindi_index {
  int n, cap;
  lindi_file *files;      /* in index order */
  int *by_name;           /* positions sorted by name, for lookups */
  int64_t io, id, is;     /* the index member itself, from the entry */
  struct lindi_names *names; /* the names' arena (lindi_index.c) */
  vd_blob *packed;        /* names (and, while shared, files and by_name) live in it */
  int shared;             /* files and by_name point into packed */
} lindi_index;

vd_code lindi_parse_entry(const char *text, size_t len, const char *where, int64_t *o, int64_t *d, int64_t *s,
                          vd_err *err);
/* Parses the index and checks it against the entry the way lindi's opener does, and
 * that no name is listed twice. On failure ix is left empty (freed). */
vd_code lindi_parse_index(const char *text, size_t len, const char *where, lindi_index *ix, vd_err *err);
/* The same from a source that hands the text one piece at a time (*n 0: no more; a piece
 * stays valid until the next call), read only until the JSON value is complete: neither
 * the text nor a tree of it is ever held whole (lindi_index.c). total is the size errors
 * name ("near byte N of total"); *text_len (may be NULL) gets the length of the value. */
typedef vd_code (*lindi_more)(void *ctx, const unsigned char **p, size_t *n, vd_err *err);
vd_code lindi_read_index(lindi_more more, void *mctx, int64_t total, const char *where, lindi_index *ix,
                         int64_t *text_len, vd_err *err);
/* The index lists .tar_entry.json where it is and itself where the entry says. */
vd_code lindi_index_check(const lindi_index *ix, const char *where, vd_err *err);
/* Moves a sorted index into one compact blob (returned, a new reference) that ix then
 * uses; lindi_index_borrow lets another index use the same blob (as the cache hands it
 * out) without copying. NULL when out of memory (ix unchanged). */
vd_blob *lindi_index_pack(lindi_index *ix);
void lindi_index_borrow(lindi_index *ix, vd_blob *packed);
void lindi_index_free(lindi_index *ix);
int lindi_index_add(lindi_index *ix, const char *name, int64_t o, int64_t d, int64_t s);
void lindi_index_sort(lindi_index *ix); /* rebuilds by_name after changes */
const lindi_file *lindi_find(const lindi_index *ix, const char *name);

/* JSON as lindi writes it: 2-space indent, sorted keys, ASCII only. */
vd_code lindi_format_entry(int64_t o, int64_t d, int64_t s, unsigned char out[LINDI_ENTRY_SIZE], vd_err *err);
/* vdsql also records in the entry the commit generation ("vdsql_gen", raised by every
 * commit, so the next writer sees that the archive changed even when only lindi.json or
 * the index was rewritten in place) and the dead region of the index it last trashed
 * ("vdsql_spare": o, d, s and t, the bytes of it dashed) so that a later writer can put
 * the next index there; lindi reads only "index" and drops both keys when it rewrites. */
vd_code lindi_format_entry_spare(int64_t o, int64_t d, int64_t s, const int64_t spare[4], int64_t gen,
                                 unsigned char out[LINDI_ENTRY_SIZE], vd_err *err);
/* 0 when a spare is recorded; *gen gets the generation (0 when absent). */
int lindi_parse_spare(const char *text, size_t len, int64_t spare[4], int64_t *gen);
vd_code lindi_format_index(const lindi_file *files, int n, vd_buf *out, vd_err *err);
/* The same text handed to sink in pieces of about 1 MiB (sink NULL: only count), so a
 * large index is never held whole; *len gets its length. A million members take
 * seconds: vctx's cancel check is asked between pieces (VD_INTERRUPTED). */
typedef vd_code (*lindi_sink)(void *ctx, const void *p, size_t n, vd_err *err);
vd_code lindi_stream_index(vd_ctx *vctx, const lindi_file *files, int n, lindi_sink sink, void *ctx, int64_t *len,
                           vd_err *err);
/* Padded size of a new member for a JSON text of len bytes: 8192 * 2^k >= 4 * len. */
int64_t lindi_grow(int64_t len);

/* LINDI's JSON form, a standalone .lindi.json (the tar is its binary variant), told
 * from an archive by its bytes, not its name: no ustar header at 257 and the first
 * non-whitespace byte a '{' (a tar starts with a member name). p: the file's start. */
int lindi_is_json_form(const unsigned char *p, size_t n);
/* The one wording for asking a .lindi.json for tar members (VD_UNSUPPORTED). */
vd_code lindi_json_form_fail(vd_err *err, const char *where);
/* The first lindi_prefix bytes at url (fewer: the whole object), through the cache: what
 * lindi_open read; lindi_refs reads a .lindi.json, or a lindi.json member, from there on. */
vd_code lindi_prefix(vd_ctx *ctx, const char *url, vd_blob **out, vd_err *err);
/* The object's size as the prefix's answer gave it while the prefix is cached, else -1. */
int64_t lindi_size(vd_ctx *ctx, const char *url);
/* Parses lindi.json (either form) into a tree, keeping the scalars of "refs" exactly as
 * written (vd_pyjson_keep): a value is read and written back byte for byte. The writer's
 * copy; reading (lindi_refs) streams it instead (lindi_refs_stream.h). */
struct cJSON;
vd_code lindi_parse_refs(const char *text, size_t len, const char *where, struct cJSON **doc, vd_err *err);

/* The index of the archive at url. Fails with VD_UNSUPPORTED (lindi_json_form_fail) when
 * url holds LINDI's JSON form. Costs one range request (a prefix holding entry and
 * index) when the index sits near the start, a few more otherwise; cached. */
vd_code lindi_open(vd_ctx *ctx, const char *url, lindi_index *ix, vd_err *err);
/* Bytes [off, off + size) of member name of the archive at url (size < 0, or not
 * size_given: to the member's end) with one range request after the (cached) index:
 * VD_NOTFOUND for a member the index does not list, VD_INVALID for a range outside it
 * or an archive that ends inside it. out is the caller's (empty for size 0). */
vd_code lindi_read_member(vd_ctx *ctx, const char *url, const char *name, int64_t off, int64_t size, int size_given,
                          vd_buf *out, vd_err *err);
/* Forget cached documents of an archive (after a write). */
void lindi_invalidate(vd_ctx *ctx, const char *url);

#endif
