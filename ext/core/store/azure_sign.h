/* Azure Blob Shared Key: the Authorization header of one request, computed from what is
 * sent (verb, URL, headers) and the account key. A pure function: the Azure backend gives
 * it exactly the headers it hands to libcurl, so what is signed is what is sent.
 * The recipe is ../shared/spec/object-stores.md section 2.1 (Microsoft's "Authorize with
 * Shared Key", string-to-sign for version 2015-02-21 and later). */
#ifndef VD_AZURE_SIGN_H
#define VD_AZURE_SIGN_H

#include <stddef.h>
#include <time.h>

#include "vd_err.h"

/* The x-ms-version every request sends: a version Azurite 3.35 accepts and whose rules
 * (Content-Length empty when 0) the signer follows. */
#define VD_AZ_VERSION "2021-08-06"

/* The x-ms-date value for t: RFC 1123 in GMT, English names whatever the locale. */
void vd_az_date(time_t t, char out[32]);

/* headers: "Name: value" lines as given to libcurl. "Name:" with nothing after the colon
 * is libcurl's way of removing a header, so it is not signed. A header given twice, or a
 * value with a line break, is refused (VD_INVALID). *sts is malloc'd. */
vd_code vd_az_string_to_sign(const char *account, const char *verb, const char *url, const char *const *headers,
                             int nheaders, char **sts, vd_err *err);
/* *auth (malloc'd) gets "SharedKey account:signature". */
vd_code vd_az_sign(const char *account, const unsigned char *key, size_t keylen, const char *verb, const char *url,
                   const char *const *headers, int nheaders, char **auth, vd_err *err);

#endif
