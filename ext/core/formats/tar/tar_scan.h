/* A tar archive in the store, header by header (tar_scan.c): the walk behind
 * tar_members. The header codec itself is tar.h, pax records tar_pax.h (pure, fuzzed). */
#ifndef VD_TAR_SCAN_H
#define VD_TAR_SCAN_H

#include <stdint.h>

#include "tar.h"
#include "tar_pax.h"
#include "vd_buf.h"
#include "vd_ctx.h"

/* The largest GNU 'L'/'K' name, pax header ('x', 'X', 'g'; Solaris 'A') and GNU sparse
 * 1.0 map read: libarchive's limits (a name, an xattr, a map), so that what it reads is read. */
#define TAR_NAME_MAX (1 << 20)
#define TAR_PAX_MAX (16 << 20)
#define TAR_MAP_MAX (8 << 20)

typedef struct tar_scan {
  /* the current header h at byte off (h.type 'S' for old GNU sparse, '5' for a v7
   * directory too); done after the end-of-archive block or after a header whose
   * checksum is wrong (it is reported, since its size cannot be trusted, and the walk
   * stops) */
  tar_header h;
  int64_t off;
  int done;
  /* the member as every reader sees it, the headers before it applied (GNU 'L'/'K', pax
   * 'x'/'X' path, linkpath, size and GNU.sparse.*): */
  const char *name, *link; /* whole names; link "" when none */
  int64_t data_off;        /* its stored bytes: after the header, GNU sparse extension blocks or 1.0 map */
  int64_t stored;          /* how many bytes are stored there (0 for a directory) */
  int64_t size;            /* the file's size: a sparse file's real size, 0 for a directory */
  /* the walk's own state */
  vd_ctx *ctx;
  char *url;
  char where[600];
  vd_buf win;
  int64_t wstart;
  int64_t next;         /* the header after this one (checked by tar_next) */
  char *namebuf, *linkbuf;
  char *longname, *longlink; /* pending GNU 'L' / 'K' */
  tar_pax pax;          /* pending pax records of 'x' / 'X' */
  int last;             /* the current header is the last (bad checksum) */
} tar_scan;

/* Opens url's archive on its first header. Fails, naming the archive and the byte, on
 * a corrupt header or an archive that ends without end-of-archive blocks; input whose
 * first block is no tar header (cpio, anything else) is "not a tar archive". *out is set
 * even on failure (tar_scan_close it). */
vd_code tar_scan_open(vd_ctx *ctx, const char *url, tar_scan **out, vd_err *err);
/* The same when the archive's first n bytes are at hand already (a cached prefix, p[0, n)
 * copied): the headers inside them cost no request. */
vd_code tar_scan_open_at(vd_ctx *ctx, const char *url, const unsigned char *p, size_t n, tar_scan **out,
                         vd_err *err);
vd_code tar_scan_next(tar_scan *s, vd_err *err);
void tar_scan_close(tar_scan *s);

#endif
