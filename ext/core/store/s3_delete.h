/* S3 DeleteObjects (s3_delete.c): the request body and the per-key answer. */
#ifndef VD_S3_DELETE_H
#define VD_S3_DELETE_H

#include "vd_buf.h"
#include "vd_err.h"

#define VD_S3_DELETE_MAX 1000 /* keys one DeleteObjects request may name */

/* Whether key (decoded, NUL-terminated) can go into a DeleteObjects body: non-empty
 * UTF-8 without the control characters XML 1.0 cannot carry (those keys are deleted
 * one request each). */
int vd_s3_delete_key_ok(const char *key);
/* The body naming keys[0, n) (each vd_s3_delete_key_ok), appended to out; -1 when out
 * of memory. */
int vd_s3_delete_body(const char *const *keys, int n, vd_buf *out);
/* The answer to that request: rc[i] / errs[i] for keys[i], whose messages start with
 * where[i] (the object's URL, redacted): VD_OK when a <Deleted> or a NoSuchKey <Error>
 * names it, VD_IO with the service's code for another <Error>, VD_IO when the answer
 * names it nowhere. A key given twice gets one answer. Returns VD_OK, or the fault of
 * the whole answer (not a DeleteResult: VD_IO; VD_NOMEM), which every rc[i] then has. */
vd_code vd_s3_parse_delete(const char *body, size_t len, const char *const *keys, int n, const char *const *where,
                           vd_code *rc, vd_err *errs);

#endif
