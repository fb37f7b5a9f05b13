/* A tar archive in the store, header by header (tar_scan.c): the walk behind
 * tar_members. The header codec itself is tar.h (pure, fuzzed). */
#ifndef VD_TAR_SCAN_H
#define VD_TAR_SCAN_H

#include <stdint.h>

#include "tar.h"
#include "vd_buf.h"
#include "vd_ctx.h"

typedef struct tar_scan {
  /* the current header: h (its name with a GNU 'L' or pax path applied) at byte off;
   * done after the end-of-archive block or after a header whose checksum is wrong (it
   * is reported, since its size cannot be trusted, and the walk stops) */
  tar_header h;
  int64_t off;
  int done;
  /* the walk's own state */
  vd_ctx *ctx;
  char *url;
  char where[600];
  vd_buf win;
  int64_t wstart;
  int64_t next;         /* the header after this one (checked by tar_next) */
  char longname[4096];  /* GNU 'L' / pax path for the next member */
  int last;             /* the current header is the last (bad checksum) */
} tar_scan;

/* Opens url's archive on its first header. Fails, naming the archive and the byte, on
 * a corrupt header or an archive that ends without end-of-archive blocks. *out is set
 * even on failure (tar_scan_close it). */
vd_code tar_scan_open(vd_ctx *ctx, const char *url, tar_scan **out, vd_err *err);
vd_code tar_scan_next(tar_scan *s, vd_err *err);
void tar_scan_close(tar_scan *s);

#endif
