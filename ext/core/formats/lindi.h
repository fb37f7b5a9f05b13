/* LINDI tar archives (shared/spec/lindi.md): the .tar_entry.json / .tar_index.json
 * documents, lindi's padding growth rule, and opening an archive's index through the
 * store with as few requests as possible. */
#ifndef VD_LINDI_H
#define VD_LINDI_H

#include <stdint.h>

#include "../vd_buf.h"
#include "../vd_ctx.h"
#include "../vd_err.h"

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
} lindi_index;

vd_code lindi_parse_entry(const char *text, size_t len, const char *where, int64_t *o, int64_t *d, int64_t *s,
                          vd_err *err);
/* Parses the index and checks it against the entry the way lindi's opener does, and
 * that no name is listed twice. On failure ix is left empty (freed). */
vd_code lindi_parse_index(const char *text, size_t len, const char *where, lindi_index *ix, vd_err *err);
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
 * large index is never held whole; *len gets its length. */
typedef vd_code (*lindi_sink)(void *ctx, const void *p, size_t n, vd_err *err);
vd_code lindi_stream_index(const lindi_file *files, int n, lindi_sink sink, void *ctx, int64_t *len, vd_err *err);
void lindi_json_string(vd_buf *out, const char *s); /* a JSON string literal, non-ASCII as \u escapes */
/* Padded size of a new member for a JSON text of len bytes: 8192 * 2^k >= 4 * len. */
int64_t lindi_grow(int64_t len);

/* The index of the archive at url. Costs one range request (a prefix holding entry and
 * index) when the index sits near the start, a few more otherwise; cached. */
vd_code lindi_open(vd_ctx *ctx, const char *url, lindi_index *ix, vd_err *err);
/* Forget cached documents of an archive (after a write). */
void lindi_invalidate(vd_ctx *ctx, const char *url);

#endif
