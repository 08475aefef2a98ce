/* SPDX-License-Identifier: MIT */
/*
 * Out of memory, injected by the fake driver (GPUSPY_FAKE_OOM_SIZE or
 * GPUSPY_FAKE_OOM_NTH, set by the test): the error must come back
 * unchanged, the out-pointer untouched, and nothing be recorded.
 * Usage: oom SMALL BIG [ROUNDS]
 * Leaks SMALL from leak_oom() (the process's first allocation call), then
 * tries BIG through cudaMalloc, cuMemAlloc_v2 and cuMemAllocManaged, in
 * that order, printing each result and freeing what succeeded; ROUNDS
 * times (default 1).
 */
#include "prog.h"

void leak_oom(size_t size);
void try_big(size_t size);

__attribute__((noinline)) void leak_oom(size_t size)
{
	void *p;

	rt_ok(cudaMalloc(&p, size), "cudaMalloc");
}

static const char *untouched(const void *p, const void *sentinel)
{
	return p == sentinel ? "untouched" : "set";
}

__attribute__((noinline)) void try_big(size_t size)
{
	static char sentinel;
	const CUdeviceptr dsentinel = (CUdeviceptr)(uintptr_t)&sentinel;
	void *p = &sentinel;
	CUdeviceptr d = dsentinel;
	cudaError_t e;
	CUresult r;

	e = cudaMalloc(&p, size);
	printf("oom: cudaMalloc(big) -> %d (%s), pointer %s\n", (int)e, cudaGetErrorString(e),
	       untouched(p, &sentinel));
	if (e == cudaSuccess)
		rt_ok(cudaFree(p), "cudaFree");

	r = cuMemAlloc_v2(&d, size);
	printf("oom: cuMemAlloc_v2(big) -> %d, pointer %s\n", (int)r,
	       d == dsentinel ? "untouched" : "set");
	if (r == CUDA_SUCCESS)
		cu_ok(cuMemFree_v2(d), "cuMemFree_v2");

	d = dsentinel;
	r = cuMemAllocManaged(&d, size, CU_MEM_ATTACH_GLOBAL);
	printf("oom: cuMemAllocManaged(big) -> %d, pointer %s\n", (int)r,
	       d == dsentinel ? "untouched" : "set");
	if (r == CUDA_SUCCESS)
		cu_ok(cuMemFree_v2(d), "cuMemFree_v2");
}

int main(int argc, char **argv)
{
	/* The runtime makes its context current on this thread for the driver calls too. */
	size_t rounds = argc > 3 ? arg_size(argc, argv, 3) : 1;

	leak_oom(arg_size(argc, argv, 1));
	for (size_t i = 0; i < rounds; i++)
		try_big(arg_size(argc, argv, 2));
	printf("oom: done\n");
	return 0;
}
