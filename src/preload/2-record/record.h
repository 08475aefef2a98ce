/* SPDX-License-Identifier: MIT */
/* record.c: hook bracket and the single place events are recorded */
#ifndef GPUSPY_RECORD_H
#define GPUSPY_RECORD_H

#include "core.h"
#include "state.h"
#include "table.h"
#include "trace.h"

extern GS_TLS unsigned gs_hook_depth;

/*
 * A runtime call nests a driver call (cudaMalloc -> cuMemAlloc_v2): only
 * the outermost hook records.  Returns true when this hook must record.
 */
static inline bool hook_enter(void)
{
	return gs_hook_depth++ == 0 &&
	       atomic_load_explicit(&gs_state.tracking, memory_order_relaxed);
}

static inline void hook_leave(void)
{
	gs_hook_depth--;
}

struct gs_alloc;
/* device: CUDA ordinal, or -1 unknown, or GS_DEVICE_CURRENT to ask the driver */
#define GS_DEVICE_CURRENT (-2)
/* stream: a stream-ordered allocation's, else 0 */
void record_alloc(enum gs_api api, enum gs_door door, enum gs_kind kind, enum gs_space space,
		  uint64_t addr, uint64_t size, int device, uint64_t stream);
/* Take the allocation out of the table before the real free runs, so the
 * address cannot be handed out again and recorded while we still hold it,
 * and trace its free now, for the same reason (trace.h).  Inline: the
 * free hooks call the table directly. */
static inline struct gs_alloc *record_free_begin(enum gs_space space, uint64_t addr)
{
	struct gs_alloc *a = table_remove(space, addr);

	if (a)
		trace_free(a);
	return a;
}
/* After the real free: account it (ok) or put it back (the free failed). */
void record_free_end(struct gs_alloc *a, uint64_t addr, bool ok);
/*
 * Graph memory (graph.c): the call site of a node, interned when the node
 * is made (NULL when gpuspy cannot record); and, at a launch, the node's
 * memory becoming live at that site, in the device kind.
 */
struct gs_site *record_site(enum gs_api api, enum gs_door door, enum gs_kind kind);
void record_resident(struct gs_site *site, enum gs_door door, uint64_t addr, uint64_t size,
		     int device);
/* A family of calls (enum gs_call) seen once per call of the program. */
static inline void calls_family(enum gs_call c)
{
	if (gs_hook_depth == 0)
		calls_note(c);
}
/* An allocation failed for lack of memory: the event E, its site interned
 * (record.c).  False when there is nothing to record; else the hook has
 * its post-mortem written (events_postmortem), the recorder being below
 * the files. */
struct gs_oom;
bool record_oom(enum gs_api api, enum gs_door door, enum gs_kind kind, uint64_t size, int device,
		struct gs_oom *e);

#endif /* GPUSPY_RECORD_H */
