/* vd_ahead on local files: objects come back in the order pushed, the window bounds how
 * many are pushed and not taken, a cached copy costs no read, cache = 0 keeps nothing,
 * a missing object fails its own take only, and closing with objects pending frees
 * them (the ASan build checks for leaks). Expected values are the bytes written here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "tap.h"
#include "vd_ctx.h"

static char dir[] = "/tmp/vdsql-ahead.XXXXXX";

static void path(char *out, size_t n, int i) { snprintf(out, n, "%s/obj%d", dir, i); }

int main(void) {
  if (!mkdtemp(dir)) return 1;
  for (int i = 0; i < 6; i++) {
    char p[256];
    path(p, sizeof p, i);
    FILE *f = fopen(p, "w");
    if (!f) return 1;
    fprintf(f, "object %d", i);
    fclose(f);
  }
  vd_ctx *ctx = vd_ctx_new();
  vd_err err;
  vd_ahead *a;
  char p[256];

  ok(vd_ahead_open(ctx, 3, 0, &a, &err) == VD_OK && vd_ahead_room(a) == 3, "a window of 3: room 3");
  for (int i = 0; i < 3; i++) {
    path(p, sizeof p, i);
    vd_ahead_push(a, p, &err);
  }
  path(p, sizeof p, 3);
  ok(vd_ahead_room(a) == 0 && vd_ahead_pending(a) == 3 && vd_ahead_push(a, p, &err) != VD_OK,
     "full: no room, a fourth push is refused");
  int order = 1;
  for (int i = 0; i < 6; i++) {
    vd_blob *b = NULL;
    char want[32];
    snprintf(want, sizeof want, "object %d", i);
    if (vd_ahead_take(a, &b, &err) || !b || b->len != strlen(want) || memcmp(b->data, want, b->len)) order = 0;
    vd_blob_unref(b);
    if (i + 3 < 6) {
      path(p, sizeof p, i + 3);
      if (vd_ahead_push(a, p, &err)) order = 0;
    }
  }
  ok(order, "six objects through a window of 3, taken in the order pushed");
  vd_blob *b = NULL;
  ok(vd_ahead_take(a, &b, &err) != VD_OK && !b, "a take with nothing pending is an error");
  vd_ahead_close(a);
  ok(ctx->stats[VD_BE_FILE].requests == 6 && ctx->stats[VD_BE_FILE].cache_hits == 0,
     "6 reads, nothing cached (cache = 0): %lld", (long long)ctx->stats[VD_BE_FILE].requests);

  /* cache = 1 keeps what it reads; a second pass reads nothing */
  for (int pass = 0; pass < 2; pass++) {
    vd_ahead_open(ctx, 2, 1, &a, &err);
    for (int i = 0; i < 2; i++) {
      path(p, sizeof p, i);
      vd_ahead_push(a, p, &err);
    }
    for (int i = 0; i < 2; i++) {
      vd_ahead_take(a, &b, &err);
      vd_blob_unref(b);
    }
    vd_ahead_close(a);
  }
  ok(ctx->stats[VD_BE_FILE].requests == 8 && ctx->stats[VD_BE_FILE].cache_hits == 2,
     "cache = 1: the second pass is 2 cache hits and no read");

  /* a missing object: its take fails with the store's error, the next one still works */
  vd_ahead_open(ctx, 2, 0, &a, &err);
  path(p, sizeof p, 99);
  vd_ahead_push(a, p, &err);
  path(p, sizeof p, 5);
  vd_ahead_push(a, p, &err);
  vd_code rc = vd_ahead_take(a, &b, &err);
  ok(rc == VD_NOTFOUND && strstr(err.msg, "obj99") && !b, "a missing object: its take says so (%s)", err.msg);
  ok(vd_ahead_take(a, &b, &err) == VD_OK && b && b->len == 8, "the object after it is taken");
  vd_blob_unref(b);
  vd_ahead_close(a);

  /* ranges: the bytes asked for (a short one at the object's end), never from or into
   * the cache, although obj0 and obj1 are cached whole */
  int64_t r0 = ctx->stats[VD_BE_FILE].requests, h0 = ctx->stats[VD_BE_FILE].cache_hits;
  vd_ahead_open(ctx, 2, 1, &a, &err);
  path(p, sizeof p, 0);
  vd_ahead_push_range(a, p, 2, 3, &err);
  vd_ahead_push_range(a, p, 7, 100, &err);
  vd_blob *b1 = NULL, *b2 = NULL;
  vd_ahead_take(a, &b1, &err);
  vd_ahead_take(a, &b2, &err);
  ok(b1 && b1->len == 3 && memcmp(b1->data, "jec", 3) == 0 && b2 && b2->len == 1 && b2->data[0] == '0',
     "ranges [2, 5) and [7, 107) of \"object 0\": \"jec\" and \"0\"");
  vd_blob_unref(b1);
  vd_blob_unref(b2);
  vd_ahead_close(a);
  vd_fetch_docs(ctx, (const char *const[]){p}, 1, &b, &err);
  ok(ctx->stats[VD_BE_FILE].requests == r0 + 2 && ctx->stats[VD_BE_FILE].cache_hits == h0 + 1 && b && b->len == 8,
     "2 reads for the ranges; the whole object is still the cached one");
  vd_blob_unref(b);

  /* closed with objects pending (and cached copies held) */
  vd_ahead_open(ctx, 4, 1, &a, &err);
  for (int i = 0; i < 4; i++) {
    path(p, sizeof p, i);
    vd_ahead_push(a, p, &err);
  }
  vd_ahead_close(a);
  ok(1, "closed with 4 pending");

  vd_ctx_free(ctx);
  for (int i = 0; i < 6; i++) {
    path(p, sizeof p, i);
    unlink(p);
  }
  rmdir(dir);
  return done_testing();
}
