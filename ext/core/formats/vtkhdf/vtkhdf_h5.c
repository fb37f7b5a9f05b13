/* HDF5 helpers for the VTKHDF reader (see vtkhdf_h5.h). HDF5's automatic error printing
 * is switched off by the caller (vh_open); here errors are read off the stack. */
#include "vtkhdf_h5.h"

#include "store/store.h"
#include "vtkhdf.h"
#include "vtkhdf_vfd.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data) {
  /* Walking downward, the last entry is the innermost, most specific fault. */
  char *buf = data;
  if (e->desc && *e->desc) snprintf(buf, 256, "%s", e->desc);
  return 0;
}

const char *vh5_msg(char *buf, size_t n) {
  char tmp[256] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, tmp);
  H5Eclear2(H5E_DEFAULT);
  vh_show_text(tmp, buf, n); /* HDF5 names files in its messages: a URL's secrets stay out */
  return buf;
}

int vh5_link_type(hid_t loc, const char *name) {
  if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return -1;
  H5L_info_t li;
  if (H5Lget_info(loc, name, &li, H5P_DEFAULT) < 0) return -1;
  return li.type;
}

static char *link_val(hid_t loc, const char *name, size_t *size) {
  H5L_info_t li;
  if (H5Lget_info(loc, name, &li, H5P_DEFAULT) < 0) return NULL;
  char *buf = calloc(1, li.u.val_size + 1);
  if (!buf) return NULL;
  if (H5Lget_val(loc, name, buf, li.u.val_size, H5P_DEFAULT) < 0) {
    free(buf);
    return NULL;
  }
  *size = li.u.val_size;
  return buf;
}

char *vh5_soft_target(hid_t loc, const char *name) {
  size_t n;
  return link_val(loc, name, &n);
}

int vh5_external_target(hid_t loc, const char *name, char **file, char **obj) {
  size_t n;
  char *buf = link_val(loc, name, &n);
  if (!buf) return -1;
  const char *f = NULL, *o = NULL;
  unsigned flags;
  int rc = H5Lunpack_elink_val(buf, n, &flags, &f, &o) < 0 ? -1 : 0;
  if (!rc) {
    *file = strdup(f ? f : "");
    *obj = strdup(o ? o : "");
    if (!*file || !*obj) {
      free(*file), free(*obj);
      rc = -1;
    }
  }
  free(buf);
  return rc;
}

static char *trim_fixed(const char *p, size_t n) {
  size_t k = 0;
  while (k < n && p[k] && p[k] != ' ') k++;
  char *s = malloc(k + 1);
  if (s) memcpy(s, p, k), s[k] = 0;
  return s;
}

char *vh5_attr_str(hid_t obj, const char *name) {
  if (H5Aexists(obj, name) <= 0) return NULL;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return NULL;
  hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
  char *s = NULL;
  vd_err e;
  hssize_t npts = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
  size_t tsz = t >= 0 ? H5Tget_size(t) : 0;
  if (npts >= 1 && vh5_alloc_ok(npts, tsz > sizeof(char *) ? tsz : sizeof(char *), "attribute", name, &e)) npts = -1;
  if (t >= 0 && sp >= 0 && H5Tget_class(t) == H5T_STRING && npts >= 1) {
    hid_t mt = H5Tcopy(t);
    if (H5Tis_variable_str(t) > 0) {
      /* a scalar or the first of an array; read every element to free them all */
      hssize_t np = H5Sget_simple_extent_npoints(sp);
      char **v = calloc(np, sizeof *v);
      if (v && H5Aread(a, mt, v) >= 0) {
        s = v[0] ? strdup(v[0]) : NULL;
        for (hssize_t i = 0; i < np; i++)
          if (v[i]) H5free_memory(v[i]);
      }
      free(v);
    } else {
      /* VTK writes the exact length with no room for a NUL: read the storage size */
      size_t sz = H5Tget_size(t);
      hssize_t np = H5Sget_simple_extent_npoints(sp);
      char *buf = sz && np > 0 ? calloc(np, sz) : NULL;
      if (buf && H5Aread(a, mt, buf) >= 0) s = trim_fixed(buf, sz);
      free(buf);
    }
    H5Tclose(mt);
  }
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  H5Aclose(a);
  return s;
}

/* Up to max values of attribute name, converted by HDF5 to memtype (size bytes each);
 * integers only, or floats of any width too. Returns how many were read. */
