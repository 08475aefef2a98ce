/* SPDX-License-Identifier: MIT */
/*
 * The frameworks' latest figures (fw_counters.h).  Fixed storage under
 * gs_events_lock: the main thread's puts and the snapshot thread's reads
 * (history_end, view_take) never allocate and never wait on Python.
 *
 * Each put of an allocated counter is a sample of the growth rule
 * (src/common/trend.h) for that framework and place, timed as the
 * snapshot thread times its own: a framework's own count of what its
 * tensors hold rises as the program leaks them, when the pool's segments,
 * which double, rise too seldom to tell (a JAX leak of a few seconds).
 * The states are static (bss: untouched pages cost nothing) and judged
 * here, in the put, under the lock.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "core.h"
#include "fw_counters.h"
#include "locks.h"
#include "state.h"

static struct fw_latest latest;
static atomic_ullong changes;

static struct {
	bool on[GS_FW_COUNT][GS_FW_PLACES]; /* T has samples */
	struct gs_trend t[GS_FW_COUNT][GS_FW_PLACES];
	struct fw_growth g;
} growth = { .g.site = { [0 ... GS_FW_COUNT - 1] = -1 } };

/* FW's allocated figures now, each a sample of its place's series. */
static void growth_push(unsigned fw, double now)
{
	for (unsigned p = 0; p < GS_FW_PLACES; p++) {
		struct gs_trend *t = &growth.t[fw][p];

		if (!latest.has[fw][p][GS_FWC_ALLOCATED]) {
			/* a place it said something of once and not now: 0 */
			if (!growth.on[fw][p])
				continue;
		} else if (!growth.on[fw][p]) {
			trend_init(t);
			growth.on[fw][p] = true;
		}
		growth.g.allocated[fw][p] =
			latest.has[fw][p][GS_FWC_ALLOCATED] ? latest.v[fw][p][GS_FWC_ALLOCATED] : 0;
		trend_push(t, now, growth.g.allocated[fw][p]);
		if (trend_ever(t)) {
			growth.g.has[fw][p] = true;
			trend_verdict(t, &growth.g.v[fw][p]);
		}
	}
}

int fw_counters_put(unsigned fw, const long long *triples, unsigned n)
{
	/* static: the caller's stack is the program's main thread's */
	static struct fw_latest before;

	if (fw >= GS_FW_COUNT || (n && !triples))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (triples[3 * i] < 0 || triples[3 * i] >= GS_FW_PLACES ||
		    triples[3 * i + 1] < 0 || triples[3 * i + 1] >= GS_FWC_COUNT ||
		    triples[3 * i + 2] < 0)
			return -EINVAL;
	gs_lock(&gs_events_lock);
	before = latest;
	memset(latest.has[fw], 0, sizeof(latest.has[fw]));
	for (size_t i = 0; i < n; i++) {
		long long p = triples[3 * i], c = triples[3 * i + 1];

		latest.has[fw][p][c] = true;
		latest.v[fw][p][c] = triples[3 * i + 2];
	}
	latest.any = false;
	for (unsigned f = 0; f < GS_FW_COUNT && !latest.any; f++)
		for (unsigned p = 0; p < GS_FW_PLACES && !latest.any; p++)
			for (unsigned c = 0; c < GS_FWC_COUNT && !latest.any; c++)
				latest.any = latest.has[f][p][c];
	latest.time = gs_now();
	/* an adapter gone off (N of 0) says nothing more of its series */
	if (n)
		growth_push(fw, latest.time - gs_state.start_time);
	if (memcmp(before.has, latest.has, sizeof(before.has)) != 0)
		atomic_fetch_add(&changes, 1);
	else
		for (unsigned p = 0; p < GS_FW_PLACES; p++)
			for (unsigned c = 0; c < GS_FWC_COUNT; c++)
				if (latest.has[fw][p][c] &&
				    before.v[fw][p][c] != latest.v[fw][p][c]) {
					atomic_fetch_add(&changes, 1);
					p = GS_FW_PLACES;
					break;
				}
	gs_unlock(&gs_events_lock);
	return 0;
}

void fw_counters_copy(struct fw_latest *out)
{
	*out = latest;
}

unsigned long long fw_counters_changes(void)
{
	return atomic_load(&changes);
}

void fw_counters_growth(struct fw_growth *out)
{
	*out = growth.g;
}

void fw_counters_link(unsigned fw, unsigned site)
{
	if (fw < GS_FW_COUNT && growth.g.site[fw] < 0)
		growth.g.site[fw] = site;
}

void fw_counters_reset(void)
{
	memset(&latest, 0, sizeof(latest));
	memset(growth.on, 0, sizeof(growth.on));
	memset(&growth.g, 0, sizeof(growth.g));
	for (unsigned fw = 0; fw < GS_FW_COUNT; fw++)
		growth.g.site[fw] = -1;
}
