/* SPDX-License-Identifier: MIT */
/*
 * The frameworks' latest figures (fw_counters.h).  Fixed storage under
 * gs_events_lock: the main thread's puts and the snapshot thread's reads
 * (history_end, view_take) never allocate and never wait on Python.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "fw_counters.h"
#include "locks.h"
#include "state.h"

static struct fw_latest latest;
static atomic_ullong changes;

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

void fw_counters_reset(void)
{
	memset(&latest, 0, sizeof(latest));
}
