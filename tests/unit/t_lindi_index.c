/* The streaming .tar_index.json reader (formats/lindi/lindi_index.c): what it accepts and the
 * one wording of each fault, with the byte offset counted by hand from the texts below;
 * one byte at a time gives what the whole text gives; the source is asked only until the
 * JSON value ends; a packed index answers lookups like the one it was made from. */
#include <string.h>

#include "formats/lindi/lindi.h"
#include "tap.h"

#define ENTRY "{\"d\": 512, \"n\": \".tar_entry.json\", \"o\": 0, \"s\": 1024}"
#define INDEX "{\"d\": 2048, \"n\": \".tar_index.json\", \"o\": 1536, \"s\": 8192}"

typedef struct src {
  const char *p;
  size_t n, step;
  int calls;
} src;

static vd_code more(void *ctx, const unsigned char **p, size_t *n, vd_err *err) {
  src *s = ctx;
  size_t k = s->n < s->step ? s->n : s->step;
  *p = (const unsigned char *)s->p, *n = k;
  s->p += k, s->n -= k;
  s->calls++;
  return VD_OK;
}

/* Parses text in pieces of step bytes; the error message or "" into msg. */
static vd_code parse(const char *text, size_t step, lindi_index *ix, char *msg, int64_t *tl, int *calls) {
  vd_err err = {0};
  memset(ix, 0, sizeof *ix);
  ix->io = 1536, ix->id = 2048, ix->is = 8192;
  src s = {text, strlen(text), step, 0};
  vd_code rc = lindi_read_index(more, &s, (int64_t)strlen(text), "ix", ix, tl, &err);
  strcpy(msg, rc ? err.msg : "");
  if (calls) *calls = s.calls;
  return rc;
}

static void fault(const char *text, const char *want) {
  lindi_index ix;
  char m1[1024], m2[1024];
  vd_code r1 = parse(text, 1 << 20, &ix, m1, NULL, NULL), r2 = parse(text, 1, &ix, m2, NULL, NULL);
  ok(r1 == VD_INVALID && r2 == VD_INVALID && strcmp(m1, want) == 0 && strcmp(m2, want) == 0, "%s", want);
  if (strcmp(m1, want) || strcmp(m2, want)) diag("got: %s | %s", m1, m2);
}

