/* SPDX-License-Identifier: MIT */
/*
 * A disk full for a moment, for tests/integration/files.py: preloaded
 * before libgpuspy.so, this makes the first FAKE_ENOSPC_RENAMES renames
 * of the process fail with ENOSPC, then lets every later one through.
 * A rename is where each of gpuspy's files becomes visible, so a failed
 * one is a file not written.
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
