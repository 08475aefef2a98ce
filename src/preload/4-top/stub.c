/* SPDX-License-Identifier: MIT */
/*
 * libgpuspy_stub.so: the API of include/gpuspy.h doing nothing, for
 * programs that call it and must also run without gpuspy.  When
 * libgpuspy.so is preloaded, its definitions come first and these are
 * never reached.
 */
#include "gpuspy.h"

int gpuspy_mark(const char *label)
{
	(void)label;
	return 0;
}

int gpuspy_snapshot(const char *label)
{
	(void)label;
	return -1;
}

/* The live figures: nothing to tell without the library. */
int gpuspy_totals(struct gpuspy_totals *out, size_t size)
{
	(void)out;
	(void)size;
	return -1;
}

long long gpuspy_scope_open(void)
{
	return -1;
}

int gpuspy_scope_close(long long scope)
{
	(void)scope;
	return -1;
}

int gpuspy_scope_read(long long scope, struct gpuspy_scope_totals *out, size_t size)
{
	(void)scope;
	(void)out;
	(void)size;
	return -1;
}

int gpuspy_sites(struct gpuspy_site *out, unsigned n, size_t size, int wait_ms)
{
	(void)out;
	(void)n;
	(void)size;
	(void)wait_ms;
	return -1;
}

int gpuspy_scope_sites(long long scope, int sign, struct gpuspy_site *out, unsigned n, size_t size,
		       int wait_ms)
{
	(void)scope;
	(void)sign;
	(void)out;
	(void)n;
	(void)size;
	(void)wait_ms;
	return -1;
}

int gpuspy_frameworks(struct gpuspy_framework *out, unsigned n, size_t size)
{
	(void)out;
	(void)n;
	(void)size;
	return -1;
}

int gpuspy_process_dir(char *buf, size_t size)
{
	(void)buf;
	(void)size;
	return -1;
}
