/* SPDX-License-Identifier: MIT */
/*
 * GPUSPY_LIMIT (limit.h).  A device's memory, as the limit counts it, is
 * what gpuspy tracks live there (device, managed and VMM memory: the
 * striped counters of record.c) plus what threads hold between their
 * check and the count: held[] below.  Both are read without a lock; a
 * check adds its request to held[] first and only then reads the
 * counters, so that of two threads racing for the last bytes one sees
 * the other's (the one held, or already counted: counted before its hold
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

/* What this thread holds (index 0: nothing), and whether the limit
 * refused its last request. */
static GS_TLS unsigned hold_index;
static GS_TLS long long hold_bytes;
static GS_TLS bool refused;

static long long device_used(unsigned index)
{
	return totals_device_live(index) + atomic_load_explicit(&held[index], memory_order_relaxed);
}

void limit_drop(void)
{
	if (hold_index)
		atomic_fetch_sub_explicit(&held[hold_index], hold_bytes, memory_order_relaxed);
	hold_index = 0;
	hold_bytes = 0;
}

void limit_counted(void)
{
	limit_drop();
}

bool limit_refuse(enum gs_kind kind, int device, uint64_t size)
{
	long long limit = (long long)gs_config.limit, used;
	unsigned index;

	/* a hold left by a call whose count never came (its runtime failed
	 * after the driver succeeded): it is in the counters, or nowhere */
	limit_drop();
	refused = false;
	if (kind == GS_KIND_PINNED || !atomic_load_explicit(&gs_state.tracking, memory_order_relaxed))
		return false;
	if (device == GS_DEVICE_CURRENT)
		device = driver_current_device();
	index = gs_device_index(device);
	if (device < 0 || !index)
		return false;
	if (size > (uint64_t)limit) {
		refused = true;
		return true;
	}
	atomic_fetch_add_explicit(&held[index], (long long)size, memory_order_relaxed);
	used = device_used(index);
	if (used > limit) {
		atomic_fetch_sub_explicit(&held[index], (long long)size, memory_order_relaxed);
		refused = true;
		return true;
	}
	hold_index = index;
	hold_bytes = (long long)size;
	return false;
}

bool limit_refused_here(void)
{
	bool r = refused;

	refused = false;
	return r;
}

void limit_mem_info(size_t *free_bytes, size_t *total_bytes)
{
	unsigned long long limit = gs_config.limit;
	unsigned index = gs_device_index(driver_current_device());
	long long used = index ? device_used(index) : 0;
	unsigned long long left = used < 0 ? limit : (unsigned long long)used >= limit ? 0 : limit - (unsigned long long)used;

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
