/* Error helpers (see vd_err.h). */
#include "vd_err.h"

#include <stdio.h>
#include <string.h>

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates,
 * nothing above U+10FFFF), 0 if there is none. libc has no such check for a byte string
 * in an unknown locale, and this is all the messages need. */
static int utf8_len(const unsigned char *s) {
  unsigned c = s[0];
  int n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  if (n == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f))) return 0;
  if (n == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))) return 0;
  return n;
}

/* A message carries names and text from files and servers (an HDF5 group name, a tar
 * member, an error body): bytes that are not UTF-8, and control characters (a newline
 * would forge a line of a log), become \xNN, so that every front end gets valid UTF-8
 * text (PostgreSQL checks a message's encoding; SQLite hands it on as it is). A
 * message that does not fit is cut at a whole character. */
static void clean(char *msg, size_t cap) {
  const unsigned char *s = (const unsigned char *)msg;
  size_t i = 0;
  for (; s[i]; i++) {
    int n = utf8_len(s + i);
    if (n == 0 || (n == 1 && (s[i] < 0x20 || s[i] == 0x7f))) break;
    i += (size_t)n - 1;
  }
  if (!s[i]) return; /* the usual case: nothing to do, no copy */
  char out[sizeof ((vd_err *)0)->msg];
  size_t o = i < cap ? i : cap - 1;
  memcpy(out, msg, o);
  while (s[i]) {
    int n = utf8_len(s + i);
    if (n == 0 || (n == 1 && (s[i] < 0x20 || s[i] == 0x7f))) {
      if (o + 4 >= cap || o + 4 >= sizeof out) break;
      snprintf(out + o, 5, "\\x%02x", s[i]);
      o += 4, i++;
    } else {
      if (o + (size_t)n >= cap || o + (size_t)n >= sizeof out) break;
      memcpy(out + o, s + i, (size_t)n);
      o += (size_t)n, i += (size_t)n;
    }
  }
  out[o] = 0;
  memcpy(msg, out, o + 1);
}

vd_code vd_fail(vd_err *e, vd_code code, const char *fmt, ...) {
  if (!e) return code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  clean(e->msg, sizeof e->msg);
  e->code = code;
  return code;
}

vd_code vd_err_prefix(vd_err *e, const char *fmt, ...) {
  char head[512], old[sizeof e->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  memcpy(old, e->msg, sizeof old);
  snprintf(e->msg, sizeof e->msg, "%s: %s", head, old);
  clean(e->msg, sizeof e->msg);
  return e->code;
}

vd_code vd_err_suffix(vd_err *e, const char *fmt, ...) {
  size_t n = strlen(e->msg);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg + n, sizeof e->msg - n, fmt, ap);
  va_end(ap);
  clean(e->msg, sizeof e->msg);
  return e->code;
}

void vd_err_clear(vd_err *e) {
  e->code = VD_OK;
  e->msg[0] = 0;
}

vd_code vd_nomem(vd_err *e) { return vd_fail(e, VD_NOMEM, "out of memory"); }
