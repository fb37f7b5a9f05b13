/* vds_create(url, layout_json, compression): a new, empty OpenVDS dataset
 * (formats/openvds/openvds_create.c); returns the number of layers its LayerStatus lists. */
#include <stdlib.h>

#include "formats/openvds/openvds_write.h"
#include "vd_catalog.h"

static vd_code call(vd_ctx *ctx, const vd_value *args, int nargs, vd_value *out, vd_err *err) {
  (void)nargs;
  *out = vd_null();
  if (args[0].type == VD_NULL || args[1].type == VD_NULL || args[2].type == VD_NULL) return VD_OK;
  if (args[0].type != VD_TEXT || args[2].type != VD_TEXT || (args[1].type != VD_TEXT && args[1].type != VD_BLOB))
    return vd_fail(err, VD_INVALID, "vds_create(url, layout_json, compression): url and compression must be text, "
                   "layout_json text or a blob (readfile)");
  char *url = vd_value_strdup(&args[0]), *comp = vd_value_strdup(&args[2]);
  vd_code rc;
  int n = 0;
  if (!url || !comp)
    rc = vd_nomem(err);
  else
    rc = vds_create(ctx, url, args[1].p, args[1].n, comp, &n, err);
  free(url);
  free(comp);
  if (!rc) *out = vd_int(n);
  return rc;
}

const vd_function vd_fn_vds_create = {
    .name = "vds_create",
    .min_args = 3,
    .max_args = 3,
    .flags = VD_FN_IO | VD_FN_WRITES,
    .result = VD_INT,
    .arg_types = {VD_TEXT, VD_TEXT, VD_TEXT},
    .call = call,
    .args = "url, layout_json, compression",
    .doc = "creates an empty OpenVDS dataset (VolumeDataLayout and a LayerStatus of every layer it implies; None, RLE or Zip), never over an existing one; returns the layer count"};
