/* SPDX-License-Identifier: MIT */
/* What the unit tests of gpuspy_read share: the fixtures and a few helpers. */
#ifndef GPUSPY_TESTS_READ_TEST_H
#define GPUSPY_TESTS_READ_TEST_H

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "classify.h"
#include "diff.h"
#include "discover.h"
#include "load.h"
#include "merge.h"
#include "symbolize.h"
#include "util.h"
#include "validate.h"

#define MiB (1024 * 1024)
#define GiB (1024LL * MiB)

#define TORCH_POOL "PyTorch caching allocator"
#define CUPY_POOL  "CuPy memory pool"
#define XLA_POOL   "XLA allocator"

/* The fixtures directory, from GPUSPY_FIXTURES (tests/cli/meson.build). */
static inline const char *read_test_fixtures(void)
{
	const char *dir = getenv("GPUSPY_FIXTURES");

	return dir ? dir : "";
}

/* REL inside the fixtures; valid until the next call. */
static inline char *fixture(const char *rel)
{
	static char buf[PATH_MAX + 64];

	snprintf(buf, sizeof(buf), "%s/%s", read_test_fixtures(), rel);
	return buf;
}

static inline int read_test_init(void)
{
	if (!getenv("GPUSPY_FIXTURES")) {
		fprintf(stderr, "GPUSPY_FIXTURES is not set\n");
		return -1;
	}
	return 0;
}

/* A known function of this program, called so that its return address is
 * ours: the symbolizer must name the caller (test_symbolize_self,
 * test_merge_lines). */
__attribute__((noinline, unused)) static void *return_address(void)
{
	return __builtin_return_address(0);
}

static inline const struct rd_report_frame *oom_requested_by(const struct rd_report_oom *ro)
{
	ssize_t h;

	assert_non_null(ro->requested);
	h = merge_site_headline(ro->requested);
	assert_true(h >= 0);
	return &ro->requested->frames[h];
}

#endif
