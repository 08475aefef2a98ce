/* SPDX-License-Identifier: MIT */
/*
 * Built twice (meson.build): plainly, and with -DGPUSPY_SHIFT=1, which puts
 * a large function before the leaking ones and more code into main before
 * their calls, so that every return address of the leaking stacks moves.
 * stable_key.py checks that both builds give the same site keys.
 * Usage: stable_key SIZE
 * Leaks SIZE from leak_stable_runtime() (cudaMalloc) and 2 x SIZE from
 * leak_stable_driver() (cuMemAlloc_v2), both called through stable_caller(),
 * and allocates and frees SIZE four times in stable_scratch().
 *
 * A third build (-DGPUSPY_SHIFT=1 -DGPUSPY_EXTRA=1, diff_runs.py) leaks
 * 1 MiB more, from a new function leak_extra(): what `gpuspy diff` must
 * single out as the one site that grew.
 */
#include "prog.h"

void leak_stable_runtime(size_t size);
void leak_stable_driver(size_t size);
void stable_caller(size_t size);
void stable_scratch(size_t size);
#ifdef GPUSPY_EXTRA
void leak_extra(void);
#endif

#ifdef GPUSPY_SHIFT
unsigned shift_padding(unsigned acc);

#define STEP   acc = (acc * 31u + 7u) ^ (acc >> 3);
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

__attribute__((noinline)) void stable_scratch(size_t size)
{
	for (int i = 0; i < 4; i++) {
		void *p;

		rt_ok(cudaMalloc(&p, size), "cudaMalloc");
		rt_ok(cudaFree(p), "cudaFree");
	}
}

#ifdef GPUSPY_EXTRA
__attribute__((noinline)) void leak_extra(void)
{
	void *p;

	rt_ok(cudaMalloc(&p, 1 << 20), "cudaMalloc");
}
#endif

__attribute__((noinline)) void stable_caller(size_t size)
{
	stable_scratch(size);
	leak_stable_runtime(size);
	leak_stable_driver(size);
#ifdef GPUSPY_EXTRA
	leak_extra();
#endif
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
