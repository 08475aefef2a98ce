/* SPDX-License-Identifier: MIT */
/*
 * The counters: per call site, per kind, per door, per device, and the
 * names of the APIs, doors and call families they are counted by.  Only
 * numbers live here; what an event is and where it is kept is record.c's.
 */
#include "core.h"
#include "counters.h"

struct gs_totals gs_totals;

const char *const gs_api_names[GS_API_COUNT] = {
#define GS_API_NAME(name, ...) [GS_API_##name] = #name,
	GS_CUDA_ENTRIES(GS_API_NAME)
#undef GS_API_NAME
		[GS_API_cudaMallocAsync_captured] = "cudaMallocAsync_captured",
	[GS_API_cuMemAllocAsync_captured] = "cuMemAllocAsync_captured",
};
const char *const gs_door_names[GS_DOOR_COUNT] = { "runtime", "driver", "dlsym", "getproc" };
const char *const gs_call_names[GS_CALL_COUNT] = {
	[GS_CALL_RUNTIME] = "runtime",
	[GS_CALL_DRIVER] = "driver",
	[GS_CALL_DLSYM] = "dlsym",
	[GS_CALL_GETPROC] = "getproc",
	[GS_CALL_LOOKUP_V1] = "getproc_v1_lookups",
	[GS_CALL_LOOKUP_V2] = "getproc_v2_lookups",
	[GS_CALL_PER_THREAD] = "per_thread",
	[GS_CALL_VMM] = "vmm",
	[GS_CALL_GRAPH] = "graph",
};

static bool on_gpu(enum gs_kind k)
{
	return k != GS_KIND_PINNED;
}

void counters_alloc(struct gs_counters *c, uint64_t size)
{
	long long sz = (long long)size;
	long long total = atomic_fetch_add_explicit(&c->alloc_bytes, sz, memory_order_relaxed) + sz;

	atomic_fetch_add_explicit(&c->allocs, 1, memory_order_relaxed);
	/* Frees that land between the two loads only lower this estimate:
	 * a peak is never overstated. */
	gs_max(&c->peak_bytes, total - atomic_load_explicit(&c->freed_bytes, memory_order_relaxed));
}

void counters_free(struct gs_counters *c, uint64_t size)
{
	atomic_fetch_add_explicit(&c->freed_bytes, (long long)size, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->frees, 1, memory_order_relaxed);
}

/* Threads beyond GS_STRIPES share stripes: the adds stay atomic. */
#define GS_STRIPES 32

struct stripe {
	atomic_llong alloc_bytes[GS_KIND_COUNT], allocs[GS_KIND_COUNT];
	atomic_llong freed_bytes[GS_KIND_COUNT], frees[GS_KIND_COUNT];
	atomic_llong doors[GS_DOOR_COUNT];
	atomic_llong calls[GS_CALL_COUNT];
	atomic_llong device_live[GS_MAX_DEVICES + 1], device_allocs[GS_MAX_DEVICES + 1];
} __attribute__((aligned(64)));

static struct stripe stripes[GS_STRIPES];
static atomic_uint next_stripe;
static GS_TLS struct stripe *my_stripe;

static struct stripe *stripe(void)
{
	if (GS_UNLIKELY(!my_stripe))
		my_stripe =
			&stripes[atomic_fetch_add_explicit(&next_stripe, 1, memory_order_relaxed) %
				 GS_STRIPES];
	return my_stripe;
}

/* The sum of one field over the stripes. */
#define STRIPES_SUM(field)                                                                         \
	({                                                                                         \
		long long sum_ = 0;                                                                \
		for (unsigned i_ = 0; i_ < GS_STRIPES; i_++)                                       \
			sum_ += atomic_load(&stripes[i_].field);                                   \
		sum_;                                                                              \
	})

