/* pax extended headers ('x', Solaris 'X', global 'g') parsed by their record lengths, and
 * the GNU sparse 1.0 map's length (tar_pax.c: pure, fuzzed). Private to formats/tar. */
#ifndef VD_TAR_PAX_H
#define VD_TAR_PAX_H

#include <stddef.h>
#include <stdint.h>

/* The keywords a walk needs; a later record overrides an earlier one, and an empty value
 * removes the keyword (POSIX). Strings are malloc'd, NULL when absent. */
typedef struct tar_pax {
  char *path, *linkpath, *sparse_name;  /* path, linkpath, GNU.sparse.name */
  int has_size, has_realsize;
  int64_t size;                         /* size: the stored bytes, over the ustar field */
  int64_t realsize;                     /* GNU.sparse.size (0.0, 0.1) or GNU.sparse.realsize (1.0) */
  int sparse;                           /* any GNU.sparse.* record */
  int major, minor;                     /* GNU.sparse.major / minor (-1: absent) */
} tar_pax;

void tar_pax_init(tar_pax *p);
void tar_pax_free(tar_pax *p); /* and init again */
/* Parses n bytes of records "<len> <keyword>=<value>\n", each found by its length (a
 * value may hold '\n' or '='; text is never searched). NUL bytes after the last record
 * are padding. Returns 0, -1 on a malformed record (*at its byte, *why the fault), -2
 * when out of memory. */
int tar_pax_parse(const unsigned char *d, size_t n, tar_pax *p, size_t *at, const char **why);
/* GNU sparse 1.0: the data starts with the map, decimal lines "<count>\n" then count
 * "<offset>\n<numbytes>\n" pairs, padded to 512 bytes. Given its first n bytes: 1 with
 * *len the padded length, 0 when more bytes are needed, -1 malformed. */
int tar_sparse10_len(const unsigned char *d, size_t n, int64_t *len);

#endif
