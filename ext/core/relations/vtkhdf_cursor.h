/* The cursor every vtkhdf_* relation shares: the file is read once at open into a
 * vh_doc (only the parts that relation needs) and the rows are walked in memory. */
#ifndef VD_VTKHDF_CURSOR_H
#define VD_VTKHDF_CURSOR_H

#include "../formats/vtkhdf.h"
#include "../vd_catalog.h"

typedef struct vh_cur {
  vh_doc doc;
  int row, nrows;
} vh_cur;

vd_code vh_cur_open(vd_ctx *ctx, const char *rel, const vd_value *a, unsigned what, void **out, vd_err *err);
vd_code vh_cur_next(void *cur, vd_err *err);
int vh_cur_eof(void *cur);
int64_t vh_cur_rowid(void *cur);
void vh_cur_close(void *cur);
/* VH_NULL becomes SQL NULL */
vd_value vh_int(int64_t v);

#endif
