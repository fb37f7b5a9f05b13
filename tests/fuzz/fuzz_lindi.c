/* Fuzzes the LINDI entry and index parsers: the first 1024 bytes are a .tar_entry.json,
 * the rest a .tar_index.json. An index that parses is formatted the way vdsql writes it
 * and must parse back to the same entries. */
#include <stdint.h>
#include <string.h>

#include "formats/lindi.h"
#include "formats/tar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vd_err err;
  int64_t o = 1536, d = 2048, s = 8192;
  size_t e = size < LINDI_ENTRY_SIZE ? size : LINDI_ENTRY_SIZE;
  lindi_parse_entry((const char *)data, e, "entry", &o, &d, &s, &err);
  if (size <= LINDI_ENTRY_SIZE) return 0;
  lindi_index ix = {0};
  ix.io = o, ix.id = d, ix.is = s;
  /* the property holds for indexes that parse and whose names the writer could store */
  int valid = lindi_parse_index((const char *)data + LINDI_ENTRY_SIZE, size - LINDI_ENTRY_SIZE, "index", &ix, &err) ==
              VD_OK;
  if (valid) {
    for (int i = 0; i < ix.n && valid; i++)
      valid = tar_check_name(ix.files[i].name, strlen(ix.files[i].name), &err) == VD_OK ||
              strcmp(ix.files[i].name, LINDI_ENTRY_NAME) == 0 || strcmp(ix.files[i].name, LINDI_INDEX_NAME) == 0;
  }
  if (valid && ix.n) {
    vd_buf text = {0};
    if (lindi_format_index(ix.files, ix.n, &text, &err) != VD_OK) __builtin_trap();
    lindi_index back = {0};
    back.io = o, back.id = d, back.is = s;
    if (lindi_parse_index((const char *)text.data, text.len, "again", &back, &err) != VD_OK || back.n != ix.n)
      __builtin_trap();
    for (int i = 0; i < ix.n; i++)
      if (strcmp(back.files[i].name, ix.files[i].name) || back.files[i].o != ix.files[i].o ||
          back.files[i].d != ix.files[i].d || back.files[i].s != ix.files[i].s)
        __builtin_trap();
    lindi_index_free(&back);
    vd_buf_free(&text);
  }
  lindi_index_free(&ix);
  return 0;
}