static int attr_values(hid_t obj, const char *name, hid_t memtype, size_t size, int floats_too, void *v, int max) {
  if (H5Aexists(obj, name) <= 0) return 0;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return 0;
  int got = 0;
  hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
  H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
  if (sp >= 0 && (cls == H5T_INTEGER || (floats_too && cls == H5T_FLOAT))) {
    hssize_t np = H5Sget_simple_extent_npoints(sp);
    vd_err e;
    if (np >= 1 && vh5_alloc_ok(np, size, "attribute", name, &e)) np = 0; /* a hostile extent */
    if (np >= 1) {
      unsigned char *buf = calloc((size_t)np, size);
      if (buf && H5Aread(a, memtype, buf) >= 0) {
        got = np < max ? (int)np : max;
        memcpy(v, buf, (size_t)got * size);
      }
      free(buf);
    }
  }
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  H5Aclose(a);
  return got;
}

int vh5_attr_i64(hid_t obj, const char *name, int64_t *v, int max) {
  return attr_values(obj, name, H5T_NATIVE_INT64, sizeof *v, 0, v, max);
}

/* HDF5 converts any float width (and integers) to double */
int vh5_attr_real(hid_t obj, const char *name, double *v, int max) {
  return attr_values(obj, name, H5T_NATIVE_DOUBLE, sizeof *v, 1, v, max);
}

/* Opens dataset name in loc and checks it is 1-D or 2-D; sets *d0, *d1. */
static vd_code open_small(hid_t loc, const char *name, const char *what, hid_t *ds, int64_t *d0, int *d1, vd_err *err) {
  char m[256];
  *ds = H5Dopen2(loc, name, H5P_DEFAULT);
  if (*ds < 0) return vd_fail(err, VD_INVALID, "%s: cannot open %s (HDF5: %s)", what, name, vh5_msg(m, sizeof m));
  hid_t sp = H5Dget_space(*ds);
  int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
  hsize_t dims[2] = {0, 1};
  if (rank >= 1 && rank <= 2) H5Sget_simple_extent_dims(sp, dims, NULL);
  if (sp >= 0) H5Sclose(sp);
  if (rank < 0 || rank > 2) {
    H5Dclose(*ds);
    *ds = -1;
    return vd_fail(err, VD_INVALID, "%s: %s has %d dimensions, expected 1 or 2", what, name, rank);
  }
  if (rank == 0) dims[0] = 1; /* a scalar is one value */
  *d0 = (int64_t)dims[0];
  *d1 = rank == 2 ? (int)dims[1] : 1;
  if (*d1 < 1 || *d0 > (INT64_MAX / 8) / *d1) {
    H5Dclose(*ds);
    *ds = -1;
    return vd_fail(err, VD_INVALID, "%s: %s has an unusable shape", what, name);
  }
  return VD_OK;
}

/* A dataset read whole: its d0 x d1 values must fit in max_alloc */
static vd_code whole_ok(hid_t *ds, int64_t d0, int d1, const char *what, const char *name, vd_err *err) {
  char wn[300];
  snprintf(wn, sizeof wn, "reading %s whole", name);
  vd_code rc = vh5_alloc_ok(d0 * d1, 8, what, wn, err);
  if (rc) H5Dclose(*ds), *ds = -1;
  return rc;
}

vd_code vh5_read_i64(hid_t loc, const char *name, int required, int offsets, const char *what, int64_t **v,
                     int64_t *n, int *cols, vd_err *err) {
  *v = NULL;
  *n = 0;
  if (cols) *cols = 1;
  if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return required ? vd_fail(err, VD_INVALID, "%s: %s is missing", what, name) : VD_OK;
  }
  hid_t ds;
  int64_t d0;
  int d1;
  vd_code rc = open_small(loc, name, what, &ds, &d0, &d1, err);
  if (rc) return rc;
  hid_t t = H5Dget_type(ds);
  int cls = t >= 0 ? H5Tget_class(t) : -1;
  size_t sz = t >= 0 ? H5Tget_size(t) : 0;
  if (t >= 0) H5Tclose(t);
  if (cls != H5T_INTEGER) {
    H5Dclose(ds);
    return vd_fail(err, VD_INVALID, "%s: %s is not an integer dataset", what, name);
  }
  if ((rc = whole_ok(&ds, d0, d1, what, name, err))) return rc;
  int64_t *buf = malloc((size_t)(d0 * d1 > 0 ? d0 * d1 : 1) * sizeof *buf);
  if (!buf) {
    H5Dclose(ds);
    return vd_nomem(err);
  }
  char m[256];
  if (d0 * d1 > 0 && H5Dread(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
    free(buf);
    H5Dclose(ds);
    return vd_fail(err, VD_IO, "%s: cannot read %s (HDF5: %s)", what, name, vh5_msg(m, sizeof m));
  }
  H5Dclose(ds);
  if (offsets && sz <= 4)
    for (int64_t i = 0; i < d0 * d1; i++)
      if (buf[i] == INT32_MAX || buf[i] == (int64_t)UINT32_MAX) {
        long long val = buf[i];
        free(buf);
        return vd_fail(err, VD_INVALID,
                       "%s: Steps/%s is a %zu-byte integer dataset holding %lld at row %lld: the writer's 32-bit offsets "
                       "overflowed (use 64-bit offsets)",
                       what, name, sz, val, (long long)(i / d1));
      }
  *v = buf;
  *n = d0;
  if (cols) *cols = d1;
  return VD_OK;
}

