/* Strict UTF-8 (RFC 3629): what JSON readers and SQLite's TEXT expect. */
#ifndef VD_UTF8_H
#define VD_UTF8_H

#include <stddef.h>

/* Length (1-4) of the UTF-8 sequence at p, of at most n bytes, with its code point in
 * *cp; 0 when p does not start one (overlong forms, UTF-16 surrogates and code points
 * past U+10FFFF are not UTF-8). */
int vd_utf8_seq(const unsigned char *p, size_t n, unsigned *cp);
/* 1 when all n bytes are UTF-8 (NUL included: it is U+0000). */
int vd_utf8_valid(const void *p, size_t n);
/* Writes the code point cp (at most U+10FFFF) as UTF-8 at out (room for 4); returns its
 * length. Surrogates are the caller's to refuse or pair first. */
size_t vd_utf8_put(unsigned char *out, unsigned cp);

#endif
