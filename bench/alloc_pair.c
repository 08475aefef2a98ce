/* SPDX-License-Identifier: MIT */
/*
 * Nanoseconds per cudaMalloc/cudaFree pair, for bench/alloc-bench: run it
 * with and without LD_PRELOAD=libgpuspy.so (against the fake driver, or a
 * real one) and compare.  Usage: alloc_pair [PAIRS] [LIVE]
 * LIVE allocations stay allocated throughout, so the table is not empty.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cuda_abi.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

__attribute__((noinline)) static void pairs(long n)
{
	for (long i = 0; i < n; i++) {
		void *p;

		if (cudaMalloc(&p, 4096 + (size_t)(i & 7) * 512) != cudaSuccess ||
		    cudaFree(p) != cudaSuccess) {
			fprintf(stderr, "alloc_pair: CUDA call failed\n");
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	long live = argc > 2 ? atol(argv[2]) : 1000;
	double t0, t1;

	for (long i = 0; i < live; i++) {
		void *p;

		if (cudaMalloc(&p, 1 << 16) != cudaSuccess)
			return 1;
	}
	pairs(n / 10); /* warm up */
	t0 = now();
	pairs(n);
	t1 = now();
	printf("%.1f\n", (t1 - t0) / (double)n);
	return 0;
}
