/* SPDX-License-Identifier: MIT */
/* What the commands learn of a process running under gpuspy from /proc. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "env.h"
#include "names.h"

char *procfs_env(pid_t pid, const char *name)
{
	char path[64], *buf = NULL, *val = NULL;
	size_t len = 0, cap = 0, nlen = strlen(name);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			char *b = realloc(buf, cap = len + 65536);

			if (!b)
				break;
			buf = b;
		}
		n = read(fd, buf + len, 4096);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	for (size_t i = 0; buf && i < len; i += strlen(buf + i) + 1) {
		buf[len] = '\0';
		if (strncmp(buf + i, name, nlen) == 0 && buf[i + nlen] == '=') {
			val = strdup(buf + i + nlen + 1);
			break;
		}
	}
	free(buf);
	return val;
}

void procfs_process_dir(pid_t pid, char *dir, size_t size)
{
	char cwd_link[64], cwd[PATH_MAX], run[PATH_MAX * 2], *out;
	const char *d;
	ssize_t n;

	/* Its run directory, as the library resolved it: relative to its
	 * working directory. */
	snprintf(cwd_link, sizeof(cwd_link), "/proc/%d/cwd", (int)pid);
	n = readlink(cwd_link, cwd, sizeof(cwd) - 1);
	cwd[n > 0 ? n : 0] = '\0';
	out = procfs_env(pid, "GPUSPY_OUTPUT_DIR");
	d = env_output_dir(out);
	if (d[0] != '/') {
		names_join(run, sizeof(run), cwd, d);
		d = run;
	}
	names_process_path(dir, size, d, pid);
	free(out);
}
