/* A string -> int map (open addressing, linear probing) for name lookups that must
 * stay O(1) while a writer stages many members. Keys are copied. */
#ifndef VD_STRMAP_H
#define VD_STRMAP_H

#include <stddef.h>

typedef struct vd_strmap {
  const char **keys;
  int *vals;
  size_t cap, used, live;
} vd_strmap;

int vd_strmap_put(vd_strmap *m, const char *key, int val); /* 0 ok, -1 out of memory */
int vd_strmap_get(const vd_strmap *m, const char *key);    /* value or -1 */
void vd_strmap_del(vd_strmap *m, const char *key);
void vd_strmap_free(vd_strmap *m);

#endif
