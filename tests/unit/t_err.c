/* Error messages are valid UTF-8 text without control characters whatever they quote
 * (vd_fail, vd_err_prefix, vd_err_suffix): bytes that are not UTF-8 (RFC 3629: overlongs,
 * surrogates, code points above U+10FFFF, cut sequences) and C0 controls and DEL become
 * \xNN; well-formed characters pass unchanged; a message that does not fit is cut at a
 * whole character. The expected strings are written out from the RFC's rules. */
#include <string.h>

#include "tap.h"
#include "vd_err.h"

static void msg(const char *quoted, const char *want) {
  vd_err e = {0};
  vd_fail(&e, VD_INVALID, "f.vtkhdf: cannot list %s", quoted);
  char w[1100];
  snprintf(w, sizeof w, "f.vtkhdf: cannot list %s", want);
  if (!ok(strcmp(e.msg, w) == 0 && e.code == VD_INVALID, "quoted %s", want)) diag("got %s", e.msg);
}

/* the message is valid UTF-8 with no control character (an independent check: iconv's) */
static int valid(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p == 0x7f) return 0;
  FILE *f = fopen("/tmp/vdsql-t-err.txt", "w");
  if (!f) return 0;
  fputs(s, f);
  fclose(f);
  return system("iconv -f UTF-8 -t UTF-8 /tmp/vdsql-t-err.txt >/dev/null 2>&1") == 0;
}

int main(void) {
  msg("/VTKHDF/Assembly", "/VTKHDF/Assembly");
  msg("/VTKHDF/Ass\xe5mbly", "/VTKHDF/Ass\\xe5mbly");                 /* a lead byte without its tail */
  msg("/caf\xc3\xa9/\xe6\x97\xa5/\xf0\x9f\x98\x80", "/caf\xc3\xa9/\xe6\x97\xa5/\xf0\x9f\x98\x80"); /* 2, 3, 4 bytes */
  msg("a\nERROR: forged", "a\\x0aERROR: forged");                     /* a newline forging a log line */
  msg("t\tx\x7f\x1b[31m", "t\\x09x\\x7f\\x1b[31m");
  msg("\xc0\xaf", "\\xc0\\xaf");                                        /* overlong '/' */
  msg("\xe0\x80\xaf", "\\xe0\\x80\\xaf");                               /* overlong, 3 bytes */
  msg("\xed\xa0\x80", "\\xed\\xa0\\x80");                               /* a surrogate, U+D800 */
  msg("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");                      /* above U+10FFFF */
  msg("\xf8\x88\x80\x80\x80", "\\xf8\\x88\\x80\\x80\\x80");             /* 5-byte form */
  msg("end\xe6\x97", "end\\xe6\\x97");                                  /* cut at the end */

  vd_err e = {0};
  vd_fail(&e, VD_IO, "inner \xff");
  vd_err_prefix(&e, "outer \xfe");
  vd_err_suffix(&e, " tail \x01");
  if (!ok(strcmp(e.msg, "outer \\xfe: inner \\xff tail \\x01") == 0, "prefix and suffix clean what they add"))
    diag("got %s", e.msg);

  /* a long message of invalid bytes: cut, never overrun, always valid */
  char big[2000];
  memset(big, 0xff, sizeof big - 1);
  big[sizeof big - 1] = 0;
  vd_fail(&e, VD_INVALID, "%s", big);
  ok(strlen(e.msg) < sizeof e.msg && strncmp(e.msg, "\\xff\\xff", 8) == 0 && valid(e.msg),
     "1,999 invalid bytes: cut to %zu bytes of \\xff escapes, valid UTF-8", strlen(e.msg));
  char multi[1200] = "";
  for (int i = 0; i < 300; i++) strcat(multi, "\xe6\x97\xa5"); /* 900 bytes of U+65E5 */
  vd_fail(&e, VD_INVALID, "%s%s", "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123", multi);
  ok(strlen(e.msg) < sizeof e.msg && valid(e.msg), "a message cut inside a character by vsnprintf is still valid (%zu bytes)",
     strlen(e.msg));
  return done_testing();
}
