/* SPDX-License-Identifier: MIT */
/* GPUSPY_* environment variables, read once (see libgpuspy(7)). */
#include <stdlib.h>
#include <string.h>

#include "gpuspy_int.h"

struct gs_config gs_config = {
	.output_dir = "gpuspy-out",
	.depth = 16,
	.py_depth = 32,
};

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

	gs_config.unwind = secure_getenv("GPUSPY_UNWIND");
	gs_config.libunwind = secure_getenv("GPUSPY_LIBUNWIND");
	gs_config.quiet = env_true(secure_getenv("GPUSPY_QUIET"));
	gs_config.disabled = env_true(secure_getenv("GPUSPY_DISABLE"));
}
