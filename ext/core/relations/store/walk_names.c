/* Names met in a walk of a store's folders (walk_names.h). */
#include "walk_names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

char *vd_walk_at(const char *dir, const char *rel) {
  if (!*rel) return strdup(*dir ? dir : ".");
  return !*dir ? strdup(rel) : vd_url_join(dir, rel);
}

int vd_walk_unaddressable(const char *key) {
  for (const char *s = key;;) {
    size_t n = strcspn(s, "/");
    if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) return 1;
    if (!s[n]) return 0;
    s += n + 1;
  }
}

char *vd_walk_unaddressable_error(const char *url) {
  char where[600], msg[800];
  vd_url_redact(url, where, sizeof where);
  snprintf(msg, sizeof msg, "%s: the key has a '.', '..' or empty segment, which a URL cannot name (it would "
           "read other objects); not opened", where);
  return strdup(msg);
}
