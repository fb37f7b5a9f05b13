/* What the OpenVDS relations share: a cursor over rows 0..nrows-1 of an opened
 * dataset (and layer, for relations that take one). */
#ifndef VD_VDS_CURSOR_H
#define VD_VDS_CURSOR_H

#include "../formats/openvds.h"
#include "../vd_catalog.h"

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

/* Decoded samples of one chunk (vds_chunk_data.c): fetched and decoded, or filled for
 * constant / NoValue / unwritten chunks; shape gets the voxel size and format. */
vd_code vds_read_chunk(vd_ctx *ctx, const vds_dataset *ds, const vds_layer *l, int64_t chunk, vd_buf *samples,
                       vds_shape *shape, vd_err *err);

#define VDS_URL_ARG {"url", VD_TEXT, VD_COL_ARG}
#define VDS_LAYER_ARG {"layer", VD_TEXT, VD_COL_ARG}

#endif
