/* SPDX-License-Identifier: MIT */
/*
 * Many threads allocating and freeing at once through the runtime, each
 * getting its context lazily; the totals must come out exact.
 * Usage: threads THREADS ITERATIONS SIZE LEAK_SIZE LEAK_COUNT
 * Each thread makes ITERATIONS cudaMalloc/cudaFree pairs of SIZE in
 * churn_thread(); then leak_threads() leaks LEAK_COUNT x LEAK_SIZE.
 */
#include <pthread.h>

#include "prog.h"

struct job {
	size_t iterations;
	size_t size;
};

void churn_thread(const struct job *job);
void leak_threads(size_t size, size_t count);

__attribute__((noinline)) void churn_thread(const struct job *job)
{
	void *p;

	for (size_t i = 0; i < job->iterations; i++) {
		rt_ok(cudaMalloc(&p, job->size), "cudaMalloc");
		rt_ok(cudaFree(p), "cudaFree");
	}
}

static void *thread_main(void *arg)
{
	churn_thread(arg);
	return NULL;
}

__attribute__((noinline)) void leak_threads(size_t size, size_t count)
{
	void *p;

	for (size_t i = 0; i < count; i++)
		rt_ok(cudaMalloc(&p, size), "cudaMalloc");
}

int main(int argc, char **argv)
{
	size_t nthreads = arg_size(argc, argv, 1);
	struct job job = { arg_size(argc, argv, 2), arg_size(argc, argv, 3) };
	pthread_t *t = calloc(nthreads, sizeof(*t));

	if (!t)
		return PROG_FAIL;
	for (size_t i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, thread_main, &job))
			return PROG_FAIL;
	for (size_t i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	leak_threads(arg_size(argc, argv, 4), arg_size(argc, argv, 5));
	printf("threads: %zu threads done\n", nthreads);
	free(t);
	return 0;
}
