/* SPDX-License-Identifier: MIT */
/*
 * Nanoseconds per cudaMalloc/cudaFree pair, for bench/alloc-bench and
 * bench/contention-bench: run it with and without LD_PRELOAD=libgpuspy.so
 * (against the fake driver, or a real one) and compare.
 *
 *   alloc_pair [PAIRS] [LIVE] [THREADS]
 *     LIVE allocations stay allocated throughout, so the table is not
 *     empty.  THREADS threads (default 1) each make PAIRS pairs, all
 *     started at once; the figure printed is wall time x THREADS / all
 *     pairs, which is the time of one pair when the threads do not slow
 *     each other down and there are as many cores as threads.
 *   alloc_pair --first
 *     the time of the process's first cudaMalloc, once the runtime has its
 *     context (cudaFree(NULL)): what a tracker adds to a program's first
 *     allocation.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_abi.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

__attribute__((noinline)) static void pairs(long n, unsigned seed)
{
	for (long i = 0; i < n; i++) {
		void *p;

		if (cudaMalloc(&p, 4096 + (size_t)((i + seed) & 7) * 512) != cudaSuccess ||
		    cudaFree(p) != cudaSuccess) {
			fprintf(stderr, "alloc_pair: CUDA call failed\n");
			exit(1);
		}
	}
}

struct worker {
	pthread_t t;
	long n;
	unsigned seed;
};

static pthread_barrier_t start;

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	/* The thread's context, and its first pairs, before the clock runs. */
	pairs(w->n / 10 + 1, w->seed);
	pthread_barrier_wait(&start);
	pairs(w->n, w->seed);
	return NULL;
}

static int first_alloc(void)
{
	void *p;
	double t0, t1;

	if (cudaFree(NULL) != cudaSuccess)
		return 1;
	t0 = now();
	if (cudaMalloc(&p, 1 << 20) != cudaSuccess)
		return 1;
	t1 = now();
	printf("%.0f\n", t1 - t0);
	return cudaFree(p) != cudaSuccess;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	long live = argc > 2 ? atol(argv[2]) : 1000;
	long threads = argc > 3 ? atol(argv[3]) : 1;
	struct worker *w;
	double t0, t1;

	if (argc > 1 && strcmp(argv[1], "--first") == 0)
		return first_alloc();
	if (n < 1 || threads < 1 || threads > 1024) {
		fprintf(stderr, "usage: alloc_pair [PAIRS] [LIVE] [THREADS] | --first\n");
		return 2;
	}
	for (long i = 0; i < live; i++) {
		void *p;

		if (cudaMalloc(&p, 1 << 16) != cudaSuccess)
			return 1;
	}
	if (threads == 1) {
		pairs(n / 10, 0); /* warm up */
		t0 = now();
		pairs(n, 0);
		t1 = now();
		printf("%.1f\n", (t1 - t0) / (double)n);
		return 0;
	}
	w = calloc((size_t)threads, sizeof(*w));
	if (!w || pthread_barrier_init(&start, NULL, (unsigned)threads + 1) != 0)
		return 1;
	for (long i = 0; i < threads; i++) {
		w[i].n = n;
		w[i].seed = (unsigned)i;
		if (pthread_create(&w[i].t, NULL, worker_main, &w[i]) != 0)
			return 1;
	}
	pthread_barrier_wait(&start);
	t0 = now();
	for (long i = 0; i < threads; i++)
		pthread_join(w[i].t, NULL);
	t1 = now();
	/* wall x threads / (threads x n) */
	printf("%.1f\n", (t1 - t0) / (double)n);
	free(w);
	return 0;
}
