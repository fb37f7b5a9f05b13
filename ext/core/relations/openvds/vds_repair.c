/* vds_repair(url, layer): rewrites the page entries the audit finds repairable from
 * their objects' metadata and returns how many (formats/openvds/openvds_audit.c). */
#include "formats/openvds/openvds_objects.h"
#include "vds_cursor.h"

static vd_code call(vd_ctx *ctx, const vd_value *args, int nargs, vd_value *out, vd_err *err) {
  (void)nargs;
  *out = vd_null();
  if (args[0].type == VD_NULL || args[1].type == VD_NULL) return VD_OK;
  vds_cur *c;
  vd_code rc = vds_cur_open(ctx, args, 2, 1, &c, err);
  if (rc) return rc;
  int64_t n = 0;
  if (!(rc = vds_repair(ctx, c->ds, c->layer, &n, err))) *out = vd_int(n);
  vds_cur_close(c);
  return rc;
}

const vd_function vd_fn_vds_repair = {
    .name = "vds_repair",
    .min_args = 2,
    .max_args = 2,
    .flags = VD_FN_IO | VD_FN_WRITES,
    .result = VD_INT,
    .arg_types = {VD_TEXT, VD_TEXT},
    .call = call,
    .args = "url, layer",
    .doc = "finishes a commit a dead writer left, rewrites every page entry that disagrees with a chunk object that can be the chunk (mismatch, size_mismatch, orphan_object), then the pages and LayerStatus with its counts recomputed (conditional writes), and deletes abandoned staged chunks; returns the entries changed plus the counts corrected"};
