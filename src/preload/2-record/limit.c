/* SPDX-License-Identifier: MIT */
/*
 * GPUSPY_LIMIT (limit.h).  A device's memory, as the limit counts it, is
 * what gpuspy tracks live there (device, managed and VMM memory: the
 * striped counters of record.c) plus what callers hold between their
 * check and the count (struct limit_hold): held[] below.  Both are read
 * without a lock; a check adds its request to held[] first and only then
 * reads the counters, so that of two threads racing for the last bytes
 * one sees the other's (held, or already counted: counted before its hold
 * is dropped, an allocation is never missed, at worst seen twice for a
 * moment, which refuses early rather than late).
 */
#include <stdatomic.h>

#include "counters.h"
#include "driver.h"
#include "limit.h"
#include "peak.h"
#include "record.h"
#include "state.h"

static atomic_llong held[GS_MAX_DEVICES + 1];

/* Whether the limit refused this thread's last request; whether a runtime
 * hook's call is under way, and what its nested driver calls hold. */
static GS_TLS bool refused, nested;
static GS_TLS struct limit_hold nested_hold;

static long long device_used(unsigned index)
{
	return totals_device_live(index) + atomic_load_explicit(&held[index], memory_order_relaxed);
}

bool limit_admit(struct limit_hold *h, enum gs_kind kind, int device, uint64_t size)
{
	long long limit = (long long)gs_config.limit;
	unsigned index;

	*h = LIMIT_HOLD_NONE;
	refused = false;
	if (kind == GS_KIND_PINNED ||
	    !atomic_load_explicit(&gs_state.tracking, memory_order_relaxed))
		return true;
	if (device == GS_DEVICE_CURRENT)
		device = driver_current_device();
	index = gs_device_index(device);
	if (device < 0 || !index)
		return true;
	if (size > (uint64_t)limit) {
		refused = true;
		return false;
	}
	/* held first, counters after: see the top of this file */
	atomic_fetch_add_explicit(&held[index], (long long)size, memory_order_relaxed);
	if (device_used(index) > limit) {
		atomic_fetch_sub_explicit(&held[index], (long long)size, memory_order_relaxed);
		refused = true;
		return false;
	}
	h->index = index;
	h->bytes = (long long)size;
	return true;
}

void limit_release(struct limit_hold *h)
{
	if (h->index)
		atomic_fetch_sub_explicit(&held[h->index], h->bytes, memory_order_relaxed);
	*h = LIMIT_HOLD_NONE;
}

bool limit_refused_here(void)
{
	bool r = refused;

	refused = false;
	return r;
}

void limit_nested_begin(void)
{
	nested = true;
	nested_hold = LIMIT_HOLD_NONE;
}

void limit_nested_end(void)
{
	limit_release(&nested_hold);
	nested = false;
}

bool limit_nested_admit(enum gs_kind kind, int device, uint64_t size)
{
	struct limit_hold h;

	if (!nested)
		return true;
	if (!limit_admit(&h, kind, device, size))
		return false;
	/* a runtime call that allocates twice holds both */
	if (nested_hold.index && nested_hold.index != h.index)
		limit_release(&nested_hold);
	nested_hold.index = h.index;
	nested_hold.bytes += h.bytes;
	return true;
}

void limit_mem_info(size_t *free_bytes, size_t *total_bytes)
{
	unsigned long long limit = gs_config.limit;
	unsigned index = gs_device_index(driver_current_device());
	long long used = index ? device_used(index) : 0;
	unsigned long long left = used < 0 ? limit :
				  (unsigned long long)used >= limit ?
					     0 :
					     limit - (unsigned long long)used;

	if (!atomic_load_explicit(&gs_state.tracking, memory_order_relaxed))
		return;
	if (total_bytes && *total_bytes > limit)
		*total_bytes = (size_t)limit;
	if (free_bytes && *free_bytes > left)
		*free_bytes = (size_t)left;
}

void limit_total(size_t *bytes)
{
	if (bytes && atomic_load_explicit(&gs_state.tracking, memory_order_relaxed) &&
	    *bytes > gs_config.limit)
		*bytes = (size_t)gs_config.limit;
}
