/* The LINDI writer's journal (see lindi_writer.c and docs/lindi.md, "How writes stay
 * safe"): what it records, its text, and every check recovery makes before it acts on
 * one. Pure functions over bytes, so the parser is fuzzed (tests/fuzz/fuzz_journal.c). */
#ifndef VD_LINDI_JOURNAL_H
#define VD_LINDI_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "vd_buf.h"
#include "vd_err.h"
#include "lindi.h"

typedef struct lindi_trash_step {
  int64_t o;       /* header offset of a member to trash */
  int64_t dash;    /* bytes of its data to overwrite with '-' */
  char name[300];  /* its .trash/ name */
} lindi_trash_step;

typedef struct lindi_journal {
  int64_t end;                                  /* E: where the end-of-archive marker began */
  int64_t gen;                                  /* the generation the transaction began from */
  unsigned char entry_before[LINDI_ENTRY_SIZE]; /* .tar_entry.json as the transaction found it */
  /* written just before the commit point (a journal without them is a BEGIN's) */
  int has_commit;
  int64_t commit_at, new_end, revive;           /* revive: header to rename back to the index, -1 none */
  unsigned char *commit;                        /* the commit write's bytes, at commit_at */
  size_t commit_len;
  unsigned char hold[1024];                     /* the bytes for [E, E+1024), tar's commit point */
  int has_entry;                                /* in-place commit: the entry to write after it */
  unsigned char entry[LINDI_ENTRY_SIZE];
  lindi_trash_step *trash;
  int ntrash;
} lindi_journal;

/* The journal's text: JSON naming the archive file (dev, ino), then a line
 * "sha256:<hex of the JSON>". */
vd_code lindi_journal_format(const lindi_journal *j, uint64_t dev, uint64_t ino, vd_buf *out, vd_err *err);

/* Reads text as a journal of the file (dev, ino) that is size bytes long: NULL when it
 * is one (out filled, to be freed), else why it is not (a phrase for the one error
 * wording the writer makes of it). */
const char *lindi_journal_parse(const char *text, size_t n, uint64_t dev, uint64_t ino, int64_t size,
                                lindi_journal *out);
void lindi_journal_free(lindi_journal *j);

#endif
