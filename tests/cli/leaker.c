/* SPDX-License-Identifier: MIT */
/*
 * For tests/cli/growth_read.py: STEPS steps of STEP_MS milliseconds, each
 * keeping KIB KiB from keep_output() (a list of outputs that grows by one
 * each step).  With "hang" it then prints "leaked" and waits to be killed,
 * a job still running when it is looked at.
 * Usage: leaker STEPS STEP_MS KIB [hang]
 */
#include <time.h>
#include <unistd.h>

#include "prog.h"

void keep_output(size_t bytes);

__attribute__((noinline)) void keep_output(size_t bytes)
{
	void *p;

	rt_ok(cudaMalloc(&p, bytes), "cudaMalloc");
}

int main(int argc, char **argv)
{
	int steps = (int)arg_size(argc, argv, 1);
	long ms = (long)arg_size(argc, argv, 2);
	size_t bytes = arg_size(argc, argv, 3) * 1024;
	int hang = argc > 4 && strcmp(argv[4], "hang") == 0;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	for (int i = 0; i < steps; i++) {
		keep_output(bytes);
		nanosleep(&ts, NULL);
	}
	printf("leaked\n");
	fflush(stdout);
	while (hang)
		pause();
	return 0;
}
