/* SPDX-License-Identifier: MIT */
/*
 * A short-lived worker that inherits LD_PRELOAD and allocates nothing
 * (bench/worker-bench):
 *   worker             returns at once
 *   worker cuda        asks the runtime how many devices there are
 *   worker fork N [LIVE]
 *                      makes LIVE allocations of 1 KiB (default 1) and
 *                      keeps them live (so gpuspy is active, its snapshot
 *                      thread running, its live table LIVE entries), then
 *                      forks N children one at a time, each of which exits
 *                      through exit() at once, as a DataLoader worker
 *                      that never touches CUDA does; prints the ns from
 *                      fork to the wait's return of each
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_abi.h"

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "cuda") == 0) {
		int n = 0;

		return cudaGetDeviceCount(&n) == cudaSuccess && n > 0 ? 0 : 1;
	}
	if (argc > 2 && strcmp(argv[1], "fork") == 0) {
		int n = atoi(argv[2]), live = argc > 3 ? atoi(argv[3]) : 1;
		void **p = calloc(live > 0 ? (size_t)live : 1, sizeof(*p));

		for (int i = 0; i < live; i++)
			if (!p || cudaMalloc(&p[i], 1024) != cudaSuccess)
				return 1;
		for (int i = 0; i < n; i++) {
			long long t0 = now_ns();
			pid_t pid = fork();
			int status;

			if (pid == 0)
				exit(0);
			if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
				return 1;
			printf("%lld\n", now_ns() - t0);
		}
		for (int i = 0; i < live; i++)
			cudaFree(p[i]);
		free(p);
	}
	return 0;
}
