/* String map (see strmap.h). Keys are copied; deleted slots keep a tombstone (key set,
 * value -1) so probe chains stay intact; the table is rebuilt when tombstones pile up. */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

static size_t hash(const char *s) {
  size_t h = 1469598103934665603ull;
  while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
  return h;
}

static int rehash(vd_strmap *m, size_t cap) {
  const char **keys = calloc(cap, sizeof *keys);
  int *vals = calloc(cap, sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return -1;
  }
  size_t used = 0;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i]) continue;
    if (m->vals[i] < 0) {
      free((char *)m->keys[i]);
      continue;
    }
    size_t j = hash(m->keys[i]) & (cap - 1);
    while (keys[j]) j = (j + 1) & (cap - 1);
    keys[j] = m->keys[i];
    vals[j] = m->vals[i];
    used++;
  }
  free(m->keys);
  free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  m->used = m->live = used;
  return 0;
}

int vd_strmap_put(vd_strmap *m, const char *key, int val) {
  if ((m->used + 1) * 2 > m->cap && rehash(m, m->cap ? (m->live * 4 > m->cap ? m->cap * 2 : m->cap) : 64)) return -1;
  size_t j = hash(key) & (m->cap - 1);
  while (m->keys[j]) {
    if (strcmp(m->keys[j], key) == 0) {
      if (m->vals[j] < 0) m->live++;
      m->vals[j] = val;
      return 0;
    }
    j = (j + 1) & (m->cap - 1);
  }
  if (!(m->keys[j] = strdup(key))) return -1;
  m->vals[j] = val;
  m->used++;
  m->live++;
  return 0;
}

int vd_strmap_get(const vd_strmap *m, const char *key) {
  if (!m->cap) return -1;
  size_t j = hash(key) & (m->cap - 1);
  while (m->keys[j]) {
    if (strcmp(m->keys[j], key) == 0) return m->vals[j];
    j = (j + 1) & (m->cap - 1);
  }
  return -1;
}

void vd_strmap_del(vd_strmap *m, const char *key) {
  if (!m->cap) return;
  size_t j = hash(key) & (m->cap - 1);
  while (m->keys[j]) {
    if (strcmp(m->keys[j], key) == 0) {
      if (m->vals[j] >= 0) m->live--;
      m->vals[j] = -1;
      return;
    }
    j = (j + 1) & (m->cap - 1);
  }
}

void vd_strmap_free(vd_strmap *m) {
  for (size_t i = 0; i < m->cap; i++) free((char *)m->keys[i]);
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}
