/* How a transaction's chunks become part of an OpenVDS layer all at once or not at all,
 * on stores that have no transactions (docs/openvds.md, "How writes stay whole").
 *
 * - While the transaction is open its chunk objects go to a staging folder no reader
 *   looks at: <dataset>/.vdsql/<layer>/<tx>/<chunk> (a chunk put again in the same
 *   transaction: <chunk>.<v>, never over a version a savepoint may return to). ROLLBACK
 *   deletes them.
 * - One commit record per layer, <dataset>/.vdsql/<layer>/commit, serialises the commits
 *   of every writer: it is "free" (or absent) or holds one writer's "commit". A writer
 *   reads it, reads LayerStatus and the pages it will change (fresh, never from the
 *   cache), decides the plan (conflicts of plain INSERTs, what each chunk's entry
 *   becomes, the counts), and writes the plan into the record with If-Match on the free
 *   record it read: that conditional write is the commit point, and it fails when any
 *   other writer committed since the record was read (its "free" record names its own
 *   transaction, so the etag always changes), in which case everything is read again.
 * - After the commit point the plan is carried out: staged objects copied to their keys
 *   (S3 CopyObject, Azure Copy Blob, a hard link on files), pages put, LayerStatus put,
 *   staging deleted, the record set free again. Every step can be done twice.
 * - A record left in "commit" by a writer that died is finished (rolled forward) by the
 *   next writer that opens or commits the layer, and by vds_repair: on the same machine
 *   as soon as the process is gone, from another machine once its lease (commit_lease
 *   seconds, renewed while copying) has run out.
 * A reader that looks between the commit point and the page writes sees a chunk's old
 * entry beside its new object, which fails as "inconsistent metadata for chunk <n>", or
 * either version: never samples of one version under the hash of another. */
#ifndef VD_OPENVDS_COMMIT_H
#define VD_OPENVDS_COMMIT_H

#include "openvds.h"
#include "openvds_pages.h"

enum { VDS_ON_ABORT = 0, VDS_ON_REPLACE = 1, VDS_ON_IGNORE = 2 }; /* a plain INSERT, OR REPLACE, OR IGNORE */

/* One chunk of a transaction. */
typedef struct vds_plan_chunk {
  int64_t chunk;
  unsigned char raw[8]; /* the new page entry */
  int64_t bytes;        /* the object's size; 0 for a constant chunk (no object) */
  int direct;           /* the object is at the chunk's key already, not staged: this
                           transaction put it there create-only (If-None-Match), when no
                           committed entry named the chunk (see vds_direct_clean) */
  int at_key;           /* an object of this transaction may be at the chunk's key that
                           the plan does not publish (a direct put replaced later in the
                           transaction, or a create-only put refused after a retry whose
                           first attempt may have landed) */
  int mode;             /* VDS_ON_*: what a chunk written meanwhile by another writer means */
  int skipped;          /* out: an OR IGNORE chunk that was written meanwhile, left as it is */
  int zero;             /* out: a constant replacing a data chunk: its key gets an empty object
                           with the constant's hash, as OpenVDS writes constants, so the stale
                           object can never be taken for the chunk again */
  int zero_staged;      /* out: that empty object is staged (it goes in place as a copy, fenced
                           like every other; ROLLBACK deletes it) */
  int v;                /* the staged object's version: 0 for a chunk's first put in the
                           transaction, then a per-transaction counter, so that a put after a
                           savepoint never overwrites the staged copy an outer level holds */
} vds_plan_chunk;

/* The staging URL of version v of chunk in transaction tx (malloc'd):
 * .vdsql/<layer>/<tx>/<chunk>, or <chunk>.<v> when v > 0. */
char *vds_stage_url(const char *url, const char *layer, const char *tx, int64_t chunk, int v);
/* A new transaction id: 16 random hex digits. */
vd_code vds_new_tx(char tx[17], vd_err *err);

/* Commits the chunks of tx (one entry per chunk, staged objects already uploaded) to
 * layer: returns once every step is done, by this writer or by one that took its commit
 * over when its lease ran out (waited for, at most lock_timeout). VD_CONSTRAINT (nothing
 * written) when a plain INSERT's chunk was written by another writer since, naming the
 * chunks. Once the commit point is passed *recorded is 1: a later failure leaves the
 * record for the next writer or vds_repair to finish, and the staging must then stay;
 * 2 when a failure leaves it unknown whether the commit point was passed (the record
 * could not be read back after its write went unanswered): the staging stays too. */
vd_code vds_commit(vd_ctx *ctx, const char *url, const char *layer, const char *tx, vds_plan_chunk *plan, int n,
                   int *recorded, vd_err *err);

/* Finishes a commit that a dead writer left in the layer's record (one GET when there
 * is none); a live writer's commit is left to it. */
vd_code vds_commit_recover(vd_ctx *ctx, const char *url, const char *layer, vd_err *err);

/* Deletes the given staged objects (ROLLBACK): parallel deletes, errors ignored (a
 * leftover is never taken for a chunk, and vds_repair removes it). */
void vds_stage_delete(vd_ctx *ctx, const char *url, const char *layer, const char *tx, const vds_plan_chunk *plan,
                      int n);

/* Takes back the objects of transaction tx that plan's chunks (those with direct or
 * at_key set) may have left at their keys and that no committed entry names
 * (openvds_direct.c): under the layer's commit record, against the pages as they are
 * then; a HEAD decides where the key could hold another writer's object. After a
 * ROLLBACK, a failed commit, or a commit that skipped a chunk or made it a constant. */
vd_code vds_direct_clean(vd_ctx *ctx, const char *url, const char *layer, const char *tx, const vds_plan_chunk *plan,
                         int n, vd_err *err);

/* Runs fn under the layer's commit record (taken as for a commit, a dead writer's
 * commit finished first), so that nothing else writes the layer's pages meanwhile:
 * vds_repair. fn gets the fence to set on its page layer (vds_pages_set_fence): the
 * record is a lease that another machine takes over when it runs out. */
vd_code vds_commit_exclusive(vd_ctx *ctx, const char *url, const char *layer,
                             vd_code (*fn)(void *arg, vds_fence_fn fence, void *fence_arg, vd_err *err), void *arg,
                             vd_err *err);

/* The staging left by transactions that never committed (none in the record), older
 * than age seconds: deleted; *n gets how many objects. vds_repair's clean-up. */
vd_code vds_stage_clean(vd_ctx *ctx, const char *url, const char *layer, double age, int64_t *n, vd_err *err);

/* Parses a commit record's text (fuzzed: it is read from the store): VD_OK with *commit
 * (1: it holds a plan) and *n (the plan's chunks), else the one error of a bad record. */
vd_code vds_commit_record_check(const char *text, size_t len, int *commit, int *n, vd_err *err);

#endif
