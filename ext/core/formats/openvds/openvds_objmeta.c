/* What a chunk object's vdschunkmetadata says (spec section 5) and what the adaptive
 * level bytes of a wavelet entry mean (section 4); pure functions, fuzzed
 * (tests/fuzz/fuzz_chunkmeta.c). */
#include <stdlib.h>

#include "store/store.h"
#include "util/base64.h"
#include "openvds_objects.h"

int vds_meta_decode(const char *text, size_t len, int entry_size, uint64_t *hash, unsigned char levels[16]) {
  unsigned char *b;
  size_t n;
  /* 12 characters for 8 bytes, 32 for 24: anything longer is not metadata of either */
  if (len > 64 || vd_base64_decode(text, len, &b, &n)) return -1;
  int rc = -1;
  if (n == (entry_size == 28 ? 24u : 8u)) {
    uint64_t h = 0;
    for (int i = 0; i < 8; i++) h |= (uint64_t)b[i] << (8 * i);
    if (h) { /* 0 is "unknown", never a legal hash */
      *hash = h;
      if (levels) {
        for (int i = 0; i < 16; i++) levels[i] = n == 24 ? b[8 + i] : 0;
      }
      rc = 0;
    }
  }
  free(b);
  return rc;
}

int64_t vds_level_bytes(uint32_t object_size, const unsigned char levels[16], int level) {
  if (level < -1 || level > 15) return -1;
  int64_t n = object_size;
  for (int k = 0; k <= level; k++) {
    if (!levels[k]) return -1;
    n = n * levels[k] / 255;
  }
  return n;
}

vd_code vds_need_wavelet(const vds_dataset *ds, const vds_layer *l, vd_err *err) {
  if (l->has_pages && l->entry_size == 28) return VD_OK;
  char where[600];
  vd_url_redact(ds->url, where, sizeof where);
  return vd_fail(err, VD_INVALID,
                 "%s: layer %s is not wavelet-compressed (compression %s): it has no adaptive levels (they are in "
                 "28-byte page entries)",
                 where, l->name, l->compression ? l->compression : "unknown");
}