vd_code vh5_open_counts(hid_t loc, const char *name, const char *what, hid_t *ds, int64_t *n, vd_err *err) {
  *ds = -1;
  *n = 0;
  if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return vd_fail(err, VD_INVALID, "%s: %s is missing", what, name);
  }
  hid_t d;
  int64_t d0;
  int d1;
  vd_code rc = open_small(loc, name, what, &d, &d0, &d1, err);
  if (rc) return rc;
  hid_t t = H5Dget_type(d), sp = H5Dget_space(d);
  int cls = t >= 0 ? H5Tget_class(t) : -1, rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
  if (t >= 0) H5Tclose(t);
  if (sp >= 0) H5Sclose(sp);
  if (cls != H5T_INTEGER) {
    H5Dclose(d);
    return vd_fail(err, VD_INVALID, "%s: %s is not an integer dataset", what, name);
  }
  if (rank != 1) { /* a scalar or a 2-D dataset: read whole by the caller */
    H5Dclose(d);
    return VD_OK;
  }
  *ds = d;
  *n = d0;
  return VD_OK;
}

vd_code vh5_read_rows(hid_t ds, int64_t lo, int64_t n, int64_t *dst, const char *what, const char *name, vd_err *err) {
  char m[256];
  hsize_t start = (hsize_t)lo, count = (hsize_t)n;
  hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(1, &count, NULL);
  herr_t st = fs >= 0 && ms >= 0 ? H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) : -1;
  if (st >= 0) st = H5Dread(ds, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, dst);
  if (ms >= 0) H5Sclose(ms);
  if (fs >= 0) H5Sclose(fs);
  if (st < 0)
    return vd_fail(err, VD_IO, "%s: cannot read %s[%lld..%lld] (HDF5: %s)", what, name, (long long)lo,
                   (long long)(lo + n - 1), vh5_msg(m, sizeof m));
  return VD_OK;
}

vd_code vh5_read_f64(hid_t loc, const char *name, const char *what, double **v, int64_t *n, vd_err *err) {
  *v = NULL;
  *n = 0;
  if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return VD_OK;
  hid_t ds;
  int64_t d0;
  int d1;
  vd_code rc = open_small(loc, name, what, &ds, &d0, &d1, err);
  if (!rc) rc = whole_ok(&ds, d0, d1, what, name, err);
  if (rc) return rc;
  double *buf = malloc((size_t)(d0 * d1 > 0 ? d0 * d1 : 1) * sizeof *buf);
  char m[256];
  if (!buf) {
    H5Dclose(ds);
    return vd_nomem(err);
  }
  if (d0 * d1 > 0 && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
    free(buf);
    H5Dclose(ds);
    return vd_fail(err, VD_IO, "%s: cannot read %s as numbers (HDF5: %s)", what, name, vh5_msg(m, sizeof m));
  }
  H5Dclose(ds);
  if (d1 != 1) { /* keep the first column */
    for (int64_t i = 0; i < d0; i++) buf[i] = buf[i * d1];
  }
  *v = buf;
  *n = d0;
  return VD_OK;
}

/* ---- the session of one vh_open: sub-files checked once per name ---- */

/* One name (a file, or "file\n object") and what it was found to be. A dataset's rank
 * and extent are kept, to check each mapping's rows against them. */
typedef struct memo {
  char *key;
  vh5_found f;
  int rank;      /* a dataset: its rank; -1 otherwise */
  hsize_t *dims;
} memo;

static _Thread_local struct session {
  vd_ctx *ctx;
  const char *base;
  int remote;
  hid_t fapl;
  int64_t max_alloc;
  memo *tab;
  size_t cap, n;
} S = {.fapl = -1};

void vh5_found_free(vh5_found *f) {
  free(f->why);
  f->why = NULL;
}

static void memo_clear(void) {
  for (size_t i = 0; i < S.cap; i++)
    if (S.tab[i].key) free(S.tab[i].key), vh5_found_free(&S.tab[i].f), free(S.tab[i].dims);
  free(S.tab);
  S.tab = NULL;
  S.cap = S.n = 0;
}

void vh5_session(vd_ctx *ctx, const char *base, int remote, hid_t fapl) {
  memo_clear();
  S.ctx = ctx, S.base = base, S.remote = remote, S.fapl = fapl;
  S.max_alloc = ctx ? ctx->cfg.max_alloc : 0;
}

