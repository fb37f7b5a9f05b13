/* What the OpenVDS relations share: a cursor over rows 0..nrows-1 of an opened
 * dataset (and layer, for relations that take one). */
#ifndef VD_VDS_CURSOR_H
#define VD_VDS_CURSOR_H

#include "formats/openvds/openvds.h"
#include "vd_catalog.h"

typedef struct vds_cur {
  vd_ctx *ctx;
  vds_dataset *ds;
  const vds_layer *layer;
  int64_t row, nrows;
  char *scratch; /* per-row text the relation formats (freed on next/close) */
} vds_cur;

/* Opens args[0] as a dataset URL and, when with_layer, args[1] as a layer name.
 * A NULL argument gives an empty cursor, as SQL functions of NULL do. */
vd_code vds_cur_open(vd_ctx *ctx, const vd_value *args, int nargs, int with_layer, vds_cur **out, vd_err *err);
vd_code vds_cur_next(void *cur, vd_err *err);
int vds_cur_eof(void *cur);
int64_t vds_cur_rowid(void *cur);
void vds_cur_close(void *cur);

/* For a relation's planner estimate (vd_relation.known): what the cached documents of
 * dataset args[0] say, never a request; <= 0 when not cached. The layer ones look up
 * args[1]. */
enum { VDS_KNOWN_LAYERS, VDS_KNOWN_CHUNKS, VDS_KNOWN_WRITTEN, VDS_KNOWN_PAGES };
double vds_cur_known(vd_ctx *ctx, const vd_value *args, int nargs, int what);

#define VDS_URL_ARG {"url", VD_TEXT, VD_COL_ARG}
#define VDS_LAYER_ARG {"layer", VD_TEXT, VD_COL_ARG}

#endif
