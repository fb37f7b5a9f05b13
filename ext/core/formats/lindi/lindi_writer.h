/* Crash-safe writer for local LINDI tar archives: appends, replaces and deletes in
 * transactions, with the commit protocol described in docs/lindi.md. One writer per
 * archive at a time (flock); readers need no lock. */
#ifndef VD_LINDI_WRITER_H
#define VD_LINDI_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "vd_buf.h"
#include "vd_ctx.h"
#include "lindi.h"

typedef struct lindi_writer lindi_writer;

/* Opens; an archive that does not exist yet is created (laid out as lindi lays out an
 * empty one) at the first BEGIN, never by opening. http(s) archives are refused: they are read-only. Tables of one archive
 * in one context share one writer (reference-counted), so member and ref changes of a
 * transaction commit together with one index rewrite. */
vd_code lindi_writer_open(vd_ctx *ctx, const char *path, lindi_writer **out, vd_err *err);
void lindi_writer_close(lindi_writer *w);

vd_code lindi_writer_begin(lindi_writer *w, vd_err *err);
/* Appends a member; an existing name is a constraint error unless replace, which
 * trashes the old copy at commit. *pos gets the member's row. */
vd_code lindi_writer_put(lindi_writer *w, const char *name, const void *data, size_t len, int replace, int *pos,
                         vd_err *err);
vd_code lindi_writer_delete(lindi_writer *w, int pos, vd_err *err);
vd_code lindi_writer_commit(lindi_writer *w, vd_err *err);
void lindi_writer_rollback(lindi_writer *w);
void lindi_writer_savepoint(lindi_writer *w, int n);
void lindi_writer_release(lindi_writer *w, int n);
void lindi_writer_rollback_to(lindi_writer *w, int n);
/* Around every scan of a table: outside a transaction, the first scan re-reads the
 * committed state when another writer (or tool) committed since it was read, so it
 * shows the archive as it is (never while another scan holds rows of the old state). */
vd_code lindi_writer_scan_start(lindi_writer *w, vd_err *err);
void lindi_writer_scan_end(lindi_writer *w);

/* lindi.json: the parsed document (loaded on first use, owned by the writer) and the
 * notice that its "refs" were changed in this transaction. */
struct cJSON;
vd_code lindi_writer_refs(lindi_writer *w, struct cJSON **doc, vd_err *err);
vd_code lindi_writer_refs_will_change(lindi_writer *w, vd_err *err); /* call before changing refs */
void lindi_writer_refs_changed(lindi_writer *w);
const lindi_file *lindi_writer_find(const lindi_writer *w, const char *name);
const char *lindi_writer_path(const lindi_writer *w);

/* Transaction hooks with the vd_table_ops signatures (tab is a lindi_writer), shared by
 * the lindi_tar and lindi_refs tables. */
void lindi_tx_disconnect(void *w);
vd_code lindi_tx_begin(void *w, vd_err *err);
vd_code lindi_tx_sync(void *w, vd_err *err);
void lindi_tx_commit(void *w);
void lindi_tx_rollback(void *w);
void lindi_tx_savepoint(void *w, int n);
void lindi_tx_rollback_to(void *w, int n);
void lindi_tx_release(void *w, int n);

/* The live members (committed plus staged), for scans: rows 0..count-1, NULL for a
 * row deleted in this transaction. */
int lindi_writer_count(const lindi_writer *w);
const lindi_file *lindi_writer_file(const lindi_writer *w, int pos);
vd_code lindi_writer_read(lindi_writer *w, int pos, vd_buf *out, vd_err *err);

/* lindi_repair (lindi_writer_repair.c): .tar_index.json and .tar_entry.json rebuilt from
 * the tar headers: a local archive through this writer's commit (crash-safe like any
 * commit), an S3 or Azure one by a whole-object rewrite conditional on its ETag; one row
 * per action, none for a healthy archive (which is not written to).
 * action: listed, relisted, unlisted, unreadable (the old index), trashed (an older
 * copy of a name), cut (a torn tail), index, entry. */
typedef struct lindi_repair_row {
  const char *action;
  char *name;      /* NULL for cut */
  int64_t o, s;    /* header offset and size (cut: where, and the bytes dropped) */
  char *detail;
} lindi_repair_row;
typedef struct lindi_repair_log {
  lindi_repair_row *rows;
  int n, cap;
} lindi_repair_log;
vd_code lindi_repair(vd_ctx *ctx, const char *url, lindi_repair_log *log, vd_err *err);
void lindi_repair_log_free(lindi_repair_log *log);

#endif
