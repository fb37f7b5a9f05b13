/* Shared cursor for the OpenVDS relations (see vds_cursor.h). */
#include "vds_cursor.h"

#include <stdlib.h>
#include <string.h>

vd_code vds_cur_open(vd_ctx *ctx, const vd_value *args, int nargs, int with_layer, vds_cur **out, vd_err *err) {
  vds_cur *c = calloc(1, sizeof *c);
  if (!c) return vd_nomem(err);
  c->ctx = ctx;
  *out = c;
  if (nargs < 1 + with_layer || args[0].type == VD_NULL || (with_layer && args[1].type == VD_NULL)) return VD_OK;
  char *url = vd_value_strdup(&args[0]);
  if (!url) {
    vds_cur_close(c);
    *out = NULL;
    return vd_fail(err, VD_INVALID, "the dataset url must be text, not a %s", args[0].type == VD_BLOB ? "blob" : "number");
  }
  vd_code rc = vds_open(ctx, url, &c->ds, err);
  free(url);
  if (!rc && with_layer) {
    char *name = vd_value_strdup(&args[1]);
    if (!name)
      rc = vd_fail(err, VD_INVALID, "the layer name must be text, not a %s", args[1].type == VD_BLOB ? "blob" : "number");
    else
      rc = vds_find_layer(c->ds, name, &c->layer, err);
    free(name);
  }
  if (rc) {
    vds_cur_close(c);
    *out = NULL;
  }
  return rc;
}

vd_code vds_cur_next(void *cur, vd_err *err) {
  (void)err;
  vds_cur *c = cur;
  free(c->scratch);
  c->scratch = NULL;
  c->row++;
  return VD_OK;
}

int vds_cur_eof(void *cur) {
  vds_cur *c = cur;
  return c->row >= c->nrows;
}

int64_t vds_cur_rowid(void *cur) { return ((vds_cur *)cur)->row; }

void vds_cur_close(void *cur) {
  vds_cur *c = cur;
  if (!c) return;
  vds_close(c->ds);
  free(c->scratch);
  free(c);
}

double vds_cur_known(vd_ctx *ctx, const vd_value *args, int nargs, int what) {
  int with_layer = what != VDS_KNOWN_LAYERS;
  if (nargs < 1 + with_layer || args[0].type != VD_TEXT || (with_layer && args[1].type != VD_TEXT)) return 0;
  char *url = vd_value_strdup(&args[0]), *name = with_layer ? vd_value_strdup(&args[1]) : NULL;
  vds_dataset *ds = url && (name || !with_layer) ? vds_peek(ctx, url) : NULL;
  double n = 0;
  if (ds && !with_layer) n = ds->nlayers;
  for (int i = 0; ds && with_layer && i < ds->nlayers; i++) {
    const vds_layer *l = &ds->layers[i];
    if (strcmp(l->name, name) != 0) continue;
    n = what == VDS_KNOWN_PAGES ? (double)l->page_count
        : what == VDS_KNOWN_WRITTEN && l->valid_chunk_count >= 0 ? (double)l->valid_chunk_count
                                                                  : (double)l->chunk_count;
  }
  vds_close(ds);
  free(url);
  free(name);
  return n;
}
