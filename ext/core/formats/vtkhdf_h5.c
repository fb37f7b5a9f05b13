/* HDF5 helpers for the VTKHDF reader (see vtkhdf_h5.h). HDF5's automatic error printing
 * is switched off by the caller (vh_open); here errors are read off the stack. */
#include "vtkhdf_h5.h"

#include "../store/store.h"
#include "vtkhdf_vfd.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
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
  snprintf(buf, n, "%s", tmp);
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
  if (t >= 0 && sp >= 0 && H5Tget_class(t) == H5T_STRING && H5Sget_simple_extent_npoints(sp) >= 1) {
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

int vh5_attr_i64(hid_t obj, const char *name, int64_t *v, int max) {
  if (H5Aexists(obj, name) <= 0) return 0;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return 0;
  int got = 0;
  hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
  if (t >= 0 && sp >= 0 && H5Tget_class(t) == H5T_INTEGER) {
    hssize_t np = H5Sget_simple_extent_npoints(sp);
    if (np >= 1) {
      long long *buf = calloc(np, sizeof *buf);
      if (buf && H5Aread(a, H5T_NATIVE_LLONG, buf) >= 0) {
        got = np < max ? (int)np : max;
        for (int i = 0; i < got; i++) v[i] = buf[i];
      }
      free(buf);
    }
  }
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  H5Aclose(a);
  return got;
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

/* Remote files: existence is a HEAD through the store, asked once per name while one
 * file is read (a file with many partitions maps the same few sub-files many times). */
typedef struct memo {
  char *name;
  int exists;
} memo;
static _Thread_local vd_ctx *remote_ctx;
static _Thread_local memo *memos;
static _Thread_local int nmemos;

void vh5_set_remote(vd_ctx *ctx) {
  for (int i = 0; i < nmemos; i++) free(memos[i].name);
  free(memos);
  memos = NULL;
  nmemos = 0;
  remote_ctx = ctx;
}

static int exists_(const char *p) {
  if (!vh_is_url(p)) return access(p, F_OK) == 0;
  if (!remote_ctx) return 0;
  for (int i = 0; i < nmemos; i++)
    if (!strcmp(memos[i].name, p)) return memos[i].exists;
  if (vh_vfd_known(remote_ctx, p)) return 1;
  vd_objinfo info = {0};
  vd_err e;
  int ok = vd_head(remote_ctx, p, &info, &e) == VD_OK;
  if (ok) vh_vfd_prime(remote_ctx, p, info.size);
  vd_objinfo_free(&info);
  memo *m = realloc(memos, (nmemos + 1) * sizeof *m);
  if (m) {
    memos = m;
    if ((memos[nmemos].name = strdup(p))) memos[nmemos++].exists = ok;
  }
  return ok;
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

char *vh5_resolve(const char *holder, const char *name, int *exists) {
  *exists = 0;
  if (strcmp(name, ".") == 0) {
    *exists = 1;
    return strdup(holder);
  }
  const char *slash = strrchr(holder, '/');
  size_t dn = slash ? (size_t)(slash - holder) : 0;
  if (slash && dn == 0) dn = 1; /* holder in "/" */
  char dir[4096];
  snprintf(dir, sizeof dir, "%.*s", (int)dn, slash ? holder : ".");
  if (!slash) dn = 1;
  char *first = NULL;
  if (vh_is_url(name)) {
    *exists = exists_(name);
    return strdup(name);
  }
  if (name[0] == '/' && vh_is_url(holder)) {
    /* a local absolute name stored in a remote file: HDF5 ends up next to the holder */
    const char *base = strrchr(name, '/') + 1;
    char *p = join(dir, strlen(dir), base);
    if (p) *exists = exists_(p);
    return p;
  }
  if (name[0] == '/') {
    if (exists_(name)) {
      *exists = 1;
      return strdup(name);
    }
    /* HDF5 strips the directory of a missing absolute name and looks next to holder */
    const char *base = strrchr(name, '/') + 1;
    char *p = join(strcmp(dir, "/") ? dir : "", strcmp(dir, "/") ? strlen(dir) : 0, base);
    if (p && exists_(p)) {
      *exists = 1;
      return p;
    }
    free(p);
    return strdup(name);
  }
  first = strcmp(dir, ".") == 0 ? strdup(name) : join(strcmp(dir, "/") ? dir : "", strcmp(dir, "/") ? strlen(dir) : 0, name);
  if (!first) return NULL;
  if (exists_(first)) {
    *exists = 1;
    return first;
  }
  if (!vh_is_url(holder) && exists_(name)) { /* last in HDF5's order: the name as given, from the CWD */
    free(first);
    *exists = 1;
    return strdup(name);
  }
  return first;
}

void vh5_maps_free(vh5_map *m, int n) {
  for (int i = 0; i < n; i++) free(m[i].file), free(m[i].resolved), free(m[i].dset);
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
    vh5_map *v = calloc(cnt, sizeof *v);
    if (!v) rc = vd_nomem(err);
    for (size_t i = 0; v && i < cnt && !rc; i++) {
      hid_t vs = H5Pget_virtual_vspace(dcpl, i);
      hsize_t s[H5S_MAX_RANK] = {0}, e[H5S_MAX_RANK] = {0};
      if (vs < 0 || H5Sget_select_bounds(vs, s, e) < 0) {
        rc = vd_fail(err, VD_INVALID, "%s: %s: cannot read virtual mapping %zu (HDF5: %s)", what, name, i,
                     vh5_msg(m, sizeof m));
      } else {
        v[i].start = (int64_t)s[0];
        v[i].count = (int64_t)(e[0] - s[0] + 1);
        v[i].file = plist_str(dcpl, i, 1);
        v[i].dset = plist_str(dcpl, i, 0);
        if (!v[i].file || !v[i].dset) rc = vd_nomem(err);
        else if (!(v[i].resolved = vh5_resolve(holder, v[i].file, &v[i].exists))) rc = vd_nomem(err);
      }
      if (vs >= 0) H5Sclose(vs);
    }
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
