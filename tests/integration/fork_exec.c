/* SPDX-License-Identifier: MIT */
/*
 * Children inherit LD_PRELOAD: after allocating, the program forks one
 * child that execs /bin/true and one that simply exits.  Neither allocated
 * anything, so neither may write a report; the run must not hang.
 * Usage: fork_exec SIZE
 * Leaks SIZE from leak_fork().
 */
#include <sys/wait.h>
#include <unistd.h>

#include "prog.h"

void leak_fork(size_t size);

__attribute__((noinline)) void leak_fork(size_t size)
{
	CUdeviceptr p;

	cu_ok(cuMemAlloc_v2(&p, size), "cuMemAlloc_v2");
}

static int wait_child(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	pid_t pid;

	driver_context();
	leak_fork(arg_size(argc, argv, 1));

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	printf("fork_exec: exec'd child exited %d\n", wait_child(pid));

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		exit(0); /* runs atexit handlers, as a forked worker would */
	printf("fork_exec: plain child exited %d\n", wait_child(pid));
	printf("fork_exec: done\n");
	return 0;
}
