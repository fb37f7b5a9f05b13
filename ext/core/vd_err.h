/* The core's error model: every fallible call returns a vd_code and fills a vd_err
 * with a message that names the file or URL and the fault. Front ends translate it
 * at their boundary; nothing in the core prints or longjmps. */
#ifndef VD_ERR_H
#define VD_ERR_H

#include <stdarg.h>

typedef enum vd_code {
  VD_OK = 0,
  VD_ERROR,        /* generic failure */
  VD_NOTFOUND,     /* object, file or layer does not exist */
  VD_INVALID,      /* malformed input or bad argument */
  VD_IO,           /* transport or filesystem failure */
  VD_NOMEM,
  VD_CONSTRAINT,   /* write would violate a rule (duplicate name, ...) */
  VD_BUSY,
  VD_READONLY,
  VD_UNSUPPORTED,
  VD_PRECONDITION, /* a conditional write lost: the object changed (If-Match) or exists
                      (If-None-Match); nothing was written */
  VD_INTERRUPTED   /* the front end asked to stop (vd_ctx.interrupted): transfers aborted,
                      what was taken released */
} vd_code;

typedef struct vd_err {
  vd_code code;
  char msg[1024];
} vd_err;

/* Sets the error (overwriting) and returns code. */
vd_code vd_fail(vd_err *e, vd_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prepends "context: " to an existing message, keeps the code. */
vd_code vd_err_prefix(vd_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends text to an existing message, keeps the code. */
vd_code vd_err_suffix(vd_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vd_err_clear(vd_err *e);
vd_code vd_nomem(vd_err *e);

#endif
