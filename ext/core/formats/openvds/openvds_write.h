/* Writing OpenVDS datasets (spec sections 3, 4, 5, 7, 9): creating one (layout and an
 * empty LayerStatus) and writing chunks of a layer, as OpenVDS's own writer does:
 * chunk objects first, then the pages that reference them, then LayerStatus. */
#ifndef VD_OPENVDS_WRITE_H
#define VD_OPENVDS_WRITE_H

#include "openvds.h"

/* Checks layout_json (the layout parser and OpenVDS's Create rules), then writes
 * VolumeDataLayout (as given) and a LayerStatus listing every layer it implies with
 * compression (None, RLE or Zip) and pages not yet written; both create-only, so an
 * existing dataset is refused and left as it is. *nlayers gets the layer count. */
vd_code vds_create(vd_ctx *ctx, const char *url, const char *layout_json, size_t len, const char *compression,
                   int *nlayers, vd_err *err);

/* A cJSON document as text with every number exact (cJSON alone rounds to 15 digits):
 * how LayerStatus is written. */
char *vds_json_print(void *cjson_doc);

/* A writer of one layer, with the commit protocol of openvds_commit.h. Chunks put are
 * queued (object built: descriptor, RLE or zlib, constant detection, hash) and
 * uploaded in parallel batches to the transaction's staging folder, where no reader
 * looks; commit uploads what is queued, then puts the staged chunks in place with the
 * pages and LayerStatus, all or nothing; rollback deletes the staged objects. Opening a
 * writer first finishes a commit that a dead writer left behind. */
typedef struct vds_writer vds_writer;
vd_code vds_writer_open(vd_ctx *ctx, const char *url, const char *layer, vds_writer **out, vd_err *err);
void vds_writer_close(vds_writer *w);
const vds_dataset *vds_writer_dataset(const vds_writer *w);
/* data: the chunk's samples, margins included, in the layer's format. Nothing is sent
 * for a refused chunk (wrong length, out of range, wavelet layer, read-only store).
 * conflict (VDS_ON_*, openvds_commit.h): a chunk already written (committed, or put
 * earlier in this transaction) is VD_CONSTRAINT for a plain INSERT and for OR IGNORE
 * (whose row the front end then skips); OR REPLACE replaces it. */
vd_code vds_writer_put(vds_writer *w, int64_t chunk, const void *data, size_t len, int conflict, vd_err *err);
vd_code vds_writer_commit(vds_writer *w, vd_err *err);
/* The page entry (8 bytes) this transaction gives chunk, its upload done or on its way:
 * 1, or 0 when the transaction has not put it. */
int vds_writer_entry(const vds_writer *w, int64_t chunk, unsigned char raw[8]);
void vds_writer_rollback(vds_writer *w);
/* Savepoint n (0, 1, ... nested; SQLite's numbering) begins now; levels below it not
 * marked yet begin now too. rollback_to(n) takes back exactly the chunks put since it
 * began (uploads in flight settled first), savepoint n staying open; release(n) ends
 * savepoints n and above, keeping what they put. */
void vds_writer_savepoint(vds_writer *w, int n);
void vds_writer_rollback_to(vds_writer *w, int n);
void vds_writer_release(vds_writer *w, int n);

/* The object OpenVDS stores for a chunk of shape s (section 9: 24-byte descriptor,
 * then the payload as method says); dims is the descriptor's dimensionality. */
vd_code vds_encode(int method, int dims, const vds_shape *s, const unsigned char *raw, size_t n, vd_buf *out,
                   vd_err *err);

/* vdschunkmetadata for a page entry (section 5; openvds_chunk.c, next to its check):
 * out has room for 33 characters. */
vd_code vds_meta_encode(const unsigned char *raw, int entry_size, char *out, size_t n, vd_err *err);

#endif
