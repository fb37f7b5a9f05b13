/* What crosses the channel between vdsql and its HDF5 helper for the VTKHDF reader: the
 * message types (the store relay's are below 16: store/relay.h) and the codec of a
 * vh_doc and of batches of partition rows. The parent decodes what the helper sends as
 * untrusted input: every count is bounded by the bytes that carry it. Pooled strings
 * (blocks, types, source files, statuses) cross once each: a reference is an id, a new
 * id carries its text the first time. A partition row crosses as what differs from the
 * row before it in its batch, as the walk predicts it (the next partition, starts moved on
 * by the counts before): about 6 bytes where the row itself is 120. */
#ifndef VD_VTKHDF_WIRE_H
#define VD_VTKHDF_WIRE_H

#include <stdint.h>

#include "util/chan.h"
#include "vtkhdf.h"

enum {
  VHW_OPEN = 16, /* cfg, cwd, url, what: vh_open; answered with DONE, the doc and a handle */
  VHW_ROWS,      /* handle, max, skip, seg: the next rows of vh_rows_next */
  VHW_CLOSE,     /* handle: vh_doc_free (no answer) */
  VHW_DONE,      /* the helper's answer: code, message, counters, then what was asked */
  VHW_MAIN_INSPECT, /* cfg, cwd, file, layout: vtkhdf_main's vm_inspect; answered with a vm_info */
  VHW_MAIN_LOAD     /* cfg, cwd, main file, shown, layout: its members read back (vm_found list) */
};

/* The helper's side: pointer -> id of the strings already sent for one doc, and the row
 * before (what the next row is told apart from) */
typedef struct vhw_ids {
  const void **key;
  uint32_t *id;
  uint32_t cap, n;
  vh_part prev;
  uint32_t prev_seg;
  int prev_streamed;
} vhw_ids;
void vhw_ids_free(vhw_ids *m);
int vhw_put_sid(vd_buf *b, vhw_ids *m, const char *s);
/* Everything of doc but its partition rows */
int vhw_put_doc(vd_buf *b, vhw_ids *m, const vh_doc *doc);
/* A batch of rows starts: its first row is told apart from an empty one */
void vhw_put_rows_start(vhw_ids *m);
/* One row, with the segment it came from and whether it was streamed */
int vhw_put_row(vd_buf *b, vhw_ids *m, const vh_part *p, uint32_t seg, int streamed);

/* The parent's side: ids are indexes into doc->strs (+1), which owns the texts */
const char *vhw_get_sid(vd_rd *r, vh_doc *doc);
void vhw_get_doc(vd_rd *r, vh_doc *doc);
/* The next row of a batch, decoded in place: *p, *topo, *seg and *streamed hold the row
 * before (all zero before a batch's first: vhw_get_rows_start) and become this one's */
void vhw_get_rows_start(vh_part *p, uint32_t *seg, int *streamed);
void vhw_get_row(vd_rd *r, vh_doc *doc, vh_part *p, vh_topo *topo, uint32_t *seg, int *streamed);

#endif
