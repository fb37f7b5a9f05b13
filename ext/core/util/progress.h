/* Progress of long multi-object jobs (audits, repairs, uploads, listings) on stderr,
 * when vdsql_config('progress') is 'on': the core's only output outside of results
 * and errors. Lines look like
 *   vdsql: vds_audit Dimensions_012LOD0: 2048 / 10000 objects, 812/s
 * at most four a second, and a final line ending in ", done in 12.3 s". */
#ifndef VD_PROGRESS_H
#define VD_PROGRESS_H

#include <stdint.h>

#include "vd_ctx.h"

typedef struct vd_progress {
  int on;
  char what[160];
  int64_t done, total; /* total < 0: not known yet */
  double t0, last;     /* monotonic seconds */
} vd_progress;

/* what names the job (truncated to fit); nothing is printed when progress is off. */
void vd_progress_start(vd_progress *p, const vd_ctx *ctx, const char *what, int64_t total);
void vd_progress_total(vd_progress *p, int64_t total);
/* n more objects done; prints when a quarter second passed since the last line. */
void vd_progress_add(vd_progress *p, int64_t n);
/* The final line (once; only when started with progress on). */
void vd_progress_end(vd_progress *p);

#endif
