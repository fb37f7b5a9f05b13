/* Zarr v2 .zarray metadata for the LINDI check (lindi_zarr.h), read from the Zarr v2
 * spec's fields: shape, chunks, dtype (numpy's typestr), compressor, filters,
 * dimension_separator. */
#include "lindi_zarr.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* numpy typestr: [<>|=]? kind digits ("<f8", "|u1", "<U5": 4 bytes a character,
 * "<M8[ns]"); -1 for object and anything else. */
static int64_t itemsize_of(const char *t) {
  if (*t == '<' || *t == '>' || *t == '|' || *t == '=') t++;
  char kind = *t++;
  if (!strchr("biufcSUVMm", kind) || *t < '0' || *t > '9') return -1;
  char *end;
  long long n = strtoll(t, &end, 10);
  if (n <= 0 || (*end && *end != '[')) return -1;
  return kind == 'U' ? 4 * n : n;
}

static int ints(const cJSON *a, int64_t *out, int *n, int64_t min) {
  if (!cJSON_IsArray(a)) return -1;
  int k = 0;
  for (const cJSON *e = a->child; e; e = e->next) {
    if (k == LINDI_ZARR_MAXDIM || !cJSON_IsNumber(e) || e->valuedouble < (double)min ||
        e->valuedouble > 9007199254740992.0 || e->valuedouble != (double)(int64_t)e->valuedouble)
      return -1;
    out[k++] = (int64_t)e->valuedouble;
  }
  *n = k;
  return 0;
}

int lindi_zarray_parse(const char *text, size_t n, lindi_zarray *z, char *why, size_t whylen) {
  memset(z, 0, sizeof *z);
  cJSON *j = cJSON_ParseWithLength(text, n);
  const char *bad = NULL;
  int ns = 0, nc = 0;
  if (!j) bad = "does not parse as JSON";
  else if (!cJSON_IsObject(j)) bad = "is not a JSON object";
  else if (ints(cJSON_GetObjectItemCaseSensitive(j, "shape"), z->shape, &ns, 0))
    bad = "has no shape (an array of integers >= 0)";
  else if (ints(cJSON_GetObjectItemCaseSensitive(j, "chunks"), z->chunks, &nc, 1))
    bad = "has no chunks (an array of integers >= 1)";
  else if (ns != nc) bad = "has chunks of another length than its shape";
  if (!bad) {
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(j, "dtype");
    const cJSON *cp = cJSON_GetObjectItemCaseSensitive(j, "compressor");
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(j, "filters");
    const cJSON *ds = cJSON_GetObjectItemCaseSensitive(j, "dimension_separator");
    if (!cJSON_IsString(dt) && !cJSON_IsArray(dt)) bad = "has no dtype";
    z->ndim = ns;
    z->itemsize = cJSON_IsString(dt) ? itemsize_of(dt->valuestring) : -1;
    /* raw only when the metadata says so: a .zarray without compressor is not one */
    z->raw = cJSON_IsNull(cp) && (!fl || cJSON_IsNull(fl) || (cJSON_IsArray(fl) && !fl->child));
    z->sep = cJSON_IsString(ds) && strcmp(ds->valuestring, "/") == 0 ? '/' : '.';
  }
  cJSON_Delete(j);
  if (bad) snprintf(why, whylen, "%s", bad);
  return bad ? -1 : 0;
}

static int64_t grid(const lindi_zarray *z, int d) { return (z->shape[d] + z->chunks[d] - 1) / z->chunks[d]; }

int64_t lindi_zarray_nchunks(const lindi_zarray *z) {
  int64_t t = 1;
  for (int d = 0; d < z->ndim; d++) {
    int64_t g = grid(z, d);
    if (g == 0) return 0;
    if (t > INT64_MAX / g) return INT64_MAX;
    t *= g;
  }
  return t;
}

int64_t lindi_zarray_chunk_bytes(const lindi_zarray *z) {
  if (z->itemsize < 0) return -1;
  int64_t t = z->itemsize;
  for (int d = 0; d < z->ndim; d++) {
    if (t > INT64_MAX / z->chunks[d]) return -1;
    t *= z->chunks[d];
  }
  return t;
}

int lindi_zarray_is_chunk(const lindi_zarray *z, const char *s) {
  int dims = z->ndim ? z->ndim : 1; /* a 0-d array's one chunk is "0" */
  for (int d = 0; d < dims; d++) {
    if (d && *s++ != z->sep) return 0;
    if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9')) return 0;
    int64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
      if (v > (INT64_MAX - 9) / 10) return 0;
      v = v * 10 + (*s - '0');
    }
    if (z->ndim ? v >= grid(z, d) : v != 0) return 0;
  }
  return *s == 0;
}

void lindi_zarray_key(const lindi_zarray *z, const int64_t *idx, char *out) {
  if (!z->ndim) {
    strcpy(out, "0");
    return;
  }
  for (int d = 0; d < z->ndim; d++) {
    if (d) *out++ = z->sep;
    out += sprintf(out, "%lld", (long long)idx[d]);
  }
}
