/* vds_samples(url, layer, chunk): the samples of one chunk as rows (voxel position in
 * the chunk, margins included, X fastest; component; value), for looking at data in
 * SQL without decoding a BLOB. */
#include <stdlib.h>
#include <string.h>

#include "vds_cursor.h"

static const vd_colspec cols[] = {{"sample", VD_INT, 0}, {"x", VD_INT, 0},         {"y", VD_INT, 0},
                                  {"z", VD_INT, 0},      {"component", VD_INT, 0}, {"value", VD_REAL, 0},
                                  VDS_URL_ARG,           VDS_LAYER_ARG,            {"chunk", VD_INT, VD_COL_ARG}};

typedef struct {
  vds_cur b;
  vd_buf data;
  vds_shape shape;
} samples_cur;

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  samples_cur *s = calloc(1, sizeof *s);
  if (!s) return vd_nomem(err);
  vds_cur *c;
  vd_code rc = vds_cur_open(ctx, a, na, 1, &c, err);
  if (rc) {
    free(s);
    return rc;
  }
  s->b = *c;
  free(c);
  *out = s;
  int64_t chunk;
  if (!s->b.layer || a[2].type == VD_NULL) return VD_OK;
  if (vd_value_as_int(&a[2], &chunk)) return vd_fail(err, VD_INVALID, "vds_samples: chunk must be an integer");
  if ((rc = vds_read_chunk(ctx, s->b.ds, s->b.layer, chunk, &s->data, &s->shape, err))) return rc;
  s->b.nrows = s->shape.size[0] * s->shape.size[1] * s->shape.size[2] * s->shape.components;
  return VD_OK;
}

static double sample(const samples_cur *s, int64_t i) {
  const unsigned char *p = s->data.data;
  switch (s->shape.format) {
    case VDS_F_1BIT: {
      int64_t row = (s->shape.size[0] + 7) / 8, x = i % s->shape.size[0], r = i / s->shape.size[0];
      return (p[r * row + x / 8] >> (x % 8)) & 1;
    }
    case VDS_F_U8: return p[i];
    case VDS_F_U16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case VDS_F_R32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
    case VDS_F_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case VDS_F_R64: { double v; memcpy(&v, p + 8 * i, 8); return v; }
    default: { uint64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
  }
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  (void)err;
  samples_cur *s = cur;
  int64_t i = s->b.row, voxel = i / s->shape.components;
  switch (col) {
    case 0: *v = vd_int(i); break;
    case 1: *v = vd_int(voxel % s->shape.size[0]); break;
    case 2: *v = vd_int(voxel / s->shape.size[0] % s->shape.size[1]); break;
    case 3: *v = vd_int(voxel / s->shape.size[0] / s->shape.size[1]); break;
    case 4: *v = vd_int(i % s->shape.components); break;
    default: *v = vd_real(sample(s, i)); break;
  }
  return VD_OK;
}

static void close_(void *cur) {
  samples_cur *s = cur;
  if (!s) return;
  vd_buf_free(&s->data);
  vds_close(s->b.ds);
  free(s->b.scratch);
  free(s);
}

const vd_relation vd_rel_vds_samples = {
    .name = "vds_samples",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 262144, .requests = 3,
    .order_col = 0,
    .open = open_,
    .next = vds_cur_next,
    .eof = vds_cur_eof,
    .column = column,
    .rowid = vds_cur_rowid,
    .close = close_,
    .doc = "a chunk's decoded samples, one row per voxel (None, RLE, Zip)"};
