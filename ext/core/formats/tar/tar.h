/* ustar headers: parsing any POSIX/GNU tar header (prefix field, base-256 sizes,
 * checksum check) and writing the headers lindi writes (spec: shared/spec/lindi.md 1). */
#ifndef VD_TAR_H
#define VD_TAR_H

#include <stddef.h>
#include <stdint.h>

#include "vd_err.h"

#define TAR_BLOCK 512

typedef struct tar_header {
  char name[257];       /* prefix "/" name (prefix only under the POSIX "ustar\0" magic), NUL-terminated */
  char link[101];       /* linkname field */
  int64_t size;         /* the size field as stored (a pax size or a sparse map may override it) */
  int64_t mode, mtime;
  char type;            /* typeflag, '0' for a regular file ('\0' read as '0') */
  int checksum_ok;      /* the stored sum is the unsigned or the signed sum of the bytes, as every reader accepts */
  /* old GNU sparse ('S'): the file's real size, and whether extension blocks of the
   * sparse map follow the header (before the data) */
  int64_t gnu_realsize;
  int gnu_extended;
} tar_header;

/* 1 = all-zero block (end of archive), 0 = parsed (check checksum_ok), -1 = not a header.
 * Numeric fields are read as GNU tar reads them: one leading NUL skipped (old writers
 * overflowed the field before), then spaces, then octal digits up to a NUL or space (an
 * empty field is 0); or GNU base-256 when the top bit is set. */
int tar_parse(const unsigned char b[TAR_BLOCK], tar_header *h);
/* 1 when a header is GNU's old sparse extension block with more blocks after it. */
int tar_sparse_ext_more(const unsigned char b[TAR_BLOCK]);
/* Writes a lindi-style ustar header (mode 0644, uid/gid 0, mtime 0, checksum as six
 * octal digits, NUL, space); names over 100 bytes go into the prefix field split at a
 * '/'. Returns VD_INVALID when the name cannot be stored. */
vd_code tar_format(unsigned char b[TAR_BLOCK], const char *name, int64_t size, vd_err *err);
/* Checks a member name: relative, no "..", no NUL, valid UTF-8, at most 255 bytes and
 * storable in the ustar name/prefix fields. */
vd_code tar_check_name(const char *name, size_t len, vd_err *err);
/* Renames a header in place (trash): new name, prefix cleared, checksum recomputed. */
vd_code tar_rename(unsigned char b[TAR_BLOCK], const char *name, vd_err *err);
int64_t tar_padded(int64_t size); /* size rounded up to whole blocks (size 0 .. TAR_MAX_SIZE) */

/* The largest member size a header may state: its data, padded to whole blocks, must
 * still end at an int64 offset (base-256 sizes reach 2^63 - 1). */
#define TAR_MAX_SIZE (INT64_MAX - 2 * TAR_BLOCK)
/* Every error about a header read from an archive, as one message:
 * "<where>: corrupt tar header at byte <at>: <what>". Returns VD_INVALID. */
vd_code tar_corrupt(vd_err *err, const char *where, int64_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Where the header after the one parsed into h at byte `at` starts: at + 512 + the padded
 * size, refused (tar_corrupt) when the size is negative or that header would not end
 * at an int64 offset. */
vd_code tar_next(const char *where, int64_t at, const tar_header *h, int64_t *next, vd_err *err);

/* A typeflag's name: "file", "dir", "symlink", "pax" ('x', Solaris 'X'), "gnu_longname",
 * "sparse" (old GNU 'S'), "volume_label" (GNU 'V'), "solaris_acl" (Solaris 'A', an ACL for
 * the next member), ... ("other"). */
const char *tar_type_name(char t);

#endif
