/* SPDX-License-Identifier: MIT */
/*
 * What a hook does around the real call, one pair of plain functions per
 * shape of entry point (the shape column of cuda_entries.h), the same
 * for the runtime's and the driver's: the codes they compare are those
 * both APIs share.  Every wrapper, generated from its row, is
 *
 *	if (SHAPE_before(&h, entry, door, real != NULL, ...))
 *		h.r = real(a0, a1, ...);
 *	return SHAPE_after(&h, ...);
 *
 * before() counts the call's family, enters the hook (record.h: only the
 * outermost hook records) and does what must come first (a free leaves
 * the table before the real free hands the address back to CUDA); it
 * returns false when the real call must not be made: not found (the hook
 * returns GS_UNBOUND) or refused by GPUSPY_LIMIT (GS_OOM, the code of a
 * full device, stands in for it).  after() records, leaves the hook and
 * returns the real call's result unchanged.
 *
 * GS_BEFORE_<shape> and GS_AFTER_<shape> at the end say which of the
 * wrapper's arguments (a0, a1, ... in the row's order) each shape reads.
 */
#ifndef GPUSPY_SHAPES_H
#define GPUSPY_SHAPES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core.h"
#include "counters.h"
#include "cuda_abi.h"
#include "driver.h"
#include "events.h"
#include "graph.h"
#include "limit.h"
#include "oom.h"
#include "record.h"
#include "state.h"
#include "vmm.h"

/* The codes a hook reads or makes, the same in both APIs. */
#define GS_OK	   0 /* CUDA_SUCCESS, cudaSuccess */
#define GS_OOM	   2 /* CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation */
#define GS_UNBOUND 3 /* CUDA_ERROR_NOT_INITIALIZED, cudaErrorInitializationError */
_Static_assert((int)CUDA_SUCCESS == GS_OK && (int)cudaSuccess == GS_OK, "success");
_Static_assert((int)CUDA_ERROR_OUT_OF_MEMORY == GS_OOM && (int)cudaErrorMemoryAllocation == GS_OOM,
	       "out of memory");
_Static_assert((int)CUDA_ERROR_NOT_INITIALIZED == GS_UNBOUND &&
		       (int)cudaErrorInitializationError == GS_UNBOUND,
	       "not initialized");

/* A row's family: the counters of enum gs_call it also counts in. */
#define GS_FAMILY_NONE		   0u
#define GS_FAMILY_PER_THREAD	   (1u << GS_CALL_PER_THREAD)
#define GS_FAMILY_VMM		   (1u << GS_CALL_VMM)
#define GS_FAMILY_GRAPH		   (1u << GS_CALL_GRAPH)
#define GS_FAMILY_GRAPH_PER_THREAD (GS_FAMILY_GRAPH | GS_FAMILY_PER_THREAD)
#define GS_FAMILY_LOOKUP_V1	   (1u << GS_CALL_LOOKUP_V1)
#define GS_FAMILY_LOOKUP_V2	   (1u << GS_CALL_LOOKUP_V2)

/* A row's kind; NONE for what neither allocates nor frees. */
#define GS_ENTRY_KIND_DEVICE  GS_KIND_DEVICE
#define GS_ENTRY_KIND_MANAGED GS_KIND_MANAGED
#define GS_ENTRY_KIND_PINNED  GS_KIND_PINNED
#define GS_ENTRY_KIND_VMM     GS_KIND_VMM
#define GS_ENTRY_KIND_NONE    GS_KIND_COUNT

#define GS_ENTRY_RUNTIME_DRIVER	 false
#define GS_ENTRY_RUNTIME_RUNTIME true

/* One row of cuda_entries.h, as its hook reads it. */
struct gs_entry {
	enum gs_api api;
	enum gs_kind kind;
	unsigned family;
	bool runtime; /* a cuda* entry point, whose nested driver call is not ours */
};

