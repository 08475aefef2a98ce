/* SPDX-License-Identifier: MIT */
/* real.c: the functions gpuspy wraps, as the process would see them */
#ifndef GPUSPY_REAL_H
#define GPUSPY_REAL_H

typedef void *(*dlsym_fn)(void *, const char *);
dlsym_fn glibc_dlsym(void);
void *real_dlsym(void *handle, const char *name);

#endif /* GPUSPY_REAL_H */
