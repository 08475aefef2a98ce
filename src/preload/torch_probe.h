/* SPDX-License-Identifier: MIT */
/* torch_probe.c: PyTorch's live blocks by Python line */
#ifndef GPUSPY_TORCH_PROBE_H
#define GPUSPY_TORCH_PROBE_H

#include <stdbool.h>

/* From the snapshot thread, each interval, holding none of gpuspy's locks. */
void torch_poll(void);
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

#endif /* GPUSPY_TORCH_PROBE_H */
