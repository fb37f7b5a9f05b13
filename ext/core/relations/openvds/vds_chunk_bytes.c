/* vds_chunk_bytes(url, layer, chunk [, level]): the start of a wavelet chunk object
 * that adaptive level needs (or the whole object), as OpenVDS fetches it: one range
 * GET of the length the page entry implies (spec section 4; vds_read_levels,
 * formats/openvds/openvds_objects.c). */
#include "formats/openvds/openvds_objects.h"
#include "vds_cursor.h"

static vd_code call(vd_ctx *ctx, const vd_value *args, int nargs, vd_value *out, vd_err *err) {
  *out = vd_null();
  int64_t chunk, level = -1;
  if (args[0].type == VD_NULL || args[1].type == VD_NULL || args[2].type == VD_NULL) return VD_OK;
  if (vd_value_as_int(&args[2], &chunk)) return vd_fail(err, VD_INVALID, "vds_chunk_bytes: chunk must be an integer");
  if (nargs > 3 && args[3].type != VD_NULL && vd_value_as_int(&args[3], &level))
    return vd_fail(err, VD_INVALID, "vds_chunk_bytes: level must be an integer");
  vds_cur *c;
  vd_code rc = vds_cur_open(ctx, args, 2, 1, &c, err);
  if (rc) return rc;
  vd_buf b = {0};
  if (!(rc = vds_read_levels(ctx, c->ds, c->layer, chunk, level, &b, err))) {
    *out = b.len > 0 ? vd_owned_blob(b.data, b.len) : vd_blob_val("", 0);
    if (b.len > 0) b.data = NULL;
  }
  vd_buf_free(&b);
  vds_cur_close(c);
  return rc;
}

const vd_function vd_fn_vds_chunk_bytes = {
    .name = "vds_chunk_bytes",
    .min_args = 3,
    .max_args = 4,
    .flags = VD_FN_IO,
    .result = VD_BLOB,
    .arg_types = {VD_TEXT, VD_TEXT, VD_INT, VD_INT},
    .call = call,
    .args = "url, layer, chunk [, level]",
    .doc = "the bytes of a wavelet chunk object that an adaptive level needs (without level: the whole object), with one range GET"};
