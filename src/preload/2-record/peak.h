/* SPDX-License-Identifier: MIT */
/* peak.c: what was live at the high-water mark */
#ifndef GPUSPY_PEAK_H
#define GPUSPY_PEAK_H

#include "core.h"
#include "counters.h"

struct gs_peak_site {
	uint32_t site;
	long long live_bytes;
};
struct gs_peak_snap {
	double time;
	long long bytes; /* GPU memory live when taken, within 1% of the peak */
	unsigned n;
	struct gs_peak_site *sites;
	long long devices[GS_MAX_DEVICES + 1];
};
/* After GPU memory grew to `live` bytes. */
void peak_note(long long live);
/* The last snapshot, or NULL; read it under gs_peak_lock. */
const struct gs_peak_snap *peak_snapshot(void);
/*
 * The API's peak (query.c): the highest live GPU bytes an allocation
 * reached since the last reset, which sets it to LIVE and returns what it
 * was.  Any thread, no lock; resets are the caller's to serialise.
 */
long long peak_local(void);
long long peak_local_reset(long long live);

#endif /* GPUSPY_PEAK_H */
