/* libFuzzer target: vd_base64_decode (the user.vdschunkmetadata attribute decoder).
 * The input is the text to decode; decoded bytes must fit the buffer, and whatever
 * decodes must survive vd_base64_encode -> vd_base64_decode unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  unsigned char *out;
  size_t outlen;
  if (vd_base64_decode((const char *)data, size, &out, &outlen) != 0) {
    if (out || outlen) abort();
    return 0;
  }
  if (outlen > size / 4 * 3) abort();
  char *text = vd_base64_encode(out, outlen);
  if (!text) abort();
  if (strlen(text) != (outlen + 2) / 3 * 4) abort();
  unsigned char *back;
  size_t backlen;
  if (vd_base64_decode(text, strlen(text), &back, &backlen) != 0) abort();
  if (backlen != outlen || (outlen && memcmp(back, out, outlen) != 0)) abort();
  free(back);
  free(text);
  free(out);
  return 0;
}
