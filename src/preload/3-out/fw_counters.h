/* SPDX-License-Identifier: MIT */
/*
 * The frameworks' own counters (PyTorch, PaddlePaddle, JAX, CuPy): their
 * latest figures, as fw_view.py read them on the program's main thread.
 * The history's samples and every process document carry them
 * (docs/format.md, "fw" and "frameworks").
 */
#ifndef GPUSPY_FW_COUNTERS_H
#define GPUSPY_FW_COUNTERS_H

#include <stdbool.h>

#include "names.h"
#include "trend.h"

struct fw_latest {
	bool any;
	double time; /* of the latest fw_counters_put(), seconds since the epoch */
	bool has[GS_FW_COUNT][GS_FW_PLACES][GS_FWC_COUNT];
	long long v[GS_FW_COUNT][GS_FW_PLACES][GS_FWC_COUNT];
};

/*
 * Framework FW's figures now, replacing all it said before: N triples
 * (place: a CUDA ordinal 0 to GS_FW_DEVICES - 1 or GS_FW_HOST; counter,
 * enum gs_fw_counter; value, 0 or more).  N of 0 forgets FW (its adapter
 * went off).  From fw_view.py through ctypes: takes gs_events_lock, never
 * allocates; 0, or -EINVAL for a value out of range (nothing is kept).
 */
int fw_counters_put(unsigned fw, const long long *triples, unsigned n);
/*
 * The growth rule on each framework's own allocated counter, per place,
 * its samples the puts (libgpuspy(7), "FRAMEWORK COUNTERS"): those found
 * growing once, with their verdict, and the call site of the framework's
 * pool segments the snapshot thread linked to it (writer.c), -1 before.
 */
struct fw_growth {
	bool has[GS_FW_COUNT][GS_FW_PLACES];
	struct trend_verdict v[GS_FW_COUNT][GS_FW_PLACES];
	long long allocated[GS_FW_COUNT][GS_FW_PLACES]; /* the latest sample */
	long long site[GS_FW_COUNT];
};
/* Into OUT; the caller holds gs_events_lock. */
void fw_counters_growth(struct fw_growth *out);
/* The pool site of FW's verdict, once: the caller holds gs_events_lock. */
void fw_counters_link(unsigned fw, unsigned site);

/* How many puts changed a figure so far: any thread, no lock. */
unsigned long long fw_counters_changes(void);
/* The latest figures into OUT; the caller holds gs_events_lock. */
void fw_counters_copy(struct fw_latest *out);
/* Everything forgotten (a forked child; tests). */
void fw_counters_reset(void);

#endif /* GPUSPY_FW_COUNTERS_H */
