/* vd_putq on local files (put when pushed): every push is handed back once, in order,
 * with its own code; bodies are moved in; user metadata lands; the first failure names
 * where it failed, stops the queue (later pushes are handed back "not sent" and write nothing)
 * and is what every later push returns; a stopped queue sends nothing; a create-only push
 * lands at its url when nothing is there, else (handed back fell) at its fallback, the
 * existing object untouched. The pipelining
 * over http is tests/openvds/uploads.t's. Expected values come from the OS (stdio,
 * getxattr), not from the store. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "store/store.h"
#include "tap.h"
#include "vd_ctx.h"

static char dir[] = "/tmp/vdsql-putq.XXXXXX";

static void path(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

static int file_is(const char *p, const char *want) {
  char buf[64] = {0};
  FILE *f = fopen(p, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  return n == strlen(want) && memcmp(buf, want, n) == 0;
}

static vd_code push(vd_putq *q, const char *name, const char *text, int64_t tag, vd_err *err, int *moved) {
  char p[256];
  path(p, sizeof p, name);
  vd_buf b = {0};
  vd_buf_append(&b, text, strlen(text));
  vd_kv kv = {"vdschunkmetadata", "1234"};
  vd_code rc = vd_putq_push(q, p, &b, &kv, 1, tag, err);
  if (moved) *moved = b.data == NULL && b.len == 0;
  vd_buf_free(&b);
  return rc;
}

int main(void) {
  if (!mkdtemp(dir)) return 1;
  vd_ctx *ctx = vd_ctx_new();
  vd_err err, e;
  vd_putq *q;
  char p[256], val[32];
  int64_t tag;
  vd_code rc;

  ok(vd_putq_open(ctx, 4, 1 << 20, &q, &err) == VD_OK, "a queue of 4");
  int moved = 1, all = 1;
  for (int i = 0; i < 3; i++) {
    char name[16], text[16];
    int m;
    snprintf(name, sizeof name, "o%d", i);
    snprintf(text, sizeof text, "object %d", i);
    all &= push(q, name, text, 10 + i, &err, &m) == VD_OK;
    moved &= m;
  }
  ok(all && moved, "three pushes succeed, each body moved in");
  int order = 1;
  for (int i = 0; i < 3; i++) order &= vd_putq_take(q, &tag, NULL, &rc, &e) == 1 && tag == 10 + i && rc == VD_OK;
  ok(order && vd_putq_take(q, &tag, NULL, &rc, &e) == 0, "each handed back once, in order, VD_OK; then nothing");
  path(p, sizeof p, "o1");
  ssize_t n = getxattr(p, "user.vdschunkmetadata", val, sizeof val);
  ok(file_is(p, "object 1") && n == 4 && memcmp(val, "1234", 4) == 0, "the bytes and the user metadata landed");
  ok(!vd_putq_busy(q, 11) && vd_putq_wait(q, -1, &err) == VD_OK, "nothing busy: a local put is done when pushed");

  rc = push(q, "missing/o3", "x", 13, &err, NULL);
  path(p, sizeof p, "missing");
  ok(rc != VD_OK && strstr(err.msg, p), "a put into a missing folder fails naming it: %s", err.msg);
  ok(vd_putq_take(q, &tag, NULL, &rc, &e) == 1 && tag == 13 && rc != VD_OK && strstr(e.msg, p),
     "and is handed back with that error");
  char first[1024];
  snprintf(first, sizeof first, "%s", err.msg);
  rc = push(q, "o4", "object 4", 14, &err, NULL);
  path(p, sizeof p, "o4");
  ok(rc != VD_OK && strcmp(err.msg, first) == 0, "the queue stopped: a later push returns the first error");
  ok(vd_putq_take(q, &tag, NULL, &rc, &e) == 1 && tag == 14 && rc == VD_INTERRUPTED && strstr(e.msg, "not sent") &&
         access(p, F_OK) != 0,
     "its put is handed back not sent, and nothing is written: %s", e.msg);
  vd_putq_close(q);

  ok(vd_putq_open(ctx, 2, 1 << 20, &q, &err) == VD_OK, "a new queue");
  vd_putq_stop(q);
  rc = push(q, "o5", "object 5", 15, &err, NULL);
  path(p, sizeof p, "o5");
  ok(rc == VD_INTERRUPTED && vd_putq_take(q, &tag, NULL, &rc, &e) == 1 && tag == 15 && rc == VD_INTERRUPTED &&
         access(p, F_OK) != 0,
     "a stopped queue hands a push back not sent and writes nothing");
  vd_putq_close(q);

  ok(vd_putq_open(ctx, 2, 1 << 20, &q, &err) == VD_OK, "a queue for create-only puts");
  char fb[256];
  int fell = -1;
  vd_kv kv = {"vdschunkmetadata", "5678"};
  vd_buf b = {0};
  path(p, sizeof p, "c1");
  path(fb, sizeof fb, "c1.aside");
  vd_buf_append(&b, "new", 3);
  rc = vd_putq_push_create(q, p, fb, &b, &kv, 1, 21, &err);
  ok(rc == VD_OK && vd_putq_take(q, &tag, &fell, &rc, &e) == 1 && tag == 21 && rc == VD_OK && fell == 0 &&
         file_is(p, "new") && access(fb, F_OK) != 0,
     "a create-only push of a new url lands there, not at its fallback");
  vd_buf_append(&b, "again", 5);
  rc = vd_putq_push_create(q, p, fb, &b, &kv, 1, 22, &err);
  ssize_t nx = getxattr(fb, "user.vdschunkmetadata", val, sizeof val - 1);
  ok(rc == VD_OK && vd_putq_take(q, &tag, &fell, &rc, &e) == 1 && tag == 22 && rc == VD_OK && fell == 1 &&
         file_is(p, "new") && file_is(fb, "again") && nx == 4 && memcmp(val, "5678", 4) == 0,
     "one of an existing url goes to its fallback with its metadata, handed back fell; the object there is "
     "untouched");
  vd_buf_free(&b);
  vd_putq_close(q);
  vd_ctx_free(ctx);

  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) diag("could not remove %s", dir);
  return done_testing();
}
