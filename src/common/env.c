/* SPDX-License-Identifier: MIT */
/*
 * Parsers of the GPUSPY_* values both sides read (env.h).  The library
 * calls them from its constructor, before anything else of gpuspy runs:
 * no allocation, no state, no getenv here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"

const char *env_output_dir(const char *v)
{
	return v && *v ? v : GS_OUTPUT_DIR_DEFAULT;
}

int env_interval(const char *v, unsigned long long *us)
{
	char *end;
	double x;

	*us = GS_INTERVAL_DEFAULT_US;
	if (!v || !*v)
		return 0;
	x = strtod(v, &end);
	if (end == v || x < 0)
		return -EINVAL;
	if (strcmp(end, "") == 0 || strcmp(end, "s") == 0)
		x *= 1e6;
	else if (strcmp(end, "ms") == 0)
		x *= 1e3;
	else if (strcmp(end, "us") != 0)
		return -EINVAL;
	if (x > 0 && x < GS_INTERVAL_MIN_US)
		x = GS_INTERVAL_MIN_US;
	*us = (unsigned long long)x;
	return 0;
}

int env_signal(const char *v)
{
	char *end;
	long n;

	if (!v || !*v)
		return GS_SIGNAL_DEFAULT;
	if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0)
		return 0;
	if (strcmp(v, "SIGUSR1") == 0 || strcmp(v, "USR1") == 0)
		return SIGUSR1;
	if (strcmp(v, "SIGUSR2") == 0 || strcmp(v, "USR2") == 0)
		return SIGUSR2;
	n = strtol(v, &end, 10);
	if (!*end && n > 0 && n < NSIG)
		return (int)n;
	return -EINVAL;
}
