/* SPDX-License-Identifier: MIT */
/*
 * Driver entry points, and the doors through which programs reach them:
 *
 *  - exported cu* symbols (programs linked with -lcuda call these by PLT);
 *  - dlsym(handle, "cu...") on a libcuda handle (JAX/XLA, cuDNN, ...): a
 *    handle-scoped lookup never sees preloaded symbols, so the dlsym hook
 *    hands out a wrapper instead of the real pointer;
 *  - cuGetProcAddress / cuGetProcAddress_v2 (every CUDA 13 cudart, static
 *    or shared): the real lookup runs first, then the *returned pointer*
 *    is mapped to the wrapper of the exported symbol at that address.
 *    This follows cudaVersion ("cuMemAlloc" at 3020 is cuMemAlloc_v2) and
 *    the per-thread flag (_ptsz) without re-implementing the driver's
 *    rules, and it also catches cudart fetching cuGetProcAddress through
 *    itself, which it then uses for every other lookup.
 *
 * Each wrapper exists three times, one entry point per door, so that the
 * report can say how allocations arrived.  Hooks are three steps: call the
 * real function, record on success, return its result unchanged.
 */
#include <dlfcn.h>
#include <string.h>

#include "core.h"
#include "counters.h"
#include "cuda_abi.h"
#include "driver.h"
#include "graph.h"
#include "limit.h"
#include "real.h"
#include "record.h"
#include "state.h"
#include "vmm.h"

/* ---- the wrappers, once, with the door as a parameter ---- */

static inline CUresult alloc_common(CUresult r, enum gs_api api, enum gs_door door,
				    enum gs_kind kind, bool outer, CUdeviceptr *dptr, size_t size)
{
	if (outer && r == CUDA_SUCCESS && dptr && *dptr)
		record_alloc(api, door, kind, GS_SPACE_DEVPTR, *dptr, size, GS_DEVICE_CURRENT);
	else if (outer && r == CUDA_ERROR_OUT_OF_MEMORY)
		record_oom(api, door, kind, size, GS_DEVICE_CURRENT);
	hook_leave();
	return r;
}

/*
 * Under GPUSPY_LIMIT (limit.h), behind the one branch on limit_on(): the
 * outermost hook admits or refuses the request, holding what it admits
 * until alloc_common() counted it; a hook nested in a runtime call
 * decides for that call's hook, which counts it.  A refusal stands in for
 * the real call, with the code a full device gives and the out-pointer
 * untouched.  Each allocating hook's body with the limit is a function of
 * its own (limited_*), so that the body without it is the one of old.
 */
/* Out of line: the hook's own body stays what it was without the limit,
 * with nothing more of it live across the real call. */
#define LIMITED __attribute__((noinline))

static bool refuse(struct limit_hold *h, bool outer, enum gs_kind kind, int device, size_t size)
{
	*h = LIMIT_HOLD_NONE;
	return outer ? !limit_admit(h, kind, device, size) :
		       !limit_nested_admit(kind, device, size);
}

static LIMITED CUresult limited_mem_alloc(CUresult (*real)(CUdeviceptr *, size_t),
					  enum gs_door door, bool outer, CUdeviceptr *dptr,
					  size_t size)
{
	struct limit_hold h;
	CUresult r;

	r = refuse(&h, outer, GS_KIND_DEVICE, GS_DEVICE_CURRENT, size) ? CUDA_ERROR_OUT_OF_MEMORY :
									 real(dptr, size);
	r = alloc_common(r, GS_API_cuMemAlloc_v2, door, GS_KIND_DEVICE, outer, dptr, size);
	limit_release(&h);
	return r;
}

static inline CUresult w_cuMemAlloc_v2(enum gs_door door, CUdeviceptr *dptr, size_t size)
{
	CUresult (*real)(CUdeviceptr *, size_t) = REAL(cuMemAlloc_v2);
	bool outer;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	outer = hook_enter();
	if (limit_on())
		return limited_mem_alloc(real, door, outer, dptr, size);
	return alloc_common(real(dptr, size), GS_API_cuMemAlloc_v2, door, GS_KIND_DEVICE, outer,
			    dptr, size);
}

static LIMITED CUresult limited_managed(CUresult (*real)(CUdeviceptr *, size_t, unsigned int),
					enum gs_door door, bool outer, CUdeviceptr *dptr,
					size_t size, unsigned int flags)
{
	struct limit_hold h;
	CUresult r;

	r = refuse(&h, outer, GS_KIND_MANAGED, GS_DEVICE_CURRENT, size) ? CUDA_ERROR_OUT_OF_MEMORY :
									  real(dptr, size, flags);
	r = alloc_common(r, GS_API_cuMemAllocManaged, door, GS_KIND_MANAGED, outer, dptr, size);
	limit_release(&h);
	return r;
}

