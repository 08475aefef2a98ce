/* SPDX-License-Identifier: MIT */
/*
 * What was live at the process's high-water mark.
 *
 * Each time the GPU memory gpuspy tracks grows 1% past the last snapshot,
 * the per-site and per-device live bytes are copied.  The last copy is then
 * within 1% of the true peak: had live memory ever gone 1% beyond it,
 * another copy would have been taken.  The hot path pays one relaxed load
 * and a comparison; copies happen O(log(peak)) times, each O(sites).
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "counters.h"
#include "locks.h"
#include "log.h"
#include "peak.h"
#include "sites.h"
#include "state.h"

/* Live bytes at which the next copy is due, and the highest live bytes
 * since the API last reset it (peak_local_reset): read by every
 * allocation, so in a line that nothing written as often shares. */
static struct {
	atomic_llong next_at;
	atomic_llong local;
} line __attribute__((aligned(64)));
static struct gs_peak_snap snap; /* under gs_peak_lock */
/* Two buffers: the snapshot's, and the one the next copy is made in. */
static struct {
	struct gs_peak_site *p;
	size_t cap;
} bufs[2];
static unsigned cur;

/* The copy, out of line: the hot path below stays a few instructions
 * without this one's stack frame. */
static __attribute__((noinline)) void peak_copy(long long live)
{
	unsigned n = 0, cap, next;
	struct gs_peak_site *buf;

	gs_lock(&gs_peak_lock);
	if (live < atomic_load_explicit(&line.next_at, memory_order_relaxed)) {
		gs_unlock(&gs_peak_lock); /* another thread just took it */
		return;
	}
	next = !cur; /* cur only under the lock: the copy before this one may have moved it */
	cap = site_count() + 64;
	if (bufs[next].cap < cap) {
		buf = realloc(bufs[next].p, cap * sizeof(*buf));
		if (!buf) {
			gs_unlock(&gs_peak_lock);
			gs_fail("out of memory while recording the peak");
			return;
		}
		bufs[next].p = buf;
		bufs[next].cap = cap;
	}
	buf = bufs[next].p;
	for (struct gs_site *s = site_list(); s && n < cap; s = s->next_all) {
		long long b;

		if (s->kind == GS_KIND_PINNED || (b = counters_live_bytes(&s->c)) <= 0)
			continue;
		buf[n].site = s->id;
		buf[n].live_bytes = b;
		n++;
	}
	cur = next;
	snap.sites = buf;
	snap.n = n;
	snap.bytes = live;
	snap.time = gs_now();
	for (int d = 0; d <= GS_MAX_DEVICES; d++)
		snap.devices[d] = totals_device_live((unsigned)d);
	atomic_store_explicit(&line.next_at, live + live / 100 + 1, memory_order_relaxed);
	gs_unlock(&gs_peak_lock);
}

void peak_note(long long live)
{
	/* a load and a comparison, but while the API's peak rises */
	gs_max(&line.local, live);
	if (GS_LIKELY(live < atomic_load_explicit(&line.next_at, memory_order_relaxed)))
		return;
	peak_copy(live);
}

const struct gs_peak_snap *peak_snapshot(void)
{
	return snap.time > 0 ? &snap : NULL;
}

long long peak_local(void)
{
	return atomic_load_explicit(&line.local, memory_order_relaxed);
}

long long peak_local_reset(long long live)
{
	return atomic_exchange_explicit(&line.local, live, memory_order_relaxed);
}
