/* SPDX-License-Identifier: MIT */
/*
 * Built twice (meson.build): plainly, and with -DGPUSPY_SHIFT=1, which puts
 * a large function before the leaking ones and more code into main before
 * their calls, so that every return address of the leaking stacks moves.
 * stable_key.py checks that both builds give the same site keys.
 * Usage: stable_key SIZE
 * Leaks SIZE from leak_stable_runtime() (cudaMalloc) and 2 x SIZE from
 * leak_stable_driver() (cuMemAlloc_v2), both called through stable_caller().
 */
#include "prog.h"

void leak_stable_runtime(size_t size);
void leak_stable_driver(size_t size);
void stable_caller(size_t size);

#ifdef GPUSPY_SHIFT
unsigned shift_padding(unsigned acc);

#define STEP acc = (acc * 31u + 7u) ^ (acc >> 3);
#define TEN(x) x x x x x x x x x x

/* Some kilobytes of code at -O0, laid out before what follows. */
__attribute__((noinline)) unsigned shift_padding(unsigned acc)
{
	TEN(TEN(TEN(STEP)))
	return acc;
}
#endif

__attribute__((noinline)) void leak_stable_runtime(size_t size)
{
	void *p;

	rt_ok(cudaMalloc(&p, size), "cudaMalloc");
}

__attribute__((noinline)) void leak_stable_driver(size_t size)
{
	CUdeviceptr p;

	cu_ok(cuMemAlloc_v2(&p, 2 * size), "cuMemAlloc_v2");
}

__attribute__((noinline)) void stable_caller(size_t size)
{
	leak_stable_runtime(size);
	leak_stable_driver(size);
}

int main(int argc, char **argv)
{
	size_t size = arg_size(argc, argv, 1);

#ifdef GPUSPY_SHIFT
	volatile unsigned sink = 0;

	for (int i = 0; i < 3; i++)
		sink += shift_padding((unsigned)i + (unsigned)argc);
	(void)sink;
#endif
	driver_context();
	stable_caller(size);
	printf("stable_key: done\n");
	return 0;
}
