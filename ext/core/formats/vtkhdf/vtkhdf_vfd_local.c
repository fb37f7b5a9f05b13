/* A read-only HDF5 file driver for local VTKHDF files: what HDF5's own sec2 driver does
 * (pread on a descriptor), plus two things it cannot: every read is counted in
 * vdsql_stats() under the file backend, like every other local read of vdsql, and a file
 * is opened through the store's regular-file check (a FIFO or a device given as a
 * sub-file is refused instead of blocking the open). HDF5 1.10 has no hook to count
 * sec2's reads, hence this small driver. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "vtkhdf_vfd.h"

typedef struct local_fapl {
  vd_ctx *ctx;
} local_fapl;

typedef struct local_file {
  H5FD_t pub; /* must be first: HDF5 casts */
  vd_ctx *ctx;
  int fd;
  dev_t dev;
  ino_t ino;
  haddr_t eoa, eof;
} local_file;

static hid_t driver_id = -1;
/* The sub-files HDF5 opens for external links and virtual datasets get a copy of the
 * parent's access list without the driver info (1.10.8): the context of the last list
 * made on this thread stands in, as the remote driver does. */
static _Thread_local vd_ctx *cur_ctx;

static H5FD_t *l_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr) {
  (void)maxaddr;
  if (flags & (H5F_ACC_RDWR | H5F_ACC_CREAT | H5F_ACC_TRUNC)) return NULL; /* read-only */
  const local_fapl *fa = H5Pget_driver_info(fapl);
  H5Eclear2(H5E_DEFAULT);
  vd_ctx *ctx = fa && fa->ctx ? fa->ctx : cur_ctx;
  int fd;
  struct stat st;
  vd_err err;
  if (vd_file_open_regular(name, O_RDONLY, &fd, &st, &err)) return NULL;
  local_file *f = calloc(1, sizeof *f);
  if (!f) {
    close(fd);
    return NULL;
  }
  f->ctx = ctx;
  f->fd = fd;
  f->dev = st.st_dev;
  f->ino = st.st_ino;
  f->eof = (haddr_t)st.st_size;
  return &f->pub;
}

static herr_t l_close(H5FD_t *file) {
  local_file *f = (local_file *)file;
  close(f->fd);
  free(f);
  return 0;
}

/* HDF5 asks whether two opens are the same file (a sub-file named twice): by inode. */
static int l_cmp(const H5FD_t *a, const H5FD_t *b) {
  const local_file *x = (const local_file *)a, *y = (const local_file *)b;
  if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
  if (x->ino != y->ino) return x->ino < y->ino ? -1 : 1;
  return 0;
}

static herr_t l_query(const H5FD_t *f, unsigned long *flags) {
  (void)f;
  *flags = H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE; /* as sec2 for reading */
  return 0;
}

static haddr_t l_get_eoa(const H5FD_t *file, H5FD_mem_t type) { return ((const local_file *)file)->eoa; }
static herr_t l_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr) {
  ((local_file *)file)->eoa = addr;
  return 0;
}
static haddr_t l_get_eof(const H5FD_t *file, H5FD_mem_t type) { return ((const local_file *)file)->eof; }

static herr_t l_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buffer) {
  local_file *f = (local_file *)file;
  unsigned char *out = buffer;
  vd_stats *s = f->ctx ? &f->ctx->stats[VD_BE_FILE] : NULL;
  if (s) s->requests++;
  while (size) {
    ssize_t n = pread(f->fd, out, size, (off_t)addr);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) { /* past the end of the file: HDF5 expects zeros */
      memset(out, 0, size);
      break;
    }
    if (s) s->bytes += n;
    out += n, addr += (haddr_t)n, size -= (size_t)n;
  }
  return 0;
}

static herr_t l_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buffer) {
  return -1; /* read-only */
}

static const H5FD_class_t local_class = {
    "vdsql_local",
    (haddr_t)INT64_MAX,
    H5F_CLOSE_WEAK,
    NULL,             /* terminate */
    NULL, NULL, NULL, /* superblock */
    sizeof(local_fapl),
    NULL, NULL, NULL, /* fapl get/copy/free: HDF5 copies the struct */
    0, NULL, NULL,
    l_open,
    l_close,
    l_cmp,
    l_query,
    NULL, /* get_type_map */
    NULL, /* alloc */
    NULL, /* free */
    l_get_eoa,
    l_set_eoa,
    l_get_eof,
    NULL, /* get_handle */
    l_read,
    l_write,
    NULL, /* flush */
    NULL, /* truncate */
    NULL, /* lock */
    NULL, /* unlock */
    H5FD_FLMAP_DICHOTOMY,
};

hid_t vh_local_fapl(vd_ctx *ctx) {
  if (driver_id < 0 || H5Iis_valid(driver_id) <= 0) driver_id = H5FDregister(&local_class);
  if (driver_id < 0) return -1;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  local_fapl fa = {ctx};
  if (fapl < 0 || H5Pset_driver(fapl, driver_id, &fa) < 0) {
    if (fapl >= 0) H5Pclose(fapl);
    return -1;
  }
  cur_ctx = ctx;
  return fapl;
}
