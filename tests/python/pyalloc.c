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
