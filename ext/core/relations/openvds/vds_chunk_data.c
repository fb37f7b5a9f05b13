/* vds_chunk_data(url, layer, chunk): the decoded samples of one chunk as a BLOB in the
 * layer's format, read by the format's vds_read_chunk (formats/openvds/openvds_chunk.c). */
#include "vds_cursor.h"

static vd_code call(vd_ctx *ctx, const vd_value *args, int nargs, vd_value *out, vd_err *err) {
  (void)nargs;
  *out = vd_null();
  int64_t chunk;
  if (args[0].type == VD_NULL || args[1].type == VD_NULL || args[2].type == VD_NULL) return VD_OK;
  if (vd_value_as_int(&args[2], &chunk)) return vd_fail(err, VD_INVALID, "vds_chunk_data: chunk must be an integer");
  vds_cur *c;
  vd_code rc = vds_cur_open(ctx, args, 2, 1, &c, err);
  if (rc) return rc;
  vd_buf samples = {0};
  vds_shape shape;
  rc = vds_read_chunk(ctx, c->ds, c->layer, chunk, &samples, &shape, err);
  if (!rc) {
    *out = vd_owned_blob(samples.data, samples.len);
    samples.data = NULL;
  }
  vd_buf_free(&samples);
  vds_cur_close(c);
  return rc;
}

const vd_function vd_fn_vds_chunk_data = {
    .name = "vds_chunk_data",
    .min_args = 3,
    .max_args = 3,
    .flags = VD_FN_IO,
    .result = VD_BLOB,
    .arg_types = {VD_TEXT, VD_TEXT, VD_INT},
    .call = call,
    .args = "url, layer, chunk",
    .doc = "a chunk's decoded samples as a BLOB (None, RLE, Zip; constant and unwritten chunks filled)"};
