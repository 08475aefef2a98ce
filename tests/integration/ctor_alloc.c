/* SPDX-License-Identifier: MIT */
/*
 * Allocation before gpuspy is ready: libctor_lib's constructor leaks
 * CTOR_LEAK_BYTES (set in meson.build) from leak_ctor() before libgpuspy's
 * constructor runs.  The program then leaks SIZE from leak_main(), when
 * everything is up.
 * Usage: ctor_alloc SIZE
 */
#include "prog.h"

void leak_main(size_t size);
int ctor_lib_ran(void);

__attribute__((noinline)) void leak_main(size_t size)
{
	CUdeviceptr p;

	cu_ok(cuMemAlloc_v2(&p, size), "cuMemAlloc_v2");
}

int main(int argc, char **argv)
{
	printf("ctor_alloc: the constructor ran: %s\n", ctor_lib_ran() ? "yes" : "no");
	leak_main(arg_size(argc, argv, 1));
	printf("ctor_alloc: done\n");
	return 0;
}