static inline CUresult w_cuMemAllocManaged(enum gs_door door, CUdeviceptr *dptr, size_t size,
					   unsigned int flags)
{
	CUresult (*real)(CUdeviceptr *, size_t, unsigned int) = REAL(cuMemAllocManaged);
	bool outer;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	outer = hook_enter();
	if (limit_on())
		return limited_managed(real, door, outer, dptr, size, flags);
	return alloc_common(real(dptr, size, flags), GS_API_cuMemAllocManaged, door,
			    GS_KIND_MANAGED, outer, dptr, size);
}

static LIMITED CUresult limited_pitch(CUresult (*real)(CUdeviceptr *, size_t *, size_t, size_t,
						       unsigned int),
				      enum gs_door door, bool outer, CUdeviceptr *dptr,
				      size_t *pitch, size_t width, size_t height, unsigned int elem)
{
	struct limit_hold h;
	CUresult r;

	/* the pitch is the driver's: the limit counts the rows unpadded */
	r = refuse(&h, outer, GS_KIND_DEVICE, GS_DEVICE_CURRENT, width * height) ?
		    CUDA_ERROR_OUT_OF_MEMORY :
		    real(dptr, pitch, width, height, elem);
	r = alloc_common(r, GS_API_cuMemAllocPitch_v2, door, GS_KIND_DEVICE, outer, dptr,
			 r == CUDA_SUCCESS && pitch ? *pitch * height : width * height);
	limit_release(&h);
	return r;
}

static inline CUresult w_cuMemAllocPitch_v2(enum gs_door door, CUdeviceptr *dptr, size_t *pitch,
					    size_t width, size_t height, unsigned int elem)
{
	CUresult (*real)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int) =
		REAL(cuMemAllocPitch_v2);
	CUresult r;
	bool outer;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	outer = hook_enter();
	if (limit_on())
		return limited_pitch(real, door, outer, dptr, pitch, width, height, elem);
	r = real(dptr, pitch, width, height, elem);
	return alloc_common(r, GS_API_cuMemAllocPitch_v2, door, GS_KIND_DEVICE, outer, dptr,
			    r == CUDA_SUCCESS && pitch ? *pitch * height : width * height);
}

/*
 * On a capturing stream an async allocation only adds a memory-alloc node
 * to the capture's graph: its memory is the graph's, live at each launch
 * (graph.c), never at this call.  Asked after the call, of the real driver.
 */
static inline CUresult async_common(CUresult r, enum gs_api api, enum gs_door door, bool outer,
				    bool per_thread, CUdeviceptr *dptr, size_t size, CUstream s)
{
	const void *g;

	if (outer && r == CUDA_SUCCESS && dptr && *dptr && graph_capturing(s, per_thread, &g)) {
		calls_note(GS_CALL_GRAPH);
		graph_node_alloc(g, *dptr, size, driver_current_device(),
				 GS_API_cuMemAllocAsync_captured, door);
		hook_leave();
		return r;
	}
	return alloc_common(r, api, door, GS_KIND_DEVICE, outer, dptr, size);
}

/* The limit for a stream-ordered allocation: one on a capturing stream
 * allocates nothing now (its memory is the graph's, at each launch). */
static bool async_refuse(struct limit_hold *h, bool outer, size_t size, CUstream s, bool per_thread)
{
	const void *g;

	*h = LIMIT_HOLD_NONE;
	if (graph_capturing(s, per_thread, &g))
		return false;
	return refuse(h, outer, GS_KIND_DEVICE, GS_DEVICE_CURRENT, size);
}

static LIMITED CUresult limited_async(CUresult (*real)(CUdeviceptr *, size_t, CUstream),
				      enum gs_door door, bool outer, bool per_thread,
				      CUdeviceptr *dptr, size_t size, CUstream s)
{
	struct limit_hold h;
	CUresult r;

	r = async_refuse(&h, outer, size, s, per_thread) ? CUDA_ERROR_OUT_OF_MEMORY :
							   real(dptr, size, s);
	r = async_common(r, GS_API_cuMemAllocAsync, door, outer, per_thread, dptr, size, s);
	limit_release(&h);
	return r;
}

static inline CUresult async_alloc(CUresult (*real)(CUdeviceptr *, size_t, CUstream),
				   enum gs_door door, bool per_thread, CUdeviceptr *dptr,
				   size_t size, CUstream s)
{
	bool outer;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (per_thread)
		calls_family(GS_CALL_PER_THREAD);
	outer = hook_enter();
	if (limit_on())
		return limited_async(real, door, outer, per_thread, dptr, size, s);
	return async_common(real(dptr, size, s), GS_API_cuMemAllocAsync, door, outer, per_thread,
			    dptr, size, s);
}

