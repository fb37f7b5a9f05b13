/* The file backend through the store interface: put (body, user metadata, If-Match,
 * If-None-Match), head, list (prefix, pages, metadata) and delete, the read-only http
 * refusal, the capability queries, and conditional puts raced by two processes (exactly
 * one wins, the other gets VD_PRECONDITION), and the clear refusal on a file system without
 * user xattrs (ramfs, mounted in a private namespace; where none can be mounted, fsetxattr
 * made to fail with ENOTSUP as ramfs does). Expected values come from the OS, not from
 * the store: file bytes read with stdio, attributes with getxattr, names listed here. */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "store/store.h"
#include "tap.h"
#include "vd_ctx.h"

static char dir[] = "/tmp/vdsql-store.XXXXXX";

/* Where no ramfs can be mounted (inside fresh-machine's chroot there is neither a user
 * nor a mount namespace to take), the same refusal is checked by making fsetxattr fail
 * as such a file system does (ENOTSUP): this executable's definition is the one the
 * store's code, linked in statically, calls; otherwise it is the system call itself. */
static int xattr_enotsup;
int fsetxattr(int fd, const char *name, const void *value, size_t size, int flags) {
  if (xattr_enotsup) {
    errno = ENOTSUP;
    return -1;
  }
  return (int)syscall(SYS_fsetxattr, fd, name, value, size, flags);
}

static char *at(const char *name) {
  static char buf[4][512];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static int file_is(const char *path, const char *want) {
  size_t n;
  unsigned char *p = slurp(path, &n);
  int same = p && n == strlen(want) && memcmp(p, want, n) == 0;
  free(p);
  return same;
}

static int xattr_is(const char *path, const char *name, const char *want) {
  char v[256];
  ssize_t n = getxattr(path, name, v, sizeof v);
  if (!want) return n < 0 && errno == ENODATA;
  return n == (ssize_t)strlen(want) && memcmp(v, want, (size_t)n) == 0;
}

static vd_code put(vd_ctx *ctx, const char *url, const char *body, const vd_kv *m, int nm, const char *if_match,
                   int if_none, char *etag, vd_err *e) {
  vd_putreq p = {.url = url, .body = body, .len = strlen(body), .meta = m, .nmeta = nm, .if_match = if_match,
                 .if_none_match = if_none};
  vd_code rc = vd_put(ctx, &p, e);
  if (etag) strcpy(etag, p.etag);
  return rc;
}

static int temps_left(void) {
  int n = 0;
  DIR *d = opendir(dir);
  struct dirent *de;
  while (d && (de = readdir(d)))
    if (!strncmp(de->d_name, ".vdsql-put-", 11)) n++;
  if (d) closedir(d);
  return n;
}

static void write_file(const char *path, const char *s) {
  FILE *f = fopen(path, "w");
  if (f) fputs(s, f), fclose(f);
}

/* Two processes put to url at once with the same precondition; returns how many got
 * VD_OK and how many VD_PRECONDITION (-1 when a child failed otherwise). */
static void race(const char *url, const char *if_match, int if_none, int *won, int *lost) {
  int go[2], res[2];
  *won = *lost = 0;
  if (pipe(go) || pipe(res)) return;
  for (int c = 0; c < 2; c++) {
    if (fork() == 0) {
      close(go[1]);
      char x;
      if (read(go[0], &x, 1) != 1) _exit(1); /* both start together */
      vd_ctx *ctx = vd_ctx_new();
      vd_err e;
      char body[32];
      snprintf(body, sizeof body, "writer %d", c);
      vd_kv m = {"writer", body};
      vd_code rc = put(ctx, url, body, &m, 1, if_match, if_none, NULL, &e);
      unsigned char r = (unsigned char)rc;
      if (write(res[1], &r, 1) != 1) _exit(1);
      vd_ctx_free(ctx);
      _exit(0);
    }
  }
  close(go[0]);
  close(res[1]);
  if (write(go[1], "gg", 2) != 2) return;
  close(go[1]);
  unsigned char r;
  while (read(res[0], &r, 1) == 1) {
    if (r == VD_OK) ++*won;
    else if (r == VD_PRECONDITION) ++*lost;
    else *won = -100;
  }
  close(res[0]);
  while (wait(NULL) > 0) {
  }
}

/* A put with metadata onto ramfs (no user xattrs), in a child with its own user and
 * mount namespaces: 0 and the code and message, or -1 when namespaces are not allowed. */
static int on_ramfs(vd_code *rc, char *msg, size_t n) {
  int fds[2];
  if (pipe(fds)) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/ramfs", dir);
    mkdir(sub, 0755);
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0) {
      char map[64];
      snprintf(map, sizeof map, "0 %u 1", (unsigned)uid); /* files get an owner (else EOVERFLOW) */
      write_file("/proc/self/uid_map", map);
      write_file("/proc/self/setgroups", "deny");
      snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
      write_file("/proc/self/gid_map", map);
    } else if (geteuid() != 0 || unshare(CLONE_NEWNS)) {
      /* no user namespace inside a chroot (fresh-machine): root can still take a mount
       * namespace of its own, so the ramfs never shows outside this child */
      _exit(3);
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
        mount("none", sub, "ramfs", 0, NULL))
      _exit(3);
    vd_ctx *ctx = vd_ctx_new();
    vd_err e = {0};
    vd_kv m = {"vdschunkmetadata", "AQEBAQAAAAA="};
    char url[700];
    snprintf(url, sizeof url, "%s/obj", sub);
    vd_code c = put(ctx, url, "x", &m, 1, NULL, 0, NULL, &e);
    int left = access(url, F_OK) == 0;
    DIR *d = opendir(sub);
    struct dirent *de;
    while (d && (de = readdir(d)))
      if (de->d_name[0] != '.' || strlen(de->d_name) > 2) left = 1;
    if (d) closedir(d);
    dprintf(fds[1], "%d %d %s", (int)c, left, e.msg);
    vd_ctx_free(ctx);
    _exit(0);
  }
  close(fds[1]);
  char buf[1200] = "";
  ssize_t k = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (k <= 0) return -1;
  buf[k] = 0;
  int c = 0, left = 0, off = 0;
  if (sscanf(buf, "%d %d %n", &c, &left, &off) < 2) return -1;
  *rc = left ? VD_ERROR : (vd_code)c; /* anything left behind fails the test */
  snprintf(msg, n, "%s", buf + off);
  return 0;
}

