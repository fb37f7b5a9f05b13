/* The LINDI check's rows (check_lindi.h): found at open, kept until the check closes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_lindi.h"

vd_code lc_add(lc_state *r, int verdict, const char *part, const char *item, vd_err *err, const char *fmt, ...) {
  if (r->n == r->cap) {
    int cap = r->cap ? 2 * r->cap : 16;
    lc_row *p = realloc(r->rows, (size_t)cap * sizeof *p);
    if (!p) return vd_nomem(err);
    r->rows = p, r->cap = cap;
  }
  char d[1400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d, sizeof d, fmt, ap);
  va_end(ap);
  lc_row *w = &r->rows[r->n];
  w->verdict = verdict;
  w->part = part ? strdup(part) : NULL;
  w->item = item ? strdup(item) : NULL;
  w->detail = strdup(d);
  if ((part && !w->part) || (item && !w->item) || !w->detail) {
    free(w->part), free(w->item), free(w->detail);
    return vd_nomem(err);
  }
  r->n++;
  return VD_OK;
}
