/* lindi.json's refs read as a stream: one ref at a time, the text fetched in growing
 * ranges and parsed as it arrives, never the padding after it (see lindi_refs_stream.c). */
#ifndef VD_LINDI_REFS_STREAM_H
#define VD_LINDI_REFS_STREAM_H

#include <stdint.h>

#include "vd_buf.h"
#include "vd_err.h"
#include "util/strmap.h"

/* Appends up to len bytes of the text from offset off to out (more when the source has
 * read further ahead from there); sets *eof when there are none past what it appended
 * (the member or the file ends). */
typedef vd_code (*lrs_read_fn)(void *ud, int64_t off, int64_t len, vd_buf *out, int *eof, vd_err *err);
/* Where the text ends at most (*hi; -1 unknown): every byte from there to the source's
 * end is JSON whitespace (lindi's padding), found without reading it (lrs_text_end).
 * lo: where the text is known to go on to. */
typedef vd_code (*lrs_end_fn)(void *ud, int64_t lo, int64_t *hi, vd_err *err);
/* Reads len bytes (fewer at the source's end) at each of off[0..n) into out[i], in
 * parallel where the source can. */
typedef vd_code (*lrs_probe_fn)(void *ud, const int64_t *off, int n, int64_t len, vd_buf *out, vd_err *err);

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
  lrs_end_fn end;       /* optional: the tail's templates need it */
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
  /* templates taken from the text's tail ahead of the stream (lrs_templates): checked
   * against the top-level "templates" when the stream reaches it */
  int tail_tried, guessed, top_templates;
  int64_t guess_at;
  vd_buf guess;
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
 * they do), from a small window before the text's end (with an end callback), else by a
 * second stream that skips the rest of refs from the current ref on, once per cursor.
 * Templates from the tail are checked when the stream reaches the top-level "templates":
 * lrs_next fails there (or at the end) when they were not those. The value for name
 * (NUL-terminated) or NULL; *n its length. */
vd_code lrs_templates(lrs *s, vd_err *err);
const char *lrs_template(const lrs *s, const char *name, size_t *n);

/* Where the text ends at most, from lo on, in a source of size bytes whose tail is
 * whitespace: a search with rounds of parallel probes of plen bytes, until the end is
 * within settled bytes (see lindi_refs_src.c); progress (optional) hears after each
 * round where the text is known to go on to. hi is at least where the text ends when
 * no run of plen whitespace bytes lies between lo and that end. */
typedef vd_code (*lrs_progress_fn)(void *ud, int64_t lo, vd_err *err); /* after each round: text up to lo */
vd_code lrs_text_end(lrs_probe_fn probe, lrs_progress_fn progress, void *ud, int64_t lo, int64_t size, int64_t plen,
                     int64_t settled, int64_t *hi, vd_err *err);

/* Decodes a JSON string literal (quotes included, valid: from a row) into out, with a
 * NUL after out->len. -1 out of memory. */
int lrs_decode(const char *lit, size_t n, vd_buf *out);
/* A JSON value's text without the whitespace between tokens (the value of kind json). */
int lrs_compact(const char *v, size_t n, vd_buf *out);

#endif
