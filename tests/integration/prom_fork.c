/* SPDX-License-Identifier: MIT */
/*
 * For tests/integration/prometheus.py: allocates (which starts the
 * metrics endpoint under GPUSPY_PROMETHEUS), waits for a line on stdin,
 * then forks a child that does not exec.  The child prints its pid, waits
 * for a second line and exits through exit(), running gpuspy's exit path;
 * the parent waits for it and says how it ended.
 * Usage: prom_fork
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prog.h"

static void wait_line(void)
{
	char line[64];

	if (!fgets(line, sizeof(line), stdin))
		exit(PROG_FAIL);
}

int main(void)
{
	void *p;
	pid_t pid;
	int status;

	rt_ok(cudaMalloc(&p, 1 << 20), "cudaMalloc");
	printf("allocated\n");
	fflush(stdout);
	wait_line();
	pid = fork();
	if (pid < 0)
		return PROG_FAIL;
	if (pid == 0) {
		printf("child %d\n", (int)getpid());
		fflush(stdout);
		wait_line();
		exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return PROG_FAIL;
	printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
