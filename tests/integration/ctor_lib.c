/* SPDX-License-Identifier: MIT */
/*
 * A library whose constructor allocates.  The program depends on it, so
 * the dynamic linker runs this constructor before libgpuspy's (preloaded
 * objects are initialized after the program's dependencies): the hooks
 * must work before gpuspy's own initialization has run.
 */
#include "prog.h"

void leak_ctor(void);
int ctor_lib_ran(void);

static int ran;

/* A constructor has no arguments: meson.build defines CTOR_LEAK_BYTES. */

__attribute__((noinline)) void leak_ctor(void)
{
	CUdeviceptr p;

	cu_ok(cuMemAlloc_v2(&p, (size_t)CTOR_LEAK_BYTES), "cuMemAlloc_v2 in a constructor");
}

__attribute__((constructor)) static void ctor(void)
{
	driver_context();
	leak_ctor();
	ran = 1;
}

/* Also what keeps the program's dependency on us under --as-needed. */
int ctor_lib_ran(void)
{
	return ran;
}
