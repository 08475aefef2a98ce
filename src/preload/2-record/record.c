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
#include "log.h"
#include "peak.h"
#include "pystack.h"
#include "record.h"
#include "sites.h"
#include "start.h"
#include "state.h"
#include "table.h"
#include "unwind.h"
#include "oom.h"
#include "wake.h"

GS_TLS unsigned gs_hook_depth;
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
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;
static bool spare_keyed; /* set once, by the first thread that keeps a spare */
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

static void spare_key_make(void)
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
		pthread_once(&spare_once, spare_key_make);
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
		totals_graph_freed(a->size);
}

/* The rest of an allocation once it has its site: counters, then the table. */
static void record_insert(struct gs_alloc *a, enum gs_door door);

void record_alloc(enum gs_api api, enum gs_door door, enum gs_kind kind, enum gs_space space,
		  uint64_t addr, uint64_t size, int device, uint64_t stream)
{
	void *raw[GS_UNWIND_RAW], **pcs;
	struct gs_pyraw py[GS_MAX_PY_DEPTH];
	struct gs_alloc *a;
	unsigned depth, pydepth;

	if (GS_UNLIKELY(!atomic_load_explicit(&gs_state.active, memory_order_acquire)) &&
	    !gs_activate())
		return;

	depth = unwind_here(raw, gs_config.depth, &pcs);
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
	a->device = device == GS_DEVICE_CURRENT ? driver_allocated_device() : device;
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
	wake_alloc_seen();
}

struct gs_site *record_site(enum gs_api api, enum gs_door door, enum gs_kind kind)
{
	void *raw[GS_UNWIND_RAW], **pcs;
	struct gs_pyraw py[GS_MAX_PY_DEPTH];
	unsigned depth, pydepth;
	struct gs_site *site;

	if (GS_UNLIKELY(!atomic_load_explicit(&gs_state.active, memory_order_acquire)) &&
	    !gs_activate())
		return NULL;
	depth = unwind_here(raw, gs_config.depth, &pcs);
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
	totals_graph_resident(size);
	record_insert(a, door);
}

static void record_insert(struct gs_alloc *a, enum gs_door door)
{
	struct gs_alloc *old;
	long long live;
	int err;

	/* Counters first: once the entry is in the table another thread may
	 * free it, and its free must find the counters already raised. */
	counters_alloc(&a->site->c, a->size);
	live = totals_alloc((enum gs_kind)a->kind, a->size, a->device, door);
	if (live >= 0)
		peak_note(live);

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

bool record_oom(enum gs_api api, enum gs_door door, enum gs_kind kind, uint64_t size, int device,
		struct gs_oom *e)
{
	void *raw[GS_UNWIND_RAW], **pcs;
	struct gs_pyraw py[GS_MAX_PY_DEPTH];
	unsigned depth, pydepth;
	struct gs_site *site;

	if (GS_UNLIKELY(!atomic_load_explicit(&gs_state.active, memory_order_acquire)) &&
	    !gs_activate())
		return false;
	/* The requesting site, interned like any other; its counters stay
	 * untouched, since nothing was allocated. */
	depth = unwind_here(raw, gs_config.depth, &pcs);
	pydepth = pystack_capture(py, gs_config.py_depth);
	site = site_intern(api, kind, door, pcs, depth, py, pydepth);
	if (!site)
		return false;
	memset(e, 0, sizeof(*e));
	e->time = gs_now();
	e->api = (uint8_t)api;
	e->kind = (uint8_t)kind;
	e->requested = size;
	e->device = device == GS_DEVICE_CURRENT ? driver_current_device() : device;
	e->live = atomic_load(&gs_totals.hot.gpu_live_bytes);
	e->site = site->id;
	if (!driver_mem_info(&e->free_bytes, &e->total_bytes))
		e->free_bytes = e->total_bytes = -1;
	return true;
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
