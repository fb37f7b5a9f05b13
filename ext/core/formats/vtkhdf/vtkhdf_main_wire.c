/* The codec of vtkhdf_main's messages with the HDF5 helper (vtkhdf_main_wire.h). */
#include "vtkhdf_main_wire.h"

#include <stdlib.h>
#include <string.h>

static int put_type(vd_buf *b, hid_t t) {
  H5T_class_t c = H5Tget_class(t);
  int bad = vd_wr_u32(b, (uint32_t)c) || vd_wr_u64(b, H5Tget_size(t));
  if (c == H5T_INTEGER || c == H5T_FLOAT)
    bad = bad || vd_wr_u32(b, (uint32_t)H5Tget_order(t)) || vd_wr_u32(b, c == H5T_INTEGER ? (uint32_t)H5Tget_sign(t) : 0) ||
          vd_wr_u64(b, H5Tget_precision(t)) || vd_wr_u64(b, H5Tget_offset(t));
  else if (c == H5T_STRING)
    bad = bad || vd_wr_u32(b, H5Tis_variable_str(t) > 0) || vd_wr_u32(b, (uint32_t)H5Tget_cset(t)) ||
          vd_wr_u32(b, (uint32_t)H5Tget_strpad(t));
  return bad ? -1 : 0;
}

/* The type described, made from HDF5's own: -1 for one vtkhdf_main does not map */
static hid_t get_type(vd_rd *r, uint32_t *cls) {
  uint32_t c = *cls = vd_rd_u32(r);
  uint64_t size = vd_rd_u64(r);
  hid_t t = -1;
  if (c == H5T_INTEGER || c == H5T_FLOAT) {
    uint32_t order = vd_rd_u32(r), sign = vd_rd_u32(r);
    uint64_t prec = vd_rd_u64(r), off = vd_rd_u64(r);
    if (r->bad || (order != H5T_ORDER_LE && order != H5T_ORDER_BE) || size < 1 || size > 16 || prec < 1 ||
        prec + off > size * 8)
      return -1;
    if (c == H5T_FLOAT) {
      if (off || prec != size * 8 || (size != 4 && size != 8)) return -1;
      t = H5Tcopy(size == 4 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
    } else {
      if (sign != H5T_SGN_NONE && sign != H5T_SGN_2) return -1;
      t = H5Tcopy(H5T_STD_I64LE);
      if (t >= 0 && (H5Tset_size(t, size) < 0 || H5Tset_sign(t, (H5T_sign_t)sign) < 0 ||
                     H5Tset_precision(t, prec) < 0 || H5Tset_offset(t, off) < 0))
        H5Tclose(t), t = -1;
    }
    if (t >= 0 && H5Tset_order(t, (H5T_order_t)order) < 0) H5Tclose(t), t = -1;
  } else if (c == H5T_STRING) {
    uint32_t var = vd_rd_u32(r), cset = vd_rd_u32(r), pad = vd_rd_u32(r);
    if (r->bad || cset > H5T_CSET_UTF8 || pad > H5T_STR_SPACEPAD || (!var && (size < 1 || size > ((uint64_t)1 << 20))))
      return -1;
    t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && (H5Tset_size(t, var ? H5T_VARIABLE : size) < 0 || H5Tset_cset(t, (H5T_cset_t)cset) < 0 ||
                   H5Tset_strpad(t, (H5T_str_t)pad) < 0))
      H5Tclose(t), t = -1;
  }
  return t;
}

int vmw_put_info(vd_buf *b, const vm_info *in) {
  int bad = vd_wr_str(b, in->type) || vd_wr_u32(b, (uint32_t)in->kind) || vd_wr_u64(b, (uint64_t)in->version[0]) ||
            vd_wr_u64(b, (uint64_t)in->version[1]) || vd_wr_u32(b, (uint32_t)in->temporal) ||
            vd_wr_u64(b, (uint64_t)in->nsteps) || vd_wr_u64(b, (uint64_t)in->nparts) || vd_wr_u64(b, (uint64_t)in->np);
  for (int k = 0; k < VH_NTOPO && !bad; k++) bad = vd_wr_u64(b, (uint64_t)in->nc[k]) || vd_wr_u64(b, (uint64_t)in->nci[k]);
  for (int k = 0; k < 21 && !bad; k++) bad = vd_wr_f64(b, in->image[k]);
  for (int k = 0; k < 4 && !bad; k++) bad = vd_wr_u32(b, (uint32_t)in->nimage[k]);
  bad = bad || vd_wr_u32(b, (uint32_t)in->nd);
  for (int i = 0; i < in->nd && !bad; i++) {
    const vm_dset *d = &in->d[i];
    bad = vd_wr_str(b, d->path) || put_type(b, d->type) || vd_wr_u32(b, (uint32_t)d->rank);
    for (int k = 0; k < d->rank && !bad; k++) bad = vd_wr_u64(b, d->dims[k]);
  }
  return bad ? -1 : 0;
}

