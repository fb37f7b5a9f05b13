/* sqlite3_interrupt() as the core's cancel check (vd_ctx.interrupted): the shell's Ctrl-C,
 * a host's interrupt from another thread, stop a transfer that waits on a server. */
#include <time.h>

#include "glue.h"
SQLITE_EXTENSION_INIT3

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* sqlite3_is_interrupted() came with SQLite 3.41, and an extension built against a newer
 * header may still be loaded by an older library; a statement of one's own stepped on
 * the same connection tells on every version: while the connection's interrupt flag is
 * up (until its last active statement ends), it stops at once with SQLITE_INTERRUPT.
 * A "no" is kept 20 ms, so that the core's loops may ask as often as they like. */
int vdsql_sqlite_interrupted(void *arg) {
  vdsql_conn *c = arg;
  double t = now();
  if (t < c->not_interrupted_until) return 0;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(c->db, "SELECT 1", -1, &st, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc == SQLITE_INTERRUPT) return 1;
  c->not_interrupted_until = t + 0.02;
  return 0;
}
