/* SPDX-License-Identifier: MIT */
/* nvml.c: what NVML says each GPU and process holds */
#ifndef GPUSPY_NVML_H
#define GPUSPY_NVML_H

#include <stdio.h>

void nvml_write(FILE *f);
/* What this process uses on each GPU NVML lists, by NVML index, into
 * USED[0..MAX) (-1: not listed); how many GPUs, 0 without NVML.  For the
 * snapshot thread only. */
unsigned nvml_process_used(long long *used, unsigned max);

/* Each GPU's used and total memory by NVML index into USED and TOTAL
 * (-1: NVML did not answer); how many GPUs, 0 without NVML.  For the
 * snapshot thread only. */
unsigned nvml_device_memory(long long *used, long long *total, unsigned max);

/* The other processes on the GPU that CUDA device ORDINAL is, at an
 * out-of-memory event: the MAX holding most into OUT (largest first, with
 * their command names), how many in *N; returns the bytes all of them
 * hold, or -1 when NVML cannot say (no NVML, the GPU not found, or this
 * process not in its list: in a container NVML's pids are not ours).
 * gs_events_lock held. */
struct gs_oom_other;
long long nvml_others(int ordinal, struct gs_oom_other *out, unsigned max, unsigned *n);

#endif /* GPUSPY_NVML_H */
