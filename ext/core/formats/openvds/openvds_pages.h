/* The page layer of one OpenVDS layer (spec sections 4 and 7): every read and write of
 * its chunk-metadata pages goes through here, so relations (vds_chunks, vds_chunk_data,
 * the audit, the repair, the writer) never do store I/O for pages themselves.
 * Reads: point lookups through the document cache; scans through a bounded fetch-ahead
 * window (large scans bypass the cache). Writes: entries set in a dirty set over a copy
 * of each page as read (with its etag); write-back puts the dirty pages and then
 * LayerStatus conditionally (If-Match), and a lost race re-reads the fresh object and
 * re-applies only this writer's entries. */
#ifndef VD_OPENVDS_PAGES_H
#define VD_OPENVDS_PAGES_H

#include "store/store.h"
#include "openvds.h"

typedef struct vds_pages vds_pages;

/* ds and l must outlive the page layer. No I/O. */
vd_code vds_pages_open(vd_ctx *ctx, const vds_dataset *ds, const vds_layer *l, vds_pages **out, vd_err *err);
void vds_pages_close(vds_pages *pl);

/* Point lookup: the entry of chunk (a page listed as not stored, or past a short last
 * page, reads as unwritten). e->levels points into pl and stays valid until the next
 * lookup. raw (28 bytes, may be NULL) gets the entry's bytes. Entries set and not yet
 * written back are seen. */
vd_code vds_pages_entry(vds_pages *pl, int64_t chunk, vds_entry *e, unsigned char raw[28], vd_err *err);

/* The same, and for a data chunk also the object at obj_url (body and info): when the
 * page is not cached both are asked for at once (one round trip); the object is dropped
 * when the page says the chunk has none. With obj_url NULL only the entry is read and
 * *have_obj stays 0 (the caller fetches the object itself). */
vd_code vds_pages_entry_object(vds_pages *pl, int64_t chunk, const char *obj_url, vds_entry *e, unsigned char raw[28],
                               vd_buf *obj, vd_objinfo *info, int *have_obj, vd_err *err);

/* Scans: pages are read in increasing order through the fetch-ahead window. next(arg,
 * q) names the first page >= q holding a chunk the scan visits (or -1); last_page is
 * the last page it may visit; selective (a list or a box of chunks) keeps pages in the
 * cache, while a plain range over more pages than a quarter of the cache bypasses it.
 * After vds_pages_scan, vds_pages_entry reads through the window. */
typedef int64_t (*vds_pages_next_fn)(void *arg, int64_t q);
void vds_pages_scan(vds_pages *pl, vds_pages_next_fn next, void *arg, int64_t last_page, int selective);
/* A scan that will likely end on stop_page (a LIMIT the rows up to there fill): pages
 * after it are not fetched ahead, so no request goes out for a page nobody reads. It is
 * only a hint: a lookup past it fetches on as a scan without the stop would. */
void vds_pages_scan_stop(vds_pages *pl, int64_t stop_page);

/* Writes. vds_entry_encode builds an entry's bytes (levels NULL: zeros; object_size
 * only for 28-byte entries). */
void vds_entry_encode(unsigned char *p, int entry_size, uint64_t hash, uint32_t object_size,
                      const unsigned char *levels);
/* Sets chunk's entry (raw: entry_size bytes) in the dirty set; object_bytes is the size
 * of the object written for it (0 for constant chunks), for LayerStatus's
 * serializedSize. Reads the page (unless the directory lists it as not written: zeros,
 * put create-only) and, the first time, LayerStatus (unless given), with their etags. */
vd_code vds_pages_set(vds_pages *pl, int64_t chunk, const unsigned char *raw, int64_t object_bytes, vd_err *err);
int vds_pages_dirty(const vds_pages *pl); /* pages waiting for write-back */
/* LayerStatus as a writer read it (with its etag) when it opened, so that the first
 * write-back needs no read of its own; a stale copy only costs a lost race. */
vd_code vds_pages_set_status(vds_pages *pl, const void *body, size_t len, const char *etag, vd_err *err);
/* What a write changes in a layer's LayerStatus counts (spec section 3). */
typedef struct vds_counts {
  int64_t valid, serialized, uncompressed;
} vds_counts;
/* The entry chunk's page held when its base was read (raw: entry_size bytes): VD_OK
 * only for a chunk set in the dirty set. */
vd_code vds_pages_base_entry(const vds_pages *pl, int64_t chunk, unsigned char *raw);
/* The size of the object the old entry of a dirty chunk stood for (8-byte layers keep
 * no size in the page: the writer learns it with a HEAD), so that serializedSize takes
 * it off when the chunk is replaced. */
void vds_pages_set_old_bytes(vds_pages *pl, int64_t chunk, int64_t bytes);
/* What writing the dirty set over the bases as they are now changes in the counts:
 * every chunk counts what its new entry adds and its old entry takes off (valid
 * chunks; object sizes; uncompressed bytes of data chunks), on 8-byte and 28-byte
 * layers alike, so the counts always follow the pages. */
void vds_pages_counts(const vds_pages *pl, vds_counts *c);
/* The two halves of vds_pages_write_back, for a writer that must record what it is
 * about to do in between (openvds_commit.c): the dirty pages, each put If-Match its
 * base (If-None-Match for a new page; a lost race re-reads and re-applies), their
 * counts and names kept; then LayerStatus with c (NULL: the counts kept) added, or
 * set when absolute, and the names of pages [0, n) (NULL: those kept) applied. */
vd_code vds_pages_write_pages(vds_pages *pl, vd_err *err);
vd_code vds_pages_write_status(vds_pages *pl, const vds_counts *c, int absolute, const int64_t *pages,
                               const int64_t *names, int n, vd_err *err);
/* The etag of LayerStatus as this page layer last read or wrote it ("" none). */
const char *vds_pages_status_etag(const vds_pages *pl);
/* Puts every dirty page (If-Match its etag, If-None-Match for a new page), then
 * LayerStatus (pageDirectory, validChunkCount, serializedSize, uncompressedSize,
 * If-Match). A lost race re-reads the fresh page or LayerStatus and re-applies this
 * writer's entries and counts only, at most 8 times. Stops at the first failure,
 * keeping what was not written dirty. */
vd_code vds_pages_write_back(vds_pages *pl, vd_err *err);
/* A writer that publishes under a lock it can lose (the layer's commit record, whose
 * lease another writer takes over when it runs out) sets a fence: when a page or
 * LayerStatus put finds the object changed (412), the object is read again, and a put
 * that had in fact landed (its answer lost on the wire, then its retry refused) is taken
 * as done when the object already holds exactly what this writer puts; otherwise the
 * fence is asked before anything is re-applied, and its error stops the write-back.
 * Without a fence a lost race re-applies at once (a writer that holds nothing). */
typedef vd_code (*vds_fence_fn)(void *arg, vd_err *err);
void vds_pages_set_fence(vds_pages *pl, vds_fence_fn fence, void *arg);
/* Forgets the dirty set (ROLLBACK): nothing is written. */
void vds_pages_discard(vds_pages *pl);

#endif
