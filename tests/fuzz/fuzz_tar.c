/* Fuzzes the ustar header codec: any 512 bytes parse without crashing; the next header
 * offset tar_next computes for a parsed header at an offset taken from bytes 500..507
 * (padding in ustar) is past it by 512 + the padded size, or refused, never a wrap; a
 * header written by tar_format for a name tar_check_name accepts parses back to that
 * name and size with a good checksum; renaming keeps the checksum good. */
#include <stdint.h>
#include <string.h>

#include "formats/tar/tar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  unsigned char b[TAR_BLOCK] = {0};
  memcpy(b, data, size < TAR_BLOCK ? size : TAR_BLOCK);
  tar_header h;
  vd_err err;
  if (tar_parse(b, &h) == 0) {
    int64_t at, next;
    memcpy(&at, b + 500, sizeof at);
    if (tar_next("fuzz", at, &h, &next, &err) == VD_OK &&
        !(next > at && next - at == TAR_BLOCK + tar_padded(h.size) && next <= INT64_MAX - TAR_BLOCK))
      __builtin_trap();
  }
  if (size <= TAR_BLOCK) return 0;
  char name[300];
  size_t n = size - TAR_BLOCK < 299 ? size - TAR_BLOCK : 299;
  memcpy(name, data + TAR_BLOCK, n);
  name[n] = 0;
  int64_t len = (int64_t)(data[0] | data[1] << 8 | data[2] << 16);
  if (strlen(name) == n && tar_check_name(name, n, &err) == VD_OK) {
    if (tar_format(b, name, len, &err) != VD_OK) __builtin_trap();
    if (tar_parse(b, &h) != 0 || !h.checksum_ok || h.size != len || strcmp(h.name, name) != 0) __builtin_trap();
    if (tar_rename(b, ".trash/x.abcdefghij", &err) == VD_OK && (tar_parse(b, &h) != 0 || !h.checksum_ok))
      __builtin_trap();
  }
  return 0;
}
