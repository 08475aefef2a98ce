/* SPDX-License-Identifier: MIT */
/* A small library a Python script calls through ctypes (which releases
 * the GIL): it allocates through the fake runtime and keeps the memory. */
#include <stddef.h>

#include "cuda_abi.h"

int pyalloc_leak(size_t size, int count);

int pyalloc_leak(size_t size, int count)
{
	for (int i = 0; i < count; i++) {
		void *p;

		if (cudaMalloc(&p, size) != cudaSuccess)
			return -1;
	}
	return 0;
}

/* For bench/alloc-bench: nanoseconds per cudaMalloc/cudaFree pair, timed
 * here, below a Python caller (so Python frames are there to walk). */
#include <time.h>

double pyalloc_pairs(long n);

double pyalloc_pairs(long n)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		void *p;

		if (cudaMalloc(&p, 4096 + (size_t)(i & 7) * 512) != cudaSuccess ||
		    cudaFree(p) != cudaSuccess)
			return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
}

/* For tests/python/memviz.py: one allocation or free a call, so that the
 * script knows each address (0: the call failed). */
#include <stdint.h>

uintptr_t pyalloc_alloc(size_t size);
uintptr_t pyalloc_managed(size_t size);
uintptr_t pyalloc_stream(void);
uintptr_t pyalloc_async(size_t size, uintptr_t stream);
int pyalloc_free(uintptr_t p);

uintptr_t pyalloc_alloc(size_t size)
{
	void *p;

	return cudaMalloc(&p, size) == cudaSuccess ? (uintptr_t)p : 0;
}

uintptr_t pyalloc_managed(size_t size)
{
	void *p;

	return cudaMallocManaged(&p, size, cudaMemAttachGlobal) == cudaSuccess ? (uintptr_t)p : 0;
}

uintptr_t pyalloc_stream(void)
{
	cudaStream_t s;

	return cudaStreamCreate(&s) == cudaSuccess ? (uintptr_t)s : 0;
}

uintptr_t pyalloc_async(size_t size, uintptr_t stream)
{
	void *p;

	return cudaMallocAsync(&p, size, (cudaStream_t)stream) == cudaSuccess ? (uintptr_t)p : 0;
}

int pyalloc_free(uintptr_t p)
{
	return cudaFree((void *)p) == cudaSuccess ? 0 : -1;
}
