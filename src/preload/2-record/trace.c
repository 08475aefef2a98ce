/* SPDX-License-Identifier: MIT */
/*
 * The trace (GPUSPY_TRACE=N): the last N allocations, frees and
 * out-of-memory events, in a ring that every thread writes without a
 * lock.  An event takes the next number (one atomic add), which names
 * its slot, number % N, and the order of the trace; each slot is a
 * seqlock of its own: its number is zeroed, the fields stored, then the
 * number + 1 published with release, so that a reader that finds the
 * same published number before and after copying the fields has a whole
 * event.  A slot is a cache line: two threads writing neighbouring
 * events do not share one.  The fields are relaxed atomics, so that a
 * reader racing a writer (a thread still allocating at exit) reads a
 * torn event it then drops, never undefined behaviour.  A slot two
 * writers share (the first preempted for a whole ring's events) mostly
 * ends with the late one's number, not the one the reader looks for,
 * and is dropped too; should the late one's fields land between the
 * other's, the event is torn all the same, and the export's replay
 * leaves out what does not fit (a lock per slot would cost every event
 * for a case this rare).
 */
#include <stdlib.h>
#include <time.h>

#include "core.h"
#include "log.h"
#include "sites.h"
#include "table.h"
#include "trace.h"

struct slot {
	atomic_ullong n; /* the event's number + 1; 0 while it is written */
	atomic_ullong time_ns, addr, size, stream;
	atomic_uint site;
	atomic_int device;
	atomic_uchar action, kind, space;
} __attribute__((aligned(64)));

struct trace_ring {
	struct slot *slots;
	unsigned cap;
	atomic_ullong next; /* the next event's number */
};

_Static_assert(sizeof(struct slot) == 64, "a slot is a cache line");

static struct trace_ring ring;
struct trace_ring *gs_trace;

void trace_init(unsigned n)
{
	if (n == 0 || gs_trace)
		return;
	ring.slots = aligned_alloc(64, (size_t)n * sizeof(struct slot));
	if (!ring.slots) {
		gs_warn("GPUSPY_TRACE=%u: no memory for %u events; no trace", n, n);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		atomic_init(&ring.slots[i].n, 0);
	ring.cap = n;
	atomic_init(&ring.next, 0);
	gs_trace = &ring;
}

unsigned trace_capacity(void)
{
	return gs_trace ? ring.cap : 0;
}

#define PUT(field, v) atomic_store_explicit(&s->field, (v), memory_order_relaxed)

/* Claims the next slot: its number in *N, its time stored. */
static struct slot *slot_begin(unsigned long long *np)
{
	unsigned long long n = atomic_fetch_add_explicit(&ring.next, 1, memory_order_relaxed);
	struct slot *s = &ring.slots[n % ring.cap];
	struct timespec ts;

	atomic_store_explicit(&s->n, 0, memory_order_relaxed);
	/* the zero before any field: a reader that sees a field of this
	 * event sees the slot claimed */
	atomic_thread_fence(memory_order_release);
	clock_gettime(CLOCK_REALTIME, &ts);
	PUT(time_ns,
	    (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
	*np = n;
	return s;
}

/* The fields before the number: published whole. */
static void slot_end(struct slot *s, unsigned long long n)
{
	atomic_store_explicit(&s->n, n + 1, memory_order_release);
}

void trace_put_alloc(const struct gs_alloc *a, enum trace_action action)
{
	unsigned long long n;
	struct slot *s = slot_begin(&n);

	PUT(addr, a->addr);
	PUT(size, a->size);
	PUT(stream, a->stream);
	PUT(site, a->site ? a->site->id : 0);
	PUT(device, a->device);
	PUT(action, (unsigned char)action);
	PUT(kind, a->kind);
	PUT(space, (unsigned char)a->space);
	slot_end(s, n);
}

void trace_put_oom(uint64_t size, int device, long long free_bytes, uint32_t site)
{
	unsigned long long n;
	struct slot *s;

	if (!gs_trace)
		return;
	s = slot_begin(&n);
	PUT(addr, (unsigned long long)free_bytes);
	PUT(size, size);
	PUT(stream, 0);
	PUT(site, site);
	PUT(device, device);
	PUT(action, TRACE_OOM);
	PUT(kind, GS_KIND_DEVICE);
	PUT(space, GS_SPACE_DEVPTR);
	slot_end(s, n);
}

#define GET(field) atomic_load_explicit(&s->field, memory_order_relaxed)

size_t trace_read(struct trace_event *out, uint64_t *recorded)
{
	unsigned long long next, first;
	size_t k = 0;

	*recorded = 0;
	if (!gs_trace)
		return 0;
	next = atomic_load_explicit(&ring.next, memory_order_acquire);
	first = next > ring.cap ? next - ring.cap : 0;
	*recorded = next;
	for (unsigned long long n = first; n < next; n++) {
		const struct slot *s = &ring.slots[n % ring.cap];
		struct trace_event e;
		unsigned long long before = atomic_load_explicit(&s->n, memory_order_acquire);

		e.number = n;
		e.time_ns = GET(time_ns);
		e.addr = GET(addr);
		e.size = GET(size);
		e.stream = GET(stream);
		e.site = GET(site);
		e.device = GET(device);
		e.action = GET(action);
		e.kind = GET(kind);
		e.space = GET(space);
		/* the fields before the second look at n */
		atomic_thread_fence(memory_order_acquire);
		if (before == n + 1 && atomic_load_explicit(&s->n, memory_order_relaxed) == before)
			out[k++] = e;
	}
	return k;
}
