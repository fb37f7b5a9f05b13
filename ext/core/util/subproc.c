/* Starting, ending and naming the end of vdsql's helper processes (subproc.h). */
#include "subproc.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int vd_subproc_path(const char *name, char *out, size_t n) {
  Dl_info di;
  char dir[PATH_MAX];
  if (!dladdr((void *)vd_subproc_path, &di) || !di.dli_fname || !realpath(di.dli_fname, dir)) return -1;
  char *slash = strrchr(dir, '/');
  if (!slash) return -1;
  *slash = 0;
  if ((size_t)snprintf(out, n, "%s/%s", dir, name) >= n) return -1;
  return access(out, X_OK) ? -1 : 0;
}

extern char **environ;

/* What the helper inherits of the environment: only how the sanitizers report (a build
 * with them); never a credential (AWS_*, AZURE_*, PG*). */
static char **helper_env(void) {
  static const char *const keep[] = {"ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS="};
  static char *env[4];
  int n = 0;
  for (char **e = environ; e && *e && n < 3; e++)
    for (size_t k = 0; k < sizeof keep / sizeof *keep; k++)
      if (!strncmp(*e, keep[k], strlen(keep[k]))) env[n++] = *e;
  env[n] = NULL;
  return env;
}

int vd_subproc_start(const char *path, char *const argv[], pid_t *pid, int *sock) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) return errno;
  for (int i = 0; i < 2; i++) { /* big answers in few turns (the kernel may give less: no matter) */
    int sz = 4 << 20;
    setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
  }
  if (sv[1] == VD_SUBPROC_FD) { /* dup2 onto itself would keep close-on-exec */
    int d = fcntl(sv[1], F_DUPFD_CLOEXEC, VD_SUBPROC_FD + 1);
    if (d < 0) return close(sv[0]), close(sv[1]), errno;
    close(sv[1]);
    sv[1] = d;
  }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&at);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, sv[1], VD_SUBPROC_FD);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &all);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  int rc = posix_spawn(pid, path, &fa, &at, argv, helper_env());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(sv[1]);
  if (rc) {
    close(sv[0]);
    return rc;
  }
  *sock = sv[0];
  return 0;
}

static void describe(int st, char *how, size_t n) {
  if (WIFSIGNALED(st)) {
    const char *s = sigabbrev_np(WTERMSIG(st));
    if (s) snprintf(how, n, "SIG%s", s);
    else snprintf(how, n, "signal %d", WTERMSIG(st));
  } else if (WIFEXITED(st)) {
    snprintf(how, n, "exit status %d", WEXITSTATUS(st));
  } else {
    snprintf(how, n, "status %d", st);
  }
}

void vd_subproc_end(pid_t pid, int grace_ms, char *how, size_t n) {
  int st = 0;
  for (int waited = 0;; waited++) {
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) { /* not ours to reap (someone else did): nothing to say */
      snprintf(how, n, "ended");
      return;
    }
    if (r == 0 && waited >= grace_ms) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    if (r == 0) nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
  describe(st, how, n);
}
