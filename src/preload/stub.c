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
