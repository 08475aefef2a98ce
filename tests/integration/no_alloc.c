/* SPDX-License-Identifier: MIT */
/*
 * A CUDA program that never allocates: it initializes the runtime (so
 * every lookup door is used), asks questions and frees NULL.  Under gpuspy
 * it must leave the output directory empty.
 */
#include "prog.h"

int main(void)
{
	enum cudaDriverEntryPointQueryResult status;
	size_t free_bytes, total;
	void *fn = NULL;
	int count;

	rt_ok(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
	rt_ok(cudaFree(NULL), "cudaFree(NULL)");
	rt_ok(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
	rt_ok(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, cudaEnableDefault,
					       &status),
	      "cudaGetDriverEntryPointByVersion");
	printf("no_alloc: %d device(s), all memory free: %s, cuMemAlloc %s\n", count,
	       free_bytes == total ? "yes" : "no", fn && !status ? "found" : "missing");
	return 0;
}
