/* Azure Blob Batch (azure_batch.c): the multipart body of DELETE subrequests and the
 * reading of its answer. */
#ifndef VD_AZURE_BATCH_H
#define VD_AZURE_BATCH_H

#include "vd_buf.h"
#include "vd_err.h"

#define VD_AZ_BATCH_MAX 256 /* subrequests one batch may hold */

/* Appends one DELETE subrequest (Content-ID id) of target (the blob URL's path and
 * query, as on a request line) with its header lines hdrs (x-ms-date, Authorization,
 * ...) to out, after the delimiter of boundary. -1 when out of memory. */
int vd_az_batch_part(vd_buf *out, const char *boundary, int id, const char *target, const char *const *hdrs,
                     int nh);
/* The closing delimiter. */
int vd_az_batch_end(vd_buf *out, const char *boundary);
/* The answer (a multipart/mixed body whose first line is its delimiter) to a batch of n
 * subrequests with Content-IDs 0 to n - 1: rc[i] / errs[i] for subrequest i, whose
 * messages start with where[i]: VD_OK for 202 (deleted) and for 404 BlobNotFound
 * (gone already); the service's status and code otherwise; a subresponse without a
 * Content-ID refusing the whole batch, or none for i, fails i. Returns VD_OK, or VD_IO
 * when the answer is no multipart body (then every rc[i] says so). */
vd_code vd_az_parse_batch(const char *body, size_t len, int n, const char *const *where, vd_code *rc,
                          vd_err *errs);

#endif