int main(void) {
  if (!mkdtemp(dir)) return 1;
  vd_ctx *ctx = vd_ctx_new();
  vd_err e;
  char etag[128], etag2[128];
  vd_kv meta[2] = {{"VDSChunkMetadata", "AQEBAQAAAAA="}, {"k2", "v2"}};

  /* put, create-only */
  ok(put(ctx, at("obj"), "hello", meta, 2, NULL, 1, etag, &e) == VD_OK && etag[0] == '"', "create-only put: %s",
     e.msg);
  struct stat st;
  ok(file_is(at("obj"), "hello") && stat(at("obj"), &st) == 0 && (st.st_mode & 0777) == 0644,
     "the file holds the body, mode 0644");
  ok(xattr_is(at("obj"), "user.vdschunkmetadata", "AQEBAQAAAAA=") && xattr_is(at("obj"), "user.k2", "v2"),
     "metadata in user.<key> xattrs, keys lower-cased");
  vd_objinfo info;
  ok(vd_head(ctx, at("obj"), &info, &e) == VD_OK && info.size == 5 && !strcmp(info.etag, etag) && info.nmeta == 2 &&
         vd_objinfo_meta(&info, "chunkmetadata") && !strcmp(vd_objinfo_meta(&info, "chunkmetadata"), "AQEBAQAAAAA="),
     "head: size 5, the put's etag, the metadata");
  vd_objinfo_free(&info);
  char furl[600];
  snprintf(furl, sizeof furl, "file://%s", at("obj"));
  ok(put(ctx, furl, "again", NULL, 0, NULL, 1, NULL, &e) == VD_PRECONDITION && file_is(at("obj"), "hello"),
     "create-only over an existing object (as a file:// URL): VD_PRECONDITION, unchanged");
  ok(strstr(e.msg, "precondition failed: the object exists (If-None-Match)") != NULL, "... said so: %s", e.msg);

  /* If-Match */
  ok(put(ctx, at("obj"), "other", NULL, 0, "\"not-it\"", 0, NULL, &e) == VD_PRECONDITION && file_is(at("obj"), "hello") &&
         strstr(e.msg, "the object changed"),
     "If-Match with another etag: VD_PRECONDITION, unchanged (%s)", e.msg);
  ok(put(ctx, at("missing"), "x", NULL, 0, etag, 0, NULL, &e) == VD_PRECONDITION && access(at("missing"), F_OK) != 0,
     "If-Match on a missing object: VD_PRECONDITION, nothing created");
  vd_kv meta2 = {"k3", "v3"};
  ok(put(ctx, at("obj"), "HELLO", &meta2, 1, etag, 0, etag2, &e) == VD_OK && file_is(at("obj"), "HELLO") &&
         strcmp(etag, etag2) != 0,
     "If-Match with the current etag: written, a new etag (same size) %s -> %s", etag, etag2);
  ok(xattr_is(at("obj"), "user.k3", "v3") && xattr_is(at("obj"), "user.k2", NULL) &&
         xattr_is(at("obj"), "user.vdschunkmetadata", NULL),
     "a put replaces all user metadata");
  ok(put(ctx, at("obj"), "HELLO", &meta2, 1, etag, 0, NULL, &e) == VD_PRECONDITION, "the old etag no longer matches");
  ok(put(ctx, at("obj"), "HELLO", NULL, 0, etag2, 0, etag, &e) == VD_OK && strcmp(etag, etag2) != 0,
     "the same body again: yet another etag");
  ok(temps_left() == 0, "no temporary file left behind");
  vd_kv bad = {"", "x"};
  ok(put(ctx, at("badmeta"), "x", &bad, 1, NULL, 0, NULL, &e) == VD_INVALID && access(at("badmeta"), F_OK) != 0 &&
         temps_left() == 0,
     "an empty metadata key: VD_INVALID, nothing written (%s)", e.msg);
  ok(put(ctx, at("nodir/x"), "x", NULL, 0, NULL, 0, NULL, &e) == VD_NOTFOUND && strstr(e.msg, "no such directory"),
     "a put into a missing directory: %s", e.msg);
  ok(put(ctx, at(""), "x", NULL, 0, NULL, 0, NULL, &e) == VD_INVALID, "a put to a directory name: %s", e.msg);

  /* list */
  const char *names[] = {"a/1", "a/2", "ab", "b", "sub/x/y", "obj"};
  mkdir(at("a"), 0755);
  mkdir(at("sub"), 0755);
  mkdir(at("sub/x"), 0755);
  for (int i = 0; i < 5; i++) write_file(at(names[i]), names[i]);
  setxattr(at("ab"), "user.color", "blue", 4, 0);
  symlink(at("b"), at("link"));
  const char *want[] = {"a/1", "a/2", "ab", "b", "obj", "sub/x/y"}; /* byte order; the link is not listed */
  char all[7][64];
  int got = 0, pages = 0, meta_ok = 0, sizes_ok = 1;
  char *token = NULL;
  for (;;) {
    vd_listing l;
    if (vd_list(ctx, at(""), token, 4, &l, &e) != VD_OK) break;
    pages++;
    for (int i = 0; i < l.n && got < 7; i++) {
      snprintf(all[got++], 64, "%s", l.ent[i].key);
      struct stat s2;
      if (!l.ent[i].has_meta || stat(at(l.ent[i].key), &s2) || s2.st_size != l.ent[i].info.size) sizes_ok = 0;
      if (!strcmp(l.ent[i].key, "ab") && vd_objinfo_meta(&l.ent[i].info, "color") &&
          !strcmp(vd_objinfo_meta(&l.ent[i].info, "color"), "blue"))
        meta_ok = 1;
    }
    free(token);
    token = l.next ? strdup(l.next) : NULL;
    vd_listing_free(&l);
    if (!token || pages > 5) break;
  }
  free(token);
  int same = got == 6;
  for (int i = 0; same && i < 6; i++) same = !strcmp(all[i], want[i]);
  ok(same && pages == 2, "list in pages of 4: 2 pages, every file once, in byte order, no link (%d keys, %d pages)",
     got, pages);
  ok(sizes_ok && meta_ok, "... with sizes, and metadata from the xattrs");
  vd_listing l;
  ok(vd_list(ctx, at("a"), NULL, 10, &l, &e) == VD_OK && l.n == 3 && !strcmp(l.ent[0].key, "a/1") &&
         !strcmp(l.ent[2].key, "ab") && !l.next,
     "a key prefix: a/1, a/2, ab, last page");
  vd_listing_free(&l);
  ok(vd_list(ctx, at("a/"), "1", 10, &l, &e) == VD_OK && l.n == 1 && !strcmp(l.ent[0].key, "2"),
     "a directory, after a token: keys relative to it");
  vd_listing_free(&l);
  ok(vd_list(ctx, at("none/"), NULL, 10, &l, &e) == VD_OK && l.n == 0 && !l.next, "a missing directory: no objects");
  vd_listing_free(&l);

  /* delete */
  ok(vd_delete(ctx, at("b"), &e) == VD_OK && access(at("b"), F_OK) != 0, "delete removes the file");
  ok(vd_delete(ctx, at("b"), &e) == VD_OK, "deleting a missing object is not an error");
  ok(vd_delete(ctx, at("sub"), &e) == VD_IO && access(at("sub/x/y"), F_OK) == 0, "a directory is not deleted: %s",
     e.msg);

  /* read-only and unknown backends, capability queries */
  int64_t before = ctx->stats[VD_BE_HTTP].requests;
  ok(put(ctx, "http://u:s3cret@127.0.0.1:9/d/x?sig=s3cret", "x", NULL, 0, NULL, 0, NULL, &e) == VD_READONLY &&
         !strcmp(e.msg, "http://127.0.0.1:9/d/x?...: cannot write: http(s) URLs are read-only"),
     "put over http: %s", e.msg);
  ok(vd_delete(ctx, "https://h/x", &e) == VD_READONLY && !strcmp(e.msg, "https://h/x: cannot delete: http(s) URLs are read-only"),
     "delete over https: %s", e.msg);
  ok(vd_list(ctx, "http://h/d/", NULL, 10, &l, &e) == VD_READONLY && !strcmp(e.msg, "http://h/d/: cannot list: http(s) URLs have no listing"),
     "list over http: %s", e.msg);
  ok(ctx->stats[VD_BE_HTTP].requests == before, "... without a request");
  ok(put(ctx, "gopher://h/x", "x", NULL, 0, NULL, 0, NULL, &e) == VD_UNSUPPORTED && strstr(e.msg, "unsupported URL scheme"),
     "an unknown scheme: %s", e.msg);
  ok(vd_store_is_local("/x") && vd_store_is_local("rel/x") && vd_store_is_local("file:///x") &&
         vd_store_is_local("FILE:///x") && !vd_store_is_local("http://h/x") && !vd_store_is_local("gopher://h/x"),
     "vd_store_is_local: paths and file:// only");
  ok(vd_store_is_remote("http://h/x") && vd_store_is_remote("HTTPS://h/x") && !vd_store_is_remote("/x") &&
         !vd_store_is_remote("gopher://h/x") && !vd_store_is_remote("/cwd/http://h/x"),
     "vd_store_is_remote: http(s); not a path holding a URL, not an unknown scheme");
  ok(vd_store_can_write("/x") && !vd_store_can_write("http://h/x") && !vd_store_can_write("gopher://h/x"),
     "vd_store_can_write: files only");

  /* two processes race with the same precondition, 20 times each way */
  int bad_ifm = 0, bad_ifn = 0;
  for (int round = 0; round < 20; round++) {
    char cur[128], name[32];
    if (put(ctx, at("race"), "base", NULL, 0, NULL, 0, cur, &e)) bad_ifm++;
    int won, lost;
    race(at("race"), cur, 0, &won, &lost);
    char v[64];
    ssize_t vn = getxattr(at("race"), "user.writer", v, sizeof v - 1);
    if (vn > 0) v[vn] = 0;
    if (won != 1 || lost != 1 || vn <= 0 || !file_is(at("race"), v)) bad_ifm++;
    snprintf(name, sizeof name, "fresh%d", round);
    race(at(name), NULL, 1, &won, &lost);
    vn = getxattr(at(name), "user.writer", v, sizeof v - 1);
    if (vn > 0) v[vn] = 0;
    if (won != 1 || lost != 1 || vn <= 0 || !file_is(at(name), v)) bad_ifn++;
  }
  ok(!bad_ifm, "If-Match raced by two processes, 20 rounds: one wins, one gets VD_PRECONDITION, the winner's body and "
     "metadata together (%d bad rounds)", bad_ifm);
  ok(!bad_ifn, "If-None-Match raced likewise on a new name: one creates, one gets VD_PRECONDITION (%d bad rounds)",
     bad_ifn);
  ok(temps_left() == 0, "no temporary file left behind by the races");

  /* a file system without user xattrs: one clear refusal, nothing left */
  vd_code rrc;
  char rmsg[1100];
  if (on_ramfs(&rrc, rmsg, sizeof rmsg) == 0)
    ok(rrc == VD_UNSUPPORTED && strstr(rmsg, "does not keep user extended attributes (user.vdschunkmetadata)"),
       "metadata on ramfs (no user xattrs): VD_UNSUPPORTED, nothing left: %s", rmsg);
  else {
    xattr_enotsup = 1;
    vd_err e = {0};
    vd_kv m = {"vdschunkmetadata", "AQEBAQAAAAA="};
    vd_code c = put(ctx, at("noxattr"), "x", &m, 1, NULL, 0, NULL, &e);
    xattr_enotsup = 0;
    ok(c == VD_UNSUPPORTED && strstr(e.msg, "does not keep user extended attributes (user.vdschunkmetadata)") &&
           access(at("noxattr"), F_OK) != 0 && temps_left() == 0,
       "metadata where fsetxattr says ENOTSUP (no namespace here to mount a ramfs): VD_UNSUPPORTED, nothing left: %s",
       e.msg);
  }

  /* a copy (the OpenVDS writer's staged chunk put in place): a second name of the same
   * file, bytes and user.* metadata alike; a missing source is VD_NOTFOUND */
  {
    vd_err ce = {0};
    vd_kv m = {"vdschunkmetadata", "AAECAwQFBgc="};
    char src[600], dst[600];
    snprintf(src, sizeof src, "%s", at("stage"));
    snprintf(dst, sizeof dst, "%s", at("final"));
    put(ctx, src, "chunk bytes", &m, 1, NULL, 0, NULL, &ce);
    vd_putreq cp = {.url = dst, .copy_from = src};
    struct stat a, b;
    ok(vd_put(ctx, &cp, &ce) == VD_OK && file_is(dst, "chunk bytes") &&
           xattr_is(dst, "user.vdschunkmetadata", "AAECAwQFBgc=") && stat(src, &a) == 0 && stat(dst, &b) == 0 &&
           a.st_ino == b.st_ino,
       "copy: a hard link, with the source's bytes and metadata (%s)", ce.msg);
    vd_putreq del = {.url = src, .del = 1}, *pp = &del;
    vd_code drc;
    vd_err derr;
    ok(vd_put_many(ctx, &pp, 1, &drc, &derr) == VD_OK && access(src, F_OK) != 0 && file_is(dst, "chunk bytes"),
       "a delete through vd_put_many removes the source; the copy stays");
    vd_putreq cp2 = {.url = dst, .copy_from = src};
    ok(vd_put(ctx, &cp2, &ce) == VD_NOTFOUND && strstr(ce.msg, "no such file (the copy's source)") &&
           file_is(dst, "chunk bytes") && temps_left() == 0,
       "copy from a missing source: VD_NOTFOUND, the target unchanged, no temporary file left: %s", ce.msg);
  }

  vd_ctx_free(ctx);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd)) diag("could not remove %s", dir);
  return done_testing();
}
