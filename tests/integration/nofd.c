/* SPDX-License-Identifier: MIT */
/*
 * A program that uses every file descriptor it may have, for
 * tests/integration/files.py: it allocates (gpuspy starts, and its
 * snapshot thread opens history.jsonl), waits WAIT_MS, then opens
 * /dev/null until the limit, leaves FREE descriptors free, and exits 0.
 * gpuspy's exit report must not change that status.
 * Usage: nofd WAIT_MS FREE
 */
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "prog.h"

int main(int argc, char **argv)
{
	struct timespec wait;
	size_t ms = arg_size(argc, argv, 1), free_fds = arg_size(argc, argv, 2);
	int fds[4096], n = 0;
	void *p;

	rt_ok(cudaMalloc(&p, 1 << 20), "cudaMalloc");
	wait.tv_sec = (time_t)(ms / 1000);
	wait.tv_nsec = (long)(ms % 1000) * 1000000L;
	nanosleep(&wait, NULL);
	while (n < 4096 && (fds[n] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		n++;
	for (size_t i = 0; i < free_fds && n > 0; i++)
		close(fds[--n]);
	printf("nofd: %d descriptors taken, %zu left\n", n, free_fds);
	return 0;
}
