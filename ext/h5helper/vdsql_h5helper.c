/* vdsql-h5helper: the process in which vdsql runs libhdf5 on VTKHDF files it did not
 * write (formats/vtkhdf/vtkhdf_helper.h). Started by vdsql with the channel on
 * descriptor 3, its memory bound and its parent's pid:
 *   vdsql-h5helper MEM_LIMIT PARENT_PID
 * It drops every other descriptor, confines itself (sandbox.h) and serves until the
 * channel closes. `vdsql-h5helper --selftest` confines itself the same way and then
 * tries what it must not be able to do (open a file, make a socket), printing the
 * outcome: what the tests check. */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "formats/vtkhdf/vtkhdf_helper.h"
#include "sandbox.h"
#include "util/subproc.h"

/* Everything libhdf5 sets up once, done before the filter is in place */
static void warm_up(void) {
  /* the batches it builds reuse the heap instead of fresh mappings (page faults) each time */
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
  H5open();
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t p = H5Pcreate(H5P_FILE_ACCESS);
  if (p >= 0) H5Pclose(p);
}

static int selftest(void) {
  warm_up();
  if (vd_sandbox_enter((int64_t)1 << 30)) return printf("sandbox: failed (%s)\n", strerror(errno)), 1;
  int fd = open("/etc/hostname", O_RDONLY);
  printf("open: %s\n", fd < 0 ? strerror(errno) : "opened");
  int s = socket(AF_INET, SOCK_STREAM, 0);
  printf("socket: %s\n", s < 0 ? strerror(errno) : "made");
  int k = kill(getppid(), 0);
  printf("kill parent: %s\n", k < 0 ? strerror(errno) : "sent");
  fflush(stdout);
  return 0;
}

#if defined(__SANITIZE_ADDRESS__)
/* The sanitized build (make B=build-asan SAN=address,undefined): LeakSanitizer's check at
 * exit stops the process with ptrace from a clone, which the seccomp filter refuses; the
 * helper's memory ends with it, and the process that loaded vdsql keeps its own check.
 * The helper starts with an empty environment, so ASAN_OPTIONS cannot say it. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }
#endif

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--selftest")) return selftest();
  if (argc != 3) {
    fprintf(stderr, "vdsql-h5helper: started by vdsql, not by hand (see docs/vtkhdf.md)\n");
    return 2;
  }
  /* what the parent may have left open by mistake is not ours */
  if (close_range(VD_SUBPROC_FD + 1, ~0U, 0))
    for (int fd = VD_SUBPROC_FD + 1; fd < 4096; fd++) close(fd);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != (pid_t)atol(argv[2])) return 3; /* the parent has already gone */
  warm_up();
  if (vd_sandbox_enter((int64_t)atoll(argv[1]))) {
    fprintf(stderr, "vdsql-h5helper: cannot confine itself: %s\n", strerror(errno));
    return 4;
  }
  int rc = vhp_serve(VD_SUBPROC_FD);
  _exit(rc); /* no exit handlers: HDF5's and the sanitizers' would need calls the filter refuses */
}
