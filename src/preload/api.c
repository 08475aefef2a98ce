/* SPDX-License-Identifier: MIT */
/* The public API of include/gpuspy.h, live when the library is preloaded. */
#include "gpuspy.h"
#include "gpuspy_int.h"

GS_EXPORT int gpuspy_mark(const char *label)
{
	report_mark(label);
	return 0;
}

GS_EXPORT int gpuspy_snapshot(const char *label)
{
	if (!atomic_load(&gs_state.active) || !atomic_load(&gs_state.tracking))
		return -1; /* nothing allocated yet, or gpuspy is off */
	return report_write_labelled(label && *label ? label : "snapshot");
}
