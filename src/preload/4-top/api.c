/* SPDX-License-Identifier: MIT */
/*
 * The public API of include/gpuspy.h, live when the library is preloaded.
 * A forked child that went silent (lifecycle.c) writes nothing and keeps
 * nothing: every entry point is then a no-op.
 */
#include "core.h"
#include "events.h"
#include "gpuspy.h"
#include "query.h"
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

/* The live figures: query.c. */
GS_EXPORT int gpuspy_totals(struct gpuspy_totals *out, size_t size)
{
	return query_totals(out, size);
}

GS_EXPORT long long gpuspy_scope_open(void)
{
	return query_scope_open();
}

GS_EXPORT int gpuspy_scope_close(long long scope)
{
	return query_scope_close(scope);
}

GS_EXPORT int gpuspy_scope_read(long long scope, struct gpuspy_scope_totals *out, size_t size)
{
	return query_scope_read(scope, out, size);
}

GS_EXPORT int gpuspy_sites(struct gpuspy_site *out, unsigned n, size_t size, int wait_ms)
{
	return query_sites(out, n, size, wait_ms);
}

GS_EXPORT int gpuspy_scope_sites(long long scope, int sign, struct gpuspy_site *out, unsigned n,
				 size_t size, int wait_ms)
{
	return query_scope_sites(scope, sign, out, n, size, wait_ms);
}

GS_EXPORT int gpuspy_frameworks(struct gpuspy_framework *out, unsigned n, size_t size)
{
	return query_frameworks(out, n, size);
}

GS_EXPORT int gpuspy_process_dir(char *buf, size_t size)
{
	return query_process_dir(buf, size);
}