static void totals_read(int k, struct gs_count_snap *o)
{
	/* Every stripe's frees before any stripe's allocations: a free
	 * counted in one stripe was allocated, and counted, before it. */
	o->frees = STRIPES_SUM(frees[k]);
	o->freed_bytes = STRIPES_SUM(freed_bytes[k]);
	o->allocs = STRIPES_SUM(allocs[k]);
	o->alloc_bytes = STRIPES_SUM(alloc_bytes[k]);
	o->peak_bytes = atomic_load(&gs_totals.kind[k].peak_bytes);
	o->live_bytes = o->alloc_bytes - o->freed_bytes;
	o->live_allocs = o->allocs - o->frees;
	if (o->peak_bytes < o->live_bytes)
		o->peak_bytes = o->live_bytes; /* a peak update still in flight */
}

void counters_read(struct gs_counters *c, struct gs_count_snap *o)
{
	int k = counters_totals_kind(c);

	if (k >= 0) {
		totals_read(k, o);
		return;
	}
	/* Freed totals before allocated ones: both only grow. */
	o->frees = atomic_load(&c->frees);
	o->freed_bytes = atomic_load(&c->freed_bytes);
	o->allocs = atomic_load(&c->allocs);
	o->alloc_bytes = atomic_load(&c->alloc_bytes);
	o->peak_bytes = atomic_load(&c->peak_bytes);
	o->live_bytes = o->alloc_bytes - o->freed_bytes;
	o->live_allocs = o->allocs - o->frees;
	if (o->peak_bytes < o->live_bytes)
		o->peak_bytes = o->live_bytes; /* a peak update still in flight */
}

void calls_note(enum gs_call c)
{
	atomic_fetch_add_explicit(&stripe()->calls[c], 1, memory_order_relaxed);
}

long long calls_total(enum gs_call c)
{
	return STRIPES_SUM(calls[c]);
}

long long totals_door(enum gs_door door)
{
	return STRIPES_SUM(doors[door]);
}

long long totals_device_live(unsigned index)
{
	return index <= GS_MAX_DEVICES ? STRIPES_SUM(device_live[index]) : 0;
}

long long totals_device_allocs(unsigned index)
{
	return index <= GS_MAX_DEVICES ? STRIPES_SUM(device_allocs[index]) : 0;
}

unsigned long long totals_events(void)
{
	unsigned long long n = atomic_load(&gs_totals.hot.seq);

	for (int k = 0; k < GS_KIND_COUNT; k++)
		n += (unsigned long long)STRIPES_SUM(frees[k]);
	return n;
}

#define ADD(field, v) atomic_fetch_add_explicit(&(field), (v), memory_order_relaxed)

long long totals_alloc(enum gs_kind kind, uint64_t size, int device, enum gs_door door)
{
	struct stripe *st = stripe();
	long long sz = (long long)size, live;

	ADD(st->alloc_bytes[kind], sz);
	ADD(st->allocs[kind], 1);
	ADD(st->doors[door], 1);
	live = ADD(gs_totals.hot.kind_live[kind], sz) + sz;
	gs_max(&gs_totals.kind[kind].peak_bytes, live);
	if (!on_gpu(kind))
		return -1;
	ADD(st->device_live[gs_device_index(device)], sz);
	ADD(st->device_allocs[gs_device_index(device)], 1);
	live = ADD(gs_totals.hot.gpu_live_bytes, sz) + sz;
	gs_max(&gs_totals.gpu_peak_bytes, live);
	return live;
}

void totals_free(enum gs_kind kind, uint64_t size, int device)
{
	struct stripe *st = stripe();
	long long sz = (long long)size;

	ADD(st->freed_bytes[kind], sz);
	ADD(st->frees[kind], 1);
	ADD(gs_totals.hot.kind_live[kind], -sz);
	if (!on_gpu(kind))
		return;
	ADD(st->device_live[gs_device_index(device)], -sz);
	ADD(st->device_allocs[gs_device_index(device)], -1);
	ADD(gs_totals.hot.gpu_live_bytes, -sz);
}

void totals_graph_resident(uint64_t size)
{
	long long live = ADD(gs_totals.graph_resident_bytes, (long long)size) + (long long)size;

	ADD(gs_totals.graph_resident_allocs, 1);
	gs_max(&gs_totals.graph_resident_peak, live);
}

void totals_graph_freed(uint64_t size)
{
	ADD(gs_totals.graph_resident_bytes, -(long long)size);
	ADD(gs_totals.graph_resident_allocs, -1);
}
