/* The progress reporter (see progress.h). Rate-limited so that a job of a million
 * objects prints a few lines a second, not a line per object. */
#include "progress.h"

#include <stdio.h>
#include <time.h>

#define INTERVAL 0.25 /* seconds between lines */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void line(const vd_progress *p, double t, int final) {
  double secs = t - p->t0, rate = secs > 0 ? (double)p->done / secs : 0;
  char tot[32] = "?";
  if (p->total >= 0) snprintf(tot, sizeof tot, "%lld", (long long)p->total);
  if (final)
    fprintf(stderr, "vdsql: %s: %lld / %s objects, %.0f/s, done in %.1f s\n", p->what, (long long)p->done, tot, rate,
            secs);
  else
    fprintf(stderr, "vdsql: %s: %lld / %s objects, %.0f/s\n", p->what, (long long)p->done, tot, rate);
  fflush(stderr);
}

void vd_progress_start(vd_progress *p, const vd_ctx *ctx, const char *what, int64_t total) {
  p->on = ctx->cfg.progress;
  snprintf(p->what, sizeof p->what, "%s", what);
  p->done = 0;
  p->total = total;
  p->t0 = p->last = now();
}

void vd_progress_total(vd_progress *p, int64_t total) { p->total = total; }

void vd_progress_add(vd_progress *p, int64_t n) {
  p->done += n;
  if (!p->on) return;
  double t = now();
  if (t - p->last < INTERVAL) return;
  p->last = t;
  line(p, t, 0);
}

void vd_progress_end(vd_progress *p) {
  if (!p->on) return;
  line(p, now(), 1);
  p->on = 0;
}
