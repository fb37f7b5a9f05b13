/* Engine-neutral values passed between a front end and the core: arguments in,
 * column values and function results out. */
#ifndef VD_VALUE_H
#define VD_VALUE_H

#include <stddef.h>
#include <stdint.h>

typedef enum vd_type { VD_NULL = 0, VD_INT, VD_REAL, VD_TEXT, VD_BLOB } vd_type;

typedef struct vd_value {
  vd_type type;
  int64_t i;
  double r;
  const void *p;           /* TEXT (not necessarily NUL-terminated) or BLOB bytes */
  size_t n;                /* their length */
  void (*dtor)(void *);    /* set when p is heap memory the receiver must free */
} vd_value;

static inline vd_value vd_null(void) { vd_value v = {0}; return v; }
static inline vd_value vd_int(int64_t i) { vd_value v = {0}; v.type = VD_INT; v.i = i; return v; }
static inline vd_value vd_real(double r) { vd_value v = {0}; v.type = VD_REAL; v.r = r; return v; }
/* The integer that stands for SQL NULL in vd_relation.ints rows */
#define VD_INT_NULL INT64_MIN

/* In-place setters for the per-row column path, where building a whole vd_value and
 * copying it costs more than the rest of the column (the front end has set type NULL
 * and dtor NULL). */
static inline void vd_put_int(vd_value *v, int64_t i) { v->type = VD_INT; v->i = i; }
static inline void vd_put_real(vd_value *v, double r) { v->type = VD_REAL; v->r = r; }
vd_value vd_text(const char *s);                   /* borrowed, valid until the next row */
vd_value vd_textn(const char *s, size_t n);
vd_value vd_blob_val(const void *p, size_t n);     /* borrowed */
vd_value vd_owned_text(char *s);                   /* malloc'd, receiver frees */
vd_value vd_owned_blob(void *p, size_t n);         /* malloc'd, receiver frees */

/* Numeric view of an argument; returns 0 and sets *out when the value is a number
 * (or text that is entirely a number). */
int vd_value_as_int(const vd_value *v, int64_t *out);
int vd_value_as_real(const vd_value *v, double *out);
/* Copies a TEXT argument into a fresh NUL-terminated string (NULL if not text). */
char *vd_value_strdup(const vd_value *v);

#endif
