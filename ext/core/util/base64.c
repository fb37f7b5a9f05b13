/* base64 via OpenSSL (see base64.h). EVP_DecodeBlock neither rejects bad padding
 * placement nor reports the padding it decoded, so both are checked here. */
#include "base64.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

int vd_base64_decode(const char *text, size_t len, unsigned char **out, size_t *outlen) {
  *out = NULL;
  *outlen = 0;
  while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' ')) len--;
  if (len % 4 || len > (size_t)1 << 30) return -1;
  size_t pad = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] == '=') {
      if (i < len - 2) return -1;
      pad++;
    } else if (pad) {
      return -1;
    }
  }
  unsigned char *buf = malloc(len / 4 * 3 + 1);
  if (!buf) return -1;
  int n = len ? EVP_DecodeBlock(buf, (const unsigned char *)text, (int)len) : 0;
  if (n < 0 || (size_t)n < pad) {
    free(buf);
    return -1;
  }
  *out = buf;
  *outlen = (size_t)n - pad;
  return 0;
}

char *vd_base64_encode(const unsigned char *p, size_t n) {
  char *s = malloc((n + 2) / 3 * 4 + 1);
  if (!s) return NULL;
  EVP_EncodeBlock((unsigned char *)s, p, (int)n);
  return s;
}
