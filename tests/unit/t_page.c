/* Page entries and page validation: hash classes with their on-disk encodings,
 * short last pages, truncated pages, 28-byte wavelet entries. */
#include <string.h>

#include "formats/openvds/openvds.h"
#include "tap.h"

static void entries(void) {
  static const unsigned char zero[8] = {0}, one[8] = {0, 0, 0x80, 0x3f, 1, 1, 1, 1},
                             half[8] = {0, 0, 0, 0xbf, 1, 1, 1, 1}, nov[8] = {255, 255, 255, 255, 255, 255, 255, 255},
                             data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  vds_entry e;
  vds_entry_decode(zero, 8, &e);
  ok(e.status == VDS_S_UNWRITTEN, "zero entry is unwritten");
  vds_entry_decode(one, 8, &e);
  ok(e.status == VDS_S_CONSTANT && e.constant == 1.0f, "AACAPwEBAQE= is constant 1.0");
  vds_entry_decode(half, 8, &e);
  ok(e.status == VDS_S_CONSTANT && e.constant == -0.5f, "00 00 00 bf 01 01 01 01 is constant -0.5");
  vds_entry_decode(nov, 8, &e);
  ok(e.status == VDS_S_NOVALUE, "all ones is NoValue");
  vds_entry_decode(data, 8, &e);
  ok(e.status == VDS_S_DATA && e.hash == 0x0807060504030201ull, "other hashes are data, read little-endian");
  unsigned char w[28] = {0x48, 0x1a, 0x01, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 200, 180};
  vds_entry_decode(w, 28, &e);
  ok(e.status == VDS_S_DATA && e.object_size == 72264 && e.hash == 0x0807060504030201ull && e.levels[0] == 200,
     "28-byte entry: size 72264, unaligned hash, adaptive levels");
}

static void pages(void) {
  vds_layer l = {0};
  l.has_pages = 1, l.page_size = 10, l.entry_size = 8, l.chunk_count = 24, l.page_count = 3;
  vd_err err = {0};
  ok(vds_page_check(&l, 0, 80, "p", &err) == VD_OK, "full page accepted");
  ok(vds_page_check(&l, 2, 32, "p", &err) == VD_OK, "short last page covering chunks 20..23 accepted");
  ok(vds_page_check(&l, 2, 80, "p", &err) == VD_OK, "full-size last page accepted");
  ok(vds_page_check(&l, 2, 24, "p", &err) == VD_INVALID && strstr(err.msg, "before chunk 23"),
     "last page ending before chunk 23: %s", err.msg);
  ok(vds_page_check(&l, 0, 72, "p", &err) == VD_INVALID, "short non-last page refused: %s", err.msg);
  ok(vds_page_check(&l, 0, 77, "p", &err) == VD_INVALID && strstr(err.msg, "whole number"), "77 bytes: %s", err.msg);
  ok(vds_page_check(&l, 0, 88, "p", &err) == VD_INVALID, "longer than a page: %s", err.msg);
  ok(vds_page_check(&l, 0, 0, "p", &err) == VD_INVALID && strstr(err.msg, "empty"), "empty page: %s", err.msg);
  l.name = "L";
  char *k = vds_page_key(&l, 2);
  ok(k && strcmp(k, "L/ChunkMetadata/2") == 0, "no pageDirectory: page i is stored as i");
  free(k);
  int64_t dir[3] = {5, -1, 0};
  l.page_dir = dir;
  k = vds_page_key(&l, 0);
  ok(k && strcmp(k, "L/ChunkMetadata/5") == 0 && vds_page_key(&l, 1) == NULL, "pageDirectory names and -1");
  free(k);
}

int main(void) {
  entries();
  pages();
  return done_testing();
}
