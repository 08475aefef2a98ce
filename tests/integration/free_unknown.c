/* SPDX-License-Identifier: MIT */
/*
 * Frees of NULL, of pointers nobody allocated, of handles nobody created
 * and a double free: return codes must come back unchanged, and each
 * non-NULL unknown one counts as an untracked free (5 here).
 * Usage: free_unknown SIZE
 * Leaks SIZE from leak_free_unknown(), so that the process writes a report.
 */
#include "prog.h"

#define BOGUS ((uintptr_t)0xdeadbeef000ull)

void leak_free_unknown(size_t size);

__attribute__((noinline)) void leak_free_unknown(size_t size)
{
	void *p;

	rt_ok(cudaMalloc(&p, size), "cudaMalloc");
}

int main(int argc, char **argv)
{
	CUdeviceptr twice;

	leak_free_unknown(arg_size(argc, argv, 1));
	printf("free_unknown: cudaFree(NULL) -> %d\n", (int)cudaFree(NULL));
	printf("free_unknown: cuMemFree_v2(0) -> %d\n", (int)cuMemFree_v2(0));
	printf("free_unknown: cudaFreeHost(NULL) -> %d\n", (int)cudaFreeHost(NULL));
	/* The untracked ones. */
	printf("free_unknown: cuMemFree_v2(bogus) -> %d\n", (int)cuMemFree_v2(BOGUS));
	printf("free_unknown: cudaFree(bogus) -> %d\n", (int)cudaFree((void *)BOGUS));
	printf("free_unknown: cudaFreeHost(bogus) -> %d\n", (int)cudaFreeHost((void *)BOGUS));
	printf("free_unknown: cuMemRelease(bogus) -> %d\n", (int)cuMemRelease(BOGUS));
	cu_ok(cuMemAlloc_v2(&twice, 4096), "cuMemAlloc_v2");
	cu_ok(cuMemFree_v2(twice), "cuMemFree_v2");
	printf("free_unknown: cuMemFree_v2 twice -> %d\n", (int)cuMemFree_v2(twice));
	printf("free_unknown: done\n");
	return 0;
}
