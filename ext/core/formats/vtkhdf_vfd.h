/* Read-only HDF5 file driver over the vdsql store, for remote VTKHDF files. */
#ifndef VD_VTKHDF_VFD_H
#define VD_VTKHDF_VFD_H

#include <hdf5.h>

#include "../vd_ctx.h"

/* A file-access property list that reads through ctx's store (caller closes it). HDF5
 * hands it on to the sub-files behind external links and virtual datasets. */
hid_t vh_vfd_fapl(vd_ctx *ctx);
/* Between begin and end, sub-files HDF5 opens on this thread read through ctx. */
void vh_vfd_begin(vd_ctx *ctx);
void vh_vfd_end(void);
/* Drops the sub-files kept for ctx's reads (when the file that uses them is closed). */
void vh_vfd_forget(vd_ctx *ctx);
/* Records url's size, learnt from a HEAD made elsewhere, so HDF5's open of it does not
 * ask again. */
void vh_vfd_prime(vd_ctx *ctx, const char *url, int64_t size);
/* 1 when url was opened (or HEAD-checked) through ctx for a file still open: it exists,
 * no need to ask the server again. */
int vh_vfd_known(vd_ctx *ctx, const char *url);
/* Why the driver's last open or read failed on this thread ("" if it did not). */
const char *vh_vfd_last_error(void);
int vh_is_url(const char *s);

#endif
