/* lindi_read(url, name [, offset [, size]]): bytes of one member of a LINDI archive,
 * located through the (cached) index and fetched with one range request
 * (lindi_read_member, formats/lindi/lindi.c). */
#include <stdint.h>
#include <stdlib.h>

#include "formats/lindi/lindi.h"
#include "vd_catalog.h"

static vd_code call(vd_ctx *ctx, const vd_value *a, int n, vd_value *out, vd_err *err) {
  *out = vd_null();
  for (int i = 0; i < n; i++)
    if (a[i].type == VD_NULL) return VD_OK;
  char *url = vd_value_strdup(&a[0]), *name = vd_value_strdup(&a[1]);
  int64_t off = 0, size = -1;
  vd_buf b = {0};
  vd_code rc = VD_OK;
  if (!url || !name)
    rc = vd_fail(err, VD_INVALID, "lindi_read: url and name must be text");
  else if ((n > 2 && vd_value_as_int(&a[2], &off)) || (n > 3 && vd_value_as_int(&a[3], &size)))
    rc = vd_fail(err, VD_INVALID, "lindi_read: offset and size must be integers");
  else if (!(rc = lindi_read_member(ctx, url, name, off, size, n > 3, &b, err))) {
    *out = vd_owned_blob(b.data ? b.data : calloc(1, 1), b.len);
    b.data = NULL;
  }
  vd_buf_free(&b);
  free(url);
  free(name);
  return rc;
}


const vd_function vd_fn_lindi_read = {
    .name = "lindi_read",
    .min_args = 2,
    .max_args = 4,
    .flags = VD_FN_IO,
    .result = VD_BLOB,
    .arg_types = {VD_TEXT, VD_TEXT, VD_INT, VD_INT},
    .call = call,
    .args = "url, name [, offset, size]",
    .doc = "a LINDI archive member's bytes, or a range of them, as a BLOB"};
