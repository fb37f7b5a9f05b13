/* What crosses the HDF5 helper's channel for vtkhdf_main: a part's vm_info and a main
 * file's members. The parent decodes them as untrusted input: counts bounded by the
 * bytes that carry them, and a dataset's HDF5 type crosses as its class, size, order,
 * sign and precision, rebuilt by the parent from HDF5's own types (no HDF5 decoder runs
 * on the helper's bytes). */
#ifndef VD_VTKHDF_MAIN_WIRE_H
#define VD_VTKHDF_MAIN_WIRE_H

#include "util/chan.h"
#include "vtkhdf_main_impl.h"

int vmw_put_info(vd_buf *b, const vm_info *in);
/* *out, or the error (file names the part) */
vd_code vmw_get_info(vd_rd *r, const char *file, vm_info **out, vd_err *err);
int vmw_put_found(vd_buf *b, const vm_found *f, int n);
/* -1 when the bytes do not decode */
int vmw_get_found(vd_rd *r, vm_found **out, int *n);

#endif
