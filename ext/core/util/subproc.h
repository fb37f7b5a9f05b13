/* Helper processes of vdsql: an executable installed next to the loaded module, started
 * with posix_spawn (a new image: it holds none of this process's memory, so no
 * credential), talking over one end of a socketpair given to it as descriptor 3, with
 * stdin and stdout on /dev/null, stderr shared, an empty environment but the sanitizers'
 * options, default signal handling and its own process group (a terminal's Ctrl-C is
 * for the shell, not for it). */
#ifndef VD_SUBPROC_H
#define VD_SUBPROC_H

#include <stddef.h>
#include <sys/types.h>

#define VD_SUBPROC_FD 3 /* the channel, in the helper */

/* The path of name next to the module (or executable) this code is part of, into out:
 * 0, or -1 when it cannot be found. */
int vd_subproc_path(const char *name, char *out, size_t n);
/* Starts path with argv (argv[0] first, NULL-terminated): *pid and *sock (this side of
 * the channel, close-on-exec). 0, or an errno. */
int vd_subproc_start(const char *path, char *const argv[], pid_t *pid, int *sock);
/* Ends the helper (SIGKILL unless it has already exited: given grace_ms to exit by
 * itself) and reaps it, describing how it ended ("SIGSEGV", "exit status 1") into how. */
void vd_subproc_end(pid_t pid, int grace_ms, char *how, size_t n);

#endif
