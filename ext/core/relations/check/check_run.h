/* One health check of one dataset of any format, as problem rows in the vocabulary the
 * formats share (docs/check.md): what vdsql_check lists and vdsql_check_summary counts. */
#ifndef VD_CHECK_RUN_H
#define VD_CHECK_RUN_H

#include <stdint.h>

#include "vd_catalog.h"

/* The verdicts, worst first (vdsql_check_summary's `worst` is the lowest). */
enum vc_verdict { VC_UNREADABLE = 0, VC_MALFORMED, VC_MISSING, VC_SHORT, VC_MISMATCH, VC_ORPHAN, VC_UNCOMMITTED };
const char *vc_verdict_name(int v);

typedef struct vc_row {
  const char *part, *item; /* NULL: none (an unreadable dataset, a dataset's document) */
  int verdict;
  const char *detail;
} vc_row;

typedef struct vc_run vc_run;

/* Checks url: only a bad argument (not text, an unsupported scheme) or what is no
 * finding of the data (the store refusing or unreachable, out of memory, an interrupt)
 * fails; a dataset that cannot be read is a row. who names the relation in errors. */
vd_code vc_open(vd_ctx *ctx, const vd_value *url, const char *who, vc_run **out, vd_err *err);
/* The next problem; *eof at the end. row's strings stay valid until the next call. */
vd_code vc_next(vc_run *r, vc_row *row, int *eof, vd_err *err);
const char *vc_format(const vc_run *r); /* 'openvds', 'lindi', 'vtkhdf' */
int64_t vc_items(const vc_run *r);      /* items checked so far (all of them at eof) */
void vc_close(vc_run *r);

#endif
