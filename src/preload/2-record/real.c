/* SPDX-License-Identifier: MIT */
/*
 * The real dlsym.  gpuspy exports its own dlsym, so every call of dlsym
 * inside gpuspy must go through real_dlsym().  dlvsym is not wrapped and
 * reaches glibc's dlsym by version: GLIBC_2.34 since libdl was merged into
 * libc, GLIBC_2.2.5 before that.
 */
#include <dlfcn.h>
#include <stddef.h>

#include "core.h"
#include "real.h"

GS_NO_SANITIZE dlsym_fn glibc_dlsym(void)
{
	static _Atomic(dlsym_fn) fn;
	dlsym_fn f = atomic_load_explicit(&fn, memory_order_acquire);

	if (GS_LIKELY(f))
		return f;
	f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!f)
		f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	atomic_store_explicit(&fn, f, memory_order_release);
	return f;
}

void *real_dlsym(void *handle, const char *name)
{
	dlsym_fn f = glibc_dlsym();

	return f ? f(handle, name) : NULL;
}
