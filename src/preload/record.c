/* SPDX-License-Identifier: MIT */
/*
 * The one place where an allocation or a free becomes an event: call
 * site, live table, per-kind and per-site counters.  Called by the hooks
 * only after the real call succeeded (allocations) or around it (frees).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "conf.h"
#include "core.h"
#include "counters.h"
#include "driver.h"
#include "events.h"
#include "graph.h"
#include "limit.h"
#include "log.h"
#include "oom_facts.h"
#include "peak.h"
#include "pystack.h"
#include "record.h"
#include "sites.h"
#include "state.h"
#include "symbols.h"
#include "table.h"
#include "torch_probe.h"
#include "unwind.h"
#include "view.h"

GS_TLS unsigned gs_hook_depth;
__thread int gs_hash_oom __attribute__((tls_model("initial-exec")));
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

static void totals_alloc(enum gs_kind kind, uint64_t size, int device, enum gs_door door)
{
	struct stripe *st = stripe();
	long long sz = (long long)size, live;

	ADD(st->alloc_bytes[kind], sz);
	ADD(st->allocs[kind], 1);
	ADD(st->doors[door], 1);
	live = ADD(gs_totals.hot.kind_live[kind], sz) + sz;
	gs_max(&gs_totals.kind[kind].peak_bytes, live);
	if (!on_gpu(kind))
		return;
	ADD(st->device_live[gs_device_index(device)], sz);
	ADD(st->device_allocs[gs_device_index(device)], 1);
	live = ADD(gs_totals.hot.gpu_live_bytes, sz) + sz;
	gs_max(&gs_totals.gpu_peak_bytes, live);
	peak_note(live);
}

static void totals_free(enum gs_kind kind, uint64_t size, int device)
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

/*
 * The records of freed allocations a thread keeps for its next ones: a
 * libc malloc and free cost about 130 instructions a pair, a pop and a
 * push a few.  At most SPARE_MAX a thread, linked through their table
 * link; a thread's are given back to libc when it exits (spare_key's
 * destructor), so that threads that come and go leave nothing behind.
 * A record freed on another thread than it was made on goes to that
 * thread's spares: they are all malloc()ed alike.
 */
#define SPARE_MAX 64
static pthread_key_t spare_key;
static bool spare_keyed; /* set by record_init(), before any thread records */
static GS_TLS struct gs_alloc *spare;
static GS_TLS unsigned n_spare;
static GS_TLS bool spare_on; /* this thread's destructor is registered */

static void spare_drop(void *unused)
{
	(void)unused;
	while (spare) {
		struct gs_alloc *a = spare;

		spare = a->next;
		free(a);
	}
	n_spare = 0;
	spare_on = false;
}

void record_init(void)
{
	spare_keyed = pthread_key_create(&spare_key, spare_drop) == 0;
}

static struct gs_alloc *record_get(void)
{
	struct gs_alloc *a = spare;

	if (GS_LIKELY(a)) {
		spare = a->next;
		n_spare--;
		return a;
	}
	return malloc(sizeof(*a));
}

static void record_put(struct gs_alloc *a)
{
	if (GS_UNLIKELY(!spare_on)) {
		/* the destructor runs only for a thread whose value is set */
		if (!spare_keyed || pthread_setspecific(spare_key, &spare_key) != 0) {
			free(a);
			return;
		}
		spare_on = true;
	}
	if (GS_UNLIKELY(n_spare >= SPARE_MAX)) {
		free(a);
		return;
	}
	a->next = spare;
	spare = a;
	n_spare++;
}

static void account_free(struct gs_alloc *a)
{
	if (a->site)
		counters_free(&a->site->c, a->size);
	totals_free((enum gs_kind)a->kind, a->size, a->device);
	if (a->graph)
		graph_freed(a->size);
}

/* The rest of an allocation once it has its site: counters, then the table. */
static void record_insert(struct gs_alloc *a, enum gs_door door);

void record_alloc(enum gs_api api, enum gs_door door, enum gs_kind kind, enum gs_space space,
		  uint64_t addr, uint64_t size, int device, uint64_t stream)
{
	uintptr_t pcs[GS_MAX_DEPTH];
	struct gs_pyraw py[GS_MAX_PY_DEPTH];
	struct gs_alloc *a;
	unsigned depth, pydepth;

	if (GS_UNLIKELY(!atomic_load_explicit(&gs_state.active, memory_order_acquire)) &&
	    !gs_activate())
		return;

	depth = unwind_capture(pcs, gs_config.depth);
	pydepth = pystack_capture(py, gs_config.py_depth);
	a = record_get();
	if (!a) {
		gs_fail("out of memory while recording an allocation");
		return;
	}
	a->addr = addr;
	a->space = space;
	a->size = size;
	a->kind = (uint8_t)kind;
	a->graph = false;
	a->stream = stream;
	a->device = device == GS_DEVICE_CURRENT ? driver_current_device() : device;
	/* its number: a new site's first_seq is the one taken just before */
	atomic_fetch_add_explicit(&gs_totals.hot.seq, 1, memory_order_relaxed);
	a->site = site_intern(api, kind, door, pcs, depth, py, pydepth);
	if (!a->site) {
		record_put(a);
		gs_fail("out of memory while recording a call site");
		return;
	}
	record_insert(a, door);
	/* in the table first: the view, started now, finds its segment */
	torch_alloc_seen();
}

