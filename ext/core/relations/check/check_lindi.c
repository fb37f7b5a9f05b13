/* The LINDI check: whether the file can be read at all (its first bytes, and for the tar
 * form its index). The LINDI findings themselves (index against headers, refs, Zarr
 * chunks) come with the LINDI part of issue 30. */
#include <stdlib.h>

#include "check_format.h"
#include "formats/lindi/lindi.h"
#include "store/store.h"

typedef struct {
  int64_t items;
} lvc;

static vd_code open_(vd_ctx *ctx, const char *url, void **state, vc_unopened *how, vd_err *err) {
  (void)how;
  lvc *r = calloc(1, sizeof *r);
  if (!r) return vd_nomem(err);
  *state = r;
  vd_blob *b = NULL;
  vd_code rc = lindi_prefix(ctx, url, &b, err);
  if (!rc && !lindi_is_json_form(b->data, b->len)) {
    lindi_index ix = {0};
    rc = lindi_open(ctx, url, &ix, err);
    lindi_index_free(&ix);
  }
  vd_blob_unref(b);
  return rc;
}

static vd_code next(void *state, vc_row *row, int *eof, vd_err *err) {
  (void)state, (void)row, (void)err;
  *eof = 1;
  return VD_OK;
}

static int64_t items(const void *state) { return ((const lvc *)state)->items; }

static void close_(void *state) { free(state); }

const vc_checker vc_lindi = {"lindi", open_, next, items, close_};
