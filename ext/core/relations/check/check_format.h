/* What check_run.c asks of each format's checker (check_openvds.c, check_lindi.c,
 * check_vtkhdf.c): open a dataset, give its problems one at a time, count what it checked.
 * The rules are check_run.h's: what the data holds is a row, never a failure. */
#ifndef VD_CHECK_FORMAT_H
#define VD_CHECK_FORMAT_H

#include "check_run.h"

/* How a dataset that cannot be opened is said: verdict (VC_UNREADABLE unless the format
 * knows better, e.g. a document that does not parse is VC_MALFORMED) and item (NULL, or a
 * static name such as "VolumeDataLayout"). */
typedef struct vc_unopened {
  int verdict;
  const char *item;
} vc_unopened;

typedef struct vc_checker {
  const char *format; /* 'openvds', 'lindi', 'vtkhdf' */
  /* Opens url into *state. A failure check_run.c does not call fatal becomes the one row
   * of an unreadable dataset, said as *how sets it (*state is then closed). */
  vd_code (*open)(vd_ctx *ctx, const char *url, void **state, vc_unopened *how, vd_err *err);
  /* The next problem; *eof at the end. row's strings stay valid until the next call. */
  vd_code (*next)(void *state, vc_row *row, int *eof, vd_err *err);
  int64_t (*items)(const void *state); /* items checked so far */
  void (*close)(void *state);           /* takes NULL */
} vc_checker;

extern const vc_checker vc_openvds, vc_lindi, vc_vtkhdf;

/* Failures that say nothing of the data: they end the query. VD_IO is the store refusing
 * (401, 403, EACCES) or unreachable after its retries; VD_UNSUPPORTED a scheme or a
 * feature vdsql does not have. Inline: the checkers ask it and check_run.c calls them. */
static inline int vc_fatal(vd_code rc) {
  return rc == VD_NOMEM || rc == VD_INTERRUPTED || rc == VD_IO || rc == VD_UNSUPPORTED;
}

#endif
