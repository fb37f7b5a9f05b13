/* The message channel between vdsql and its HDF5 helper (chan.h): framing, descriptors
 * passed with SCM_RIGHTS, bounded reads, and the little-endian field codec. */
#include "chan.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct hdr {
  uint32_t type, len;
} hdr;

static int send_all(int sock, struct msghdr *mh) {
  while (mh->msg_iovlen) {
    ssize_t n = sendmsg(sock, mh, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    mh->msg_control = NULL, mh->msg_controllen = 0; /* the descriptor went with the first bytes */
    while (mh->msg_iovlen && (size_t)n >= mh->msg_iov->iov_len) n -= (ssize_t)mh->msg_iov->iov_len, mh->msg_iov++, mh->msg_iovlen--;
    if (mh->msg_iovlen) mh->msg_iov->iov_base = (char *)mh->msg_iov->iov_base + n, mh->msg_iov->iov_len -= (size_t)n;
  }
  return 0;
}

int vd_chan_send(int sock, uint32_t type, const void *body, size_t len, int fd) {
  if (len > UINT32_MAX) return errno = EMSGSIZE, -1;
  hdr h = {type, (uint32_t)len};
  struct iovec iov[2] = {{&h, sizeof h}, {(void *)body, len}};
  struct msghdr mh = {0};
  mh.msg_iov = iov;
  mh.msg_iovlen = len ? 2 : 1;
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } c;
  if (fd >= 0) {
    memset(&c, 0, sizeof c);
    mh.msg_control = c.buf;
    mh.msg_controllen = sizeof c.buf;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof fd);
  }
  return send_all(sock, &mh);
}

/* Waits until sock is readable, asking idle every 100 ms: 0 readable, 1 stopped by idle */
static int wait_readable(int sock, int (*idle)(void *), void *arg) {
  for (;;) {
    struct pollfd p = {sock, POLLIN, 0};
    int r = poll(&p, 1, idle ? 100 : -1);
    if (r > 0) return 0;
    if (r < 0 && errno != EINTR) return 0; /* the read reports it */
    if (idle && idle(arg)) return 1;
  }
}

/* Reads exactly n bytes (the first read may take a descriptor into *fd) */
static int read_all(int sock, void *p, size_t n, int *fd) {
  char *o = p;
  while (n) {
    struct iovec iov = {o, n};
    struct msghdr mh = {0};
    union {
      char buf[CMSG_SPACE(sizeof(int))];
      struct cmsghdr align;
    } c;
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (fd) mh.msg_control = c.buf, mh.msg_controllen = sizeof c.buf;
    ssize_t r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return errno = r ? errno : EPIPE, -1;
    if (fd) {
      for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len >= CMSG_LEN(sizeof(int))) {
          int got;
          memcpy(&got, CMSG_DATA(cm), sizeof got);
          if (*fd >= 0) close(got); /* one descriptor a message: a second is dropped */
          else *fd = got;
        }
      fd = NULL;
    }
    o += r, n -= (size_t)r;
  }
  return 0;
}

int vd_chan_recv(int sock, size_t max, vd_msg *m, int (*idle)(void *), void *arg) {
  vd_buf keep = m->body; /* its room is reused: no fresh pages for every big message */
  memset(m, 0, sizeof *m);
  m->body = keep;
  m->body.len = 0;
  m->fd = -1;
  if (wait_readable(sock, idle, arg)) return 1;
  hdr h;
  if (read_all(sock, &h, sizeof h, &m->fd)) return vd_msg_free(m), -1;
  if (h.len > max) return vd_msg_free(m), errno = EMSGSIZE, -1;
  m->type = h.type;
  if (h.len > m->body.cap && vd_buf_reserve(&m->body, h.len)) return vd_msg_free(m), errno = ENOMEM, -1;
  if (h.len && read_all(sock, m->body.data, h.len, NULL)) return vd_msg_free(m), -1;
  m->body.len = h.len;
  return 0;
}

void vd_msg_free(vd_msg *m) {
  vd_buf_free(&m->body);
  if (m->fd >= 0) close(m->fd);
  m->fd = -1;
}

int vd_wr_u32(vd_buf *b, uint32_t v) {
  unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
  return vd_buf_append(b, x, 4);
}
int vd_wr_u64(vd_buf *b, uint64_t v) { return vd_wr_u32(b, (uint32_t)v) || vd_wr_u32(b, (uint32_t)(v >> 32)) ? -1 : 0; }
int vd_wr_f64(vd_buf *b, double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return vd_wr_u64(b, u);
}
int vd_wr_bytes(vd_buf *b, const void *p, size_t n) {
  if (n > UINT32_MAX - 1) return -1;
  return vd_wr_u32(b, (uint32_t)n) || (n && vd_buf_append(b, p, n)) ? -1 : 0;
}
int vd_wr_str(vd_buf *b, const char *s) {
  if (!s) return vd_wr_u32(b, 0);
  size_t n = strlen(s);
  if (n > UINT32_MAX - 2) return -1;
  return vd_wr_u32(b, (uint32_t)n + 1) || (n && vd_buf_append(b, s, n)) ? -1 : 0;
}

uint32_t vd_rd_u32(vd_rd *r) {
  if (r->bad || r->end - r->p < 4) return r->bad = 1, 0;
  const unsigned char *p = r->p;
  r->p += 4;
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
uint64_t vd_rd_u64(vd_rd *r) {
  uint64_t lo = vd_rd_u32(r);
  return lo | (uint64_t)vd_rd_u32(r) << 32;
}
double vd_rd_f64(vd_rd *r) {
  uint64_t u = vd_rd_u64(r);
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}
const void *vd_rd_bytes(vd_rd *r, size_t *n) {
  uint32_t k = vd_rd_u32(r);
  if (r->bad || (size_t)(r->end - r->p) < k) return r->bad = 1, *n = 0, NULL;
  const void *p = r->p;
  r->p += k;
  *n = k;
  return p;
}
char *vd_rd_str(vd_rd *r) {
  uint32_t k = vd_rd_u32(r);
  if (!r->bad && !k) return NULL;
  if (r->bad || (size_t)(r->end - r->p) < k - 1 || memchr(r->p, 0, k - 1)) return r->bad = 1, NULL;
  char *s = malloc(k);
  if (!s) return r->bad = 1, NULL;
  memcpy(s, r->p, k - 1);
  s[k - 1] = 0;
  r->p += k - 1;
  return s;
}