struct gs_site *record_site(enum gs_api api, enum gs_door door, enum gs_kind kind)
{
	uintptr_t pcs[GS_MAX_DEPTH];
	struct gs_pyraw py[GS_MAX_PY_DEPTH];
	unsigned depth, pydepth;
	struct gs_site *site;

	if (GS_UNLIKELY(!atomic_load_explicit(&gs_state.active, memory_order_acquire)) &&
	    !gs_activate())
		return NULL;
	depth = unwind_capture(pcs, gs_config.depth);
	pydepth = pystack_capture(py, gs_config.py_depth);
	/* A number of its own, as an allocation's: a new site's first_seq is
	 * the number taken just before it is interned. */
	atomic_fetch_add_explicit(&gs_totals.hot.seq, 1, memory_order_relaxed);
	site = site_intern(api, kind, door, pcs, depth, py, pydepth);
	if (!site)
		gs_fail("out of memory while recording a call site");
	return site;
}

void record_resident(struct gs_site *site, enum gs_door door, uint64_t addr, uint64_t size,
		     int device)
{
	struct gs_alloc *a = record_get();

	if (!a) {
		gs_fail("out of memory while recording an allocation");
		return;
	}
	a->addr = addr;
	a->space = GS_SPACE_DEVPTR;
	a->size = size;
	a->kind = GS_KIND_DEVICE;
	a->graph = true;
	a->stream = 0;
	a->device = device;
	/* its number: a new site's first_seq is the one taken just before */
	atomic_fetch_add_explicit(&gs_totals.hot.seq, 1, memory_order_relaxed);
	a->site = site;
	graph_resident(size);
	record_insert(a, door);
}

static void record_insert(struct gs_alloc *a, enum gs_door door)
{
	struct gs_alloc *old;
	int err;

	/* Counters first: once the entry is in the table another thread may
	 * free it, and its free must find the counters already raised. */
	counters_alloc(&a->site->c, a->size);
	totals_alloc((enum gs_kind)a->kind, a->size, a->device, door);

	old = table_insert(a, &err);
	if (old) {
		/* The same address came back while we still held it: its free
		 * went through a door gpuspy does not see. */
		atomic_fetch_add(&gs_totals.replaced, 1);
		trace_free(old);
		account_free(old);
		record_put(old);
	}
	/* in the table first: a free that follows finds it there, and its
	 * trace comes after this one */
	trace_alloc(a);
	if (err) {
		account_free(a);
		record_put(a);
		gs_fail("out of memory in the allocation table");
	}
}

void record_oom(enum gs_api api, enum gs_door door, enum gs_kind kind, uint64_t size, int device)
{
	uintptr_t pcs[GS_MAX_DEPTH];
	struct gs_pyraw py[GS_MAX_PY_DEPTH];
	unsigned depth, pydepth;
	struct gs_site *site;
	struct gs_oom e = { 0 };

	if (GS_UNLIKELY(!atomic_load_explicit(&gs_state.active, memory_order_acquire)) &&
	    !gs_activate())
		return;
	/* The requesting site, interned like any other; its counters stay
	 * untouched, since nothing was allocated. */
	depth = unwind_capture(pcs, gs_config.depth);
	pydepth = pystack_capture(py, gs_config.py_depth);
	site = site_intern(api, kind, door, pcs, depth, py, pydepth);
	if (!site)
		return;
	e.time = gs_now();
	e.api = (uint8_t)api;
	e.kind = (uint8_t)kind;
	e.requested = size;
	e.device = device == GS_DEVICE_CURRENT ? driver_current_device() : device;
	e.live = atomic_load(&gs_totals.hot.gpu_live_bytes);
	e.site = site->id;
	if (!driver_mem_info(&e.free_bytes, &e.total_bytes))
		e.free_bytes = e.total_bytes = -1;
	/* the post-mortem is written now, on this thread: the sites the
	 * snapshot thread has not named yet get their dynamic symbols (only
	 * for a failure that gets a file) */
	if (events_oom_count() < GS_OOM_FILES)
		symbols_catch_up();
	e.capped = limit_on() && limit_refused_here();
	oom_facts_sites(&e);
	trace_put_oom(size, e.device, e.free_bytes, e.site);
	events_oom(&e);
}

void record_free_end(struct gs_alloc *a, uint64_t addr, bool ok)
{
	int err;

	if (!a) {
		/* Counted whatever the driver said: a garbage pointer fails, one
		 * allocated before gpuspy was loaded succeeds; both are news. */
		(void)ok;
		if (addr && atomic_load_explicit(&gs_state.tracking, memory_order_relaxed))
			atomic_fetch_add_explicit(&gs_totals.untracked_frees, 1,
						  memory_order_relaxed);
		return;
	}
	if (ok) {
		account_free(a);
		record_put(a);
		return;
	}
	/* The free failed, so the memory is still live: put it back.  No one
	 * else can have been given this address in between.  Its free was
	 * traced as it left the table: the trace has it allocated again. */
	table_insert(a, &err);
	trace_alloc(a);
	if (err) {
		account_free(a);
		record_put(a);
		gs_fail("out of memory in the allocation table");
	}
}