int main(void) {
  lindi_index ix;
  char msg[1024];
  int64_t tl = 0;
  int calls = 0;

  /* lindi's own layout, extra keys and values skipped, 2.0 and 1e3 as integers, the
   * first of two equal keys counts, a second "files" is ignored */
  const char *good = "{\"x\": [1, {\"a\": \"\\u00e9\\ud83d\\ude00\"}, -0.5e3, true, null, []], \"files\": [" ENTRY
                     ", " INDEX ", {\"n\": \"b\\/\\u00e9\", \"n\": 7, \"o\": 1e4, \"d\": 10752.0, \"s\": 0, \"z\": {}}],"
                     " \"files\": 5}";
  for (size_t step = 1; step <= 4096; step *= 8) {
    vd_code rc = parse(good, step, &ix, msg, &tl, NULL);
    ok(rc == VD_OK && ix.n == 3 && strcmp(ix.files[2].name, "b/\xc3\xa9") == 0 && ix.files[2].o == 10000 &&
           ix.files[2].d == 10752 && ix.files[2].s == 0 && tl == (int64_t)strlen(good),
       "pieces of %zu bytes: 3 entries, escapes decoded, 1e4 and 10752.0 as integers %s", step, msg);
    lindi_index_free(&ix);
  }

  /* the source is asked only until the value ends: padding and what follows are not read */
  char padded[2048];
  snprintf(padded, sizeof padded, "{\"files\": [%s, %s]}%*s#garbage", ENTRY, INDEX, 400, "");
  vd_code rc = parse(padded, 16, &ix, msg, &tl, &calls);
  size_t value_end = strlen(padded) - 400 - 8;
  ok(rc == VD_OK && ix.n == 2 && tl == (int64_t)value_end,
     "an index followed by padding and garbage: read up to the end of its value (text length %lld)", (long long)tl);
  ok(calls == (int)((value_end + 15) / 16), "the source was asked %d times for %zu bytes of JSON in 16-byte pieces",
     calls, value_end);
  lindi_index_free(&ix);

  /* a packed index: the same entries and lookups, shared by a borrower */
  parse(good, 7, &ix, msg, NULL, NULL);
  vd_blob *b = lindi_index_pack(&ix);
  lindi_index other = {0};
  lindi_index_borrow(&other, b);
  const lindi_file *f = lindi_find(&other, "b/\xc3\xa9");
  ok(b && ix.shared && other.n == 3 && f && f->d == 10752 && lindi_find(&ix, ".tar_index.json") == &ix.files[1],
     "a packed index and its borrower answer lookups");
  ok(lindi_index_add(&other, "c", 20000, 20512, 1) == 0 && other.n == 4 && lindi_find(&other, "c") &&
         lindi_find(&other, "b/\xc3\xa9") && strcmp(ix.files[2].name, "b/\xc3\xa9") == 0,
     "adding to a borrowed index copies its list, the blob is unchanged");
  lindi_index_free(&other);
  lindi_index_free(&ix);
  vd_blob_unref(b);

  /* faults: one wording each; offsets count from the first byte of the text (0), checked
   * with Python's str.index on the same texts; a malformed text wins over a bad entry
   * before it, as when a DOM parse came first */
  fault("", "ix: empty document");
  fault("   ", "ix: malformed JSON near byte 3 of 3");
  fault("{\"files\": [#]}", "ix: malformed JSON near byte 11 of 14");
  fault("{\"files\": [" ENTRY, "ix: malformed JSON near byte 64 of 64");
  fault("{\"files\": 01}", "ix: malformed JSON near byte 11 of 13");
  fault("{\"files\": [\"a\tb\"]}", "ix: malformed JSON near byte 13 of 18");
  fault("{\"files\": [\"\\ud800x\"]}", "ix: malformed JSON near byte 18 of 22");
  fault("{\"files\": [\"\\u12g4\"]}", "ix: malformed JSON near byte 16 of 21");
  fault("[1, 2]", "ix: .tar_index.json has no \"files\" list");
  fault("{\"files\": {}}", "ix: .tar_index.json has no \"files\" list");
  fault("{\"files\": [3]}", "ix: files[0] is not an object");
  fault("{\"files\": [{\"o\": 0, \"d\": 512, \"s\": 1}]}", "ix: files[0] has no \"n\"");
  fault("{\"files\": [{\"n\": 1, \"o\": 0, \"d\": 512, \"s\": 1}]}", "ix: files[0]: \"n\" must be a string");
  fault("{\"files\": [{\"n\": \"a\", \"o\": 0.5, \"d\": 512, \"s\": 1}]}", "ix: files[0]: \"o\" must be an integer");
  fault("{\"files\": [{\"n\": \"a\", \"o\": 9000000000000001, \"d\": 512, \"s\": 1}]}",
        "ix: files[0]: \"o\" must be an integer");
  fault("{\"files\": [{\"n\": \"a\", \"o\": 0, \"d\": \"512\", \"s\": 1}]}", "ix: files[0]: \"d\" must be an integer");
  fault("{\"files\": [{\"n\": \"a\\u0000b\", \"o\": 0, \"d\": 512, \"s\": 1}]}", "ix: files[0]: \"n\" holds a NUL byte");
  fault("{\"files\": [{\"n\": \"a\", \"o\": 0, \"d\": 511, \"s\": 1}]}", "ix: files[0] (a) has impossible offsets");
  fault("{\"files\": [{\"n\": \"a\", \"o\": 0, \"d\": 511, \"s\": 1}, #]}", "ix: malformed JSON near byte 49 of 52");
  fault("{\"files\": [" ENTRY ", " INDEX ", " ENTRY "]}",
        "ix: the index lists \".tar_entry.json\" twice (files[0] and files[2])");
  fault("{\"files\": [" INDEX "]}", "ix: the index does not list .tar_entry.json at 0/512/1024");
  fault("{\"files\": [" ENTRY "]}", "ix: the index's own entry disagrees with .tar_entry.json");

  /* nesting: cJSON's limit of 1000 containers, the index's object counted */
  static char deep[4096];
  int k = snprintf(deep, sizeof deep, "{\"files\": [" ENTRY ", " INDEX "], \"d\": ");
  memset(deep + k, '[', 999), memset(deep + k + 999, ']', 999);
  strcpy(deep + k + 1998, "}");
  ok(parse(deep, 5, &ix, msg, NULL, NULL) == VD_OK, "1000 nested containers are read %s", msg);
  lindi_index_free(&ix);
  memset(deep + k, '[', 1000), memset(deep + k + 1000, ']', 1000);
  strcpy(deep + k + 2000, "}");
  char want[128];
  snprintf(want, sizeof want, "ix: malformed JSON near byte %d of %zu", k + 999, strlen(deep));
  fault(deep, want);
  done_testing();
}
