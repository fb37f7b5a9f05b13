/* Chunk-metadata page entries (spec section 4): hash classes and page validation. */
#include <string.h>

#include "openvds.h"

/* Written out rather than as a loop: compilers make this one 8-byte load (a loop stayed
 * eight dependent steps, and every row of a chunk scan decodes one). */
static uint64_t le64(const unsigned char *p) {
  return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 |
         (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

int vds_hash_status(uint64_t hash) {
  return hash == 0 ? VDS_S_UNWRITTEN
         : hash == ~(uint64_t)0 ? VDS_S_NOVALUE
         : (hash >> 32) == 0x01010101u ? VDS_S_CONSTANT
                                       : VDS_S_DATA;
}

void vds_entry_decode(const unsigned char *p, int entry_size, vds_entry *e) {
  memset(e, 0, sizeof *e);
  const unsigned char *h = p;
  if (entry_size == 28) {
    e->object_size = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    h = p + 4;
    e->levels = p + 12;
  }
  e->hash = le64(h);
  e->status = vds_hash_status(e->hash);
  if (e->status == VDS_S_CONSTANT) {
    uint32_t bits = (uint32_t)e->hash;
    memcpy(&e->constant, &bits, 4);
  }
}

vd_code vds_page_check(const vds_layer *l, int64_t page, size_t len, const char *where, vd_err *err) {
  size_t es = (size_t)l->entry_size;
  if (len == 0) return vd_fail(err, VD_INVALID, "%s: empty chunk-metadata page", where);
  if (len % es)
    return vd_fail(err, VD_INVALID, "%s: %zu bytes is not a whole number of %zu-byte entries", where, len, es);
  int64_t entries = (int64_t)(len / es);
  if (entries > l->page_size)
    return vd_fail(err, VD_INVALID, "%s: %lld entries, more than chunkMetadataPageSize %d", where,
                   (long long)entries, l->page_size);
  int64_t need = l->chunk_count - page * l->page_size;
  if (need > l->page_size) need = l->page_size;
  if (entries < need)
    return vd_fail(err, VD_INVALID, "%s: page ends after %lld entries, before chunk %lld which it must hold",
                   where, (long long)entries, (long long)(page * l->page_size + entries));
  return VD_OK;
}
