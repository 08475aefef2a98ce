/* SPDX-License-Identifier: MIT */
/* torch_probe.c: PyTorch's live blocks by Python line */
#ifndef GPUSPY_TORCH_PROBE_H
#define GPUSPY_TORCH_PROBE_H

#include <stdatomic.h>
#include <stdbool.h>

#include "writer.h"

/* From the snapshot thread, each interval, holding none of gpuspy's locks. */
void torch_poll(void);
/* CUDA starts (the driver is bound) on the calling thread, before any
 * allocation: arm the view if PyTorch is there (torch_probe.c). */
void torch_cuda_starting(void);
/* fork(): a child has no view of its own (CUDA does not survive a fork);
 * the parent's namespace, copied into it, checks its pid as well. */
void torch_forget(void);
/* How many pending calls ran in the program's main thread, any thread. */
unsigned long long torch_calls(void);
/* Whether the PyTorch view runs (started, not turned off): its own line
 * names what grows in PyTorch's pool, any thread. */
bool torch_view_on(void);
/* Whether the view waits to start and wants asking again soon: *SOON
 * (CLOCK_MONOTONIC) is when. */
struct timespec;
bool torch_waiting(struct timespec *soon);

/* Set while the view or the frameworks' counters wait to start and want
 * the snapshot thread at the next allocation rather than at the next
 * interval (torch_probe.c says when): the allocation hooks' one look. */
extern atomic_bool gs_torch_wake;
static inline void torch_alloc_seen(void)
{
	if (__builtin_expect(atomic_load_explicit(&gs_torch_wake, memory_order_relaxed), 0) &&
	    atomic_exchange(&gs_torch_wake, false))
		writer_wake_torch();
}

#endif /* GPUSPY_TORCH_PROBE_H */