static inline CUresult w_cuMemAllocAsync(enum gs_door door, CUdeviceptr *dptr, size_t size,
					 CUstream s)
{
	return async_alloc(REAL(cuMemAllocAsync), door, false, dptr, size, s);
}

static inline CUresult w_cuMemAllocAsync_ptsz(enum gs_door door, CUdeviceptr *dptr, size_t size,
					      CUstream s)
{
	return async_alloc(REAL(cuMemAllocAsync_ptsz), door, true, dptr, size, s);
}

static LIMITED CUresult limited_pool(CUresult (*real)(CUdeviceptr *, size_t, CUmemoryPool,
						      CUstream),
				     enum gs_door door, bool outer, bool per_thread,
				     CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream s)
{
	struct limit_hold h;
	CUresult r;

	r = async_refuse(&h, outer, size, s, per_thread) ? CUDA_ERROR_OUT_OF_MEMORY :
							   real(dptr, size, pool, s);
	r = async_common(r, GS_API_cuMemAllocFromPoolAsync, door, outer, per_thread, dptr, size, s);
	limit_release(&h);
	return r;
}

static inline CUresult pool_alloc(CUresult (*real)(CUdeviceptr *, size_t, CUmemoryPool, CUstream),
				  enum gs_door door, bool per_thread, CUdeviceptr *dptr,
				  size_t size, CUmemoryPool pool, CUstream s)
{
	bool outer;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (per_thread)
		calls_family(GS_CALL_PER_THREAD);
	outer = hook_enter();
	if (limit_on())
		return limited_pool(real, door, outer, per_thread, dptr, size, pool, s);
	return async_common(real(dptr, size, pool, s), GS_API_cuMemAllocFromPoolAsync, door, outer,
			    per_thread, dptr, size, s);
}

static inline CUresult w_cuMemAllocFromPoolAsync(enum gs_door door, CUdeviceptr *dptr, size_t size,
						 CUmemoryPool pool, CUstream s)
{
	return pool_alloc(REAL(cuMemAllocFromPoolAsync), door, false, dptr, size, pool, s);
}

static inline CUresult w_cuMemAllocFromPoolAsync_ptsz(enum gs_door door, CUdeviceptr *dptr,
						      size_t size, CUmemoryPool pool, CUstream s)
{
	return pool_alloc(REAL(cuMemAllocFromPoolAsync_ptsz), door, true, dptr, size, pool, s);
}

static inline CUresult w_cuMemFree_v2(enum gs_door door, CUdeviceptr p)
{
	CUresult (*real)(CUdeviceptr) = REAL(cuMemFree_v2);

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	GS_FREE_HOOK(CUresult, CUDA_SUCCESS, GS_SPACE_DEVPTR, p, real(p));
}

/* On a capturing stream: a memory-free node, which frees at each launch. */
static inline CUresult async_free(CUresult (*real)(CUdeviceptr, CUstream), bool per_thread,
				  CUdeviceptr p, CUstream s)
{
	const void *g;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (per_thread)
		calls_family(GS_CALL_PER_THREAD);
	if (p && gs_hook_depth == 0 &&
	    atomic_load_explicit(&gs_state.tracking, memory_order_relaxed) &&
	    graph_capturing(s, per_thread, &g)) {
		bool outer = hook_enter();
		CUresult r = real(p, s);

		if (outer && r == CUDA_SUCCESS) {
			calls_note(GS_CALL_GRAPH);
			graph_node_free(g, p);
		}
		hook_leave();
		return r;
	}
	GS_FREE_HOOK(CUresult, CUDA_SUCCESS, GS_SPACE_DEVPTR, p, real(p, s));
}

static inline CUresult w_cuMemFreeAsync(enum gs_door door, CUdeviceptr p, CUstream s)
{
	return async_free(REAL(cuMemFreeAsync), false, p, s);
}

static inline CUresult w_cuMemFreeAsync_ptsz(enum gs_door door, CUdeviceptr p, CUstream s)
{
	return async_free(REAL(cuMemFreeAsync_ptsz), true, p, s);
}

static inline CUresult host_alloc(CUresult r, enum gs_api api, enum gs_door door, bool outer,
				  void **pp, size_t size)
{
	if (outer && r == CUDA_SUCCESS && pp && *pp)
		record_alloc(api, door, GS_KIND_PINNED, GS_SPACE_HOSTPTR, (uintptr_t)*pp, size, -1);
	else if (outer && r == CUDA_ERROR_OUT_OF_MEMORY)
		record_oom(api, door, GS_KIND_PINNED, size, -1);
	hook_leave();
	return r;
}

