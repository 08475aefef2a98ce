/* SPDX-License-Identifier: MIT */
/*
 * A disk full for a moment, for tests/integration/files.py: preloaded
 * before libgpuspy.so, this makes the first FAKE_ENOSPC_RENAMES renames
 * of the process fail with ENOSPC, then lets every later one through.
 * A rename is where each of gpuspy's files becomes visible, so a failed
 * one is a file not written.
 *
 * FAKE_ENOSPC_HISTORY=SKIP:COUNT does the same to the history's appends
 * and rewrites (writes to history.jsonl or its temporary): after SKIP of
 * them, COUNT fail with ENOSPC, the first one after writing half its
 * bytes (a short write, as a disk that fills mid-line gives), then every
 * later one passes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_int failed;

static int full(void)
{
	const char *v = getenv("FAKE_ENOSPC_RENAMES");

	if (v && atomic_fetch_add(&failed, 1) < atoi(v)) {
		errno = ENOSPC;
		return 1;
	}
	return 0;
}

int rename(const char *from, const char *to)
{
	static int (*real)(const char *, const char *);

	if (full())
		return -1;
	if (!real) {
		void *p = dlsym(RTLD_NEXT, "rename");

		memcpy(&real, &p, sizeof(p));
	}
	return real(from, to);
}

int renameat(int fromfd, const char *from, int tofd, const char *to)
{
	static int (*real)(int, const char *, int, const char *);

	if (full())
		return -1;
	if (!real) {
		void *p = dlsym(RTLD_NEXT, "renameat");

		memcpy(&real, &p, sizeof(p));
	}
	return real(fromfd, from, tofd, to);
}

static atomic_int history_writes;

/* Whether FD is the history or its temporary */
static int is_history(int fd)
{
	char path[64], target[4096];
	ssize_t n;
	size_t k = sizeof("history.jsonl") - 1;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = '\0';
	if ((size_t)n > k && strcmp(target + n - k, "history.jsonl") == 0)
		return 1;
	return strstr(target, "/.history.jsonl.tmp") != NULL;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	static ssize_t (*real)(int, const void *, size_t);
	const char *v = getenv("FAKE_ENOSPC_HISTORY");
	int skip = 0, count = 0;

	if (!real) {
		void *p = dlsym(RTLD_NEXT, "write");

		memcpy(&real, &p, sizeof(p));
	}
	if (v && sscanf(v, "%d:%d", &skip, &count) == 2 && is_history(fd)) {
		int k = atomic_fetch_add(&history_writes, 1);

		if (k == skip && len > 1)
			return real(fd, buf, len / 2);
		if (k >= skip && k < skip + count) {
			errno = ENOSPC;
			return -1;
		}
	}
	return real(fd, buf, len);
}
