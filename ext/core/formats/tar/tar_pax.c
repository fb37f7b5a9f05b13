/* pax records and the GNU sparse 1.0 map (see tar_pax.h). Records are cut by their
 * length prefix, as POSIX defines them: a value is any bytes, so searching the text for
 * " path=" would take a comment's words for a record. */
#include "tar_pax.h"

#include <stdlib.h>
#include <string.h>

#include "tar.h"

void tar_pax_init(tar_pax *p) {
  memset(p, 0, sizeof *p);
  p->major = p->minor = -1;
}

void tar_pax_free(tar_pax *p) {
  free(p->path);
  free(p->linkpath);
  free(p->sparse_name);
  tar_pax_init(p);
}

/* A non-negative decimal number taking all of v[0..n), at most max. */
static int decimal(const unsigned char *v, size_t n, int64_t max, int64_t *out) {
  if (n == 0) return -1;
  int64_t x = 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i] < '0' || v[i] > '9') return -1;
    if (x > (max - (v[i] - '0')) / 10) return -1;
    x = x * 10 + (v[i] - '0');
  }
  *out = x;
  return 0;
}

/* Replaces *slot with the value (NULL for an empty one); a NUL inside cannot be a name. */
static int text(char **slot, const unsigned char *v, size_t n, const char **why) {
  if (memchr(v, 0, n)) {
    *why = "a name holds a NUL byte";
    return -1;
  }
  char *s = NULL;
  if (n && !(s = malloc(n + 1))) return -2;
  if (s) {
    memcpy(s, v, n);
    s[n] = 0;
  }
  free(*slot);
  *slot = s;
  return 0;
}

static int keyword(tar_pax *p, const char *k, size_t kn, const unsigned char *v, size_t vn, const char **why) {
#define IS(lit) (kn == sizeof lit - 1 && memcmp(k, lit, kn) == 0)
  int64_t x = 0;
  if (IS("path")) return text(&p->path, v, vn, why);
  if (IS("linkpath")) return text(&p->linkpath, v, vn, why);
  if (kn > 11 && memcmp(k, "GNU.sparse.", 11) == 0) p->sparse = 1;
  if (IS("GNU.sparse.name")) return text(&p->sparse_name, v, vn, why);
  if (IS("size") || IS("GNU.sparse.size") || IS("GNU.sparse.realsize") || IS("GNU.sparse.major") ||
      IS("GNU.sparse.minor")) {
    int empty = vn == 0;
    if (!empty && decimal(v, vn, TAR_MAX_SIZE, &x)) {
      *why = "a size is not a decimal number from 0 to 2^63 - 1025";
      return -1;
    }
    if (IS("size")) p->has_size = !empty, p->size = empty ? 0 : x;
    else if (IS("GNU.sparse.major")) p->major = empty ? -1 : (int)(x > 9 ? 9 : x);
    else if (IS("GNU.sparse.minor")) p->minor = empty ? -1 : (int)(x > 9 ? 9 : x);
    else p->has_realsize = !empty, p->realsize = empty ? 0 : x;
  }
  return 0; /* other keywords (times, ids, xattrs, comments) name nothing a walk needs */
#undef IS
}

int tar_pax_parse(const unsigned char *d, size_t n, tar_pax *p, size_t *at, const char **why) {
  size_t pos = 0;
  while (pos < n) {
    size_t i = pos;
    *at = pos;
    if (d[i] == 0) { /* padding after the last record */
      while (i < n && d[i] == 0) i++;
      if (i == n) return 0;
      *why = "bytes after NUL padding";
      return -1;
    }
    size_t len = 0;
    for (; i < n && d[i] >= '0' && d[i] <= '9'; i++)
      if (len <= n) len = len * 10 + (d[i] - '0'); /* past n it is too long anyway: no wrap */
    if (i == pos || i >= n || d[i] != ' ') {
      *why = "no \"<length> \" at its start";
      return -1;
    }
    if (len > n - pos || len < i - pos + 3) { /* room for "k=" and the newline */
      *why = "its length runs past the extended header or is too short";
      return -1;
    }
    const unsigned char *k = d + i + 1, *end = d + pos + len - 1;
    if (*end != '\n') {
      *why = "it does not end with a newline at its length";
      return -1;
    }
    const unsigned char *eq = memchr(k, '=', (size_t)(end - k));
    if (!eq || eq == k) {
      *why = "no \"keyword=\"";
      return -1;
    }
    int r = keyword(p, (const char *)k, (size_t)(eq - k), eq + 1, (size_t)(end - eq - 1), why);
    if (r) return r;
    pos += len;
  }
  return 0;
}

int tar_sparse10_len(const unsigned char *d, size_t n, int64_t *len) {
  int64_t count = -1, lines = 0;
  size_t i = 0;
  while (count < 0 || lines < 1 + 2 * count) {
    size_t s = i;
    while (i < n && d[i] >= '0' && d[i] <= '9') i++;
    if (i == n) return i - s > 20 ? -1 : 0;
    int64_t v;
    if (d[i] != '\n' || decimal(d + s, i - s, TAR_MAX_SIZE, &v)) return -1;
    i++;
    if (count < 0) {
      if (v > (INT64_MAX / 2 - 1) / 64) return -1; /* no map of that many regions fits an archive */
      count = v;
    }
    lines++;
  }
  *len = tar_padded((int64_t)i);
  return 1;
}
