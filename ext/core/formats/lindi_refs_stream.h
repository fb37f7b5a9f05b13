/* lindi.json's refs read as a stream: one ref at a time, the text fetched in growing
 * ranges and parsed as it arrives, never the padding after it (see lindi_refs_stream.c). */
#ifndef VD_LINDI_REFS_STREAM_H
#define VD_LINDI_REFS_STREAM_H

#include <stdint.h>

#include "../vd_buf.h"
#include "../vd_err.h"
#include "../util/strmap.h"

/* Appends up to len bytes of the text from offset off to out; sets *eof when there are
 * none past what it appended (the member or the file ends). */
typedef vd_code (*lrs_read_fn)(void *ud, int64_t off, int64_t len, vd_buf *out, int *eof, vd_err *err);

enum { LRS_STRING, LRS_REF, LRS_JSON };

/* The current ref: spans into the stream's window, valid until the next lrs_next. */
typedef struct lrs_row {
  const char *key;      /* decoded, NUL-terminated (a \u0000 in a key ends it, as in cJSON) */
  int kind;             /* LRS_STRING, LRS_REF ([string, number, number]), LRS_JSON (anything else) */
  const char *v;        /* the value's text */
  size_t vn;
  const char *el[3];    /* a ref's three elements' text */
  size_t eln[3];
  int64_t at;           /* the value's offset in the text */
} lrs_row;

typedef struct lrs {
  lrs_read_fn read;
  void *ud;
  void (*ud_free)(void *ud);
  char where[700];
  int64_t max;          /* the largest single value held (max_alloc) */
  vd_buf win;           /* text bytes [base, base + win.len) */
  int64_t base, fetched;
  size_t mark;          /* where the next step starts in win */
  int eof, phase, templates_only, refs_seen;
  int64_t resume;       /* templates_only: the text offset to start at (inside refs) */
  vd_buf key;
  lrs_row row;
  /* templates: name -> position; the first of a repeated name wins, a value that is no
   * string is kept as NULL (lindi leaves {{name}} as written for both) */
  int templates_seen, nt, tcap;
  vd_strmap tmap;
  char **tval;
  size_t *tlen;
} lrs;

/* where: the name errors give (the redacted URL, "lindi.json"). Reads nothing yet. */
void lrs_init(lrs *s, lrs_read_fn read, void *ud, const char *where, int64_t max_alloc);
void lrs_free(lrs *s);
/* The stream of an archive's lindi.json (member) or of a .lindi.json (member NULL) at
 * url: what the archive's prefix (read to find the index, cached) holds costs nothing. */
struct vd_ctx;
struct lindi_file;
vd_code lrs_open_url(lrs *s, struct vd_ctx *ctx, const char *url, const struct lindi_file *member,
                     const char *where, vd_err *err);
/* The next ref into *row, or *row NULL after the last (the whole document was read, up
 * to its closing brace and no further). Fails, naming where and the byte offset, on text
 * that is not JSON (Python's: NaN and Infinity are numbers), a truncated one, a value
 * larger than max_alloc, or a document without a "refs" object. */
vd_code lrs_next(lrs *s, const lrs_row **row, vd_err *err);
/* The templates, read when needed: when they come after "refs" (lindi sorts the keys, so
 * they do), a second stream skips the rest of refs from the current ref on to reach them,
 * once per cursor. The value for name (NUL-terminated) or NULL; *n its length. */
vd_code lrs_templates(lrs *s, vd_err *err);
const char *lrs_template(const lrs *s, const char *name, size_t *n);

/* Decodes a JSON string literal (quotes included, valid: from a row) into out, with a
 * NUL after out->len. -1 out of memory. */
int lrs_decode(const char *lit, size_t n, vd_buf *out);
/* A JSON value's text without the whitespace between tokens (the value of kind json). */
int lrs_compact(const char *v, size_t n, vd_buf *out);

#endif
