/* The region of each S3 bucket, as the service named it, remembered for a context; and
 * where an answer names it. AWS answers a request signed for (or sent to) the wrong
 * region with 301 PermanentRedirect or 400 AuthorizationHeaderMalformed naming the
 * bucket's region (header x-amz-bucket-region, or <Region> in the error document);
 * store_s3.c sends such a request once more, for that region, and every later request of
 * the bucket goes there first time. */
#ifndef VD_S3_REGION_H
#define VD_S3_REGION_H

#include <stddef.h>

#include "vd_ctx.h"

/* The region remembered for bucket b (bn bytes), NULL: none yet. Valid until the next
 * vd_s3_region_set or vd_s3_regions_clear. */
const char *vd_s3_region_of(const vd_ctx *ctx, const char *b, size_t bn);
/* Remembers region for bucket b; -1 when out of memory (nothing remembered then). */
int vd_s3_region_set(vd_ctx *ctx, const char *b, size_t bn, const char *region);
/* Forgets every bucket's region (a setting changed: the endpoint may be another). */
void vd_s3_regions_clear(vd_ctx *ctx);

/* The region an answer of status names (301 or 400 only): hdr, the value of
 * x-amz-bucket-region (NULL when absent), else the <Region> of an <Error> whose <Code> is
 * PermanentRedirect or AuthorizationHeaderMalformed in body[0, len). Only a region name
 * (1 to 32 lower-case letters, digits and '-') is taken: it goes into a host name and a
 * signature. Into out (n bytes); 0 when found. */
int vd_s3_region_answer(long status, const char *hdr, const char *body, size_t len, char *out, size_t n);

#endif
