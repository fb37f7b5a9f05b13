/* Reading one chunk (spec sections 4, 5, 9): its page entry through the page layer and,
 * for a data chunk, its object, whose vdschunkmetadata, when present, must agree with
 * the page; chunks the page marks constant, NoValue or unwritten are filled without
 * fetching anything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"
#include "openvds_pages.h"
#include "openvds_write.h"

/* OpenVDS's rule: the object's metadata must equal the page's (hash, or hash + levels). */
static vd_code check_metadata(const vds_layer *l, const unsigned char raw[28], const vd_objinfo *info,
                              const char *where, vd_err *err) {
  const char *m = vd_objinfo_meta(info, "vdschunkmetadata");
  if (!m) return VD_OK; /* OpenVDS too accepts a missing tag when pages exist */
  unsigned char *bytes;
  size_t n;
  if (vd_base64_decode(m, strlen(m), &bytes, &n))
    return vd_fail(err, VD_INVALID, "%s: vdschunkmetadata \"%.40s\" is not valid base64", where, m);
  const unsigned char *want = l->entry_size == 28 ? raw + 4 : raw;
  size_t wlen = l->entry_size == 28 ? 24 : 8;
  int ok = n == wlen && memcmp(bytes, want, wlen) == 0;
  free(bytes);
  if (!ok)
    return vd_fail(err, VD_INVALID, "%s: inconsistent metadata: the object's vdschunkmetadata differs from its page entry",
                   where);
  return VD_OK;
}

vd_code vds_read_chunk(vd_ctx *ctx, const vds_dataset *ds, const vds_layer *l, int64_t chunk, vd_buf *samples,
                       vds_shape *shape, vd_err *err) {
  const vds_channel *ch = &ds->layout.channels[l->channel];
  char *url = NULL;
  vd_buf obj = {0};
  vd_objinfo info = {0};
  char where[600];
  vds_pages *pl = NULL;
  vd_code rc;
  if (!(url = vds_chunk_key_url(ds->url, l->name, chunk))) return vd_nomem(err);
  vd_url_redact(url, where, sizeof where);
  if (chunk < 0 || chunk >= l->chunk_count) {
    rc = vd_fail(err, VD_INVALID, "%s: layer %s has chunks 0 to %lld", where, l->name, (long long)l->chunk_count - 1);
    goto done;
  }
  int64_t idx[VDS_MAXDIM];
  vds_chunk_index(&l->geom, chunk, idx);
  shape->format = ch->format;
  shape->components = ch->components;
  vds_chunk_size(&l->geom, idx, shape->size);
  vds_entry e = {0};
  unsigned char raw[28] = {0};
  e.status = VDS_S_DATA;
  int method = l->has_pages ? l->method : VDS_M_NONE; /* OpenVDS decodes page-less layers as None */
  int decodable = method == VDS_M_NONE || method == VDS_M_RLE || method == VDS_M_ZIP, have_obj = 0;
  if (l->has_pages) {
    if ((rc = vds_pages_open(ctx, ds, l, &pl, err))) goto done;
    if ((rc = vds_pages_entry_object(pl, chunk, decodable ? url : NULL, &e, raw, &obj, &info, &have_obj, err)))
      goto done;
  }
  if (e.status != VDS_S_DATA) {
    rc = vds_fill(ch, shape, e.status, e.constant, samples, err);
    goto done;
  }
  if (!decodable) { /* refuse before fetching */
    rc = vds_decode(method, NULL, 0, NULL, where, samples, NULL, err);
    goto done;
  }
  if (!have_obj && (rc = vd_get(ctx, url, 0, -1, &obj, &info, err))) goto done;
  if (l->has_pages && (rc = check_metadata(l, raw, &info, where, err))) goto done;
  rc = vds_decode(method, obj.data, obj.len, shape, where, samples, NULL, err);
done:
  vds_pages_close(pl);
  vd_buf_free(&obj);
  vd_objinfo_free(&info);
  free(url);
  return rc;
}


/* The inverse of check_metadata's decoding (section 5): base64 of the entry's hash, or
 * of hash + levels for a 28-byte entry (the object size is only in the page). */
vd_code vds_meta_encode(const unsigned char *raw, int entry_size, char *out, size_t n, vd_err *err) {
  char *b = entry_size == 28 ? vd_base64_encode(raw + 4, 24) : vd_base64_encode(raw, 8);
  if (!b) return vd_nomem(err);
  snprintf(out, n, "%s", b);
  free(b);
  return VD_OK;
}
