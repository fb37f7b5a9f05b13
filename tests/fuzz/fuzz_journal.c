/* Fuzzes the LINDI writer's journal parser (formats/lindi/lindi_journal.c), which decides
 * whether recovery truncates or rewrites an archive. The input is tried as a whole
 * journal and, so that the fuzzer reaches past the checksum, as JSON text given a valid
 * checksum line. A journal that parses must format and parse back to the same steps. */
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/lindi/lindi_journal.h"

static void check_round_trip(const lindi_journal *j) {
  vd_buf text = {0};
  vd_err err;
  lindi_journal back;
  if (lindi_journal_format(j, 7, 9, &text, &err) != VD_OK) __builtin_trap();
  if (lindi_journal_parse((const char *)text.data, text.len, 7, 9, INT64_C(1) << 40, &back)) __builtin_trap();
  if (back.end != j->end || back.gen != j->gen || back.has_commit != j->has_commit || back.ntrash != j->ntrash ||
      memcmp(back.entry_before, j->entry_before, LINDI_ENTRY_SIZE) != 0)
    __builtin_trap();
  if (j->has_commit && (back.commit_at != j->commit_at || back.new_end != j->new_end || back.revive != j->revive ||
                        back.commit_len != j->commit_len || memcmp(back.commit, j->commit, j->commit_len) != 0 ||
                        memcmp(back.hold, j->hold, sizeof j->hold) != 0 || back.has_entry != j->has_entry))
    __builtin_trap();
  for (int i = 0; i < j->ntrash; i++)
    if (back.trash[i].o != j->trash[i].o || back.trash[i].dash != j->trash[i].dash ||
        strcmp(back.trash[i].name, j->trash[i].name) != 0)
      __builtin_trap();
  lindi_journal_free(&back);
  vd_buf_free(&text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lindi_journal j;
  /* as it is: almost always refused for its checksum, never a crash */
  if (!lindi_journal_parse((const char *)data, size, 7, 9, INT64_C(1) << 40, &j)) {
    check_round_trip(&j);
    lindi_journal_free(&j);
  }
  /* as JSON with a valid checksum line, for the file (7, 9) or another */
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  char *buf = malloc(size + 80);
  if (!buf || EVP_Digest(data, size, md, &mdlen, EVP_sha256(), NULL) != 1) {
    free(buf);
    return 0;
  }
  memcpy(buf, data, size);
  size_t n = size;
  n += (size_t)sprintf(buf + n, "\nsha256:");
  for (unsigned i = 0; i < 32; i++) n += (size_t)sprintf(buf + n, "%02x", md[i]);
  buf[n++] = '\n';
  if (!lindi_journal_parse(buf, n, 7, 9, INT64_C(1) << 40, &j)) {
    check_round_trip(&j);
    lindi_journal_free(&j);
  }
  free(buf);
  return 0;
}
