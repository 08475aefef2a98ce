/* SPDX-License-Identifier: MIT */
/*
 * What an out-of-memory event records for its verdict (oom_facts.c):
 * where the tracked memory was, the other processes on the device, and
 * the event as the verdict rule of src/common/oom_rule.h takes it.
 */
#ifndef GPUSPY_OOM_FACTS_H
#define GPUSPY_OOM_FACTS_H

struct gs_oom;

/* On the failing thread, holding no gpuspy lock: the device's tracked
 * memory, the limit, and the sites' memory by what holds it (pool
 * segments, libraries, the largest holder by name), into E.  REQUESTER:
 * the id of the site that asked. */
void oom_facts_sites(struct gs_oom *e);
/* Under gs_events_lock: NVML's other processes on E's device. */
void oom_facts_nvml(struct gs_oom *e);

#endif /* GPUSPY_OOM_FACTS_H */
