/* The HDF5 helper's confinement, applied before it reads a byte of any file: no new
 * privileges, a bound on its memory and descriptors, no core files, and a seccomp filter
 * that leaves it the calls it needs to compute and to talk over the descriptors it holds
 * (no open, no socket, no exec, no signal to another process). */
#ifndef VD_SANDBOX_H
#define VD_SANDBOX_H

#include <stdint.h>

/* 0, or -1 with errno (the helper then refuses to run) */
int vd_sandbox_enter(int64_t mem_limit);

#endif