#define GS_ENTRY(side, api, kind, family)                                                          \
	((const struct gs_entry){ GS_API_##api, GS_ENTRY_KIND_##kind, GS_FAMILY_##family,          \
				  GS_ENTRY_RUNTIME_##side })

/* One call of a hook, from before() to after().  Its address is never
 * handed to a function out of line, so that the compiler keeps it in
 * registers and folds the row's constants in. */
struct gs_hook {
	const struct gs_entry *e;
	enum gs_door door;
	int r;	      /* the real call's result, or what stands in for it */
	bool bound;   /* the real function was found: after() has work */
	bool outer;   /* the outermost hook: this one records */
	bool limited; /* GPUSPY_LIMIT's steps were taken: limit_after() */
	bool captured;
	struct limit_hold hold;
	/* a free: the entry taken out of the table, and its key */
	struct gs_alloc *a;
	uint64_t addr;
	/* a free on a capturing stream: its graph */
	const void *graph;
	/* cuMemRelease (vmm.h) */
	bool deferred;
	uint64_t orphan;
};

/* An argument that is a device address or a host pointer, as a number. */
#define GS_ADDR(x) ((uint64_t)(uintptr_t)(x))

/* What an out-parameter points to once the call succeeded: a device
 * address, a host pointer or a handle, 64 bits each. */
_Static_assert(sizeof(void *) == 8 && sizeof(CUdeviceptr) == 8 &&
		       sizeof(CUmemGenericAllocationHandle) == 8,
	       "out-parameters of 64 bits");
/* An allocation failed for lack of memory: recorded, and its post-mortem
 * written now, on this thread, before the error goes back to a framework
 * that may empty its caches and retry.  Out of line: the event is large,
 * and the hooks' frames stay small. */
static __attribute__((noinline, cold, unused)) void
hook_oom(enum gs_api api, enum gs_door door, enum gs_kind kind, uint64_t size, int device)
{
	struct gs_oom e;

	if (record_oom(api, door, kind, size, device, &e))
		events_postmortem(&e);
}

static inline uint64_t out_word(const void *out)
{
	uint64_t w;

	memcpy(&w, out, sizeof(w));
	return w;
}

static inline bool per_thread(const struct gs_hook *h)
{
	return h->e->family & GS_FAMILY_PER_THREAD;
}

/* ---- the steps every shape shares ---- */

/* The hook's state before the real call: nothing counted yet. */
static inline void hook_init(struct gs_hook *h, const struct gs_entry *e, enum gs_door door,
			     bool bound)
{
	h->e = e;
	h->door = door;
	h->r = GS_UNBOUND;
	h->bound = bound;
	h->outer = false;
	h->limited = false;
}

_Static_assert((int)GS_CALL_RUNTIME == (int)GS_DOOR_RUNTIME &&
		       (int)GS_CALL_DRIVER == (int)GS_DOOR_DRIVER &&
		       (int)GS_CALL_DLSYM == (int)GS_DOOR_DLSYM &&
		       (int)GS_CALL_GETPROC == (int)GS_DOOR_GETPROC,
	       "a door's calls are counted under its own number");

/*
 * Counted first, once the real function is known: the door at every call
 * of a memory entry point, found or not (capture_begin's rows count in no
 * door), the lookups at every call, the other families once per call of
 * the program (record.h).
 */
static inline bool hook_start(struct gs_hook *h, const struct gs_entry *e, enum gs_door door,
			      bool bound)
{
	calls_note((enum gs_call)door);
	hook_init(h, e, door, bound);
	if (GS_UNLIKELY(!bound))
		return false;
	if (e->family & GS_FAMILY_LOOKUP_V1)
		calls_note(GS_CALL_LOOKUP_V1);
	if (e->family & GS_FAMILY_LOOKUP_V2)
		calls_note(GS_CALL_LOOKUP_V2);
	if (e->family & GS_FAMILY_GRAPH)
		calls_family(GS_CALL_GRAPH);
	if (e->family & GS_FAMILY_PER_THREAD)
		calls_family(GS_CALL_PER_THREAD);
	if (e->family & GS_FAMILY_VMM)
		calls_family(GS_CALL_VMM);
	return true;
}

static inline bool hook_enter_before(struct gs_hook *h, const struct gs_entry *e, enum gs_door door,
				     bool bound)
{
	if (!hook_start(h, e, door, bound))
		return false;
	h->outer = hook_enter();
	return true;
}

static inline int leave_after(struct gs_hook *h)
{
	if (!h->bound)
		return h->r;
	hook_leave();
	return h->r;
}

/*
 * GPUSPY_LIMIT (limit.h), behind the one branch on limit_on(): a driver
 * hook admits or refuses SIZE bytes of KIND on DEVICE, the outermost for
 * its own call, a nested one for its runtime hook's call, holding what it
 * admits until after() counted it; a runtime hook lets the driver hooks
 * nested in its call decide (the runtime fails its call itself when they
 * refuse, as on a full device).  Pinned host memory is never capped.
 * False: refused, GS_OOM stands in for the real call and the out-pointer
 * stays untouched.
 */
static inline bool limit_before(struct gs_hook *h, enum gs_kind kind, int device, size_t size)
{
	struct limit_hold hold = LIMIT_HOLD_NONE;
	bool ok;

	h->hold = hold;
	if (h->e->runtime) {
		if (h->outer) {
			h->limited = true;
			limit_nested_begin();
		}
		return true;
	}
	if (kind == GS_KIND_PINNED)
		return true;
	h->limited = true;
	ok = h->outer ? limit_admit(&hold, kind, device, size) :
			limit_nested_admit(kind, device, size);
	h->hold = hold;
	if (!ok)
		h->r = GS_OOM;
	return ok;
}

/* What limit_before() held goes, once the allocation was counted. */
static inline void limit_after(struct gs_hook *h)
{
	struct limit_hold hold = h->hold;

	if (!h->limited)
		return;
	if (h->e->runtime)
		limit_nested_end();
	else
		limit_release(&hold);
}

/* ---- alloc: (out, size, ...), and pitch: (out, pitch, width, height, ...) ---- */

static inline bool alloc_before(struct gs_hook *h, const struct gs_entry *e, enum gs_door door,
				bool bound, size_t size)
{
	if (!hook_enter_before(h, e, door, bound))
		return false;
	if (limit_on())
		return limit_before(h, e->kind, GS_DEVICE_CURRENT, size);
	return true;
}

/* Pinned memory is host memory, on no device.  STREAM: a stream-ordered
 * allocation's (the trace says it), else 0. */
static inline void alloc_record(struct gs_hook *h, const void *out, size_t size, uint64_t stream)
{
	enum gs_kind kind = h->e->kind;
	bool host = kind == GS_KIND_PINNED;
	int device = host ? -1 : GS_DEVICE_CURRENT;
	uint64_t addr;

	if (h->outer && h->r == GS_OK && out && (addr = out_word(out)) != 0)
		record_alloc(h->e->api, h->door, kind, host ? GS_SPACE_HOSTPTR : GS_SPACE_DEVPTR,
			     addr, size, device, stream);
	else if (h->outer && h->r == GS_OOM)
		hook_oom(h->e->api, h->door, kind, size, device);
	hook_leave();
}

static inline int alloc_after(struct gs_hook *h, const void *out, size_t size)
{
	if (!h->bound)
		return h->r;
	alloc_record(h, out, size, 0);
	limit_after(h);
	return h->r;
}

/* The pitch is the driver's: before the call the limit counts the rows
 * unpadded, after it they are counted as allocated, padded to it. */
static inline bool pitch_before(struct gs_hook *h, const struct gs_entry *e, enum gs_door door,
				bool bound, size_t width, size_t height)
{
	return alloc_before(h, e, door, bound, width * height);
}

static inline int pitch_after(struct gs_hook *h, const void *out, const size_t *pitch, size_t width,
			      size_t height)
{
	return alloc_after(h, out, h->r == GS_OK && pitch ? *pitch * height : width * height);
}

/* ---- pitch3d: (pitched pointer out, extent) ----
 * cudaMalloc3D: the address is the pointer's first member, its pitch the
 * padded width; the rows are height x depth. */
static inline bool pitch3d_before(struct gs_hook *h, const struct gs_entry *e, enum gs_door door,
				  bool bound, struct cudaExtent extent)
{
	return pitch_before(h, e, door, bound, extent.width, extent.height * extent.depth);
}

static inline int pitch3d_after(struct gs_hook *h, const struct cudaPitchedPtr *out,
				struct cudaExtent extent)
{
	return pitch_after(h, out, out ? &out->pitch : NULL, extent.width,
			   extent.height * extent.depth);
}

/*
 * ---- async: (out, size, stream) and pool: (out, size, pool, stream) ----
 * On a capturing stream a stream-ordered allocation only adds a
 * memory-alloc node to the capture's graph: its memory is the graph's,
 * live at each launch (graph.c), never at this call.  Asked after the
 * call, of the real driver.
 */
static inline bool async_before(struct gs_hook *h, const struct gs_entry *e, enum gs_door door,
				bool bound, size_t size, const void *stream)
{
	const void *g;

	if (!hook_enter_before(h, e, door, bound))
		return false;
	if (!limit_on())
		return true;
	/* nothing to admit on a capturing stream: the memory comes at each launch */
	if (!e->runtime && graph_capturing(stream, per_thread(h), &g)) {
		h->hold = LIMIT_HOLD_NONE;
		h->limited = true;
		return true;
	}
	return limit_before(h, GS_KIND_DEVICE, GS_DEVICE_CURRENT, size);
}

static inline int async_after(struct gs_hook *h, const void *out, size_t size, const void *stream)
{
	const void *g;
	uint64_t addr;

	if (!h->bound)
		return h->r;
	if (h->outer && h->r == GS_OK && out && (addr = out_word(out)) != 0 &&
	    graph_capturing(stream, per_thread(h), &g)) {
		calls_note(GS_CALL_GRAPH);
		graph_node_alloc(g, addr, size, driver_allocated_device(),
				 h->e->runtime ? GS_API_cudaMallocAsync_captured :
						 GS_API_cuMemAllocAsync_captured,
				 h->door);
		hook_leave();
	} else {
		alloc_record(h, out, size, (uint64_t)(uintptr_t)stream);
	}
	limit_after(h);
	return h->r;
}

/*
 * ---- free: (address) ----
 * The allocation leaves the table before the real call hands the address
 * back to CUDA (where another thread could be given it and record it
 * first), and is accounted, or put back if CUDA refused, after.
 */
static inline void free_take(struct gs_hook *h, uint64_t addr)
{
	h->outer = hook_enter();
	h->addr = addr;
	h->a = NULL;
	if (h->outer && addr)
		h->a = record_free_begin(
			h->e->kind == GS_KIND_PINNED ? GS_SPACE_HOSTPTR : GS_SPACE_DEVPTR, addr);
}

static inline bool free_before(struct gs_hook *h, const struct gs_entry *e, enum gs_door door,
			       bool bound, uint64_t addr)
{
	if (!hook_start(h, e, door, bound))
		return false;
	free_take(h, addr);
	return true;
}

static inline int free_after(struct gs_hook *h)
{
	if (!h->bound)
		return h->r;
	if (h->outer && h->addr)
		record_free_end(h->a, h->addr, h->r == GS_OK);
	hook_leave();
	return h->r;
}

/* ---- free_async: (address, stream); on a capturing stream, a memory-free
 * node, which frees at each launch ---- */

static inline bool free_async_before(struct gs_hook *h, const struct gs_entry *e, enum gs_door door,
				     bool bound, uint64_t addr, const void *stream)
{
	const void *g;

	if (!hook_start(h, e, door, bound))
		return false;
	h->captured = false;
	if (addr && gs_hook_depth == 0 &&
	    atomic_load_explicit(&gs_state.tracking, memory_order_relaxed) &&
	    graph_capturing(stream, per_thread(h), &g)) {
		h->captured = true;
		h->graph = g;
		h->addr = addr;
		h->outer = hook_enter();
		return true;
	}
	free_take(h, addr);
	return true;
}

static inline int free_async_after(struct gs_hook *h)
{
	if (!h->bound || !h->captured)
		return free_after(h);
	if (h->outer && h->r == GS_OK) {
		calls_note(GS_CALL_GRAPH);
		graph_node_free(h->graph, h->addr);
	}
	hook_leave();
	return h->r;
}

/*
 * ---- virtual memory management ----
 * Physical memory is what cuMemCreate makes; reserving and mapping address
 * space costs no memory, so those calls are only followed (vmm.c) to know
 * when released physical memory really goes.
 */

/* cuMemCreate: (handle out, size, prop, flags).  VMM calls are few (a
 * pool's growth): the limit's steps unconditional in its body. */
static inline bool vmm_create_before(struct gs_hook *h, const struct gs_entry *e, enum gs_door door,
				     bool bound, size_t size, const CUmemAllocationProp *prop)
{
	if (!hook_enter_before(h, e, door, bound))
		return false;
	h->hold = LIMIT_HOLD_NONE;
	if (limit_on() && prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
		return limit_before(h, GS_KIND_VMM, prop->location.id, size);
	return true;
}

/* A handle made elsewhere than on a device is pinned host memory. */
static inline int vmm_create_after(struct gs_hook *h, const CUmemGenericAllocationHandle *handle,
				   size_t size, const CUmemAllocationProp *prop)
{
	bool on_device = prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
	enum gs_kind kind = on_device ? GS_KIND_VMM : GS_KIND_PINNED;
	int device = on_device ? prop->location.id : -1;

	if (!h->bound)
		return h->r;
	if (h->outer && h->r == GS_OK && handle)
		record_alloc(h->e->api, h->door, kind, GS_SPACE_HANDLE, *handle, size, device, 0);
	else if (h->outer && h->r == GS_OOM)
		hook_oom(h->e->api, h->door, kind, size, device);
	limit_after(h);
	hook_leave();
	return h->r;
}

/* cuMemRelease: (handle). */
static inline bool vmm_release_before(struct gs_hook *h, const struct gs_entry *e,
				      enum gs_door door, bool bound, uint64_t handle)
{
	bool deferred = false;
	uint64_t orphan = 0;

	if (!hook_enter_before(h, e, door, bound))
		return false;
	h->addr = handle;
	h->a = NULL;
	if (h->outer)
		h->a = vmm_release_begin(handle, &deferred, &orphan);
	h->deferred = deferred;
	h->orphan = orphan;
	return true;
}

static inline int vmm_release_after(struct gs_hook *h)
{
	if (!h->bound)
		return h->r;
	if (h->outer)
		vmm_release_end(h->addr, h->a, h->deferred, h->orphan, h->r == GS_OK);
	hook_leave();
	return h->r;
}

/* cuMemMap: (address, size, offset, handle, flags). */
static inline int vmm_map_after(struct gs_hook *h, uint64_t va, size_t size, uint64_t handle)
{
	if (!h->bound)
		return h->r;
	if (h->outer && h->r == GS_OK)
		vmm_on_map(va, size, handle);
	hook_leave();
	return h->r;
}

/* cuMemUnmap: (address, size).  Before the real call, for the same reason
 * as a free: once unmapped, the range may be mapped again by another
 * thread. */
static inline bool vmm_unmap_before(struct gs_hook *h, const struct gs_entry *e, enum gs_door door,
				    bool bound, uint64_t va, size_t size)
{
	if (!hook_enter_before(h, e, door, bound))
		return false;
	if (h->outer)
		vmm_on_unmap(va, size);
	return true;
}

/* reserve: (address out, size, ...), unreserve: (address, size).
 * Address space only: a figure of its own, never memory. */
static inline int reserve_after(struct gs_hook *h, size_t size)
{
	if (h->bound && h->r == GS_OK)
		atomic_fetch_add(&gs_totals.vmm_reserved_bytes, (long long)size);
	return h->r;
}

static inline int unreserve_after(struct gs_hook *h, size_t size)
{
	if (h->bound && h->r == GS_OK)
		atomic_fetch_sub(&gs_totals.vmm_reserved_bytes, (long long)size);
	return h->r;
}

/*
 * ---- CUDA graphs ----
 * The accounting is graph.c's; here only the calls that make,
 * instantiate, launch and destroy graphs, each recorded once, by the
 * outermost hook, after the real call succeeded.  The runtime's graph
 * and executable-graph handles are the driver's.
 */

/* graph_alloc_node: (node out, graph, deps, ndeps, params), the params
 * the runtime's struct or the driver's. */
static inline int graph_alloc_node_after(struct gs_hook *h, const void *graph, const void *params)
{
	if (!h->bound)
		return h->r;
	if (h->outer && h->r == GS_OK && params && h->e->runtime) {
		const struct cudaMemAllocNodeParams *p = params;

		graph_node_alloc(graph, GS_ADDR(p->dptr), p->bytesize, p->poolProps.location.id,
				 h->e->api, h->door);
	} else if (h->outer && h->r == GS_OK && params) {
		const CUDA_MEM_ALLOC_NODE_PARAMS *p = params;

		graph_node_alloc(graph, p->dptr, p->bytesize, p->poolProps.location.id, h->e->api,
				 h->door);
	}
	hook_leave();
	return h->r;
}

/* graph_free_node: (node out, graph, deps, ndeps, address). */
static inline int graph_free_node_after(struct gs_hook *h, const void *graph, uint64_t addr)
{
	if (!h->bound)
		return h->r;
	if (h->outer && h->r == GS_OK)
		graph_node_free(graph, addr);
	hook_leave();
	return h->r;
}

/* add_node: (node out, graph, deps, edge data, ndeps, params), the
 * generic node of cuGraphAddNode / cudaGraphAddNode, its params the
 * runtime's struct or the driver's: a memory-alloc node is recorded as
 * graph_alloc_node records one, a memory-free node as graph_free_node;
 * a node of any other type is not memory. */
static inline int add_node_after(struct gs_hook *h, const void *graph, const void *params)
{
	if (!h->bound)
		return h->r;
	if (h->outer && h->r == GS_OK && params && h->e->runtime) {
		const struct cudaGraphNodeParams *p = params;

		if (p->type == cudaGraphNodeTypeMemAlloc)
			graph_node_alloc(graph, GS_ADDR(p->alloc.dptr), p->alloc.bytesize,
					 p->alloc.poolProps.location.id, h->e->api, h->door);
		else if (p->type == cudaGraphNodeTypeMemFree)
			graph_node_free(graph, GS_ADDR(p->free.dptr));
	} else if (h->outer && h->r == GS_OK && params) {
		const CUgraphNodeParams *p = params;

		if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
			graph_node_alloc(graph, p->alloc.dptr, p->alloc.bytesize,
					 p->alloc.poolProps.location.id, h->e->api, h->door);
		else if (p->type == CU_GRAPH_NODE_TYPE_MEM_FREE)
			graph_node_free(graph, p->free.dptr);
	}
	hook_leave();
	return h->r;
}

/* instantiate: (exec out, graph, flags). */
static inline int instantiate_after(struct gs_hook *h, const void *exec, const void *graph,
				    unsigned long long flags)
{
	if (!h->bound)
		return h->r;
	if (h->outer && h->r == GS_OK && exec)
		graph_instantiated(graph, (const void *)(uintptr_t)out_word(exec), flags);
	hook_leave();
	return h->r;
}

/* instantiate_params: (exec out, graph, params), the params the runtime's
 * struct or the driver's; their flags, 0 without. */
static inline unsigned long long instantiate_flags(const struct gs_hook *h, const void *params)
{
	if (!params)
		return 0;
	if (h->e->runtime)
		return ((const cudaGraphInstantiateParams *)params)->flags;
	return ((const CUDA_GRAPH_INSTANTIATE_PARAMS *)params)->flags;
}

static inline int instantiate_params_after(struct gs_hook *h, const void *exec, const void *graph,
					   const void *params)
{
	if (!h->bound)
		return h->r;
	if (h->outer && h->r == GS_OK && exec)
		graph_instantiated(graph, (const void *)(uintptr_t)out_word(exec),
				   instantiate_flags(h, params));
	hook_leave();
	return h->r;
}

/* launch: (exec, stream). */
static inline int launch_after(struct gs_hook *h, const void *exec)
{
	if (!h->bound)
		return h->r;
	if (h->outer && h->r == GS_OK)
		graph_launched(exec);
	hook_leave();
	return h->r;
}

/* destroy: (graph or exec).  Forgotten before the real call: once
 * destroyed, the handle may be given to a new graph by another thread. */
static inline bool destroy_before(struct gs_hook *h, const struct gs_entry *e, enum gs_door door,
				  bool bound, const void *handle)
{
	if (!hook_enter_before(h, e, door, bound))
		return false;
	if (h->outer && handle)
		graph_destroyed(handle);
	return true;
}

/* trim: (device). */
static inline int trim_after(struct gs_hook *h)
{
	if (!h->bound)
		return h->r;
	if (h->outer && h->r == GS_OK)
		graph_trimmed();
	hook_leave();
	return h->r;
}

/*
 * ---- capture_begin: (stream, ...) ----
 * Whether a stream is capturing is asked of the driver only once a
 * capture began in the process (graph.h): noted before the real call,
 * so that an allocation on the stream, on any thread, once the call made
 * it capturing, sees the note.  Not memory: no door counts it.
 */
static inline bool capture_begin_before(struct gs_hook *h, const struct gs_entry *e,
					enum gs_door door, bool bound)
{
	hook_init(h, e, door, bound);
	if (!bound)
		return false;
	graph_capture_begins();
	return true;
}

static inline int capture_begin_after(struct gs_hook *h)
{
	return h->r;
}

/*
 * ---- mem_info: (free out, total out), total_mem: (bytes out, device) ----
 * What the program sees of the device's memory: under GPUSPY_LIMIT, the
 * smaller card's (limit.h), so that a framework sizing its pool from it
 * (PyTorch's memory fraction, JAX's preallocation) sizes it for that
 * card.  gpuspy's own figures come from the real functions (driver.c).
 */
static inline int mem_info_after(struct gs_hook *h, size_t *free_bytes, size_t *total_bytes)
{
	if (h->bound && limit_on() && h->r == GS_OK)
		limit_mem_info(free_bytes, total_bytes);
	return h->r;
}

static inline int total_mem_after(struct gs_hook *h, size_t *bytes)
{
	if (h->bound && limit_on() && h->r == GS_OK)
		limit_total(bytes);
	return h->r;
}

/* ---- lookup: (symbol, pointer out, version, flags[, status]): the
 * pointer the real cuGetProcAddress found, swapped for the wrapper of
 * the entry point at that address (hooks_driver.c) ---- */
static inline int lookup_after(struct gs_hook *h, void **pfn)
{
	if (h->bound && h->r == GS_OK && pfn && *pfn)
		*pfn = driver_wrap_pointer(*pfn);
	return h->r;
}

/*
 * Which arguments each shape reads, named as the generated wrapper names
 * them: a0, a1, ... in the order of the row's parameter types.
 */
#define GS_BEFORE_alloc(h, e, d, b)		 alloc_before(h, e, d, b, a1)
#define GS_AFTER_alloc(h)			 alloc_after(h, a0, a1)
#define GS_BEFORE_pitch(h, e, d, b)		 pitch_before(h, e, d, b, a2, a3)
#define GS_AFTER_pitch(h)			 pitch_after(h, a0, a1, a2, a3)
#define GS_BEFORE_pitch3d(h, e, d, b)		 pitch3d_before(h, e, d, b, a1)
#define GS_AFTER_pitch3d(h)			 pitch3d_after(h, a0, a1)
#define GS_BEFORE_async(h, e, d, b)		 async_before(h, e, d, b, a1, a2)
#define GS_AFTER_async(h)			 async_after(h, a0, a1, a2)
#define GS_BEFORE_pool(h, e, d, b)		 async_before(h, e, d, b, a1, a3)
#define GS_AFTER_pool(h)			 async_after(h, a0, a1, a3)
#define GS_BEFORE_free(h, e, d, b)		 free_before(h, e, d, b, GS_ADDR(a0))
#define GS_AFTER_free(h)			 free_after(h)
#define GS_BEFORE_free_async(h, e, d, b)	 free_async_before(h, e, d, b, GS_ADDR(a0), a1)
#define GS_AFTER_free_async(h)			 free_async_after(h)
#define GS_BEFORE_vmm_create(h, e, d, b)	 vmm_create_before(h, e, d, b, a1, a2)
#define GS_AFTER_vmm_create(h)			 vmm_create_after(h, a0, a1, a2)
#define GS_BEFORE_vmm_release(h, e, d, b)	 vmm_release_before(h, e, d, b, a0)
#define GS_AFTER_vmm_release(h)			 vmm_release_after(h)
#define GS_BEFORE_vmm_map(h, e, d, b)		 hook_enter_before(h, e, d, b)
#define GS_AFTER_vmm_map(h)			 vmm_map_after(h, a0, a1, a3)
#define GS_BEFORE_vmm_unmap(h, e, d, b)		 vmm_unmap_before(h, e, d, b, a0, a1)
#define GS_AFTER_vmm_unmap(h)			 leave_after(h)
#define GS_BEFORE_reserve(h, e, d, b)		 hook_start(h, e, d, b)
#define GS_AFTER_reserve(h)			 reserve_after(h, a1)
#define GS_BEFORE_unreserve(h, e, d, b)		 hook_start(h, e, d, b)
#define GS_AFTER_unreserve(h)			 unreserve_after(h, a1)
#define GS_BEFORE_graph_alloc_node(h, e, d, b)	 hook_enter_before(h, e, d, b)
#define GS_AFTER_graph_alloc_node(h)		 graph_alloc_node_after(h, a1, a4)
#define GS_BEFORE_graph_free_node(h, e, d, b)	 hook_enter_before(h, e, d, b)
#define GS_AFTER_graph_free_node(h)		 graph_free_node_after(h, a1, GS_ADDR(a4))
#define GS_BEFORE_add_node(h, e, d, b)		 hook_enter_before(h, e, d, b)
#define GS_AFTER_add_node(h)			 add_node_after(h, a1, a5)
#define GS_BEFORE_instantiate(h, e, d, b)	 hook_enter_before(h, e, d, b)
#define GS_AFTER_instantiate(h)			 instantiate_after(h, a0, a1, a2)
#define GS_BEFORE_instantiate_params(h, e, d, b) hook_enter_before(h, e, d, b)
#define GS_AFTER_instantiate_params(h)		 instantiate_params_after(h, a0, a1, a2)
#define GS_BEFORE_launch(h, e, d, b)		 hook_enter_before(h, e, d, b)
#define GS_AFTER_launch(h)			 launch_after(h, a0)
#define GS_BEFORE_destroy(h, e, d, b)		 destroy_before(h, e, d, b, a0)
#define GS_AFTER_destroy(h)			 leave_after(h)
#define GS_BEFORE_trim(h, e, d, b)		 hook_enter_before(h, e, d, b)
#define GS_AFTER_trim(h)			 trim_after(h)
#define GS_BEFORE_capture_begin(h, e, d, b)	 capture_begin_before(h, e, d, b)
#define GS_AFTER_capture_begin(h)		 capture_begin_after(h)
#define GS_BEFORE_mem_info(h, e, d, b)		 hook_start(h, e, d, b)
#define GS_AFTER_mem_info(h)			 mem_info_after(h, a0, a1)
#define GS_BEFORE_total_mem(h, e, d, b)		 hook_start(h, e, d, b)
#define GS_AFTER_total_mem(h)			 total_mem_after(h, a0)
#define GS_BEFORE_lookup(h, e, d, b)		 hook_start(h, e, d, b)
#define GS_AFTER_lookup(h)			 lookup_after(h, a1)

#endif /* GPUSPY_SHAPES_H */
