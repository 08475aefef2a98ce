/* SPDX-License-Identifier: MIT */
/*
 * Memory over time, for tests/integration/growth.py: STEPS steps of
 * STEP_MS milliseconds.  Each step leak_step() keeps 1 MiB (a list of
 * tensors growing each step) and churn_step() allocates and frees 8 MiB;
 * warm_pool() grows by 1 MiB in each of the first 5 steps, then holds
 * (a pool that warms up and plateaus).  With "hang" it stops halfway and
 * sleeps, to be killed.
 * Usage: growth STEPS STEP_MS [hang]
 */
#include <time.h>
#include <unistd.h>

#include "prog.h"

void leak_step(void);
void churn_step(void);
void warm_pool(int step);

__attribute__((noinline)) void leak_step(void)
{
	void *p;

	rt_ok(cudaMalloc(&p, 1 << 20), "cudaMalloc");
}

__attribute__((noinline)) void churn_step(void)
{
	void *p;

	rt_ok(cudaMalloc(&p, 8 << 20), "cudaMalloc");
	rt_ok(cudaFree(p), "cudaFree");
}

__attribute__((noinline)) void warm_pool(int step)
{
	void *p;

	if (step < 5)
		rt_ok(cudaMalloc(&p, 1 << 20), "cudaMalloc");
}

int main(int argc, char **argv)
{
	int steps = (int)arg_size(argc, argv, 1);
	long ms = (long)arg_size(argc, argv, 2);
	int hang = argc > 3 && strcmp(argv[3], "hang") == 0;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	for (int i = 0; i < steps; i++) {
		if (hang && i == steps / 2) {
			printf("growth: halfway, sleeping\n");
			fflush(stdout);
			for (;;)
				pause();
		}
		leak_step();
		churn_step();
		warm_pool(i);
		nanosleep(&ts, NULL);
	}
	printf("growth: %d steps\n", steps);
	return 0;
}
