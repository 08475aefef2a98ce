/* SPDX-License-Identifier: MIT */
/* torch_probe.c: PyTorch's live blocks by Python line */
#ifndef GPUSPY_TORCH_PROBE_H
#define GPUSPY_TORCH_PROBE_H

#include <stdatomic.h>
#include <stdbool.h>

#include "wake.h"

/* From the snapshot thread, each interval, holding none of gpuspy's locks. */
void torch_poll(void);
/* CUDA starts (the driver is bound) on the calling thread, before any
 * allocation: arm the view if PyTorch is there (torch_probe.c). */
void torch_cuda_starting(void);
/* fork(): a child has no view of its own (CUDA does not survive a fork);
 * the parent's namespace, copied into it, checks its pid as well. */
void torch_forget(void);
/* Whether the PyTorch view runs (started, not turned off): its own line
 * names what grows in PyTorch's pool, any thread. */
bool torch_view_on(void);
/* Whether the view waits to start and wants asking again soon: *SOON
 * (CLOCK_MONOTONIC) is when. */
struct timespec;
bool torch_waiting(struct timespec *soon);

#endif /* GPUSPY_TORCH_PROBE_H */
