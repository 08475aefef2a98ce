/* SPDX-License-Identifier: MIT */
/* The counters kept per call site and per kind (record.c) */
#ifndef GPUSPY_COUNTERS_H
#define GPUSPY_COUNTERS_H

#include "core.h"

/*
 * The counters kept per call site and per kind.  Only totals are counted
 * (two atomic additions per event); what is live is their difference.
 * Totals only grow, so a reader that loads the freed ones first never
 * sees more freed than allocated.
 */
struct gs_counters {
	atomic_llong alloc_bytes, allocs, freed_bytes, frees, peak_bytes;
};
struct gs_count_snap {
	long long live_bytes, live_allocs, peak_bytes;
	long long alloc_bytes, allocs, freed_bytes, frees;
};
static inline long long counters_live_bytes(const struct gs_counters *c)
{
	long long freed = atomic_load_explicit(&c->freed_bytes, memory_order_relaxed);

	return atomic_load_explicit(&c->alloc_bytes, memory_order_relaxed) - freed;
}
void counters_alloc(struct gs_counters *c, uint64_t size);
void counters_free(struct gs_counters *c, uint64_t size);
/* A consistent copy, even while other threads still allocate (at exit). */
void counters_read(struct gs_counters *c, struct gs_count_snap *out);

struct gs_totals {
	struct gs_counters kind[GS_KIND_COUNT];
	atomic_llong gpu_live_bytes, gpu_peak_bytes; /* device + managed + vmm */
	atomic_llong doors[GS_DOOR_COUNT];
	atomic_llong untracked_frees;
	atomic_llong replaced; /* allocation over a live key: its free was missed */
	atomic_llong vmm_reserved_bytes, vmm_mapped_bytes;
	atomic_ullong seq;
};
extern struct gs_totals gs_totals;

#endif /* GPUSPY_COUNTERS_H */