static inline CUresult w_cuMemHostAlloc(enum gs_door door, void **pp, size_t size,
					unsigned int flags)
{
	CUresult (*real)(void **, size_t, unsigned int) = REAL(cuMemHostAlloc);
	bool outer;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	outer = hook_enter();
	return host_alloc(real(pp, size, flags), GS_API_cuMemHostAlloc, door, outer, pp, size);
}

static inline CUresult w_cuMemAllocHost_v2(enum gs_door door, void **pp, size_t size)
{
	CUresult (*real)(void **, size_t) = REAL(cuMemAllocHost_v2);
	bool outer;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	outer = hook_enter();
	return host_alloc(real(pp, size), GS_API_cuMemAllocHost_v2, door, outer, pp, size);
}

static inline CUresult w_cuMemFreeHost(enum gs_door door, void *p)
{
	CUresult (*real)(void *) = REAL(cuMemFreeHost);

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	GS_FREE_HOOK(CUresult, CUDA_SUCCESS, GS_SPACE_HOSTPTR, p, real(p));
}

/*
 * Virtual memory management.  Physical memory is what cuMemCreate makes;
 * reserving and mapping address space costs no memory, so those calls are
 * only followed (vmm.c) to know when released physical memory really goes.
 */
static inline CUresult w_cuMemCreate(enum gs_door door, CUmemGenericAllocationHandle *handle,
				     size_t size, const CUmemAllocationProp *prop,
				     unsigned long long flags)
{
	CUresult (*real)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
			 unsigned long long) = REAL(cuMemCreate);
	struct limit_hold h = LIMIT_HOLD_NONE;
	bool outer, on_device = prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
	CUresult r;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	calls_family(GS_CALL_VMM);
	outer = hook_enter();
	/* VMM calls are few (a pool's growth): one body, the limit's steps in it */
	if (limit_on() && on_device && refuse(&h, outer, GS_KIND_VMM, prop->location.id, size))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else
		r = real(handle, size, prop, flags);
	if (outer && r == CUDA_SUCCESS && handle)
		record_alloc(GS_API_cuMemCreate, door, on_device ? GS_KIND_VMM : GS_KIND_PINNED,
			     GS_SPACE_HANDLE, *handle, size, on_device ? prop->location.id : -1);
	else if (outer && r == CUDA_ERROR_OUT_OF_MEMORY)
		record_oom(GS_API_cuMemCreate, door, on_device ? GS_KIND_VMM : GS_KIND_PINNED, size,
			   on_device ? prop->location.id : -1);
	limit_release(&h);
	hook_leave();
	return r;
}

static inline CUresult w_cuMemRelease(enum gs_door door, CUmemGenericAllocationHandle handle)
{
	CUresult (*real)(CUmemGenericAllocationHandle) = REAL(cuMemRelease);
	struct gs_alloc *a = NULL;
	bool outer, deferred = false;
	uint64_t orphan = 0;
	CUresult r;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	calls_family(GS_CALL_VMM);
	outer = hook_enter();
	if (outer)
		a = vmm_release_begin(handle, &deferred, &orphan);
	r = real(handle);
	if (outer)
		vmm_release_end(handle, a, deferred, orphan, r == CUDA_SUCCESS);
	hook_leave();
	return r;
}

static inline CUresult w_cuMemMap(enum gs_door door, CUdeviceptr ptr, size_t size, size_t offset,
				  CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	CUresult (*real)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
			 unsigned long long) = REAL(cuMemMap);
	bool outer;
	CUresult r;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	calls_family(GS_CALL_VMM);
	outer = hook_enter();
	r = real(ptr, size, offset, handle, flags);
	if (outer && r == CUDA_SUCCESS)
		vmm_on_map(ptr, size, handle);
	hook_leave();
	return r;
}

static inline CUresult w_cuMemUnmap(enum gs_door door, CUdeviceptr ptr, size_t size)
{
	CUresult (*real)(CUdeviceptr, size_t) = REAL(cuMemUnmap);
	bool outer;
	CUresult r;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	calls_family(GS_CALL_VMM);
	outer = hook_enter();
	/* Before the real call, for the same reason as a free: once unmapped,
	 * the range may be mapped again by another thread. */
	if (outer)
		vmm_on_unmap(ptr, size);
	r = real(ptr, size);
	hook_leave();
	return r;
}

