/* Standard base64 (RFC 4648, padded) through OpenSSL's EVP block coder. */
#ifndef VD_BASE64_H
#define VD_BASE64_H

#include <stddef.h>

/* Decodes text into a malloc'd buffer; returns -1 on malformed input. */
int vd_base64_decode(const char *text, size_t len, unsigned char **out, size_t *outlen);
/* Encodes into a malloc'd NUL-terminated string, NULL on out of memory. */
char *vd_base64_encode(const unsigned char *p, size_t n);

#endif
