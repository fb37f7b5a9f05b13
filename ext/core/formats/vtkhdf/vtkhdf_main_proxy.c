/* vtkhdf_main's reads of files it did not write, asked of the HDF5 helper
 * (vtkhdf_helper.h): a part's vm_info (vm_inspect) and the members an existing main file
 * names (vm_load_read). Only the main file vdsql assembles is written in this process. */
#include <stdlib.h>

#include "vtkhdf_helper.h"
#include "vtkhdf_main_impl.h"
#include "vtkhdf_main_wire.h"
#include "vtkhdf_wire.h"

vd_code vm_inspect(vd_ctx *ctx, vm_layout lay, const char *file, vm_info **out, vd_err *err) {
  *out = NULL;
  vd_buf q = {0};
  if (vhp_put_env(ctx, &q) || vd_wr_str(&q, file) || vd_wr_u32(&q, (uint32_t)lay)) return vd_buf_free(&q), vd_nomem(err);
  vhp_ans a;
  vd_code rc = vhp_call(ctx, file, file, VHW_MAIN_INSPECT, &q, &a, err);
  vd_buf_free(&q);
  if (rc) return rc;
  rc = vmw_get_info(&a.rd, file, out, err);
  int bad = a.rd.bad;
  vhp_call_done(ctx, &a);
  return bad ? vhp_malformed(ctx, file, err) : rc;
}

vd_code vm_load_read(vd_ctx *ctx, const char *mp, const char *shown, vm_layout lay, vm_found **out, int *n, vd_err *err) {
  *out = NULL, *n = 0;
  vd_buf q = {0};
  if (vhp_put_env(ctx, &q) || vd_wr_str(&q, mp) || vd_wr_str(&q, shown) || vd_wr_u32(&q, (uint32_t)lay))
    return vd_buf_free(&q), vd_nomem(err);
  vhp_ans a;
  vd_code rc = vhp_call(ctx, mp, shown, VHW_MAIN_LOAD, &q, &a, err);
  vd_buf_free(&q);
  if (rc) return rc;
  int bad = vmw_get_found(&a.rd, out, n);
  vhp_call_done(ctx, &a);
  return bad ? vhp_malformed(ctx, shown, err) : VD_OK;
}