vd_code vmw_get_info(vd_rd *r, const char *file, vm_info **out, vd_err *err) {
  *out = NULL;
  vm_info *in = calloc(1, sizeof *in);
  if (!in) return vd_nomem(err);
  in->type = vd_rd_str(r);
  in->kind = (int)vd_rd_u32(r);
  in->version[0] = (int64_t)vd_rd_u64(r), in->version[1] = (int64_t)vd_rd_u64(r);
  in->temporal = (int)vd_rd_u32(r);
  in->nsteps = (int64_t)vd_rd_u64(r), in->nparts = (int64_t)vd_rd_u64(r), in->np = (int64_t)vd_rd_u64(r);
  for (int k = 0; k < VH_NTOPO; k++) in->nc[k] = (int64_t)vd_rd_u64(r), in->nci[k] = (int64_t)vd_rd_u64(r);
  for (int k = 0; k < 21; k++) in->image[k] = vd_rd_f64(r);
  for (int k = 0; k < 4; k++) in->nimage[k] = (int)vd_rd_u32(r);
  uint32_t nd = vd_rd_u32(r);
  static const int maxn[4] = {6, 3, 3, 9};
  for (int k = 0; k < 4; k++)
    if (in->nimage[k] < 0 || in->nimage[k] > maxn[k]) r->bad = 1;
  if (!in->type || in->kind < VM_UG || in->kind > VM_OTHER || nd > (uint32_t)(r->end - r->p) / 16) r->bad = 1;
  if (!r->bad && nd && !(in->d = calloc(nd, sizeof *in->d))) return vm_info_free(in), vd_nomem(err);
  vd_code rc = VD_OK;
  for (uint32_t i = 0; i < nd && !r->bad && !rc; i++) {
    vm_dset *d = &in->d[in->nd++];
    uint32_t cls;
    d->path = vd_rd_str(r);
    d->type = get_type(r, &cls);
    uint32_t rank = vd_rd_u32(r);
    if (!d->path || rank < 1 || rank > H5S_MAX_RANK) r->bad = 1;
    for (uint32_t k = 0; k < rank && !r->bad; k++) d->dims[k] = vd_rd_u64(r);
    d->rank = (int)rank;
    if (!r->bad && d->type < 0)
      rc = vd_fail(err, VD_UNSUPPORTED, "%s: /VTKHDF/%s has an HDF5 type vtkhdf_main does not map (class %u)", file,
                   d->path, cls);
  }
  if (!rc && r->bad) rc = vd_fail(err, VD_INVALID, "%s: the HDF5 helper process sent a malformed answer reading this file", file);
  if (rc) return vm_info_free(in), rc;
  *out = in;
  return VD_OK;
}

void vm_found_free(vm_found *f, int n) {
  for (int i = 0; f && i < n; i++) free(f[i].stored), free(f[i].block);
  free(f);
}

int vmw_put_found(vd_buf *b, const vm_found *f, int n) {
  int bad = vd_wr_u32(b, (uint32_t)n);
  for (int i = 0; i < n && !bad; i++)
    bad = vd_wr_str(b, f[i].stored) || vd_wr_u64(b, (uint64_t)f[i].step) || vd_wr_f64(b, f[i].time) ||
          vd_wr_u32(b, (uint32_t)f[i].has_time) || vd_wr_str(b, f[i].block);
  return bad ? -1 : 0;
}

int vmw_get_found(vd_rd *r, vm_found **out, int *n) {
  *out = NULL, *n = 0;
  uint32_t k = vd_rd_u32(r);
  if (r->bad || k > (uint32_t)(r->end - r->p) / 24) return -1;
  vm_found *f = calloc(k ? k : 1, sizeof *f);
  if (!f) return -1;
  for (uint32_t i = 0; i < k && !r->bad; i++) {
    f[i].stored = vd_rd_str(r);
    f[i].step = (int64_t)vd_rd_u64(r), f[i].time = vd_rd_f64(r);
    f[i].has_time = vd_rd_u32(r) != 0;
    f[i].block = vd_rd_str(r);
    if (!f[i].stored) r->bad = 1;
  }
  if (r->bad) return vm_found_free(f, (int)k), -1;
  *out = f, *n = (int)k;
  return 0;
}
