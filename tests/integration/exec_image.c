/* SPDX-License-Identifier: MIT */
/*
 * A process whose programs exec one another (tests/integration/exec.py):
 * program K of N leaks K * UNIT bytes from leak_image(), then, if K < N,
 * says so, waits for a line on stdin (the test's go-ahead, once the
 * program's snapshot and history hold the leak) and execs itself as
 * program K + 1: the same pid.  The last program exits normally.
 * Usage: exec_image UNIT K N
 */
#include <unistd.h>

#include "prog.h"

void leak_image(size_t size);

__attribute__((noinline)) void leak_image(size_t size)
{
	CUdeviceptr p;

	cu_ok(cuMemAlloc_v2(&p, size), "cuMemAlloc_v2");
}

int main(int argc, char **argv)
{
	size_t unit = arg_size(argc, argv, 1), k = arg_size(argc, argv, 2),
	       n = arg_size(argc, argv, 3);
	char next[32], line[16];

	driver_context();
	leak_image(k * unit);
	printf("exec_image: program %zu of pid %d allocated\n", k, (int)getpid());
	fflush(stdout);
	if (k >= n)
		return 0;
	if (!fgets(line, sizeof(line), stdin))
		return PROG_FAIL;
	snprintf(next, sizeof(next), "%zu", k + 1);
	execl("/proc/self/exe", argv[0], argv[1], next, argv[3], (char *)NULL);
	perror("exec_image: execl");
	return PROG_FAIL;
}
