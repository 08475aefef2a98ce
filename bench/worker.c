/* SPDX-License-Identifier: MIT */
/*
 * A short-lived worker that inherits LD_PRELOAD and allocates nothing
 * (bench/worker-bench):
 *   worker             returns at once
 *   worker cuda        asks the runtime how many devices there are
 *   worker fork N      allocates 1 MiB (so gpuspy is active, its snapshot
 *                      thread running), then forks N children one at a
 *                      time, each of which exits through exit() at once,
 *                      as a DataLoader worker that never touches CUDA
 *                      does; prints the ns from fork to the wait's return
 *                      of each
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
		int n = atoi(argv[2]);
		void *p = NULL;

		if (cudaMalloc(&p, 1 << 20) != cudaSuccess)
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
		cudaFree(p);
	}
	return 0;
}
