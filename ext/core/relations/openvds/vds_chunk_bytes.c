/* vds_chunk_bytes(url, layer, chunk [, level]): the start of a wavelet chunk object
 * that adaptive level needs (or the whole object), as OpenVDS fetches it: one range
 * GET of the length the page entry implies (spec section 4). */
#include <stdio.h>
#include <stdlib.h>

#include "formats/openvds/openvds_objects.h"
#include "formats/openvds/openvds_pages.h"
#include "store/store.h"
#include "vds_cursor.h"

static vd_code call(vd_ctx *ctx, const vd_value *args, int nargs, vd_value *out, vd_err *err) {
  *out = vd_null();
  int64_t chunk, level = -1;
  if (args[0].type == VD_NULL || args[1].type == VD_NULL || args[2].type == VD_NULL) return VD_OK;
  if (vd_value_as_int(&args[2], &chunk)) return vd_fail(err, VD_INVALID, "vds_chunk_bytes: chunk must be an integer");
  if (nargs > 3 && args[3].type != VD_NULL && vd_value_as_int(&args[3], &level))
    return vd_fail(err, VD_INVALID, "vds_chunk_bytes: level must be an integer");
  vds_cur *c;
  vd_code rc = vds_cur_open(ctx, args, 2, 1, &c, err);
  if (rc) return rc;
  const vds_layer *l = c->layer;
  vds_pages *pl = NULL;
  vds_entry e;
  char key[400], *url = NULL, where[600] = "";
  snprintf(key, sizeof key, "%s/%lld", l->name, (long long)chunk);
  if (!(url = vd_url_join(c->ds->url, key))) rc = vd_nomem(err);
  else vd_url_redact(url, where, sizeof where);
  if (!rc && !(rc = vds_need_wavelet(c->ds, l, err)) && !(rc = vds_pages_open(ctx, c->ds, l, &pl, err)))
    rc = vds_pages_entry(pl, chunk, &e, NULL, err);
  int64_t n = -1;
  if (!rc && e.status != VDS_S_DATA)
    rc = vd_fail(err, VD_INVALID, "%s: no object to read (its page entry says %s)", where,
                 e.status == VDS_S_UNWRITTEN ? "unwritten" : "constant");
  if (!rc && (n = vds_level_bytes(e.object_size, e.levels, (int)(level < -1 || level > 15 ? 99 : level))) < 0)
    rc = vd_fail(err, VD_INVALID, "%s: no adaptive level %lld (levels: -1 for the whole object, then 0 up to the "
                 "first zero level byte)", where, (long long)level);
  vd_buf b = {0};
  if (!rc && n > ctx->cfg.max_alloc) rc = vd_fail_max_alloc(err, where, n, ctx->cfg.max_alloc);
  if (!rc && n > 0 && !(rc = vd_get(ctx, url, 0, n, &b, NULL, err)) && (int64_t)b.len != n) {
    rc = vd_fail(err, VD_INVALID, "%s: %zu bytes, but its page entry says the object holds %u (level %lld needs %lld)",
                 where, b.len, e.object_size, (long long)level, (long long)n);
  }
  if (!rc) {
    *out = n > 0 ? vd_owned_blob(b.data, b.len) : vd_blob_val("", 0);
    if (n > 0) b.data = NULL;
  }
  vd_buf_free(&b);
  free(url);
  vds_pages_close(pl);
  vds_cur_close(c);
  return rc;
}

const vd_function vd_fn_vds_chunk_bytes = {"vds_chunk_bytes", 3, 4, VD_FN_IO, VD_BLOB, {VD_TEXT, VD_TEXT, VD_INT, VD_INT},
    call, .args = "url, layer, chunk [, level]",
    .doc = "the bytes of a wavelet chunk object that an adaptive level needs (without level: the whole object), with one range GET"};
