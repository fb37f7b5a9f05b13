/* lindi_read(url, name [, offset [, size]]): bytes of one member of a LINDI archive,
 * located through the (cached) index and fetched with one range request. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "formats/lindi/lindi.h"
#include "store/store.h"
#include "vd_catalog.h"

static vd_code call(vd_ctx *ctx, const vd_value *a, int n, vd_value *out, vd_err *err) {
  *out = vd_null();
  for (int i = 0; i < n; i++)
    if (a[i].type == VD_NULL) return VD_OK;
  char *url = vd_value_strdup(&a[0]), *name = vd_value_strdup(&a[1]);
  int64_t off = 0, size = -1;
  lindi_index ix = {0};
  vd_buf b = {0};
  vd_code rc = VD_OK;
  char where[600];
  if (!url || !name) {
    rc = vd_fail(err, VD_INVALID, "lindi_read: url and name must be text");
    goto done;
  }
  vd_url_redact(url, where, sizeof where);
  if ((n > 2 && vd_value_as_int(&a[2], &off)) || (n > 3 && vd_value_as_int(&a[3], &size))) {
    rc = vd_fail(err, VD_INVALID, "lindi_read: offset and size must be integers");
    goto done;
  }
  if ((rc = lindi_open(ctx, url, &ix, err))) goto done;
  const lindi_file *f = lindi_find(&ix, name);
  if (!f) {
    rc = vd_fail(err, VD_NOTFOUND, "%s: no member \"%s\" in the index", where, name);
    goto done;
  }
  if (size < 0 && off >= 0 && off <= f->s) size = f->s - off; /* off in range first: f->s - off cannot wrap */
  if (off < 0 || size < 0 || off > f->s || size > f->s - off) {
    int64_t end; /* for the message only, saturated where off + size would wrap */
    if (n <= 3) end = f->s; /* no size given: to the end of the member */
    else if (__builtin_add_overflow(off, size, &end)) end = off < 0 ? INT64_MIN : INT64_MAX;
    rc = vd_fail(err, VD_INVALID, "%s: bytes %lld..%lld are outside member \"%s\" (%lld bytes)", where, (long long)off,
                 (long long)end, name, (long long)f->s);
    goto done;
  }
  if (size > 0 && (rc = vd_get(ctx, url, f->d + off, size, &b, NULL, err))) goto done;
  if ((int64_t)b.len != size) {
    rc = vd_fail(err, VD_INVALID, "%s: the archive ends inside member \"%s\"", where, name);
    goto done;
  }
  *out = vd_owned_blob(b.data ? b.data : calloc(1, 1), b.len);
  b.data = NULL;
done:
  vd_buf_free(&b);
  lindi_index_free(&ix);
  free(url);
  free(name);
  return rc;
}

const vd_function vd_fn_lindi_read = {"lindi_read", 2, 4, VD_FN_IO, VD_BLOB, {VD_TEXT, VD_TEXT, VD_INT, VD_INT}, call,
    .args = "url, name [, offset, size]", .doc = "a LINDI archive member's bytes, or a range of them, as a BLOB"};
