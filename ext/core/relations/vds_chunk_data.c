/* vds_chunk_data(url, layer, chunk): the decoded samples of one chunk as a BLOB in the
 * layer's format, and vds_read_chunk, which vds_samples shares. Chunks the page marks constant, NoValue or unwritten are filled
 * without fetching anything; data chunks are fetched and their vdschunkmetadata, when
 * present, must agree with the page. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../store/store.h"
#include "../util/base64.h"
#include "vds_cursor.h"

/* The page entry of chunk from a page's bytes (all zero, unwritten, past its end). */
static vd_code entry_from(const vds_layer *l, int64_t chunk, int64_t p, const vd_blob *page, const char *url,
                          vds_entry *e, unsigned char raw[28], vd_err *err) {
  char where[600];
  vd_url_redact(url, where, sizeof where);
  vd_code rc = vds_page_check(l, p, page->len, where, err);
  size_t off = (size_t)(chunk % l->page_size) * l->entry_size;
  if (!rc && off + l->entry_size <= page->len) memcpy(raw, page->data + off, l->entry_size);
  vds_entry_decode(raw, l->entry_size, e);
  return rc;
}

/* The chunk's page entry and, for a data chunk, its object. The object's key is known
 * from the chunk index alone, so when the page is not cached both are asked for at once
 * (one round trip instead of two); the object is dropped when the page says the chunk is
 * constant, NoValue or unwritten. With fetch_object 0 only the page is read. */
static vd_code entry_and_object(vd_ctx *ctx, const vds_dataset *ds, const vds_layer *l, int64_t chunk,
                                const char *obj_url, int fetch_object, vds_entry *e, unsigned char raw[28],
                                vd_buf *obj, vd_objinfo *info, int *have_obj, vd_err *err) {
  int64_t p = chunk / l->page_size;
  char *key = vds_page_key(l, p);
  memset(raw, 0, 28);
  *have_obj = 0;
  if (!key) { /* directory says -1: nothing written on this page */
    vds_entry_decode(raw, l->entry_size, e);
    return VD_OK;
  }
  char *url = vd_url_join(ds->url, key);
  free(key);
  if (!url) return vd_nomem(err);
  vd_code rc = VD_OK;
  vd_blob *page = vd_cache_lookup(ctx, url, url);
  if (page || !fetch_object) {
    if (page || !(rc = vd_fetch_doc(ctx, url, &page, err))) rc = entry_from(l, chunk, p, page, url, e, raw, err);
  } else {
    vd_getreq r[2] = {{.url = url, .len = -1}, {.url = obj_url, .len = -1, .want_info = 1}};
    vd_get_many(ctx, r, 2); /* each request carries its own outcome */
    if (r[0].rc) {
      rc = r[0].rc;
      *err = r[0].err;
    } else if (!(page = vd_blob_from_buf(&r[0].body))) {
      rc = vd_nomem(err);
    } else {
      vd_cache_store(ctx, url, page);
      rc = entry_from(l, chunk, p, page, url, e, raw, err);
    }
    if (!rc && e->status == VDS_S_DATA) { /* the object counts only for a data chunk */
      if (r[1].rc) {
        rc = r[1].rc;
        *err = r[1].err;
      } else {
        *obj = r[1].body, *info = r[1].info;
        r[1].body = (vd_buf){0}, r[1].info = (vd_objinfo){0};
        *have_obj = 1;
      }
    }
    for (int i = 0; i < 2; i++) {
      vd_buf_free(&r[i].body);
      vd_objinfo_free(&r[i].info);
    }
  }
  vd_blob_unref(page);
  free(url);
  return rc;
}

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
  char where[600], name[300];
  vd_code rc;
  snprintf(name, sizeof name, "%s/%lld", l->name, (long long)chunk);
  if (!(url = vd_url_join(ds->url, name))) return vd_nomem(err);
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
  if (l->has_pages &&
      (rc = entry_and_object(ctx, ds, l, chunk, url, decodable, &e, raw, &obj, &info, &have_obj, err)))
    goto done;
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
  vd_buf_free(&obj);
  vd_objinfo_free(&info);
  free(url);
  return rc;
}

static vd_code call(vd_ctx *ctx, const vd_value *args, int nargs, vd_value *out, vd_err *err) {
  (void)nargs;
  *out = vd_null();
  int64_t chunk;
  if (args[0].type == VD_NULL || args[1].type == VD_NULL || args[2].type == VD_NULL) return VD_OK;
  if (vd_value_as_int(&args[2], &chunk)) return vd_fail(err, VD_INVALID, "vds_chunk_data: chunk must be an integer");
  vds_cur *c;
  vd_code rc = vds_cur_open(ctx, args, 2, 1, &c, err);
  if (rc) return rc;
  vd_buf samples = {0};
  vds_shape shape;
  rc = vds_read_chunk(ctx, c->ds, c->layer, chunk, &samples, &shape, err);
  if (!rc) {
    *out = vd_owned_blob(samples.data, samples.len);
    samples.data = NULL;
  }
  vd_buf_free(&samples);
  vds_cur_close(c);
  return rc;
}

const vd_function vd_fn_vds_chunk_data = {"vds_chunk_data", 3, 3, VD_FN_IO, VD_BLOB, {VD_TEXT, VD_TEXT, VD_INT}, call,
    .args = "url, layer, chunk", .doc = "a chunk's decoded samples as a BLOB (None, RLE, Zip; constant and unwritten chunks filled)"};
