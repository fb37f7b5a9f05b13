/* What the store says of an object (vd_objinfo: size, ETag, time, user metadata) and the
 * one wording of an object too large to read whole: shared by every backend, so it sits
 * at the bottom of the store. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store.h"

void vd_objinfo_free(vd_objinfo *i) {
  for (int k = 0; k < i->nmeta; k++) {
    free(i->meta[k].key);
    free(i->meta[k].value);
  }
  free(i->meta);
  i->meta = NULL;
  i->nmeta = 0;
}

int vd_objinfo_add_meta(vd_objinfo *i, const char *key, size_t klen, const char *val, size_t vlen) {
  vd_kv *m = realloc(i->meta, (i->nmeta + 1) * sizeof *m);
  if (!m) return -1;
  i->meta = m;
  char *k = strndup(key, klen), *v = strndup(val, vlen);
  if (!k || !v) {
    free(k);
    free(v);
    return -1;
  }
  for (char *p = k; *p; p++)
    if (*p >= 'A' && *p <= 'Z') *p += 32;
  m[i->nmeta].key = k;
  m[i->nmeta].value = v;
  i->nmeta++;
  return 0;
}

const char *vd_objinfo_meta(const vd_objinfo *i, const char *suffix) {
  size_t sl = strlen(suffix);
  for (int k = 0; k < i->nmeta; k++) {
    size_t kl = strlen(i->meta[k].key);
    if (kl >= sl && strcasecmp(i->meta[k].key + kl - sl, suffix) == 0) return i->meta[k].value;
  }
  return NULL;
}

vd_code vd_fail_max_alloc(vd_err *err, const char *where, int64_t size, int64_t cap) {
  if (size < 0)
    return vd_fail(err, VD_IO, "%s: the object is larger than max_alloc (%lld bytes; see vdsql_config('max_alloc')); "
                   "transfer aborted", where, (long long)cap);
  return vd_fail(err, VD_IO, "%s: the object is %lld bytes, more than max_alloc (%lld bytes; see vdsql_config('max_alloc'))",
                 where, (long long)size, (long long)cap);
}
