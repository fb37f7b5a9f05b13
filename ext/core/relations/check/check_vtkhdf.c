/* The VTKHDF check: whether the file can be read at all (vh_open, through the HDF5 helper
 * process). The VTKHDF findings themselves (sub-files, virtual-dataset sources, counts and
 * offsets, external links) come with the VTKHDF part of issue 30. */
#include <stdlib.h>

#include "check_format.h"
#include "formats/vtkhdf/vtkhdf.h"
#include "store/store.h"

typedef struct {
  int64_t items;
} hvc;

static vd_code open_(vd_ctx *ctx, const char *url, void **state, vc_unopened *how, vd_err *err) {
  (void)how;
  hvc *r = calloc(1, sizeof *r);
  if (!r) return vd_nomem(err);
  *state = r;
  vh_doc doc = {0};
  vd_code rc = vh_open(ctx, url, 0, &doc, err);
  vh_doc_free(&doc);
  return rc;
}

static vd_code next(void *state, vc_row *row, int *eof, vd_err *err) {
  (void)state, (void)row, (void)err;
  *eof = 1;
  return VD_OK;
}

static int64_t items(const void *state) { return ((const hvc *)state)->items; }

static void close_(void *state) { free(state); }

const vc_checker vc_vtkhdf = {"vtkhdf", open_, next, items, close_};
