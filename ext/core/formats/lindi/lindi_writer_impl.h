/* The LINDI writer's insides, shared by its files (private to formats/lindi/), in the
 * order they stand on each other: lindi_writer_io.c at the bottom, then _load.c, then
 * _journal.c, then _commit.c, and lindi_writer.c on top, which also sets out the commit
 * protocol they carry out together. */
#ifndef VD_LINDI_WRITER_IMPL_H
#define VD_LINDI_WRITER_IMPL_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "lindi_journal.h"
#include "lindi_writer.h"
#include "util/strmap.h"

struct cJSON;

typedef struct trash_item {
  int pos;
  char *name;          /* the member's name before trashing */
  char newname[300];
  int64_t o, s;
  int64_t dash;        /* bytes overwritten with '-': all of a member; an index's JSON text only */
} trash_item;

typedef struct savepoint {
  int n, ntrash;
  int64_t tail;
  int refs_saved, refs_dirty;  /* refs copied on the first change after the savepoint */
  struct cJSON *refs;
} savepoint;

struct lindi_writer {
  vd_ctx *ctx;
  char *path, *journal;
  int fd, locked, in_tx, dirty;
  double refused_at;  /* when a lock wait last ran out (CLOCK_MONOTONIC s; 0: never): see lw_lock */
  lindi_file *files;
  int n, cap, base_n;
  vd_strmap map;
  int64_t end, tail;           /* committed end E (start of the zero blocks); next append */
  unsigned char hold[1024];    /* bytes destined for [E, E+1024), written last */
  int64_t idx_text_len;        /* length of the committed index's JSON text */
  trash_item *trash;
  int ntrash, trashcap;
  savepoint sp[64];
  int nsp;
  unsigned char entry_seen[LINDI_ENTRY_SIZE];
  int64_t size_seen;
  dev_t dev_seen;              /* identity of the archive file, checked and named in journals */
  ino_t ino_seen;
  struct timespec mtime_seen;
  int64_t gen;                 /* the entry's vdsql_gen for the state held */
  int absent;                  /* no archive yet: it is created at the first BEGIN */
  int for_write;               /* the state held was read under the lock, fit to write from */
  struct cJSON *refs_doc;             /* lindi.json, parsed on first use */
  int64_t refs_text_len;       /* length of its JSON text on disk (padding excluded) */
  int64_t new_idx_len, new_refs_len; /* text lengths written by the commit under way, -1 none */
  lindi_file spare;            /* the index trashed by our last commit: dead space for the next */
  int64_t spare_dashed;        /* bytes of it overwritten with '-' */
  int64_t revive_o;            /* commit under way: header at this offset becomes the index, -1 none */
  int64_t trashed_idx_o, trashed_idx_d, trashed_idx_s, trashed_idx_len;
  unsigned char *wb;           /* appends not yet written: contiguous bytes from wb_off */
  size_t wb_len;
  int64_t wb_off;
  int refs_dirty;
  int repairing;               /* lindi_repair: the headers may list no live index to trash */
  int refs;                    /* tables sharing this writer */
  int scans;                   /* cursors open on it */
  lindi_writer *next;          /* in ctx->lindi_writers */
};

/* file I/O, test crash hooks and the in-memory member list (lindi_writer_io.c) */
void lw_crashpoint(int k);
void lw_write_step(void);
void lw_commit_begin(void);   /* a commit starts: write kills count from here */
void lw_commit_abandon(void); /* ... ends without finishing */
void lw_commit_done(void);    /* ... finished: VDSQL_COMMIT_WRITES records its writes */
vd_code lw_sys_fail(vd_err *err, const char *path, const char *what);
vd_code lw_pw(int fd, const void *p, size_t n, int64_t off, const char *path, vd_err *err);
vd_code lw_pr(int fd, void *p, size_t n, int64_t off, const char *path, vd_err *err);
vd_code lw_sync_fd(int fd, const char *path, vd_err *err);
void lw_sync_dir(const char *path);
vd_code lw_flush_wb(lindi_writer *w, vd_err *err);
vd_code lw_wr(lindi_writer *w, int64_t off, const void *p, size_t n, vd_err *err);
int lw_add_file(lindi_writer *w, const char *name, int64_t o, int64_t d, int64_t s);
void lw_clear_state(lindi_writer *w);
int lw_reserved(const char *name);
vd_code lw_add_trash(lindi_writer *w, int pos, vd_err *err);
void lw_trash_name(trash_item *t);
void lw_drop_savepoints(lindi_writer *w, int from);

/* reading an archive into the writer, and the lock (lindi_writer_load.c) */
vd_code lw_find_end(lindi_writer *w, const lindi_file *files, int n, int64_t size, int for_write, int64_t *end, vd_err *err);
void lw_remember_file(lindi_writer *w, const struct stat *st);
int lw_file_changed(const lindi_writer *w, const struct stat *st, const unsigned char *entry);
vd_code lw_read_index(lindi_writer *w, const unsigned char *head, int64_t size, lindi_index *ix, int64_t *len,
                      vd_err *err);
vd_code lw_load(lindi_writer *w, int for_write, vd_err *err);
vd_code lw_create_empty(const char *path, vd_err *err);
char *lw_canonical(const char *path);
int lw_exists_nofollow(const char *path);
vd_code lw_open_file(lindi_writer *w, vd_err *err);
vd_code lw_open_unloaded(vd_ctx *ctx, const char *url, lindi_writer **out, vd_err *err); /* lindi_writer.c */
vd_code lw_load_unlocked(lindi_writer *w, vd_err *err);
vd_code lw_lock(lindi_writer *w, vd_err *err);
void lw_unlock(lindi_writer *w);

/* the journal: written before the commit point, rolled forward or back after a crash (lindi_writer_journal.c) */
vd_code lw_write_journal(lindi_writer *w, lindi_journal *j, vd_err *err);
void lw_drop_journal(lindi_writer *w);
vd_code lw_cut_back(lindi_writer *w, int64_t end, vd_err *err);
vd_code lw_finish(lindi_writer *w, const lindi_journal *j, vd_err *err);
vd_code lw_recover(lindi_writer *w, vd_err *err);

#endif
