/* Minimal TAP producer for the C unit tests: ok(cond, fmt...), skip(n, why),
 * done_testing(). prove and .ci/run read the output. */
#ifndef VDSQL_TAP_H
#define VDSQL_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>

static int tap_n, tap_failed;

static inline int ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int ok(int cond, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  if (!cond) tap_failed++;
  fflush(stdout);
  return cond;
}

static inline void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void diag(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("# ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

/* Skips are reported as skips (never as passes) by .ci/run. */
static inline void skip(int n, const char *why) {
  for (int i = 0; i < n; i++) printf("ok %d # SKIP %s\n", ++tap_n, why);
}

static inline int done_testing(void) {
  printf("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}

/* Directory of the shared fixtures: $VDSQL_SHARED or ../shared next to the repo. */
static inline const char *shared_dir(void) {
  const char *s = getenv("VDSQL_SHARED");
  return s && *s ? s : "../shared";
}

/* A fixture that is not there: a skip when there is no shared/ folder at all (a clone on
 * its own), a failure when shared/ is there but lacks it, so a renamed or lost fixture
 * can never turn tests into skips while the run stays green. */
static inline void fixture_missing(int n, const char *what) {
  struct stat st;
  if (stat(shared_dir(), &st) != 0) {
    char why[600];
    snprintf(why, sizeof why, "%s not found: no shared folder at %s (set VDSQL_SHARED); %s", "fixture", shared_dir(), what);
    skip(n, why);
    return;
  }
  for (int i = 0; i < n; i++)
    printf("not ok %d - %s: a fixture is missing from %s/fixtures\n", ++tap_n, what, shared_dir());
  tap_failed += n;
}

static inline unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *p = malloc(n + 1);
  if (p && fread(p, 1, n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  if (p) p[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return p;
}

#endif
