/* SPDX-License-Identifier: MIT */
/*
 * What feeds the history (history.c) of this process: once per interval,
 * on the snapshot thread, each device's live bytes (totals_device_live), each
 * call site's live and peak bytes, and what NVML says the process uses on
 * each GPU; and, on any thread, the events.  It reads the same lock-free
 * counters as the growth sampler, O(sites) per interval; the allocating
 * threads never wait for it.
 *
 * A forked child goes silent (lifecycle.c): its parent's history is not
 * its own.  Nothing is written before the first allocation, which makes
 * the process directory, nor without periodic samples (GPUSPY_INTERVAL=0).
 */
#include "conf.h"
#include "counters.h"
#include "files.h"
#include "history.h"
#include "locks.h"
#include "names.h"
#include "nvml.h"
#include "peak.h"
#include "site_walk.h"
#include "sites.h"
#include "state.h"

/* The snapshot thread's, then the exit's after it was joined. */
static struct site_walk walk;

/* With gs_events_lock held. */
static void setup(void)
{
	char dir[GS_PROCESS_PATH_SIZE];

	if (history_is_set())
		return;
	files_process_dir(dir, sizeof(dir));
	history_setup(dir, gs_state.start_time, (double)gs_config.interval_us / 1e6);
}

static bool wanted(void)
{
	return gs_config.interval_us > 0 && !atomic_load(&gs_state.silent) &&
	       atomic_load(&gs_state.active) && history_owned();
}

void history_tick(void)
{
	long long used[GS_MAX_DEVICES];
	unsigned n;

	if (!wanted())
		return;
	gs_lock(&gs_events_lock);
	setup();
	gs_unlock(&gs_events_lock);
	history_begin(gs_now() - gs_state.start_time);
	for (int d = -1; d < GS_MAX_DEVICES; d++)
		history_device(d, totals_device_live(gs_device_index(d)));
	/* a failed refresh samples the sites known so far */
	site_walk_refresh(&walk);
	for (unsigned i = 0; i < walk.n; i++) {
		const struct gs_site *s = site_walk_at(&walk, i);

		if (!s || s->kind == GS_KIND_PINNED)
			continue;
		history_site(s->id, names_kind(s->kind), counters_live_bytes(&s->c),
			     atomic_load_explicit(&s->c.peak_bytes, memory_order_relaxed));
	}
	n = nvml_process_used(used, GS_MAX_DEVICES);
	for (unsigned i = 0; i < n; i++)
		history_outside(i, used[i]);
	history_end();
}

void history_event(enum history_event what, const char *label, unsigned n)
{
	if (!wanted())
		return;
	setup();
	history_event_at(gs_now() - gs_state.start_time, what, label, n);
}