static inline CUresult w_cuMemAddressReserve(enum gs_door door, CUdeviceptr *ptr, size_t size,
					     size_t align, CUdeviceptr addr,
					     unsigned long long flags)
{
	CUresult (*real)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long) =
		REAL(cuMemAddressReserve);
	CUresult r;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	calls_family(GS_CALL_VMM);
	r = real(ptr, size, align, addr, flags);
	if (r == CUDA_SUCCESS)
		atomic_fetch_add(&gs_totals.vmm_reserved_bytes, (long long)size);
	return r;
}

static inline CUresult w_cuMemAddressFree(enum gs_door door, CUdeviceptr ptr, size_t size)
{
	CUresult (*real)(CUdeviceptr, size_t) = REAL(cuMemAddressFree);
	CUresult r;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	calls_family(GS_CALL_VMM);
	r = real(ptr, size);
	if (r == CUDA_SUCCESS)
		atomic_fetch_sub(&gs_totals.vmm_reserved_bytes, (long long)size);
	return r;
}

/*
 * Graph memory nodes.  The accounting is graph.c's; here only the calls
 * that make, instantiate, launch and destroy graphs, each recorded once,
 * by the outermost hook, after the real call succeeded.
 */
static inline CUresult w_cuGraphAddMemAllocNode(enum gs_door door, CUgraphNode *node, CUgraph g,
						const CUgraphNode *deps, size_t ndeps,
						CUDA_MEM_ALLOC_NODE_PARAMS *params)
{
	CUresult (*real)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
			 CUDA_MEM_ALLOC_NODE_PARAMS *) = REAL(cuGraphAddMemAllocNode);

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	GS_GRAPH_HOOK(CUresult, CUDA_SUCCESS, false, real(node, g, deps, ndeps, params),
		      if (params) graph_node_alloc(g, params->dptr, params->bytesize,
						   params->poolProps.location.id,
						   GS_API_cuGraphAddMemAllocNode, door));
}

static inline CUresult w_cuGraphAddMemFreeNode(enum gs_door door, CUgraphNode *node, CUgraph g,
					       const CUgraphNode *deps, size_t ndeps,
					       CUdeviceptr dptr)
{
	CUresult (*real)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUdeviceptr) =
		REAL(cuGraphAddMemFreeNode);

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	GS_GRAPH_HOOK(CUresult, CUDA_SUCCESS, false, real(node, g, deps, ndeps, dptr),
		      graph_node_free(g, dptr));
}

static inline CUresult w_cuGraphInstantiateWithFlags(enum gs_door door, CUgraphExec *exec,
						     CUgraph g, unsigned long long flags)
{
	CUresult (*real)(CUgraphExec *, CUgraph, unsigned long long) =
		REAL(cuGraphInstantiateWithFlags);

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	GS_GRAPH_HOOK(CUresult, CUDA_SUCCESS, false, real(exec, g, flags),
		      if (exec) graph_instantiated(g, *exec, flags));
}

static inline CUresult params_instantiate(CUresult (*real)(CUgraphExec *, CUgraph,
							   CUDA_GRAPH_INSTANTIATE_PARAMS *),
					  bool per_thread, CUgraphExec *exec, CUgraph g,
					  CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	GS_GRAPH_HOOK(CUresult, CUDA_SUCCESS, per_thread, real(exec, g, params),
		      if (exec) graph_instantiated(g, *exec, params ? params->flags : 0));
}

static inline CUresult w_cuGraphInstantiateWithParams(enum gs_door door, CUgraphExec *exec,
						      CUgraph g,
						      CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
	return params_instantiate(REAL(cuGraphInstantiateWithParams), false, exec, g, params);
}

static inline CUresult w_cuGraphInstantiateWithParams_ptsz(enum gs_door door, CUgraphExec *exec,
							   CUgraph g,
							   CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
	return params_instantiate(REAL(cuGraphInstantiateWithParams_ptsz), true, exec, g, params);
}

static inline CUresult launch(CUresult (*real)(CUgraphExec, CUstream), bool per_thread,
			      CUgraphExec exec, CUstream s)
{
	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	GS_GRAPH_HOOK(CUresult, CUDA_SUCCESS, per_thread, real(exec, s), graph_launched(exec));
}

static inline CUresult w_cuGraphLaunch(enum gs_door door, CUgraphExec exec, CUstream s)
{
	return launch(REAL(cuGraphLaunch), false, exec, s);
}

static inline CUresult w_cuGraphLaunch_ptsz(enum gs_door door, CUgraphExec exec, CUstream s)
{
	return launch(REAL(cuGraphLaunch_ptsz), true, exec, s);
}

/* Forgotten before the real call: once destroyed, the handle may be
 * given to a new graph by another thread. */
