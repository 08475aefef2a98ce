/* SPDX-License-Identifier: MIT */
/* GPUSPY_* environment variables, read once (see libgpuspy(7)). */
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
	.interval_us = GS_INTERVAL_DEFAULT_US,
	.signal = GS_SIGNAL_DEFAULT,
	.nvml = true,
	.torch = true,
};

static bool env_true(const char *v)
{
	return v && *v && strcmp(v, "0") != 0 && strcasecmp(v, "no") != 0 &&
	       strcasecmp(v, "false") != 0 && strcasecmp(v, "off") != 0;
}

void config_load(void)
{
	const char *v;

	gs_config.output_dir = env_output_dir(secure_getenv("GPUSPY_OUTPUT_DIR"));

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
	if (env_interval(v, &gs_config.interval_us) < 0)
		gs_warn("GPUSPY_INTERVAL=%s is not a duration such as 1s, 100ms or 0; using 1s", v);

	v = secure_getenv("GPUSPY_SIGNAL");
	gs_config.signal = env_signal(v);
	if (gs_config.signal < 0) {
		gs_warn("GPUSPY_SIGNAL=%s is not SIGUSR1, SIGUSR2, a number or off; using SIGUSR2",
			v);
		gs_config.signal = GS_SIGNAL_DEFAULT;
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
