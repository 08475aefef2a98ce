/* SPDX-License-Identifier: MIT */
/*
 * gpuspy snapshot PID [LABEL]: ask a running process to write a snapshot
 * now.  The label goes into <its process directory>/.request, then the
 * signal (its GPUSPY_SIGNAL, by default SIGUSR2); the process's gpuspy
 * thread writes snapshot-N.json, whose path is printed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const char usage[] = "Usage: gpuspy snapshot PID [LABEL]\n";

/* The value of NAME in /proc/PID/environ, or NULL. */
static char *proc_env(pid_t pid, const char *name)
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

static int count_snapshots(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strncmp(e->d_name, "snapshot-", 9) == 0;
	closedir(d);
	return n;
}

static int signal_of(pid_t pid)
{
	char *v = proc_env(pid, "GPUSPY_SIGNAL");
	int sig = SIGUSR2;

	if (v && (strcmp(v, "off") == 0 || strcmp(v, "0") == 0))
		sig = 0;
	else if (v && (strcmp(v, "SIGUSR1") == 0 || strcmp(v, "USR1") == 0))
		sig = SIGUSR1;
	else if (v && atoi(v) > 0)
		sig = atoi(v);
	free(v);
	return sig;
}

int cmd_snapshot(int argc, char **argv)
{
	char host[256], cwd_link[64], cwd[PATH_MAX], dir[PATH_MAX * 2], req[PATH_MAX * 2 + 16];
	char *out, *end;
	const char *label;
	long pid;
	ssize_t n;
	int before, sig, fd;

	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(usage, stdout);
		return EXIT_OK;
	}
	if (argc < 2 || argc > 3) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	pid = strtol(argv[1], &end, 10);
	if (*end || pid <= 0 || pid > INT_MAX) {
		fprintf(stderr, "gpuspy: snapshot: '%s' is not a process id\n", argv[1]);
		return EXIT_USAGE;
	}
	label = argc == 3 ? argv[2] : "snapshot";
	if (strchr(label, '\n')) {
		fputs("gpuspy: snapshot: a label is one line\n", stderr);
		return EXIT_USAGE;
	}
	if (kill((pid_t)pid, 0) < 0) {
		fprintf(stderr, "gpuspy: snapshot: process %ld: %s\n", pid, strerror(errno));
		return EXIT_USAGE;
	}
	sig = signal_of((pid_t)pid);
	if (!sig) {
		fprintf(stderr, "gpuspy: snapshot: process %ld runs with GPUSPY_SIGNAL=off\n", pid);
		return EXIT_USAGE;
	}

	/* Its run directory, as the library resolved it: relative to its
	 * working directory. */
	snprintf(cwd_link, sizeof(cwd_link), "/proc/%ld/cwd", pid);
	n = readlink(cwd_link, cwd, sizeof(cwd) - 1);
	cwd[n > 0 ? n : 0] = '\0';
	out = proc_env((pid_t)pid, "GPUSPY_OUTPUT_DIR");
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	if (out && out[0] == '/')
		snprintf(dir, sizeof(dir), "%s/%s-%ld", out, host, pid);
	else
		snprintf(dir, sizeof(dir), "%s/%s/%s-%ld", cwd, out && *out ? out : "gpuspy-out",
			 host, pid);
	free(out);
	before = count_snapshots(dir);
	if (before < 0) {
		fprintf(stderr,
			"gpuspy: snapshot: %s: no such directory (is process %ld running under "
			"gpuspy, and has it allocated GPU memory?)\n",
			dir, pid);
		return EXIT_USAGE;
	}
	snprintf(req, sizeof(req), "%s/.request", dir);
	fd = open(req, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0 || write(fd, label, strlen(label)) < 0 || close(fd) < 0) {
		fprintf(stderr, "gpuspy: snapshot: %s: %s\n", req, strerror(errno));
		return EXIT_FAILURE_OTHER;
	}
	if (kill((pid_t)pid, sig) < 0) {
		fprintf(stderr, "gpuspy: snapshot: process %ld: %s\n", pid, strerror(errno));
		unlink(req);
		return EXIT_USAGE;
	}
	/* The thread writes it at once; allow it five seconds. */
	for (int i = 0; i < 500; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		if (count_snapshots(dir) > before) {
			printf("%s/snapshot-%d.json\n", dir, before + 1);
			return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILURE_OTHER;
		}
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "gpuspy: snapshot: process %ld wrote no snapshot in 5 s\n", pid);
	return EXIT_FAILURE_OTHER;
}
