/* SPDX-License-Identifier: MIT */
/* GPUSPY_* environment variables, read once (see libgpuspy(7)). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "core.h"
#include "env.h"
#include "log.h"
#include "pystack.h"

struct gs_config gs_config = {
	.output_dir = GS_OUTPUT_DIR_DEFAULT,
	.depth = 16,
	.py_depth = 32,
	.interval_us = 1000000,
	.signal = SIGUSR2,
	.nvml = true,
	.torch = true,
};

/* "1s", "100ms", "500us", "0" (off); a bare number is seconds. */
static int parse_interval(const char *v, unsigned long long *us)
{
	char *end;
	double x = strtod(v, &end);

	if (end == v || x < 0)
		return -EINVAL;
	if (strcmp(end, "") == 0 || strcmp(end, "s") == 0)
		x *= 1e6;
	else if (strcmp(end, "ms") == 0)
		x *= 1e3;
	else if (strcmp(end, "us") != 0)
		return -EINVAL;
	if (x > 0 && x < 100) /* below 100 us the thread would do nothing else */
		x = 100;
	*us = (unsigned long long)x;
	return 0;
}

static bool env_true(const char *v)
{
	return v && *v && strcmp(v, "0") != 0 && strcasecmp(v, "no") != 0 &&
	       strcasecmp(v, "false") != 0 && strcasecmp(v, "off") != 0;
}

void config_load(void)
{
	const char *v;

	v = secure_getenv("GPUSPY_OUTPUT_DIR");
	if (v && *v)
		gs_config.output_dir = v;

	v = secure_getenv("GPUSPY_DEPTH");
	if (v && *v) {
		char *end;
		unsigned long d = strtoul(v, &end, 10);

		if (*end || d > GS_MAX_DEPTH)
			gs_warn("GPUSPY_DEPTH=%s is not a number from 0 to %d; using %u", v,
				GS_MAX_DEPTH, gs_config.depth);
		else
			gs_config.depth = (unsigned)d;
	}

	v = secure_getenv("GPUSPY_PYTHON_DEPTH");
	if (v && *v) {
		char *end;
		unsigned long d = strtoul(v, &end, 10);

		if (*end || d > GS_MAX_PY_DEPTH)
			gs_warn("GPUSPY_PYTHON_DEPTH=%s is not a number from 0 to %d; using %u", v,
				GS_MAX_PY_DEPTH, gs_config.py_depth);
		else
			gs_config.py_depth = (unsigned)d;
	}

	v = secure_getenv("GPUSPY_INTERVAL");
	if (v && *v && parse_interval(v, &gs_config.interval_us) < 0)
		gs_warn("GPUSPY_INTERVAL=%s is not a duration such as 1s, 100ms or 0; using 1s", v);

	v = secure_getenv("GPUSPY_SIGNAL");
	if (v && *v) {
		char *end;
		long n = strtol(v, &end, 10);

		if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0)
			gs_config.signal = 0;
		else if (strcmp(v, "SIGUSR1") == 0 || strcmp(v, "USR1") == 0)
			gs_config.signal = SIGUSR1;
		else if (strcmp(v, "SIGUSR2") == 0 || strcmp(v, "USR2") == 0)
			gs_config.signal = SIGUSR2;
		else if (!*end && n > 0 && n < NSIG)
			gs_config.signal = (int)n;
		else
			gs_warn("GPUSPY_SIGNAL=%s is not SIGUSR1, SIGUSR2, a number or off; using SIGUSR2",
				v);
	}

	gs_config.unwind = secure_getenv("GPUSPY_UNWIND");
	gs_config.libunwind = secure_getenv("GPUSPY_LIBUNWIND");
	v = secure_getenv("GPUSPY_NVML");
	if (v && *v && !env_true(v))
		gs_config.nvml = false;

	v = secure_getenv("GPUSPY_TORCH");
	if (v && *v && !env_true(v))
		gs_config.torch = false;

	gs_config.quiet = env_true(secure_getenv("GPUSPY_QUIET"));
	gs_config.disabled = env_true(secure_getenv("GPUSPY_DISABLE"));
}
