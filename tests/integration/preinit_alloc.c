/* SPDX-License-Identifier: MIT */
/*
 * Allocation before the C library is initialized: a .preinit_array
 * function runs before every shared object's constructor, libc's and
 * libgpuspy's included, while environ is still NULL.  It leaks
 * PREINIT_LEAK_BYTES (set in meson.build) from leak_preinit(); main()
 * then leaks SIZE from leak_main().  The report must land in
 * GPUSPY_OUTPUT_DIR all the same.
 * Usage: preinit_alloc SIZE
 */
#include "prog.h"

void leak_preinit(void);
void leak_main(size_t size);

static int ran;

__attribute__((noinline)) void leak_preinit(void)
{
	CUdeviceptr p;

	cu_ok(cuMemAlloc_v2(&p, (size_t)PREINIT_LEAK_BYTES), "cuMemAlloc_v2 in .preinit_array");
}

__attribute__((noinline)) void leak_main(size_t size)
{
	CUdeviceptr p;

	cu_ok(cuMemAlloc_v2(&p, size), "cuMemAlloc_v2");
}

static void preinit(int argc, char **argv, char **envp)
{
	driver_context();
	leak_preinit();
	ran = 1;
}

__attribute__((section(".preinit_array"), used)) static void (*const preinit_fn)(int, char **,
										 char **) = preinit;

int main(int argc, char **argv)
{
	printf("preinit_alloc: .preinit_array ran: %s\n", ran ? "yes" : "no");
	leak_main(arg_size(argc, argv, 1));
	printf("preinit_alloc: done\n");
	return 0;
}
