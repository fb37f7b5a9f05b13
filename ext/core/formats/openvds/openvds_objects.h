/* The chunk objects of one OpenVDS layer as the store lists them (spec sections 1 and
 * 5): every object under "<layer>/" except its ChunkMetadata pages, with size, etag,
 * time and the raw vdschunkmetadata value, from the listing or, where the listing gives
 * no user metadata (S3), from HEADs run max_parallel at once. Then the audit of the
 * layer (pages against objects) and its repair. Used by vds_objects, vds_audit and
 * vds_repair; the relations do no store I/O themselves. */
#ifndef VD_OPENVDS_OBJECTS_H
#define VD_OPENVDS_OBJECTS_H

#include "util/progress.h"
#include "openvds.h"

/* Decodes a vdschunkmetadata value (standard padded base64 of the 8-byte hash, or of
 * hash + 16 level bytes for wavelet layers): 0 when it decodes to entry_size's form
 * (8 bytes for 8-byte entries, 24 for 28-byte ones) and a legal hash (not 0, which
 * means "unknown"), else -1. levels may be NULL. */
int vds_meta_decode(const char *text, size_t len, int entry_size, uint64_t *hash, unsigned char levels[16]);

typedef struct vds_obj {
  char *key;       /* relative to the dataset: "<layer>/<name>" */
  int64_t chunk;   /* -1: not a chunk object of the layer (not a plain decimal index in range) */
  int64_t size, mtime;
  char *etag;
  char *meta;      /* raw vdschunkmetadata (or legacy VDS-Chunk-Metadata) value; NULL: none */
  char *tx;        /* vdsqltx: the vdsql transaction that put it at its key (openvds_direct.c) */
  int known;       /* metadata known: the listing gave it or the HEAD was made */
  int gone;        /* removed between the listing and its HEAD */
  int meta_conflict; /* another key that ends in vdschunkmetadata holds another value */
} vds_obj;

typedef struct vds_objlist {
  vds_obj *o;
  int64_t n, cap;
  int64_t bytes;   /* held, checked against max_alloc */
  int64_t heads;   /* chunk objects still needing a HEAD */
} vds_objlist;

/* Lists the layer's objects (every listing page) in key order. */
vd_code vds_objects_list(vd_ctx *ctx, const vds_dataset *ds, const vds_layer *l, vds_objlist *out, vd_err *err);
/* Makes the HEADs objects [from, to) still need (chunk objects only), max_parallel in
 * flight; progress (may be NULL) counts each object of the range. */
vd_code vds_objects_head(vd_ctx *ctx, const vds_dataset *ds, vds_objlist *ol, int64_t from, int64_t to,
                         vd_progress *progress, vd_err *err);
/* Sorts by chunk (objects that are no chunk last). */
void vds_objects_sort(vds_objlist *ol);
void vds_objlist_free(vds_objlist *ol);

/* The audit (docs/openvds.md, vds_audit, defines each verdict). */
enum vds_verdict { VDS_V_OK = 0, VDS_V_MISMATCH, VDS_V_MISSING_OBJECT, VDS_V_MISSING_METADATA, VDS_V_ORPHAN,
                   VDS_V_SIZE_MISMATCH, VDS_V_BAD_OBJECT, VDS_V_COUNT_MISMATCH, VDS_V_UNCOMMITTED,
                   VDS_V_MISSING_PAGE, VDS_V_BAD_PAGE /* only with vds_audit_keep_going */ };
const char *vds_verdict_name(int v);

typedef struct vds_audit_row {
  int64_t chunk;
  int page_status;            /* enum vds_status; -1: the layer has no pages */
  uint64_t page_hash;         /* when page_status is not unwritten / -1 */
  int has_object, has_object_hash;
  uint64_t object_hash;
  int64_t object_size;
  int64_t entry_object_size;  /* a 28-byte data entry's object size, else -1 */
  const vds_obj *obj;
  int verdict;
  int repairable;             /* the page entry can be rewritten from the object */
  unsigned char fix[28];      /* that entry */
  int64_t page;               /* missing_page / bad_page rows (chunk -1): the page's index */
  /* why an object cannot be the chunk (bad_object), or for a count_mismatch row (chunk
   * -1, after every chunk's row) which LayerStatus count disagrees with the pages, or
   * the error of a page that could not be read */
  char detail[600];
} vds_audit_row;

typedef struct vds_audit vds_audit;
/* Lists and HEADs every object of the layer (progress reported as "<what>"), then
 * rows come out in chunk order: one per chunk with a written page entry or an object
 * (every chunk for a layer without pages, where each must have an object), then one
 * count_mismatch row (chunk -1) per LayerStatus count that disagrees with what the
 * pages and objects add up to. An object the pages disagree with is adopted only when
 * it can be the chunk (bad_object otherwise): its metadata's hash fits its size (a
 * constant or NoValue hash only on an empty object, as OpenVDS writes them; a data
 * hash never on one), an uncompressed object has exactly the chunk's size, and a
 * compressed one's descriptor (one 24-byte range read) has the chunk's dimensions,
 * format and components. */
vd_code vds_audit_open(vd_ctx *ctx, const vds_dataset *ds, const vds_layer *l, const char *what, vds_audit **out,
                       vd_err *err);
/* Instead of failing at a page the directory lists that is missing (VD_NOTFOUND) or
 * does not parse (VD_INVALID), the audit gives a missing_page or bad_page row (chunk
 * -1, page set, the error as detail) and goes on at the next page; the chunks of that
 * page are not judged, and no count_mismatch row follows (the sums lack that page).
 * For vdsql_check, which must not stop at what the data holds. */
void vds_audit_keep_going(vds_audit *a);
/* The next row; *eof set at the end. */
vd_code vds_audit_next(vds_audit *a, vds_audit_row *row, int *eof, vd_err *err);
void vds_audit_close(vds_audit *a);

/* Under the layer's commit record (a dead writer's commit finished first): rewrites
 * every repairable entry (mismatch, size_mismatch, orphan_object whose object can be
 * the chunk) through the page layer, writes the pages and LayerStatus back with its
 * counts recomputed from the pages and objects (conditional writes), and deletes the
 * staged objects of transactions that never committed and the uncommitted objects
 * they put at chunk keys whose entry names no data (both older than stage_ttl);
 * *changed = entries rewritten plus LayerStatus counts that disagreed with the pages
 * before the repair (count_mismatch rows). A read-only store is refused before
 * anything is read. */
vd_code vds_repair(vd_ctx *ctx, const vds_dataset *ds, const vds_layer *l, int64_t *changed, vd_err *err);

/* Wavelet adaptive levels (spec section 4): bytes of the object needed for level
 * (-1: the whole object); -1 when level is past the last one (a zero byte) or not in
 * -1..15. */
int64_t vds_level_bytes(uint32_t object_size, const unsigned char levels[16], int level);
/* VD_OK for a layer with adaptive levels (28-byte page entries), else the one error
 * saying it has none. */
vd_code vds_need_wavelet(const vds_dataset *ds, const vds_layer *l, vd_err *err);
/* The start of wavelet chunk object `chunk` that adaptive level needs (-1: the whole
 * object), as OpenVDS fetches it: its page entry, then one range GET of the length the
 * entry implies. Refused for a layer without levels, a chunk without an object, a level
 * it does not have, more than max_alloc bytes, or an object shorter than its entry
 * says. out is the caller's (empty for a zero-length level). */
vd_code vds_read_levels(vd_ctx *ctx, const vds_dataset *ds, const vds_layer *l, int64_t chunk, int64_t level,
                        vd_buf *out, vd_err *err);

#endif
