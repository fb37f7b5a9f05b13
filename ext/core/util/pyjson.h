/* Serializes a cJSON value the way Python's json.dumps(obj, indent=2, sort_keys=True)
 * does (lindi writes lindi.json and its index that way), ASCII only.
 *
 * Kept literals: cJSON cannot hold every JSON value as it was written. Its strings are
 * NUL-terminated C strings, so "a\u0000b" parses to "a" (lindi stores chunks whose bytes
 * are all below 0x80 as such strings); and its numbers are doubles, so 1.0 comes back
 * as 1. vd_pyjson_keep turns every such scalar into a cJSON_Raw node holding the
 * literal exactly as the text had it (cJSON prints Raw nodes verbatim, copies them with
 * cJSON_Duplicate and frees them as usual), so a document is written back with the
 * values it was read with; vd_pyjson_bytes and vd_pyjson_number read them. */
#ifndef VD_PYJSON_H
#define VD_PYJSON_H

#include <cJSON.h>

#include "vd_buf.h"

int vd_pyjson(const cJSON *v, vd_buf *out); /* 0 ok, -1 out of memory */
/* Appends a JSON string literal exactly as Python's json.dumps writes it (ASCII only);
 * the _n form takes bytes with NUL among them (written as \u0000). 0 ok, -1 out of
 * memory. */
int vd_pyjson_string(vd_buf *out, const char *s);
int vd_pyjson_string_n(vd_buf *out, const char *s, size_t len);

/* After cJSON parsed text[0..len) into root: the strings and numbers under root's
 * member named `member` (all of root when NULL) that vd_pyjson would not write back
 * byte for byte become cJSON_Raw literals. 0 ok, -1 out of memory, -2 a string there is
 * not JSON though cJSON takes it (a raw NUL byte, an escape such as \u12g4; *bad, when
 * not NULL, gets its byte offset), -3 text and tree disagree (a bug). */
int vd_pyjson_keep(cJSON *root, const char *text, size_t len, const char *member, size_t *bad);
/* The bytes of a string: a cJSON string, or a kept string literal decoded with its
 * length (NUL bytes included). out holds them, NUL-terminated past out->len.
 * 0 ok, 1 j is no string, -1 out of memory. */
int vd_pyjson_bytes(const cJSON *j, vd_buf *out);
/* A number, or a kept number literal: 0 and *d set, else 1. */
int vd_pyjson_number(const cJSON *j, double *d);
int vd_pyjson_is_string(const cJSON *j); /* a string or a kept string literal */
/* A node for the string of n bytes: a cJSON string, or a kept literal when the bytes
 * hold a NUL. NULL when out of memory. */
cJSON *vd_pyjson_string_node(const void *p, size_t n);

#endif
