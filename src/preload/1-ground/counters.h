/* SPDX-License-Identifier: MIT */
/* The counters kept per call site, per kind and per device (counters.c) */
#ifndef GPUSPY_COUNTERS_H
#define GPUSPY_COUNTERS_H

#include "core.h"

#define GS_MAX_DEVICES 64
/* Live GPU bytes and allocations per device ordinal + 1 (index 0: unknown
 * device) are totals_device_live() and totals_device_allocs(). */
static inline unsigned gs_device_index(int device)
{
	return device >= 0 && device < GS_MAX_DEVICES ? (unsigned)device + 1 : 0;
}

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
struct gs_totals {
	/* Per kind: only peak_bytes is kept here; the other fields stay 0
	 * (the totals are striped, see below).  counters_read() and
	 * counters_live_bytes() of &gs_totals.kind[k] give the totals. */
	struct gs_counters kind[GS_KIND_COUNT];
	atomic_llong gpu_peak_bytes;
	atomic_llong untracked_frees;
	atomic_llong replaced; /* allocation over a live key: its free was missed */
	atomic_llong vmm_reserved_bytes, vmm_mapped_bytes;
	/* the PyTorch view's pending calls run in the program's main thread
	 * (torch_probe.c) */
	atomic_ullong torch_calls;
	/* out-of-memory events so far, a post-mortem written or not (events.c) */
	atomic_uint oom_events;
	/* graph memory resident: launched, not yet freed (record.c) */
	atomic_llong graph_resident_bytes, graph_resident_allocs, graph_resident_peak;
	/*
	 * What every allocation must see summed at once (the peaks, the
	 * allocation number), in one line of its own: a thread that
	 * allocates moves one contended line, not one per counter.
	 */
	struct {
		atomic_llong kind_live[GS_KIND_COUNT];
		atomic_llong gpu_live_bytes; /* device + managed + vmm */
		atomic_ullong seq;
	} __attribute__((aligned(64))) hot;
};
extern struct gs_totals gs_totals;

/* The kind whose totals c is, or -1 for a site's counters. */
static inline int counters_totals_kind(const struct gs_counters *c)
{
	uintptr_t p = (uintptr_t)c, lo = (uintptr_t)&gs_totals.kind[0];

	return p >= lo && p < (uintptr_t)&gs_totals.kind[GS_KIND_COUNT] ?
		       (int)((p - lo) / sizeof(struct gs_counters)) :
		       -1;
}

static inline long long counters_live_bytes(const struct gs_counters *c)
{
	int k = counters_totals_kind(c);
	long long freed;

	if (k >= 0)
		return atomic_load_explicit(&gs_totals.hot.kind_live[k], memory_order_relaxed);
	freed = atomic_load_explicit(&c->freed_bytes, memory_order_relaxed);
	return atomic_load_explicit(&c->alloc_bytes, memory_order_relaxed) - freed;
}
void counters_alloc(struct gs_counters *c, uint64_t size);
void counters_free(struct gs_counters *c, uint64_t size);
/* A consistent copy, even while other threads still allocate (at exit);
 * of a site's counters or of a kind's totals (&gs_totals.kind[k]). */
void counters_read(struct gs_counters *c, struct gs_count_snap *out);

/*
 * The totals every allocation and free adds to (per kind, per door, per
 * device) are striped: each thread adds to one of GS_STRIPES stripes, a
 * cache line or more of its own, and readers sum them.  Threads that
 * allocate at once would otherwise all write the same few lines, which
 * then move between cores at every event.  Each sum is exact once the
 * events it counts have returned.
 */
long long totals_door(enum gs_door door);
/* Per device ordinal + 1, as gs_device_index() gives. */
long long totals_device_live(unsigned index);
long long totals_device_allocs(unsigned index);
/* Allocations and frees so far: unchanged means nothing happened. */
unsigned long long totals_events(void);
/* An allocation (record.c) into the totals: the GPU bytes live after it,
 * for the peak, or -1 for memory not on a GPU (pinned host memory). */
long long totals_alloc(enum gs_kind kind, uint64_t size, int device, enum gs_door door);
void totals_free(enum gs_kind kind, uint64_t size, int device);
/* A graph allocation became live, was freed (record.c). */
void totals_graph_resident(uint64_t size);
void totals_graph_freed(uint64_t size);

#endif /* GPUSPY_COUNTERS_H */