void vh5_session_end(void) {
  memo_clear();
  S.ctx = NULL, S.base = NULL, S.remote = 0, S.fapl = -1, S.max_alloc = 0;
}

vd_code vh5_alloc_ok(int64_t n, size_t each, const char *what, const char *name, vd_err *err) {
  int64_t lim = S.max_alloc > 0 ? S.max_alloc : 256 << 20, bytes = 0;
  if (n < 0 || __builtin_mul_overflow(n, (int64_t)each, &bytes))
    return vd_fail(err, VD_INVALID, "%s: %s needs more than 2^63 bytes: refused", what, name);
  if (bytes > lim)
    return vd_fail(err, VD_INVALID, "%s: %s needs %lld bytes, more than vdsql_config('max_alloc') (%lld): refused",
                   what, name, (long long)bytes, (long long)lim);
  return VD_OK;
}

static uint64_t hash(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

/* The entry of key (added, unknown, when absent); NULL when memory runs out. Pointers
 * are good until the next call. */
static memo *memo_get(const char *key) {
  if ((S.n + 1) * 2 > S.cap) {
    size_t nc = S.cap ? S.cap * 2 : 64;
    memo *t = calloc(nc, sizeof *t);
    if (!t) return NULL;
    for (size_t i = 0; i < S.cap; i++)
      if (S.tab[i].key) {
        size_t j = hash(S.tab[i].key) & (nc - 1);
        while (t[j].key) j = (j + 1) & (nc - 1);
        t[j] = S.tab[i];
      }
    free(S.tab);
    S.tab = t, S.cap = nc;
  }
  size_t i = hash(key) & (S.cap - 1);
  while (S.tab[i].key) {
    if (!strcmp(S.tab[i].key, key)) return &S.tab[i];
    i = (i + 1) & (S.cap - 1);
  }
  if (!(S.tab[i].key = strdup(key))) return NULL;
  S.tab[i].f.state = (vh5_state)-1; /* not asked yet */
  S.tab[i].rank = -1;
  S.n++;
  return &S.tab[i];
}

/* Whether p was probed already (looked up without adding it). */
static int memo_known(const char *p) {
  if (!S.cap) return 0;
  for (size_t i = hash(p) & (S.cap - 1); S.tab[i].key; i = (i + 1) & (S.cap - 1))
    if (!strcmp(S.tab[i].key, p)) return (int)S.tab[i].f.state >= 0;
  return 0;
}

static void set_found(vh5_found *f, vh5_state st, int exists, const char *why, vd_code code, int fault) {
  free(f->why);
  f->state = st, f->exists = exists, f->code = code, f->fault = fault;
  f->why = why ? strdup(why) : NULL;
}

vd_code vh5_found_err(const vh5_found *f, vd_err *err) {
  if (f->state != VH5_FAILED) return VD_OK;
  return vd_fail(err, f->code ? f->code : VD_IO, "%s", f->why ? f->why : "a sub-file could not be read");
}

/* The driver's last failure, when it tells nothing of remote file p: p is then VH5_FAILED */
static int driver_failed(const char *p, char *why, size_t n, vd_code *code) {
  if (!vh_is_url(p) || !vh_vfd_last_code() || vh_vfd_last_fact()) return 0;
  *code = vh_vfd_last_code();
  snprintf(why, n, "%s", vh_vfd_last_error());
  return 1;
}

const char *vh5_status(vh5_state st) {
  switch (st) {
    case VH5_OK: return "ok";
    case VH5_MISSING: return "missing_source";
    case VH5_BAD: return "bad_source";
    case VH5_FAILED: return "error"; /* never shown: the read fails */
    default: return "disallowed_source";
  }
}

int vh5_is_hdf5(const char *path) {
  static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  int fd, found = 0;
  struct stat st;
  vd_err e;
  if (vd_file_open_regular(path, O_RDONLY, &fd, &st, &e)) return 0;
  /* where HDF5 looks for its superblock: at 0, then at 512, 1024, 2048, ... */
  for (off_t at = 0; !found && at + 8 <= st.st_size; at = at ? at * 2 : 512) {
    unsigned char b[8];
    found = pread(fd, b, 8, at) == 8 && !memcmp(b, sig, 8);
  }
  close(fd);
  return found;
}

static hid_t open_file(const char *p) {
  hid_t f = H5Fopen(p, H5F_ACC_RDONLY, S.fapl >= 0 ? S.fapl : H5P_DEFAULT);
  return f;
}

/* What the file at p is: asked once per name. Remote names are checked against the main
 * file's URL before anything is sent (a disallowed one costs no request), then opened:
 * the driver's first request (a range GET that also tells the size) says whether the
 * file is there, and what it learns is kept for HDF5's own opens. A file that is there
 * must open as HDF5. */
static void probe_file(const char *p, vh5_found *out) {
  memo *m = memo_get(p);
  if (m && (int)m->f.state >= 0) {
    set_found(out, m->f.state, m->f.exists, m->f.why, m->f.code, m->f.fault);
    return;
  }
  char shown[600], why[1200], hm[256];
  vh_show(p, shown, sizeof shown);
  vh5_state st = VH5_OK;
  int exists = 1;
  vd_code code = VD_OK;
  vd_err e;
  why[0] = 0;
  if (vh_is_url(p) && !S.remote) { /* HDF5 reads a local file's sub-files as local paths */
    st = VH5_MISSING, exists = 0;
    snprintf(why, sizeof why, "%s: a URL named by a local file is not fetched", shown);
  } else if (vh_is_url(p)) {
    if (!S.ctx || vh_url_check(S.ctx, S.base, p, &e)) {
      st = VH5_DISALLOWED, exists = -1;
      snprintf(why, sizeof why, "%s", S.ctx ? e.msg : "no context");
    } else if (vh_vfd_known(S.ctx, p) < 0) {
      st = VH5_MISSING, exists = 0;
      snprintf(why, sizeof why, "%s: not found", shown);
    }
  } else if (S.remote || !vd_file_exists(p)) {
    st = VH5_MISSING, exists = 0;
    snprintf(why, sizeof why, "%s: no such file", shown);
  }
  if (st == VH5_OK) {
    hid_t f = open_file(p);
    if (f >= 0) {
      H5Fclose(f);
    } else if (driver_failed(p, why, sizeof why, &code)) { /* nothing learnt: not a status, an error */
      st = VH5_FAILED, exists = -1;
    } else if (vh_is_url(p) && vh_vfd_last_code()) { /* the server's answer, or the driver's */
      vd_code c = vh_vfd_last_code();
      st = c == VD_NOTFOUND ? VH5_MISSING : VH5_BAD;
      /* a request that failed otherwise than with a 404 does not tell whether it is there */
      exists = c == VD_NOTFOUND ? 0 : vh_vfd_known(S.ctx, p) > 0 ? 1 : -1;
      snprintf(why, sizeof why, "%s", vh_vfd_last_error());
    } else if (!vh_is_url(p) && vd_file_check_regular(p, &e)) { /* a FIFO would stall HDF5's probe */
      st = VH5_BAD;
      snprintf(why, sizeof why, "%s", e.msg);
    } else if (!vh_is_url(p) && !vh5_is_hdf5(p)) {
      st = VH5_BAD;
      snprintf(why, sizeof why, "%s: not an HDF5 file", shown);
    } else {
      st = VH5_BAD;
      snprintf(why, sizeof why, "%s: cannot open as HDF5 (HDF5: %s)", shown, vh5_msg(hm, sizeof hm));
    }
    H5Eclear2(H5E_DEFAULT);
  }
  set_found(out, st, exists, why[0] ? why : NULL, code, VH5_FAULT_OTHER);
  if ((m = memo_get(p))) set_found(&m->f, st, exists, out->why, code, VH5_FAULT_OTHER);
}

void vh5_check_object(const char *file, const char *obj, hid_t srcspace, int64_t nmapped, vh5_found *f) {
  if (f->state != VH5_OK) return;
  size_t kl = strlen(file) + strlen(obj) + 2;
  char *key = malloc(kl);
  if (!key) return;
  snprintf(key, kl, "%s\n%s", file, obj);
  char shown[600], why[1200], hm[256];
  vh_show(file, shown, sizeof shown);
  memo *m = memo_get(key);
  if (m && (int)m->f.state < 0) {
    vh5_state st = VH5_OK;
    int rank = -1, fault = VH5_FAULT_OTHER;
    hsize_t dims[H5S_MAX_RANK] = {0};
    why[0] = 0;
    hid_t fid = open_file(file);
    if (fid < 0) {
      st = VH5_BAD;
      snprintf(why, sizeof why, "%s: cannot open as HDF5 (HDF5: %s)", shown, vh5_msg(hm, sizeof hm));
    } else if (srcspace >= 0) {
      hid_t ds = H5Lexists(fid, obj, H5P_DEFAULT) > 0 ? H5Dopen2(fid, obj, H5P_DEFAULT) : -1;
      hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
      if (sp < 0) {
        st = VH5_BAD, fault = VH5_FAULT_ABSENT;
        snprintf(why, sizeof why, "%s: has no dataset %s", shown, obj);
      } else {
        rank = H5Sget_simple_extent_ndims(sp);
        if (rank > 0) H5Sget_simple_extent_dims(sp, dims, NULL);
        H5Sclose(sp);
      }
      if (ds >= 0) H5Dclose(ds);
    } else {
      int root = !obj[0] || !strcmp(obj, "/");
      hid_t o = root || H5Lexists(fid, obj, H5P_DEFAULT) > 0 ? H5Oopen(fid, root ? "/" : obj, H5P_DEFAULT) : -1;
      if (o < 0) {
        st = VH5_BAD, fault = VH5_FAULT_ABSENT;
        snprintf(why, sizeof why, "%s: has no %s", shown, obj);
      } else {
        H5Oclose(o);
      }
    }
    if (fid >= 0) H5Fclose(fid);
    H5Eclear2(H5E_DEFAULT);
    vd_code code = VD_OK;
    int exists = 1;
    /* the open (or a read past the head) failed on the way: the file may well hold it */
    if (st != VH5_OK && driver_failed(file, why, sizeof why, &code)) st = VH5_FAILED, exists = -1, fault = VH5_FAULT_OTHER;
    if ((m = memo_get(key))) {
      set_found(&m->f, st, exists, why[0] ? why : NULL, code, fault);
      m->rank = rank;
      if (rank > 0 && (m->dims = malloc((size_t)rank * sizeof *m->dims))) memcpy(m->dims, dims, (size_t)rank * sizeof *dims);
    }
  }
  free(key);
  if (!m) return;
  if (m->f.state != VH5_OK) {
    set_found(f, m->f.state, m->f.exists, m->f.why, m->f.code, m->f.fault);
    return;
  }
  if (srcspace < 0) return;
  /* the rows (and columns) the mapping reads must be in the source dataset: HDF5 fills
   * what is beyond its extent with the fill value. A mapping of the whole source (h5py
   * writes those; its extent is then not stored) needs as many values as it maps. */
  int r = H5Sget_simple_extent_ndims(srcspace);
  hsize_t s0[H5S_MAX_RANK], e0[H5S_MAX_RANK];
  if (r <= 0 || H5Sget_select_type(srcspace) == H5S_SEL_ALL) {
    uint64_t have = 1;
    for (int d = 0; d < m->rank; d++) have = __builtin_mul_overflow(have, m->dims[d], &have) ? UINT64_MAX : have;
    if (m->rank < 0 || have < (uint64_t)nmapped) {
      snprintf(why, sizeof why, "%s: %s has %llu values, the virtual dataset maps %lld", shown, obj,
               (unsigned long long)(m->rank < 0 ? 0 : have), (long long)nmapped);
      set_found(f, VH5_BAD, 1, why, VD_OK, VH5_FAULT_SHORT);
    }
  } else if (r != m->rank) {
    snprintf(why, sizeof why, "%s: %s has %d dimensions, the virtual dataset maps %d", shown, obj, m->rank, r);
    set_found(f, VH5_BAD, 1, why, VD_OK, VH5_FAULT_OTHER);
  } else if (r > 0 && m->dims && H5Sget_select_bounds(srcspace, s0, e0) >= 0) {
    for (int d = 0; d < r; d++)
      if (e0[d] >= m->dims[d]) {
        snprintf(why, sizeof why, "%s: %s has %llu %s, the virtual dataset maps %s %llu..%llu", shown, obj,
                 (unsigned long long)m->dims[d], d ? "columns" : "rows", d ? "columns" : "rows",
                 (unsigned long long)s0[d], (unsigned long long)e0[d]);
        set_found(f, VH5_BAD, 1, why, VD_OK, VH5_FAULT_SHORT);
        break;
      }
  }
  H5Eclear2(H5E_DEFAULT);
}

static char *join(const char *dir, size_t dn, const char *name) {
  size_t nn = strlen(name);
  char *s = malloc(dn + nn + 2);
  if (!s) return NULL;
  memcpy(s, dir, dn);
  size_t k = dn;
  if (dn) s[k++] = '/';
  memcpy(s + k, name, nn + 1);
  return s;
}

/* HDF5's candidates for name stored in holder, in the order it tries them (1.10's
 * H5F_prefix_open_file without the *_PREFIX settings). */
static int candidates(const char *holder, const char *name, char **c) {
  int n = 0;
  if (vh_is_url(holder)) {
    /* HDF5 joins onto holder's directory, as the driver's open sees it (vh_vfd_derived:
     * holder's ?query carried, presigned / SAS); its other tries are local paths, which
     * the driver refuses without a request */
    const char *url = vh_vfd_url(name);
    if (url) { /* a URL (or the current directory and a URL) */
      c[n++] = vd_url_carry_query(holder, url);
    } else if (name[0] == '/') { /* a local absolute name: its basename next to holder */
      c[n++] = vd_url_sibling(holder, strrchr(name, '/') + 1);
    } else {
      c[n++] = vd_url_sibling(holder, name);
    }
    return n;
  }
  if (vh_is_url(name)) { /* a local file's sub-file is a local path to HDF5: not there */
    c[n++] = strdup(name);
    return n;
  }
  const char *slash = strrchr(holder, '/');
  size_t dn = slash ? (size_t)(slash - holder) : 0;
  if (slash && dn == 0) dn = 1; /* holder in "/" */
  char dir[4096];
  snprintf(dir, sizeof dir, "%.*s", (int)dn, slash ? holder : ".");
  int root = strcmp(dir, "/") == 0;
  if (name[0] == '/') {
    /* as stored, then (HDF5 strips the directory of a missing absolute name) next to holder */
    c[n++] = strdup(name);
    c[n++] = join(root ? "" : dir, root ? 0 : strlen(dir), strrchr(name, '/') + 1);
    return n;
  }
  c[n++] = strcmp(dir, ".") == 0 ? strdup(name) : join(root ? "" : dir, root ? 0 : strlen(dir), name);
  c[n++] = strdup(name); /* last in HDF5's order: the name as given, from the CWD */
  return n;
}

char *vh5_resolve(const char *holder, const char *name, vh5_found *f) {
  memset(f, 0, sizeof *f);
  if (strcmp(name, ".") == 0) {
    f->state = VH5_OK, f->exists = 1;
    return strdup(holder);
  }
  char *c[3] = {NULL, NULL, NULL};
  int n = candidates(holder, name, c), pick = -1, oom = 0;
  vh5_found best = {VH5_MISSING, 0, NULL};
  for (int i = 0; i < n; i++) {
    if (!c[i]) {
      oom = 1;
      continue;
    }
    vh5_found x = {0};
    probe_file(c[i], &x);
    /* the first that opens wins; else the first that is there (or was not asked for) */
    int better = pick < 0 || x.state == VH5_OK || x.state == VH5_FAILED ||
                 (best.state == VH5_MISSING && x.state != VH5_MISSING);
    if (better) {
      vh5_found_free(&best);
      best = x, pick = i;
      if (x.state == VH5_OK || x.state == VH5_FAILED) break;
    } else {
      vh5_found_free(&x);
    }
  }
  /* a missing name is reported where it was expected first */
  char *r = NULL;
  if (!oom || pick >= 0) r = strdup(best.state == VH5_MISSING && c[0] ? c[0] : c[pick]);
  for (int i = 0; i < n; i++) free(c[i]);
  *f = best;
  if (!r) vh5_found_free(f);
  return r;
}

void vh5_maps_free(vh5_map *m, int n) {
  for (int i = 0; i < n; i++) free(m[i].file), free(m[i].resolved), free(m[i].dset), free(m[i].shown), vh5_found_free(&m[i].src);
  free(m);
}

static int cmp_map(const void *a, const void *b) {
  const vh5_map *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

static char *plist_str(hid_t dcpl, size_t i, int file) {
  ssize_t n = file ? H5Pget_virtual_filename(dcpl, i, NULL, 0) : H5Pget_virtual_dsetname(dcpl, i, NULL, 0);
  if (n < 0) return NULL;
  char *s = calloc(1, n + 1);
  if (!s) return NULL;
  if ((file ? H5Pget_virtual_filename(dcpl, i, s, n + 1) : H5Pget_virtual_dsetname(dcpl, i, s, n + 1)) < 0) {
    free(s);
    return NULL;
  }
  return s;
}

/* The first requests for the remote sub-files of mappings [i0, i1) (their file names
 * read into v), made together: the files HDF5 would open, allowed by the rule of
 * vh_url_check and not known yet. */
static vd_code prefetch(hid_t dcpl, const char *holder, vh5_map *v, size_t i0, size_t i1, vd_err *err) {
  const char **urls = calloc(i1 - i0 + 1, sizeof *urls);
  char *c[3] = {NULL, NULL, NULL};
  int n = 0;
  vd_code rc = urls ? VD_OK : vd_nomem(err);
  for (size_t i = i0; i < i1 && !rc; i++) {
    if (!v[i].file && !(v[i].file = plist_str(dcpl, i, 1))) rc = vd_nomem(err);
    vd_err e;
    int k = rc ? 0 : candidates(holder, v[i].file, c);
    if (k > 0 && c[0] && vh_is_url(c[0]) && !vh_url_check(S.ctx, S.base, c[0], &e) && !memo_known(c[0]))
      urls[n++] = c[0], c[0] = NULL;
    for (int j = 0; j < k; j++) free(c[j]), c[j] = NULL;
  }
  if (!rc) vh_vfd_prefetch(S.ctx, urls, n);
  for (int j = 0; j < n; j++) free((char *)urls[j]);
  free(urls);
  return rc;
}

vd_code vh5_vds_maps(hid_t loc, const char *name, const char *holder, const char *what, vh5_map **maps, int *n,
                     vd_err *err) {
  *maps = NULL;
  *n = 0;
  if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return VD_OK;
  }
  char m[256];
  hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
  if (ds < 0) return vd_fail(err, VD_INVALID, "%s: cannot open %s (HDF5: %s)", what, name, vh5_msg(m, sizeof m));
  hid_t dcpl = H5Dget_create_plist(ds);
  vd_code rc = VD_OK;
  size_t cnt = 0;
  if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL && H5Pget_virtual_count(dcpl, &cnt) >= 0 && cnt > 0) {
    char mname[600];
    snprintf(mname, sizeof mname, "the virtual mappings of %s", name);
    rc = vh5_alloc_ok((int64_t)cnt, sizeof(vh5_map), what, mname, err);
    vh5_map *v = rc ? NULL : calloc(cnt, sizeof *v);
    if (!v && !rc) rc = vd_nomem(err);
    /* a chunk of max_parallel mappings at a time: their remote sub-files are first asked
     * for together, so a layout of many costs one round trip per chunk, not per file */
    size_t chunk = S.remote && S.ctx ? (size_t)S.ctx->cfg.max_parallel : cnt, c1 = 0;
    for (size_t i = 0; v && i < cnt && !rc; i++) {
      if (i == c1 && S.remote) {
        c1 = i + chunk < cnt ? i + chunk : cnt;
        if ((rc = prefetch(dcpl, holder, v, i, c1, err))) break;
      }
      hid_t vs = H5Pget_virtual_vspace(dcpl, i), ss = H5Pget_virtual_srcspace(dcpl, i);
      hsize_t s[H5S_MAX_RANK] = {0}, e[H5S_MAX_RANK] = {0};
      if (vs < 0 || H5Sget_select_bounds(vs, s, e) < 0) {
        rc = vd_fail(err, VD_INVALID, "%s: %s: cannot read virtual mapping %zu (HDF5: %s)", what, name, i,
                     vh5_msg(m, sizeof m));
      } else {
        v[i].start = (int64_t)s[0];
        v[i].count = (int64_t)(e[0] - s[0] + 1);
        if (!v[i].file) v[i].file = plist_str(dcpl, i, 1);
        v[i].dset = plist_str(dcpl, i, 0);
        if (!v[i].file || !v[i].dset) rc = vd_nomem(err);
        else if (!(v[i].resolved = vh5_resolve(holder, v[i].file, &v[i].src))) rc = vd_nomem(err);
        else if (!(v[i].shown = vh_shown(v[i].resolved))) rc = vd_nomem(err);
        else vh5_check_object(v[i].resolved, v[i].dset, ss, H5Sget_select_npoints(vs), &v[i].src); /* holds them? */
        if (!rc) rc = vh5_found_err(&v[i].src, err);
        /* a contiguous block of a 1-D dataset from a contiguous block (or all) of a 1-D source */
        hsize_t ss0[H5S_MAX_RANK] = {0}, se0[H5S_MAX_RANK] = {0};
        int all = ss >= 0 && H5Sget_select_type(ss) == H5S_SEL_ALL;
        if (!rc && H5Sget_simple_extent_ndims(vs) == 1 && H5Sget_select_npoints(vs) == v[i].count && ss >= 0 &&
            (all || (H5Sget_simple_extent_ndims(ss) == 1 && H5Sget_select_bounds(ss, ss0, se0) >= 0 &&
                     H5Sget_select_npoints(ss) == (hssize_t)(se0[0] - ss0[0] + 1) && se0[0] - ss0[0] + 1 == (hsize_t)v[i].count)))
          v[i].plain = 1, v[i].src_start = all ? 0 : (int64_t)ss0[0];
        H5Eclear2(H5E_DEFAULT);
      }
      if (vs >= 0) H5Sclose(vs);
      if (ss >= 0) H5Sclose(ss);
    }
    if (S.remote && S.ctx) vh_vfd_prefetch_end(S.ctx);
    if (rc) {
      vh5_maps_free(v, (int)cnt);
    } else if (v) {
      qsort(v, cnt, sizeof *v, cmp_map);
      *maps = v;
      *n = (int)cnt;
    }
  }
  if (dcpl >= 0) H5Pclose(dcpl);
  H5Dclose(ds);
  return rc;
}

const vh5_map *vh5_map_at(const vh5_map *m, int n, int64_t row) {
  int lo = 0, hi = n - 1, best = -1;
  while (lo <= hi) { /* last mapping with start <= row */
    int mid = (lo + hi) / 2;
    if (m[mid].start <= row) best = mid, lo = mid + 1;
    else hi = mid - 1;
  }
  if (best < 0) return NULL;
  /* several mappings may start at row (empty ranges): prefer the first of them */
  while (best > 0 && m[best - 1].start == m[best].start) best--;
  if (row < m[best].start + m[best].count) return &m[best];
  return NULL;
}
