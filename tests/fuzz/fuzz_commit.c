/* libFuzzer target: an OpenVDS layer's commit record (openvds_record.c), which writers
 * read from the store and trust to finish a dead writer's commit. Whatever the bytes,
 * parsing ends with a record or one error, frees everything, and a free record holds no
 * plan. */
#include <stdint.h>
#include <stdlib.h>

#include "formats/openvds/openvds_commit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vd_err e = {0};
  int commit = -1, n = -1;
  vd_code rc = vds_commit_record_check((const char *)data, size, &commit, &n, &e);
  if (rc == VD_OK && (n < 0 || (!commit && n)))
    abort();
  if (rc != VD_OK && !e.msg[0]) abort();
  return 0;
}
