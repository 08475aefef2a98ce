/* SPDX-License-Identifier: MIT */
/*
 * trace.c: GPUSPY_TRACE=N, the last N allocations, frees and
 * out-of-memory events of the process, in the order they happened, kept
 * in a ring and written into the exit report ("trace", docs/format.md)
 * for gpuspy export --memory-viz.  Off by default: off, an event costs
 * the hook one load and one branch.
 */
#ifndef GPUSPY_TRACE_H
#define GPUSPY_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"

enum trace_action { TRACE_ALLOC, TRACE_FREE, TRACE_OOM };

/* One event, as trace_read copies it out. */
struct trace_event {
	uint64_t number;  /* 0, 1, ... over the process's events */
	uint64_t time_ns; /* CLOCK_REALTIME */
	/* TRACE_OOM: addr is the driver's free bytes on the device (-1:
	 * unknown), size the request */
	uint64_t addr, size, stream;
	uint32_t site;
	int32_t device;
	uint8_t action, kind, space;
};

struct gs_alloc;
struct trace_ring;
/* NULL while off; set once, at activation, before the first record. */
extern struct trace_ring *gs_trace;

/* At activation, from GPUSPY_TRACE: the ring of N events (0: off).  On
 * out-of-memory, off with one warning. */
void trace_init(unsigned n);

/* The events themselves: A's allocation once it is in the table; its
 * free as it leaves the table, before the real free, so that an address
 * the free hands back to CUDA is never seen allocated again ahead of it;
 * a request that failed for want of memory. */
void trace_put_alloc(const struct gs_alloc *a, enum trace_action action);
void trace_put_oom(uint64_t size, int device, long long free_bytes, uint32_t site);

static inline void trace_alloc(const struct gs_alloc *a)
{
	if (GS_UNLIKELY(gs_trace != NULL))
		trace_put_alloc(a, TRACE_ALLOC);
}

static inline void trace_free(const struct gs_alloc *a)
{
	if (GS_UNLIKELY(gs_trace != NULL))
		trace_put_alloc(a, TRACE_FREE);
}

/* What the ring holds, oldest first, into OUT (room for trace_capacity()
 * events): how many were copied.  *RECORDED: the events made since the
 * start; those not copied were overwritten, or were being written as it
 * read them (threads still allocating at exit). */
size_t trace_read(struct trace_event *out, uint64_t *recorded);
unsigned trace_capacity(void);

#endif /* GPUSPY_TRACE_H */
