/* vtkhdf_main: the member list, its transactions, the names the main file stores, and
 * the atomic rewrite of the main file at commit (a temporary file in the same directory,
 * fsync'd, renamed over the old one: a failed or rolled-back commit leaves the old main
 * file as it was). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "vtkhdf_h5.h"
#include "vtkhdf_main_impl.h"
#include "vtkhdf_stream.h"

static vd_code load(vm_table *t, vd_err *err); /* below */

static void member_unref(vm_member *m) {
  if (!m || --m->refs > 0) return;
  free(m->file);
  free(m->canon);
  free(m->block);
  vm_info_free(m->info);
  free(m);
}

static void list_clear(vm_list *l) {
  for (int i = 0; i < l->n; i++) member_unref(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

static int list_push(vm_list *l, vm_member *m) {
  if (l->n == l->cap) {
    int nc = l->cap ? l->cap * 2 : 16;
    void *p = realloc(l->v, (size_t)nc * sizeof *l->v);
    if (!p) return -1;
    l->v = p, l->cap = nc;
  }
  l->v[l->n++] = m;
  m->refs++;
  return 0;
}

static int list_copy(vm_list *dst, const vm_list *src) {
  memset(dst, 0, sizeof *dst);
  for (int i = 0; i < src->n; i++)
    if (list_push(dst, src->v[i])) return list_clear(dst), -1;
  return 0;
}

vm_member **vm_rows(const vm_table *t, int *n) {
  const vm_list *l = t->in_tx ? &t->cur : &t->done;
  vm_member **v = malloc((size_t)(l->n ? l->n : 1) * sizeof *v);
  *n = 0;
  if (!v) return NULL;
  for (int i = 0; i < l->n; i++) (v[i] = l->v[i])->refs++;
  *n = l->n;
  return v;
}

void vm_rows_free(vm_member **v, int n) {
  for (int i = 0; v && i < n; i++) member_unref(v[i]);
  free(v);
}
vm_layout vm_table_layout(const vm_table *t) { return t->layout; }

static const char *component(const char *s, size_t *len) {
  while (*s == '/') s++;
  *len = strcspn(s, "/");
  return s;
}

char *vm_stored_name(const vm_table *t, const char *file) {
  if (t->ctx->cfg.vtkhdf_absolute_paths) return strdup(file);
  /* file: canonical */
  /* relative to the main file's directory, so the set moves together (HDF5 resolves a
   * relative source against the directory of the file holding the link or mapping) */
  const char *a = t->dir, *b = file;
  for (;;) { /* past the leading components both share */
    size_t la, lb;
    const char *x = component(a, &la), *y = component(b, &lb);
    if (!la || la != lb || memcmp(x, y, la)) {
      a = x, b = y;
      break;
    }
    a = x + la, b = y + lb;
  }
  int ups = 0;
  for (size_t l;; ups++) {
    a = component(a, &l);
    if (!l) break;
    a += l;
  }
  char *o = malloc((size_t)ups * 3 + strlen(b) + 1);
  if (!o) return NULL;
  o[0] = 0;
  for (int k = 0; k < ups; k++) strcat(o, "../");
  strcat(o, b);
  return o;
}

vd_code vm_open(vd_ctx *ctx, const char *path, const char *layout, vm_table **out, vd_err *err) {
  *out = NULL;
  int lay = -1;
  for (int k = 0; k < 3; k++)
    if (layout && !strcmp(layout, vm_layout_names[k])) lay = k;
  if (lay < 0)
    return vd_fail(err, VD_INVALID, "vtkhdf_main: the layout must be 'partitions', 'timesteps' or 'composite', not '%s'",
                   layout ? layout : "");
  if (!vd_store_is_local(path)) {
    vd_code rc = vd_url_check(path, err);
    if (rc) return rc;
    char shown[512];
    vd_url_redact(path, shown, sizeof shown);
    rc = vd_fail(err, VD_UNSUPPORTED, "vtkhdf_main: %s: the main file must be local (HDF5 writes local files only)", shown);
    return rc;
  }
  vm_table *t = calloc(1, sizeof *t);
  if (!t) return vd_nomem(err);
  t->ctx = ctx;
  t->layout = (vm_layout)lay;
  t->next_id = 1;
  char *p = vd_url_path(path);
  vd_code rc = VD_OK;
  if (!p || !(t->path = strdup(p))) rc = vd_nomem(err);
  if (!rc && (!*p || p[strlen(p) - 1] == '/')) rc = vd_fail(err, VD_INVALID, "vtkhdf_main: '%s' names no file", p);
  if (!rc) {
    const char *sl = strrchr(p, '/');
    size_t gl = sl ? (size_t)(sl - p) + 1 : 0;
    if (!(t->gdir = malloc(gl + 1))) rc = vd_nomem(err);
    else memcpy(t->gdir, p, gl), t->gdir[gl] = 0;
  }
  if (!rc) {
    char *slash = strrchr(p, '/');
    const char *dir = slash ? (slash == p ? "/" : p) : ".";
    if (slash && slash != p) *slash = 0;
    char rp[PATH_MAX];
    if (!realpath(dir, rp)) rc = vd_fail(err, VD_IO, "vtkhdf_main: %s: %s", dir, strerror(errno));
    else if (!(t->dir = strdup(rp)) || !(t->base = strdup(slash ? slash + 1 : p))) rc = vd_nomem(err);
  }
  free(p);
  if (!rc) rc = load(t, err);
  if (rc) vm_close(t);
  else *out = t;
  return rc;
}

void vm_close(vm_table *t) {
  if (!t) return;
  list_clear(&t->done);
  list_clear(&t->cur);
  for (int i = 0; i < t->nsaves; i++) list_clear(&t->saves[i]);
  free(t->saves);
  free(t->path);
  free(t->dir);
  free(t->base);
  free(t->gdir);
  free(t);
}

/* The main file's canonical name */
static char *main_path(const vm_table *t) {
  char *s = malloc(strlen(t->dir) + strlen(t->base) + 2);
  if (s) sprintf(s, "%s/%s", strcmp(t->dir, "/") ? t->dir : "", t->base);
  return s;
}

/* What identifies this version of the main file mp ("" when there is none): a rename
 * over it changes the inode, a rewrite in place the mtime or size. */
static void version_of(const char *mp, char *out, size_t n) {
  struct stat st;
  if (stat(mp, &st)) {
    *out = 0;
    return;
  }
  snprintf(out, n, "%llu:%llu:%lld.%09ld:%lld", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
           (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_size);
}

/* Reads the members (again) from the main file, noting the version read. */
static vd_code load(vm_table *t, vd_err *err) {
  char *mp = main_path(t);
  if (!mp) return vd_nomem(err);
  version_of(mp, t->seen, sizeof t->seen); /* before: a change while reading shows at commit */
  free(mp);
  list_clear(&t->done);
  return vm_load(t, err);
}

vd_code vm_insert(vm_table *t, const char *file, int64_t step, double time, int has_time, const char *block,
                  int64_t *rowid, vd_err *err) {
  static const char *const lay = "vtkhdf_main";
  if (!t->in_tx) return vd_fail(err, VD_ERROR, "%s: INSERT outside a transaction", lay);
  if (t->layout != VM_TIMESTEPS && (step != VD_INT_NULL || has_time))
    return vd_fail(err, VD_CONSTRAINT, "%s: step and time are for the 'timesteps' layout", lay);
  if (t->layout != VM_COMPOSITE && block)
    return vd_fail(err, VD_CONSTRAINT, "%s: block is for the 'composite' layout", lay);
  if (step != VD_INT_NULL && step < 0) return vd_fail(err, VD_CONSTRAINT, "%s: step must be >= 0", lay);
  if (!vd_store_is_local(file)) {
    vd_code rc = vd_url_check(file, err);
    if (rc) return rc;
    char shown[512];
    vd_url_redact(file, shown, sizeof shown);
    rc = vd_fail(err, VD_UNSUPPORTED,
                 "%s: %s: part files must be local (HDF5 virtual datasets and external links only read local files)", lay, shown);
    return rc;
  }
  char *p = vd_url_path(file), rp[PATH_MAX];
  if (!p) return vd_nomem(err);
  vd_code rc = vd_file_check_regular(p, err);
  if (!rc && !realpath(p, rp)) rc = vd_fail(err, VD_IO, "%s: %s", p, strerror(errno));
  if (rc) return free(p), rc;
  char *mp = main_path(t);
  if (!mp) return vd_nomem(err);
  int self = !strcmp(mp, rp);
  free(mp);
  if (self) return vd_fail(err, VD_CONSTRAINT, "%s: %s is the main file itself", lay, rp);
  vm_member *m = calloc(1, sizeof *m);
  if (!m || !(m->canon = strdup(rp))) return free(p), free(m), vd_nomem(err);
  m->file = p;
  m->id = t->next_id;
  m->time = time, m->has_time = has_time;
  m->step = step;
  vm_list *l = &t->cur;
  if (t->layout == VM_TIMESTEPS && step == VD_INT_NULL) { /* a new step after the last */
    m->step = 0;
    for (int i = 0; i < l->n; i++)
      if (l->v[i]->step >= m->step) m->step = l->v[i]->step + 1;
  }
  if (t->layout == VM_COMPOSITE) {
    char def[32];
    snprintf(def, sizeof def, "Block%d", l->n);
    if (!block) block = def;
    if (!*block || strchr(block, '/') || !strcmp(block, ".") || !strcmp(block, "Assembly") || !strcmp(block, "Steps"))
      rc = vd_fail(err, VD_CONSTRAINT, "%s: '%s' cannot name a block (not empty, '.', 'Assembly', 'Steps', no '/')", lay, block);
    for (int i = 0; i < l->n && !rc; i++)
      if (!strcmp(l->v[i]->block, block)) rc = vd_fail(err, VD_CONSTRAINT, "%s: block '%s' is already listed (%s)", lay, block, l->v[i]->file);
    if (!rc && !(m->block = strdup(block))) rc = vd_nomem(err);
  }
  for (int i = 0; i < l->n && !rc; i++)
    if (!strcmp(l->v[i]->canon, m->canon)) rc = vd_fail(err, VD_CONSTRAINT, "%s: is already a member (a file can be listed once)", m->file);
  if (!rc) rc = vm_inspect(t->ctx, t->layout, m->file, &m->info, err);
  /* against the first member that can be inspected now (its file may be gone) */
  for (int i = 0; i < l->n && !rc; i++) {
    if (!l->v[i]->info) {
      vd_err e2 = {0};
      if (vm_inspect(t->ctx, t->layout, l->v[i]->file, &l->v[i]->info, &e2)) continue;
    }
    rc = vm_check_pair(t->layout, l->v[i], m, err);
    break;
  }
  if (!rc && list_push(l, m)) rc = vd_nomem(err);
  if (rc) {
    m->refs = 1;
    member_unref(m);
    return rc;
  }
  t->next_id++;
  t->dirty = 1;
  *rowid = m->id;
  return VD_OK;
}

vd_code vm_remove(vm_table *t, int64_t rowid, vd_err *err) {
  if (!t->in_tx) return vd_fail(err, VD_ERROR, "vtkhdf_main: DELETE outside a transaction");
  vm_list *l = &t->cur;
  for (int i = 0; i < l->n; i++)
    if (l->v[i]->id == rowid) {
      member_unref(l->v[i]);
      memmove(l->v + i, l->v + i + 1, (size_t)(l->n - i - 1) * sizeof *l->v);
      l->n--;
      t->dirty = 1;
      return VD_OK;
    }
  return VD_OK;
}

vd_code vm_tx_begin(void *tab, vd_err *err) {
  vm_table *t = tab;
  if (t->in_tx) return VD_OK;
  /* another writer committed since this table read the file: start from its members */
  char *mp = main_path(t), now[sizeof t->seen];
  if (!mp) return vd_nomem(err);
  version_of(mp, now, sizeof now);
  free(mp);
  vd_code rc = strcmp(now, t->seen) ? load(t, err) : VD_OK;
  if (rc) return rc;
  list_clear(&t->cur);
  if (list_copy(&t->cur, &t->done)) return vd_nomem(err);
  t->in_tx = 1;
  t->dirty = 0;
  return VD_OK;
}

static int by_step(const void *a, const void *b) {
  const vm_member *x = *(vm_member *const *)a, *y = *(vm_member *const *)b;
  if (x->step != y->step) return x->step < y->step ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id; /* insertion order within a step */
}

/* Every member inspected and agreeing with the first; timesteps in step order with no
 * step missing and one time per step. m: the members in the main file's order. */
static vd_code validate(vm_table *t, vm_member **m, int n, vd_err *err) {
  vd_code rc = VD_OK;
  for (int i = 0; i < n && !rc; i++)
    if (!m[i]->info) rc = vm_inspect(t->ctx, t->layout, m[i]->file, &m[i]->info, err);
  for (int i = 1; i < n && !rc; i++) rc = vm_check_pair(t->layout, m[0], m[i], err);
  if (rc || t->layout != VM_TIMESTEPS) return rc;
  qsort(m, (size_t)n, sizeof *m, by_step);
  for (int i = 0; i < n; i++) {
    int64_t want = i ? m[i - 1]->step + (m[i]->step != m[i - 1]->step) : 0;
    if (m[i]->step != want)
      return vd_fail(err, VD_INVALID, "vtkhdf_main: step %lld has no file (steps must run 0, 1, 2, ... without gaps)",
                     (long long)want);
    if (i && m[i]->step == m[i - 1]->step && (m[i]->has_time != m[i - 1]->has_time || m[i]->time != m[i - 1]->time))
      return vd_fail(err, VD_INVALID, "%s: its time differs from %s's, in the same step %lld", m[i]->file, m[i - 1]->file,
                     (long long)m[i]->step);
  }
  return VD_OK;
}

static vd_code write_locked(vm_table *t, const char *mp, vd_err *err);

/* Under the directory's writer lock, only over the version this transaction started
 * from: another writer's commit in between is refused, never overwritten. */
static vd_code write_main(vm_table *t, vd_err *err) {
  char *mp = main_path(t), now[sizeof t->seen];
  if (!mp) return vd_nomem(err);
  int dfd;
  vd_code rc = vd_file_lock_dir(t->ctx, t->dir, &dfd, err);
  if (!rc) {
    version_of(mp, now, sizeof now);
    if (strcmp(now, t->seen))
      rc = vd_fail(err, VD_BUSY, "vtkhdf_main: %s was changed by another writer during this transaction; nothing "
                   "written (ROLLBACK, then run the transaction again: it starts from the new members)", t->path);
    else if (!(rc = write_locked(t, mp, err)))
      version_of(mp, t->seen, sizeof t->seen);
    close(dfd); /* unlocks */
  }
  free(mp);
  return rc;
}

/* Temporary files ".<base>.XXXXXX" that a writer killed during its COMMIT left: a
 * temporary file is only ever made under the directory's writer lock, so one found while
 * holding it belongs to nobody alive. */
static void sweep_temps(const vm_table *t) {
  DIR *d = opendir(t->dir);
  if (!d) return;
  size_t bl = strlen(t->base);
  struct dirent *e;
  while ((e = readdir(d))) {
    const char *n = e->d_name;
    if (n[0] != '.' || strncmp(n + 1, t->base, bl) || n[1 + bl] != '.' || strlen(n + 2 + bl) != 6) continue;
    char *p = malloc(strlen(t->dir) + strlen(n) + 2);
    if (!p) break;
    sprintf(p, "%s/%s", t->dir, n);
    struct stat st;
    if (lstat(p, &st) == 0 && S_ISREG(st.st_mode)) unlink(p);
    free(p);
  }
  closedir(d);
}

static vd_code write_locked(vm_table *t, const char *mp, vd_err *err) {
  int n = t->cur.n;
  vd_code rc = VD_OK;
  sweep_temps(t);
  if (!n) /* no member left: no main file */
    return unlink(mp) && errno != ENOENT ? vd_fail(err, VD_IO, "vtkhdf_main: cannot remove %s: %s", mp, strerror(errno))
                                         : VD_OK;
  vm_member **m = malloc((size_t)n * sizeof *m);
  char **names = calloc((size_t)n, sizeof *names);
  char *tmp = malloc(strlen(t->dir) + strlen(t->base) + 16);
  if (!m || !names || !tmp) rc = vd_nomem(err);
  if (!rc) {
    memcpy(m, t->cur.v, (size_t)n * sizeof *m);
    rc = validate(t, m, n, err);
  }
  for (int i = 0; i < n && !rc; i++)
    if (!(names[i] = vm_stored_name(t, m[i]->canon))) rc = vd_nomem(err);
  int fd = -1;
  if (!rc) {
    sprintf(tmp, "%s/.%s.XXXXXX", strcmp(t->dir, "/") ? t->dir : "", t->base);
    if ((fd = mkstemp(tmp)) < 0) rc = vd_fail(err, VD_IO, "vtkhdf_main: cannot create a file next to %s: %s", mp, strerror(errno));
    else {
      /* mkstemp makes it 0600: give it the old main file's mode, or what a new file gets */
      struct stat st;
      mode_t mode;
      if (!stat(mp, &st)) mode = st.st_mode & 07777;
      else {
        mode_t um = umask(022);
        umask(um);
        mode = 0666 & ~um;
      }
      fchmod(fd, mode);
      close(fd);
    }
  }
  if (!rc) {
    vh_h5scope quiet; /* HDF5 prints its errors otherwise; the core never prints */
    vh_h5_enter(&quiet, NULL, 0, NULL);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_file_locking(fapl, 0, 1);
    hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    char msg[256];
    if (f < 0) rc = vd_fail(err, VD_IO, "vtkhdf_main: cannot create %s (HDF5: %s)", tmp, vh5_msg(msg, sizeof msg));
    else rc = t->layout == VM_COMPOSITE ? vm_write_composite(t, f, m, n, names, err) : vm_write_vds(t, f, m, n, names, err);
    if (f >= 0 && H5Fclose(f) < 0 && !rc) rc = vd_fail(err, VD_IO, "vtkhdf_main: cannot write %s (HDF5: %s)", tmp, vh5_msg(msg, sizeof msg));
    H5Pclose(fapl);
    vh_h5_leave(&quiet);
    if (!rc) { /* durable before it replaces the old one */
      fd = open(tmp, O_RDONLY);
      if (fd < 0 || fsync(fd)) rc = vd_fail(err, VD_IO, "vtkhdf_main: cannot sync %s: %s", tmp, strerror(errno));
      if (fd >= 0) close(fd);
    }
    if (!rc && rename(tmp, mp)) rc = vd_fail(err, VD_IO, "vtkhdf_main: cannot rename into %s: %s", mp, strerror(errno));
    if (rc) unlink(tmp);
    else if ((fd = open(t->dir, O_RDONLY)) >= 0) { /* the rename itself */
      fsync(fd);
      close(fd);
    }
  }
  for (int i = 0; names && i < n; i++) free(names[i]);
  free(names);
  free(m);
  free(tmp);
  return rc;
}

vd_code vm_tx_sync(void *tab, vd_err *err) {
  vm_table *t = tab;
  if (!t->in_tx || !t->dirty) return VD_OK;
  return write_main(t, err);
}

void vm_tx_commit(void *tab) {
  vm_table *t = tab;
  if (!t->in_tx) return;
  list_clear(&t->done);
  t->done = t->cur;
  memset(&t->cur, 0, sizeof t->cur);
  for (int i = 0; i < t->nsaves; i++) list_clear(&t->saves[i]);
  t->nsaves = 0;
  t->in_tx = t->dirty = 0;
}

void vm_tx_rollback(void *tab) {
  vm_table *t = tab;
  list_clear(&t->cur);
  for (int i = 0; i < t->nsaves; i++) list_clear(&t->saves[i]);
  t->nsaves = 0;
  t->in_tx = t->dirty = 0;
}

void vm_tx_savepoint(void *tab, int n) {
  vm_table *t = tab;
  if (n < 0 || n > 1000) return;
  if (n >= t->nsaves) {
    void *p = realloc(t->saves, (size_t)(n + 1) * sizeof *t->saves);
    if (!p) return;
    t->saves = p;
    /* levels SQLite opened before this table joined the transaction (it announces only
     * the current one) hold what the table held then: the committed rows */
    for (int i = t->nsaves; i <= n; i++) list_copy(&t->saves[i], &t->done);
    t->nsaves = n + 1;
  }
  list_clear(&t->saves[n]);
  /* SQLite may open the savepoint before the table's BEGIN: then it holds the committed rows */
  list_copy(&t->saves[n], t->in_tx ? &t->cur : &t->done);
}

void vm_tx_release(void *tab, int n) {
  vm_table *t = tab;
  for (int i = n < 0 ? 0 : n; i < t->nsaves; i++) list_clear(&t->saves[i]);
  if (n >= 0 && n < t->nsaves) t->nsaves = n;
}

void vm_tx_rollback_to(void *tab, int n) {
  vm_table *t = tab;
  if (n < 0 || !t->in_tx) return;
  list_clear(&t->cur);
  /* a level never announced: before this table joined, i.e. the committed rows */
  list_copy(&t->cur, n < t->nsaves ? &t->saves[n] : &t->done);
  if (n >= t->nsaves) {
    t->dirty = 1;
    return;
  }
  t->dirty = 1;
  for (int i = n + 1; i < t->nsaves; i++) list_clear(&t->saves[i]);
  t->nsaves = n + 1;
}
