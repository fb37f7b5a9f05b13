/* The commit record of OpenVDS layer writes (openvds_commit.h says how the protocol uses
 * it): its JSON, who holds it and whether that writer still lives, and its conditional
 * reads and writes. Private to formats/openvds/ (openvds_record.c, openvds_commit.c). */
#ifndef VD_OPENVDS_RECORD_H
#define VD_OPENVDS_RECORD_H

#include "openvds_commit.h"

typedef struct owner {
  char host[128], boot[48];
  char pidns[48];           /* the PID namespace the pid is a number of ("pid:[inode]") */
  long pid;
  unsigned long long start; /* the process's start time in clock ticks since boot (/proc) */
} owner;

/* The record as read or about to be written. */
typedef struct record {
  int present, commit;  /* a record exists; it holds a commit (else it is free) */
  char etag[128];
  char tx[17];
  int64_t gen, expires;
  owner who;
  char status_etag[128];
  vds_counts counts;
  int64_t *dir; /* pairs: page, stored name */
  int ndir;
  vds_plan_chunk *chunks;
  int n;
  int repair;   /* held by vds_repair (no plan) */
} record;

/* rec_whose: held by this process for tx, held for it by another writer, anything else */
enum { REC_MINE, REC_TAKEN, REC_OTHER };

void rec_free(record *r);
int64_t rec_now_ms(void);
/* Marks tx as committing in this process now (on) or no longer (a record of this
 * process whose transaction is not running belongs to a commit that failed). */
void rec_running(const char *tx, int on);
/* Whether the writer holding r may still be at work (its process, or its lease). */
int rec_live(const record *r);
int rec_whose(const record *r, const char *tx);
/* <dataset>/.vdsql/<layer>/commit (malloc'd). */
char *rec_url(const char *url, const char *layer);
/* The record as it is now (never from the cache); r->present 0 when there is none. */
vd_code rec_read(vd_ctx *ctx, const char *rurl, record *r, vd_err *err);
/* Writes r over the record read with etag r->etag (create-only when there was none),
 * r->commit saying which state; VD_PRECONDITION when another writer wrote it since.
 * r->etag becomes the new one. */
vd_code rec_write(vd_ctx *ctx, const char *rurl, record *r, vd_err *err);

/* The layer read afresh under the record (openvds_commit.c): LayerStatus read now with
 * its etag, the dataset parsed with it, its layer, and a page layer over it whose pages
 * vds_pages_set reads fresh (never from the cache), with their etags. */
typedef struct fresh {
  vds_dataset ds;
  const vds_layer *l;
  vds_pages *pages;
} fresh;
vd_code fresh_open(vd_ctx *ctx, const char *url, const char *layer, fresh *f, vd_err *err);
void fresh_close(fresh *f);

#endif
