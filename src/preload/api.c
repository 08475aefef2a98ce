/* SPDX-License-Identifier: MIT */
/*
 * The public API of include/gpuspy.h, live when the library is preloaded.
 * A forked child that went silent (lifecycle.c) writes nothing and keeps
 * nothing: every entry point is then a no-op.
 */
#include "core.h"
#include "events.h"
#include "gpuspy.h"
#include "state.h"
#include "symbols.h"

GS_EXPORT int gpuspy_mark(const char *label)
{
	if (atomic_load(&gs_state.silent))
		return 0;
	events_mark(label);
	return 0;
}

GS_EXPORT int gpuspy_snapshot(const char *label)
{
	if (atomic_load(&gs_state.silent))
		return -1;
	if (!atomic_load(&gs_state.active) || !atomic_load(&gs_state.tracking))
		return -1; /* nothing allocated yet, or gpuspy is off */
	/* written on this thread: names for the sites the snapshot thread
	 * has not come to yet */
	symbols_catch_up();
	return events_snapshot(label && *label ? label : "snapshot");
}
