/* Error helpers (see vd_err.h). */
#include "vd_err.h"

#include <stdio.h>
#include <string.h>

vd_code vd_fail(vd_err *e, vd_code code, const char *fmt, ...) {
  if (!e) return code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
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
  return e->code;
}

vd_code vd_err_suffix(vd_err *e, const char *fmt, ...) {
  size_t n = strlen(e->msg);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg + n, sizeof e->msg - n, fmt, ap);
  va_end(ap);
  return e->code;
}

void vd_err_clear(vd_err *e) {
  e->code = VD_OK;
  e->msg[0] = 0;
}

vd_code vd_nomem(vd_err *e) { return vd_fail(e, VD_NOMEM, "out of memory"); }
