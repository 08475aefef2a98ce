/* SPDX-License-Identifier: MIT */
/*
 * git(1), asked by the command (never by the library): the commit a run
 * is built from (gpuspy run) and the order of commits (gpuspy commits).
 * It runs in the working directory with standard input and error on
 * /dev/null, and is given CLI_GIT_TIMEOUT_MS to answer: a repository on
 * a hung network file system must not hold up the job.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cli_git(const char *const *args, char *buf, size_t size)
{
	const char *argv[16];
	size_t n = 0, len = 0;
	int fds[2], st = 0;
	double end;
	pid_t pid;

	argv[n++] = "git";
	for (; *args && n + 1 < sizeof(argv) / sizeof(argv[0]); args++)
		argv[n++] = *args;
	argv[n] = NULL;
	if (size < 2 || pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 2) < 0 || dup2(fds[1], 1) < 0)
			_exit(127);
		execvp("git", (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	end = mono_now() + CLI_GIT_TIMEOUT_MS / 1000.0;
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		int left = (int)((end - mono_now()) * 1000), r;
		ssize_t got;

		r = left > 0 ? poll(&pfd, 1, left) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* too slow: no answer */
			kill(pid, SIGKILL);
			len = 0;
			st = -1;
			break;
		}
		got = read(fds[0], buf + len, size - 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
		if (len == size - 1)
			break;
	}
	close(fds[0]);
	{
		int ws;

		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
			;
		if (st == 0)
			st = WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? 0 : -1;
	}
	buf[len] = '\0';
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	return st == 0 && len ? 0 : -1;
}
