/* SPDX-License-Identifier: MIT */
/*
 * A program with its own SIGXFSZ handler, for tests/integration/files.py,
 * run under a file size limit: gpuspy's writes (an on-demand snapshot)
 * must not reach the handler, nor change it; the program's own write
 * beyond the limit still does.  Prints the count after each.
 * Usage: xfsz FILE
 */
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "gpuspy.h"
#include "prog.h"

static volatile sig_atomic_t caught;

static void on_xfsz(int sig)
{
	(void)sig;
	caught++;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_xfsz }, now;
	void *p;
	int fd;

	if (argc != 2)
		return PROG_FAIL;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGXFSZ, &sa, NULL);
	rt_ok(cudaMalloc(&p, 1 << 20), "cudaMalloc");
	gpuspy_snapshot("limited");
	sigaction(SIGXFSZ, NULL, &now);
	printf("xfsz: after gpuspy's write: %d, handler kept: %s\n", (int)caught,
	       now.sa_handler == on_xfsz ? "yes" : "no");
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "x", 1) >= 0)
		return PROG_FAIL;
	close(fd);
	printf("xfsz: after its own write: %d\n", (int)caught);
	return 0;
}
