/* SPDX-License-Identifier: MIT */
/*
 * fork() while another thread is inside gpuspy_mark(), again and again:
 * each child calls gpuspy_mark() and exits.  A child forked while the
 * marking thread held one of gpuspy's locks, with the fork handlers not
 * knowing of that lock, would hang in its own gpuspy_mark(): each child
 * must exit within CHILD_TIMEOUT_MS.  Run under LD_PRELOAD=libgpuspy.so;
 * exits 0 when every child exited 0 in time.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpuspy.h"
#include "prog.h"

#define CHILD_TIMEOUT_MS 1000

static atomic_bool stop;

static void *marker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		gpuspy_mark("loop");
	return NULL;
}

/* 0: exited 0 in time; 1: hung (killed); 2: exited otherwise. */
static int reap(pid_t pid)
{
	struct timespec ms = { 0, 1000000 };
	int status;

	for (int waited = 0; waited < CHILD_TIMEOUT_MS; waited++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 2;
		if (r < 0 && errno != EINTR)
			return 2;
		nanosleep(&ms, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return 1;
}

int main(int argc, char **argv)
{
	unsigned forks = argc > 1 ? (unsigned)arg_size(argc, argv, 1) : 30;
	unsigned hung = 0, failed = 0;
	pthread_t thread;
	void *p;

	/* Something allocated: gpuspy is active, its children go silent. */
	rt_ok(cudaMalloc(&p, 1 << 20), "cudaMalloc");
	if (pthread_create(&thread, NULL, marker, NULL) != 0)
		return PROG_FAIL;
	for (unsigned i = 0; i < forks; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return PROG_FAIL;
		if (pid == 0) {
			gpuspy_mark("child");
			_exit(0);
		}
		switch (reap(pid)) {
		case 1:
			hung++;
			break;
		case 2:
			failed++;
			break;
		}
	}
	atomic_store(&stop, true);
	pthread_join(thread, NULL);
	rt_ok(cudaFree(p), "cudaFree");
	printf("fork_mark: hung in %u of %u forks, %u failed otherwise\n", hung, forks, failed);
	return hung || failed ? 1 : 0;
}
