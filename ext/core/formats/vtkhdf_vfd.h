/* Read-only HDF5 file driver over the vdsql store, for remote VTKHDF files. */
#ifndef VD_VTKHDF_VFD_H
#define VD_VTKHDF_VFD_H

#include <hdf5.h>

#include "../vd_ctx.h"

/* A file-access property list that reads through ctx's store (caller closes it). HDF5
 * hands it on to the sub-files behind external links and virtual datasets. */
hid_t vh_vfd_fapl(vd_ctx *ctx);
/* The context sub-files opened on this thread read through (NULL when done). */
void vh_vfd_set_ctx(vd_ctx *ctx);
/* 1 when HDF5 already opened url through the driver during the read in progress (so it
 * exists: no need to ask the server again). */
int vh_vfd_known(const char *url);
/* Why the driver's last open or read failed on this thread ("" if it did not). */
const char *vh_vfd_last_error(void);
int vh_is_url(const char *s);

#endif
