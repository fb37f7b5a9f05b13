/* The HDF5 helper's confinement (sandbox.h): rlimits, no_new_privs and a raw seccomp BPF
 * filter (no libseccomp: the filter is short, and the helper needs no library more). A
 * call outside the list fails with EPERM rather than killing the helper, so a path of
 * libhdf5 or libc that tries one (HDF5's plugin search opens a directory) ends in an
 * error the parent reports, never in a confusing death. */
#include "sandbox.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "the HDF5 helper's seccomp filter knows x86_64 and aarch64"
#endif

#define LD(f) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, f))
#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

int vd_sandbox_enter(int64_t mem_limit) {
  struct rlimit core = {0, 0}, files = {64, 64};
  if (setrlimit(RLIMIT_CORE, &core) || setrlimit(RLIMIT_NOFILE, &files)) return -1;
#if !defined(__SANITIZE_ADDRESS__)
  /* (AddressSanitizer reserves terabytes of address space: no bound on it there) */
  struct rlimit as = {(rlim_t)mem_limit, (rlim_t)mem_limit};
  if (mem_limit > 0 && setrlimit(RLIMIT_AS, &as)) return -1;
#endif
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
  uint32_t self = (uint32_t)getpid();
  struct sock_filter f[] = {
      LD(arch),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      LD(nr),
      /* signals only to itself: abort() and raise() (tgkill(self, tid, sig)) */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_tgkill, 0, 4),
      LD(args[0]),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, self, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      ALLOW(__NR_read), ALLOW(__NR_write), ALLOW(__NR_readv), ALLOW(__NR_writev), ALLOW(__NR_pread64),
      ALLOW(__NR_lseek), ALLOW(__NR_close), ALLOW(__NR_recvmsg), ALLOW(__NR_sendmsg), ALLOW(__NR_recvfrom),
      ALLOW(__NR_sendto), ALLOW(__NR_ppoll),
#ifdef __NR_poll
      ALLOW(__NR_poll),
#endif
      ALLOW(__NR_fstat), ALLOW(__NR_mmap), ALLOW(__NR_munmap), ALLOW(__NR_mremap), ALLOW(__NR_brk),
      ALLOW(__NR_mprotect), ALLOW(__NR_madvise), ALLOW(__NR_futex), ALLOW(__NR_getpid), ALLOW(__NR_gettid),
      ALLOW(__NR_getcwd), ALLOW(__NR_chdir), ALLOW(__NR_clock_gettime), ALLOW(__NR_clock_nanosleep),
      ALLOW(__NR_nanosleep), ALLOW(__NR_getrandom), ALLOW(__NR_rt_sigprocmask), ALLOW(__NR_rt_sigaction),
      ALLOW(__NR_rt_sigreturn), ALLOW(__NR_sched_yield), ALLOW(__NR_exit), ALLOW(__NR_exit_group),
      /* the calling thread's own signal stack: AddressSanitizer reads it before every
       * noreturn call (exit, longjmp) and stops with a CHECK failure when it cannot */
      ALLOW(__NR_sigaltstack),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof *f), f};
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}
