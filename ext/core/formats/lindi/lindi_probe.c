/* The sizes of the objects external refs name, one HEAD each, in parallel where the
 * store can (lindi_refs.h): what the LINDI check compares the refs' ranges with. */
#include <string.h>

#include "lindi_refs.h"
#include "store/store.h"

void lindi_probe_sizes(vd_ctx *ctx, char *const *urls, int n, int64_t *size, vd_code *rc, vd_err *errs) {
  vd_getreq q[LINDI_PROBE_MAX];
  memset(q, 0, sizeof q);
  for (int i = 0; i < n; i++) q[i].url = urls[i], q[i].head = 1;
  vd_get_many(ctx, q, n);
  for (int i = 0; i < n; i++) {
    rc[i] = q[i].rc;
    size[i] = q[i].rc ? -1 : q[i].info.size;
    errs[i] = q[i].err;
    vd_objinfo_free(&q[i].info);
    vd_buf_free(&q[i].body);
  }
}