static inline CUresult destroy(CUresult (*real)(void *), void *h)
{
	bool outer;
	CUresult r;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	calls_family(GS_CALL_GRAPH);
	outer = hook_enter();
	if (outer && h)
		graph_destroyed(h);
	r = real(h);
	hook_leave();
	return r;
}

static inline CUresult w_cuGraphExecDestroy(enum gs_door door, CUgraphExec exec)
{
	CUresult (*real)(CUgraphExec) = REAL(cuGraphExecDestroy);

	return destroy((CUresult(*)(void *))real, exec);
}

static inline CUresult w_cuGraphDestroy(enum gs_door door, CUgraph g)
{
	CUresult (*real)(CUgraph) = REAL(cuGraphDestroy);

	return destroy((CUresult(*)(void *))real, g);
}

static inline CUresult w_cuDeviceGraphMemTrim(enum gs_door door, CUdevice dev)
{
	CUresult (*real)(CUdevice) = REAL(cuDeviceGraphMemTrim);

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	GS_GRAPH_HOOK(CUresult, CUDA_SUCCESS, false, real(dev), graph_trimmed());
}

/*
 * What the program sees of the device's memory: under GPUSPY_LIMIT, the
 * smaller card's (limit.h), so that a framework sizing its pool from it
 * (PyTorch's memory fraction, JAX's preallocation) sizes it for that
 * card.  gpuspy's own figures come from the real functions (driver.c).
 */
static inline CUresult w_cuMemGetInfo_v2(enum gs_door door, size_t *free_bytes, size_t *total_bytes)
{
	CUresult (*real)(size_t *, size_t *) = REAL(cuMemGetInfo_v2);
	CUresult r;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	r = real(free_bytes, total_bytes);
	if (limit_on() && r == CUDA_SUCCESS)
		limit_mem_info(free_bytes, total_bytes);
	return r;
}

static inline CUresult w_cuDeviceTotalMem_v2(enum gs_door door, size_t *bytes, CUdevice dev)
{
	CUresult (*real)(size_t *, CUdevice) = REAL(cuDeviceTotalMem_v2);
	CUresult r;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	r = real(bytes, dev);
	if (limit_on() && r == CUDA_SUCCESS)
		limit_total(bytes);
	return r;
}

static void *drv_wrap_pointer(void *p);

static inline CUresult w_cuGetProcAddress_v2(enum gs_door door, const char *symbol, void **pfn,
					     int version, cuuint64_t flags,
					     CUdriverProcAddressQueryResult *status)
{
	CUresult (*real)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
		REAL(cuGetProcAddress_v2);
	CUresult r;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	calls_note(GS_CALL_LOOKUP_V2);
	r = real(symbol, pfn, version, flags, status);
	if (r == CUDA_SUCCESS && pfn && *pfn)
		*pfn = drv_wrap_pointer(*pfn);
	return r;
}

