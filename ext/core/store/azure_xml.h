/* What the Azure backend reads from the service's XML answers: a List Blobs page (names,
 * sizes, ETags, dates, user metadata, the next marker) and the error code of a failed
 * request, and the one wording of that failure. */
#ifndef VD_AZURE_XML_H
#define VD_AZURE_XML_H

#include <stddef.h>

#include "vd_err.h"
#include "store.h"

typedef struct vd_az_blob {
  char *name;          /* the blob's full name (decoded when the service sent it encoded) */
  vd_objinfo info;     /* size, quoted etag, mtime (0 unknown), user metadata (names lower-cased) */
} vd_az_blob;

typedef struct vd_az_list {
  vd_az_blob *blobs;
  int n;
  char **prefixes;     /* BlobPrefix names (a listing with a delimiter), in full */
  int nprefixes;
  char *next_marker;   /* NULL: this was the last page */
} vd_az_list;

/* Parses one List Blobs answer (include=metadata). where: the redacted URL for errors. */
vd_code vd_az_parse_list(const char *where, const char *body, size_t len, vd_az_list *out, vd_err *err);
void vd_az_list_free(vd_az_list *l);

/* The service's error code: the x-ms-error-code header when there is one (HEAD answers
 * have no body), else <Error><Code> of the body; only letters, digits, '.', '_' and '-'
 * are kept (a hostile server chooses it), "" when there is none. Never the <Message> or
 * <AuthenticationErrorDetail>: those quote the signature and the string-to-sign. */
void vd_az_error_code(const char *header, const char *body, size_t len, char out[64]);

/* The one wording of a failed request, the same as every http-based backend's
 * ("<where>: HTTP <status> <reason> (<code>)", backend.h);
 * 404 is VD_NOTFOUND, 412 and 409 BlobAlreadyExists (a create-only put over an existing
 * blob) VD_PRECONDITION, 416 (a range past the end) VD_INVALID as for http, any other
 * VD_IO. */
vd_code vd_az_fail(vd_err *err, const char *where, long status, const char *code);

#endif
