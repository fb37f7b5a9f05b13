/* The Zarr part of the LINDI check (check_lindi.h): .zarray, .zattrs and .zgroup that do
 * not parse, the chunk keys a .zarray's shape and chunks imply that no ref holds (a
 * reader fills them with the fill value, silently), and raw chunks (no compressor, no
 * filters) whose length is not the chunk's byte size. From lindi.json alone: no chunk
 * is read. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_lindi.h"

vd_code lc_zarr_meta(lc_state *r, const char *part, const char *key, const char *base, const char *text, size_t n,
                     vd_err *err) {
  char why[200];
  if (strcmp(base, ".zarray") != 0) {
    cJSON *j = cJSON_ParseWithLength(text, n);
    int obj = cJSON_IsObject(j);
    cJSON_Delete(j);
    return obj ? VD_OK : lc_add(r, VC_MALFORMED, part, key, err, "%s: %s %s", r->where, key,
                                j ? "is not a JSON object" : "does not parse as JSON");
  }
  lindi_zarray z;
  if (lindi_zarray_parse(text, n, &z, why, sizeof why))
    return lc_add(r, VC_MALFORMED, part, key, err, "%s: %s %s", r->where, key, why);
  const char *folder = part ? part : "";
  if (vd_strmap_get(&r->amap, folder) >= 0) return VD_OK; /* a key given twice: the first counts */
  if (r->narr % 16 == 0) {
    lc_array *p = realloc(r->arr, (size_t)(r->narr + 16) * sizeof *p);
    if (!p) return vd_nomem(err);
    r->arr = p;
  }
  lc_array *a = &r->arr[r->narr];
  a->z = z;
  a->present = 0;
  if (!(a->folder = strdup(folder)) || vd_strmap_put(&r->amap, folder, r->narr)) {
    free(a->folder);
    return vd_nomem(err);
  }
  r->narr++;
  return VD_OK;
}

vd_code lc_zarr_key(lc_state *r, const char *key, int64_t len, vd_err *err) {
  if (r->nkeys % 256 == 0) {
    lc_key *p = realloc(r->keys, (size_t)(r->nkeys + 256) * sizeof *p);
    if (!p) return vd_nomem(err);
    r->keys = p;
  }
  lc_key *k = &r->keys[r->nkeys];
  k->len = len;
  if (!(k->key = strdup(key)) || vd_strmap_put(&r->kmap, key, r->nkeys)) {
    free(k->key);
    return vd_nomem(err);
  }
  r->nkeys++;
  return VD_OK;
}

/* The deepest array whose folder key lies in, when the rest of key is one of its chunks. */
static lc_array *array_of(lc_state *r, const char *key, const char **chunk) {
  size_t n = strlen(key);
  char *tmp = malloc(n + 1);
  if (!tmp) return NULL;
  memcpy(tmp, key, n + 1);
  lc_array *found = NULL;
  for (size_t i = n; i-- > 0 && !found;) {
    if (tmp[i] != '/') continue;
    tmp[i] = 0;
    int a = vd_strmap_get(&r->amap, tmp);
    if (a >= 0) {
      found = &r->arr[a];
      *chunk = key + i + 1;
      if (!lindi_zarray_is_chunk(&found->z, *chunk)) found = NULL;
      break;
    }
  }
  int root = found ? -1 : vd_strmap_get(&r->amap, "");
  if (root >= 0 && lindi_zarray_is_chunk(&r->arr[root].z, key)) {
    found = &r->arr[root];
    *chunk = key;
  }
  free(tmp);
  return found;
}

static void dims(const int64_t *v, int n, char *out, size_t cap) {
  size_t k = (size_t)snprintf(out, cap, "[");
  for (int d = 0; d < n && k < cap; d++) k += (size_t)snprintf(out + k, cap - k, d ? ", %lld" : "%lld", (long long)v[d]);
  if (k < cap) snprintf(out + k, cap - k, "]");
}

/* The first LC_MISSING_CAP chunk keys of the grid, in C order, that no ref holds. */
static vd_code absent(lc_state *r, const lc_array *a, vd_err *err) {
  int64_t total = lindi_zarray_nchunks(&a->z), left = total - a->present, listed = 0;
  int64_t idx[LINDI_ZARR_MAXDIM] = {0};
  size_t fl = strlen(a->folder);
  char *key = malloc(fl + 2 + 21 * LINDI_ZARR_MAXDIM), shape[400], chunks[400];
  if (!key) return vd_nomem(err);
  dims(a->z.shape, a->z.ndim, shape, sizeof shape);
  dims(a->z.chunks, a->z.ndim, chunks, sizeof chunks);
  vd_code rc = VD_OK;
  while (!rc && listed < left && listed < LC_MISSING_CAP) {
    memcpy(key, a->folder, fl);
    size_t at = fl ? fl + 1 : 0;
    if (fl) key[fl] = '/';
    lindi_zarray_key(&a->z, idx, key + at);
    if (vd_strmap_get(&r->kmap, key) < 0) {
      listed++;
      char more[160] = "";
      if (listed == LC_MISSING_CAP && left > LC_MISSING_CAP)
        snprintf(more, sizeof more, " (and %lld more absent chunk keys of this array, not listed: at most %d are)",
                 (long long)(left - LC_MISSING_CAP), LC_MISSING_CAP);
      rc = lc_add(r, VC_MISSING, fl ? a->folder : NULL, key, err,
                  "%s: no ref for chunk %s of the array (shape %s, chunks %s): it reads as the fill value%s", r->where,
                  key + at, shape, chunks, more);
    }
    int d = a->z.ndim - 1;
    for (; d >= 0; d--) { /* the next grid position, the last index fastest */
      if (++idx[d] < (a->z.shape[d] + a->z.chunks[d] - 1) / a->z.chunks[d]) break;
      idx[d] = 0;
    }
    if (d < 0) break;
  }
  free(key);
  return rc;
}

vd_code lc_zarr_check(lc_state *r, vd_err *err) {
  vd_code rc = VD_OK;
  for (int i = 0; !rc && i < r->nkeys; i++) {
    const char *chunk;
    lc_array *a = array_of(r, r->keys[i].key, &chunk);
    if (!a) continue;
    a->present++;
    int64_t want = lindi_zarray_chunk_bytes(&a->z);
    if (a->z.raw && want >= 0 && r->keys[i].len >= 0 && r->keys[i].len != want)
      rc = lc_add(r, VC_MISMATCH, *a->folder ? a->folder : NULL, r->keys[i].key, err,
                  "%s: chunk %s of an uncompressed array (no compressor, no filters) holds %lld bytes; a chunk is %lld",
                  r->where, chunk, (long long)r->keys[i].len, (long long)want);
  }
  for (int i = 0; !rc && i < r->narr; i++) rc = absent(r, &r->arr[i], err);
  return rc;
}

void lc_zarr_free(lc_state *r) {
  for (int i = 0; i < r->narr; i++) free(r->arr[i].folder);
  for (int i = 0; i < r->nkeys; i++) free(r->keys[i].key);
  free(r->arr);
  free(r->keys);
  vd_strmap_free(&r->amap);
  vd_strmap_free(&r->kmap);
}
