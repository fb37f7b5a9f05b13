/* libFuzzer target: chunk-metadata pages. The first 5 input bytes pick the layer's
 * entry size (8 or 28), chunkMetadataPageSize (1..64), chunk count (1..200) and the
 * page number; a vds_layer is built by hand from them and the remaining bytes are the
 * downloaded page given to vds_page_check, then every whole entry in them is decoded
 * with vds_entry_decode (whether or not the check passed). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/openvds/openvds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 5) return 0;
  vds_layer l;
  memset(&l, 0, sizeof l);
  l.name = "Dimensions_012LOD0";
  l.has_pages = 1;
  l.entry_size = (data[0] & 1) ? 28 : 8;
  l.page_size = 1 + data[1] % 64;
  l.chunk_count = 1 + (int64_t)((data[2] | data[3] << 8) % 200);
  l.page_count = (l.chunk_count - 1) / l.page_size + 1;
  l.valid_chunk_count = l.serialized_size = l.uncompressed_size = -1;
  int64_t page = data[4] % l.page_count;
  data += 5;
  size -= 5;

  /* copy into an exact-size buffer (NULL when empty) so ASan sees any read past it */
  unsigned char *buf = size ? malloc(size) : NULL;
  if (size && !buf) return 0;
  if (size) memcpy(buf, data, size);
  vd_err err;
  vd_code rc = vds_page_check(&l, page, size, "fuzz/ChunkMetadata", &err);
  if (rc == VD_OK) {
    /* what the check promises: whole entries, no more than a page, covering the page's chunks */
    size_t entries = size / (size_t)l.entry_size;
    int64_t need = l.chunk_count - page * l.page_size;
    if (size % (size_t)l.entry_size || entries == 0 || (int64_t)entries > l.page_size ||
        (int64_t)entries < (need < l.page_size ? need : l.page_size))
      abort();
  }
  volatile unsigned sink = 0;
  for (size_t off = 0; off + (size_t)l.entry_size <= size; off += (size_t)l.entry_size) {
    vds_entry e;
    vds_entry_decode(buf + off, l.entry_size, &e);
    if (e.status < VDS_S_UNWRITTEN || e.status > VDS_S_NOVALUE) abort();
    if (l.entry_size == 28) {
      if (!e.levels) abort();
      for (int k = 0; k < 16; k++) sink += e.levels[k];
    } else if (e.levels || e.object_size) {
      abort();
    }
  }
  (void)sink;
  free(buf);
  return 0;
}