static inline CUresult w_cuGetProcAddress(enum gs_door door, const char *symbol, void **pfn,
					  int version, cuuint64_t flags)
{
	CUresult (*real)(const char *, void **, int, cuuint64_t) = REAL(cuGetProcAddress);
	CUresult r;

	if (GS_UNLIKELY(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	calls_note(GS_CALL_LOOKUP_V1);
	r = real(symbol, pfn, version, flags);
	if (r == CUDA_SUCCESS && pfn && *pfn)
		*pfn = drv_wrap_pointer(*pfn);
	return r;
}

/* ---- three entry points per wrapper ---- */

#define DOORS(ret, name, params, ...)                                                              \
	GS_EXPORT ret name params                                                                  \
	{                                                                                          \
		calls_note(GS_CALL_DRIVER);                                                        \
		return w_##name(GS_DOOR_DRIVER, __VA_ARGS__);                                      \
	}                                                                                          \
	static ret name##__dlsym params                                                            \
	{                                                                                          \
		calls_note(GS_CALL_DLSYM);                                                         \
		return w_##name(GS_DOOR_DLSYM, __VA_ARGS__);                                       \
	}                                                                                          \
	static ret name##__getproc params                                                          \
	{                                                                                          \
		calls_note(GS_CALL_GETPROC);                                                       \
		return w_##name(GS_DOOR_GETPROC, __VA_ARGS__);                                     \
	}

DOORS(CUresult, cuMemAlloc_v2, (CUdeviceptr * dptr, size_t size), dptr, size)
DOORS(CUresult, cuMemFree_v2, (CUdeviceptr p), p)
DOORS(CUresult, cuMemAllocAsync, (CUdeviceptr * dptr, size_t size, CUstream s), dptr, size, s)
DOORS(CUresult, cuMemAllocAsync_ptsz, (CUdeviceptr * dptr, size_t size, CUstream s), dptr, size, s)
DOORS(CUresult, cuMemAllocFromPoolAsync,
      (CUdeviceptr * dptr, size_t size, CUmemoryPool pool, CUstream s), dptr, size, pool, s)
DOORS(CUresult, cuMemAllocFromPoolAsync_ptsz,
      (CUdeviceptr * dptr, size_t size, CUmemoryPool pool, CUstream s), dptr, size, pool, s)
DOORS(CUresult, cuMemFreeAsync, (CUdeviceptr p, CUstream s), p, s)
DOORS(CUresult, cuMemFreeAsync_ptsz, (CUdeviceptr p, CUstream s), p, s)
DOORS(CUresult, cuMemAllocManaged, (CUdeviceptr * dptr, size_t size, unsigned int flags), dptr,
      size, flags)
DOORS(CUresult, cuMemAllocPitch_v2,
      (CUdeviceptr * dptr, size_t *pitch, size_t width, size_t height, unsigned int elem), dptr,
      pitch, width, height, elem)
DOORS(CUresult, cuMemCreate,
      (CUmemGenericAllocationHandle * handle, size_t size, const CUmemAllocationProp *prop,
       unsigned long long flags),
      handle, size, prop, flags)
DOORS(CUresult, cuMemRelease, (CUmemGenericAllocationHandle handle), handle)
DOORS(CUresult, cuMemMap,
      (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
       unsigned long long flags),
      ptr, size, offset, handle, flags)
DOORS(CUresult, cuMemUnmap, (CUdeviceptr ptr, size_t size), ptr, size)
DOORS(CUresult, cuMemAddressReserve,
      (CUdeviceptr * ptr, size_t size, size_t align, CUdeviceptr addr, unsigned long long flags),
      ptr, size, align, addr, flags)
DOORS(CUresult, cuMemAddressFree, (CUdeviceptr ptr, size_t size), ptr, size)
DOORS(CUresult, cuMemHostAlloc, (void **pp, size_t size, unsigned int flags), pp, size, flags)
DOORS(CUresult, cuMemAllocHost_v2, (void **pp, size_t size), pp, size)
DOORS(CUresult, cuMemFreeHost, (void *p), p)
DOORS(CUresult, cuGraphAddMemAllocNode,
      (CUgraphNode * node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
       CUDA_MEM_ALLOC_NODE_PARAMS *params),
      node, g, deps, ndeps, params)
DOORS(CUresult, cuGraphAddMemFreeNode,
      (CUgraphNode * node, CUgraph g, const CUgraphNode *deps, size_t ndeps, CUdeviceptr dptr),
      node, g, deps, ndeps, dptr)
DOORS(CUresult, cuGraphInstantiateWithFlags,
      (CUgraphExec * exec, CUgraph g, unsigned long long flags), exec, g, flags)
DOORS(CUresult, cuGraphInstantiateWithParams,
      (CUgraphExec * exec, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *params), exec, g, params)
DOORS(CUresult, cuGraphInstantiateWithParams_ptsz,
      (CUgraphExec * exec, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *params), exec, g, params)
DOORS(CUresult, cuGraphLaunch, (CUgraphExec exec, CUstream s), exec, s)
DOORS(CUresult, cuGraphLaunch_ptsz, (CUgraphExec exec, CUstream s), exec, s)
DOORS(CUresult, cuGraphExecDestroy, (CUgraphExec exec), exec)
DOORS(CUresult, cuGraphDestroy, (CUgraph g), g)
DOORS(CUresult, cuDeviceGraphMemTrim, (CUdevice dev), dev)
DOORS(CUresult, cuMemGetInfo_v2, (size_t * free_bytes, size_t *total_bytes), free_bytes,
      total_bytes)
DOORS(CUresult, cuDeviceTotalMem_v2, (size_t * bytes, CUdevice dev), bytes, dev)
DOORS(CUresult, cuGetProcAddress, (const char *symbol, void **pfn, int version, cuuint64_t flags),
      symbol, pfn, version, flags)
DOORS(CUresult, cuGetProcAddress_v2,
      (const char *symbol, void **pfn, int version, cuuint64_t flags,
       CUdriverProcAddressQueryResult *status),
      symbol, pfn, version, flags, status)

struct drv_wrappers {
	void *exported, *dlsym, *getproc;
};

static const struct drv_wrappers drv_wrap[D_WRAPPED] = {
#define DRV_WRAP(n, ...) [D_##n] = { (void *)(n), (void *)n##__dlsym, (void *)n##__getproc },
	GS_CUDA_DRIVER_ENTRIES(DRV_WRAP)
#undef DRV_WRAP
};

/* Is p one of gpuspy's own entry points?  (dlsym(RTLD_DEFAULT) finds the
 * exported ones, since the preload library comes first.) */
static bool is_wrapper(void *p)
{
	for (unsigned i = 0; i < D_WRAPPED; i++)
		if (p == drv_wrap[i].exported || p == drv_wrap[i].dlsym || p == drv_wrap[i].getproc)
			return true;
	return false;
}

/* The program's runtime just found the driver: CUDA is starting, and
 * the first allocation will follow. */
static void bound_now(void)
{
	if (atomic_load(&drv_bound))
		gs_warm();
}

/*
 * A pointer the real cuGetProcAddress returned: every one is the address
 * of an exported libcuda symbol, so first bind the real functions from
 * the library that pointer lives in, then swap in the matching wrapper.
 */
static void *drv_wrap_pointer(void *p)
{
	if (GS_UNLIKELY(!atomic_load_explicit(&drv_bound, memory_order_acquire))) {
		Dl_info info;
		void *h;

		if (dladdr(p, &info) && info.dli_fname &&
		    (h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD))) {
			driver_bind_handle(h);
			dlclose(h);
			bound_now();
		}
	}
	for (unsigned i = 0; i < D_WRAPPED; i++)
		if (atomic_load_explicit(&drv_real_fn[i], memory_order_relaxed) == p)
			return drv_wrap[i].getproc;
	return p;
}

/*
 * Called by the exported dlsym below for names starting with "cu", after
 * the real lookup.  Exact names only: cuDNN's cudnn* and the rest must
 * pass untouched, and this runs for every library's lookups.
 */
static void *driver_dlsym_hook(void *handle, const char *name, void *found)
{
	void *cur;

	if (!found)
		return found;
	for (unsigned i = 0; i < D_WRAPPED; i++) {
		if (strcmp(name, drv_names[i]) != 0)
			continue;
		if (is_wrapper(found))
			return found;
		cur = atomic_load_explicit(&drv_real_fn[i], memory_order_acquire);
		if (!cur) {
			bool was = atomic_load(&drv_bound);

			driver_bind_handle(handle == RTLD_DEFAULT ? RTLD_NEXT : handle);
			if (!was)
				bound_now();
			if (!atomic_load(&drv_real_fn[i]))
				atomic_store(&drv_real_fn[i], found);
			cur = atomic_load(&drv_real_fn[i]);
		}
		/* A second, different libcuda: leave its functions alone rather
		 * than route them to the first one. */
		return cur == found ? drv_wrap[i].dlsym : found;
	}
	return found;
}

/* The _ptsz forms share their plain twins' signatures. */
_Static_assert(__builtin_types_compatible_p(__typeof__(&cuMemAllocAsync),
					    __typeof__(&cuMemAllocAsync_ptsz)),
	       "cuMemAllocAsync_ptsz");
_Static_assert(__builtin_types_compatible_p(__typeof__(&cuMemFreeAsync),
					    __typeof__(&cuMemFreeAsync_ptsz)),
	       "cuMemFreeAsync_ptsz");
_Static_assert(__builtin_types_compatible_p(__typeof__(&cuGraphLaunch),
					    __typeof__(&cuGraphLaunch_ptsz)),
	       "cuGraphLaunch_ptsz");
_Static_assert(__builtin_types_compatible_p(__typeof__(&cuGraphInstantiateWithParams),
					    __typeof__(&cuGraphInstantiateWithParams_ptsz)),
	       "cuGraphInstantiateWithParams_ptsz");
_Static_assert(__builtin_types_compatible_p(__typeof__(&cuMemAllocFromPoolAsync),
					    __typeof__(&cuMemAllocFromPoolAsync_ptsz)),
	       "cuMemAllocFromPoolAsync_ptsz");

/*
 * The exported dlsym.  glibc resolves RTLD_NEXT relative to the object
 * that *called* dlsym, found from the return address: for that case this
 * function must leave nothing on the stack and jump to glibc, so the
 * pass-through is a sibling call (the library is always built with
 * optimisation, see meson.build).  Every other lookup is checked against
 * the driver entry points gpuspy wraps.
 */
GS_EXPORT GS_NO_SANITIZE void *dlsym(void *handle, const char *name)
{
	dlsym_fn f = glibc_dlsym();

	if (handle == RTLD_NEXT || name[0] != 'c' || name[1] != 'u')
		return f(handle, name);
	return driver_dlsym_hook(handle, name, f(handle, name));
}
