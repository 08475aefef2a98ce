/* SPDX-License-Identifier: MIT */
/*
 * Runtime entry points (cuda*), for programs and libraries that call a
 * shared libcudart by PLT, as PyTorch does.  gpuspy's definitions are
 * unversioned, so they interpose cudaMalloc@libcudart.so.13 too, and
 * RTLD_NEXT finds the real ones.  A static cudart (nvcc's default, CuPy)
 * never reaches these; its allocations are seen at the driver, where the
 * runtime's own nested driver call is skipped when we get here first.
 */
#include <dlfcn.h>

#include "core.h"
#include "cuda_abi.h"
#include "driver.h"
#include "graph.h"
#include "limit.h"
#include "real.h"
#include "record.h"
#include "state.h"

/* No runtime in the process behind us: what cudart says before init. */
#define NO_RUNTIME ((cudaError_t)3) /* cudaErrorInitializationError */

/* The runtime's entry points gpuspy wraps: the runtime's rows of
 * cuda_entries.h (GS_CUDA_RUNTIME_ENTRIES). */
enum rt_fn {
#define RT_ENUM(name, ...) R_##name,
	GS_CUDA_RUNTIME_ENTRIES(RT_ENUM)
#undef RT_ENUM
		R_COUNT,
};

static const char *const rt_names[R_COUNT] = {
#define RT_NAME(name, ...) [R_##name] = #name,
	GS_CUDA_RUNTIME_ENTRIES(RT_NAME)
#undef RT_NAME
};

static _Atomic(void *) rt_real_fn[R_COUNT];

/*
 * The real function.  RTLD_NEXT finds a libcudart in the global scope.
 * One loaded RTLD_LOCAL (a library opened by ctypes or by Python's import,
 * with libcudart as its dependency) is invisible to it, yet its callers'
 * PLT still binds to gpuspy first: then the caller's own dependencies are
 * searched, through a handle on the calling module, which never sees
 * preloaded symbols.
 */
static void *rt_real(enum rt_fn f, const void *caller)
{
	void *p = atomic_load_explicit(&rt_real_fn[f], memory_order_acquire);
	Dl_info info;

	if (GS_LIKELY(p))
		return p;
	p = real_dlsym(RTLD_NEXT, rt_names[f]);
	if (!p && caller && dladdr(caller, &info) && info.dli_fname && info.dli_fname[0]) {
		void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);

		if (h) {
			p = real_dlsym(h, rt_names[f]);
			dlclose(h);
		}
	}
	if (p)
		atomic_store_explicit(&rt_real_fn[f], p, memory_order_release);
	return p;
}

/* driver.h's REAL is for the driver's functions; here it is the runtime's. */
#undef REAL
/* Only valid in the exported function itself: its caller is the program.
 * Every exported function looks its real one up first: the call is
 * counted there, at the runtime door. */
#define REAL(name)                                                                                 \
	(calls_note(GS_CALL_RUNTIME),                                                              \
	 (__typeof__(&(name)))rt_real(R_##name, __builtin_return_address(0)))

static inline cudaError_t done_alloc(cudaError_t r, bool outer, enum gs_api api, enum gs_kind kind,
				     void **ptr, size_t size)
{
	int device = kind == GS_KIND_PINNED ? -1 : GS_DEVICE_CURRENT;

	if (outer && r == cudaSuccess && ptr && *ptr)
		record_alloc(api, GS_DOOR_RUNTIME, kind,
			     kind == GS_KIND_PINNED ? GS_SPACE_HOSTPTR : GS_SPACE_DEVPTR,
			     (uintptr_t)*ptr, size, device);
	else if (outer && r == cudaErrorMemoryAllocation)
		record_oom(api, GS_DOOR_RUNTIME, kind, size, device);
	hook_leave();
	return r;
}

/*
 * Under GPUSPY_LIMIT (limit.h), behind the one branch on limit_on(): the
 * driver hooks nested in the runtime's call decide, where the runtime
 * has made its context current, and hold what they admit until
 * done_alloc() counted it; refused, the runtime fails the call itself, as
 * on a full device.  The real call is written twice, so that the body
 * without the limit is the one of old.
 */
static cudaError_t rt_limited(cudaError_t r)
{
	limit_nested_end();
	return r;
}

#define ALLOC_BODY(name, api, kind, ptr, size, ...)                                                \
	do {                                                                                       \
		__typeof__(&name) real = REAL(name);                                               \
		bool outer;                                                                        \
		if (GS_UNLIKELY(!real))                                                            \
			return NO_RUNTIME;                                                         \
		outer = hook_enter();                                                              \
		if (limit_on() && outer) {                                                         \
			limit_nested_begin();                                                      \
			return rt_limited(done_alloc(real(__VA_ARGS__), outer, api, kind,          \
						     (void **)(ptr), size));                       \
		}                                                                                  \
		return done_alloc(real(__VA_ARGS__), outer, api, kind, (void **)(ptr), size);      \
	} while (0)

GS_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	ALLOC_BODY(cudaMalloc, GS_API_cudaMalloc, GS_KIND_DEVICE, devPtr, size, devPtr, size);
}

/*
 * On a capturing stream an async allocation only adds a memory-alloc node
 * to the capture's graph (graph.c), and an async free a memory-free node.
 */
static inline cudaError_t async_alloc(cudaError_t r, bool outer, bool per_thread, enum gs_api api,
				      void **ptr, size_t size, cudaStream_t s)
{
	const void *g;

	if (outer && r == cudaSuccess && ptr && *ptr && graph_capturing(s, per_thread, &g)) {
		calls_note(GS_CALL_GRAPH);
		graph_node_alloc(g, (uintptr_t)*ptr, size, driver_current_device(),
				 GS_API_cudaMallocAsync_captured, GS_DOOR_RUNTIME);
		hook_leave();
		return r;
	}
	return done_alloc(r, outer, api, GS_KIND_DEVICE, ptr, size);
}

#define ASYNC_BODY(name, api, per_thread, ptr, size, s, ...)                                       \
	do {                                                                                       \
		__typeof__(&name) real = REAL(name);                                               \
		bool outer;                                                                        \
		if (GS_UNLIKELY(!real))                                                            \
			return NO_RUNTIME;                                                         \
		if (per_thread)                                                                    \
			calls_family(GS_CALL_PER_THREAD);                                          \
		outer = hook_enter();                                                              \
		if (limit_on() && outer) {                                                         \
			limit_nested_begin();                                                      \
			return rt_limited(async_alloc(real(__VA_ARGS__), outer, per_thread, api,   \
						      (void **)(ptr), size, s));                   \
		}                                                                                  \
		return async_alloc(real(__VA_ARGS__), outer, per_thread, api, (void **)(ptr),      \
				   size, s);                                                       \
	} while (0)

GS_EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t s)
{
	ASYNC_BODY(cudaMallocAsync, GS_API_cudaMallocAsync, false, devPtr, size, s, devPtr, size,
		   s);
}

GS_EXPORT cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t s)
{
	ASYNC_BODY(cudaMallocAsync_ptsz, GS_API_cudaMallocAsync, true, devPtr, size, s, devPtr,
		   size, s);
}

GS_EXPORT cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool,
					      cudaStream_t s)
{
	ASYNC_BODY(cudaMallocFromPoolAsync, GS_API_cudaMallocFromPoolAsync, false, ptr, size, s,
		   ptr, size, pool, s);
}

GS_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t pool,
						   cudaStream_t s)
{
	ASYNC_BODY(cudaMallocFromPoolAsync_ptsz, GS_API_cudaMallocFromPoolAsync, true, ptr, size, s,
		   ptr, size, pool, s);
}

GS_EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	ALLOC_BODY(cudaMallocManaged, GS_API_cudaMallocManaged, GS_KIND_MANAGED, devPtr, size,
		   devPtr, size, flags);
}

GS_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	ALLOC_BODY(cudaMallocHost, GS_API_cudaMallocHost, GS_KIND_PINNED, ptr, size, ptr, size);
}

GS_EXPORT cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
	ALLOC_BODY(cudaHostAlloc, GS_API_cudaHostAlloc, GS_KIND_PINNED, ptr, size, ptr, size,
		   flags);
}

GS_EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
	cudaError_t (*real)(void **, size_t *, size_t, size_t) = REAL(cudaMallocPitch);
	cudaError_t r;
	bool outer;

	if (GS_UNLIKELY(!real))
		return NO_RUNTIME;
	outer = hook_enter();
	if (limit_on() && outer) {
		limit_nested_begin();
		r = real(devPtr, pitch, width, height);
		return rt_limited(
			done_alloc(r, outer, GS_API_cudaMallocPitch, GS_KIND_DEVICE, devPtr,
				   r == cudaSuccess && pitch ? *pitch * height : width * height));
	}
	r = real(devPtr, pitch, width, height);
	return done_alloc(r, outer, GS_API_cudaMallocPitch, GS_KIND_DEVICE, devPtr,
			  r == cudaSuccess && pitch ? *pitch * height : width * height);
}

GS_EXPORT cudaError_t cudaFree(void *devPtr)
{
	cudaError_t (*real)(void *) = REAL(cudaFree);

	if (GS_UNLIKELY(!real))
		return NO_RUNTIME;
	GS_FREE_HOOK(cudaError_t, cudaSuccess, GS_SPACE_DEVPTR, devPtr, real(devPtr));
}

static inline cudaError_t free_async(cudaError_t (*real)(void *, cudaStream_t), bool per_thread,
				     void *p, cudaStream_t s)
{
	const void *g;

	if (GS_UNLIKELY(!real))
		return NO_RUNTIME;
	if (per_thread)
		calls_family(GS_CALL_PER_THREAD);
	if (p && gs_hook_depth == 0 &&
	    atomic_load_explicit(&gs_state.tracking, memory_order_relaxed) &&
	    graph_capturing(s, per_thread, &g)) {
		bool outer = hook_enter();
		cudaError_t r = real(p, s);

		if (outer && r == cudaSuccess) {
			calls_note(GS_CALL_GRAPH);
			graph_node_free(g, (uintptr_t)p);
		}
		hook_leave();
		return r;
	}
	GS_FREE_HOOK(cudaError_t, cudaSuccess, GS_SPACE_DEVPTR, p, real(p, s));
}

GS_EXPORT cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t s)
{
	return free_async(REAL(cudaFreeAsync), false, devPtr, s);
}

GS_EXPORT cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t s)
{
	return free_async(REAL(cudaFreeAsync_ptsz), true, devPtr, s);
}

GS_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
	cudaError_t (*real)(void *) = REAL(cudaFreeHost);

	if (GS_UNLIKELY(!real))
		return NO_RUNTIME;
	GS_FREE_HOOK(cudaError_t, cudaSuccess, GS_SPACE_HOSTPTR, ptr, real(ptr));
}

/* ---- graph memory nodes: the accounting is graph.c's, as for the driver's ---- */

GS_EXPORT cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *node, cudaGraph_t g,
					       const cudaGraphNode_t *deps, size_t ndeps,
					       struct cudaMemAllocNodeParams *params)
{
	__typeof__(&cudaGraphAddMemAllocNode) real = REAL(cudaGraphAddMemAllocNode);

	if (GS_UNLIKELY(!real))
		return NO_RUNTIME;
	GS_GRAPH_HOOK(cudaError_t, cudaSuccess, false, real(node, g, deps, ndeps, params),
		      if (params)
			      graph_node_alloc(g, (uintptr_t)params->dptr, params->bytesize,
					       params->poolProps.location.id,
					       GS_API_cudaGraphAddMemAllocNode, GS_DOOR_RUNTIME));
}

GS_EXPORT cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *node, cudaGraph_t g,
					      const cudaGraphNode_t *deps, size_t ndeps, void *dptr)
{
	__typeof__(&cudaGraphAddMemFreeNode) real = REAL(cudaGraphAddMemFreeNode);

	if (GS_UNLIKELY(!real))
		return NO_RUNTIME;
	GS_GRAPH_HOOK(cudaError_t, cudaSuccess, false, real(node, g, deps, ndeps, dptr),
		      graph_node_free(g, (uintptr_t)dptr));
}

#define INSTANTIATE_BODY(name, per_thread, flags, ...)                                             \
	do {                                                                                       \
		__typeof__(&name) real = REAL(name);                                               \
		if (GS_UNLIKELY(!real))                                                            \
			return NO_RUNTIME;                                                         \
		GS_GRAPH_HOOK(cudaError_t, cudaSuccess, per_thread, real(__VA_ARGS__),             \
			      if (exec) graph_instantiated(g, *exec, flags));                      \
	} while (0)

GS_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t g,
					   unsigned long long flags)
{
	INSTANTIATE_BODY(cudaGraphInstantiate, false, flags, exec, g, flags);
}

GS_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t g,
						    unsigned long long flags)
{
	INSTANTIATE_BODY(cudaGraphInstantiateWithFlags, false, flags, exec, g, flags);
}

GS_EXPORT cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *exec, cudaGraph_t g,
						     cudaGraphInstantiateParams *params)
{
	INSTANTIATE_BODY(cudaGraphInstantiateWithParams, false, params ? params->flags : 0, exec, g,
			 params);
}

GS_EXPORT cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *exec, cudaGraph_t g,
							  cudaGraphInstantiateParams *params)
{
	INSTANTIATE_BODY(cudaGraphInstantiateWithParams_ptsz, true, params ? params->flags : 0,
			 exec, g, params);
}

static inline cudaError_t launch(cudaError_t (*real)(cudaGraphExec_t, cudaStream_t),
				 bool per_thread, cudaGraphExec_t exec, cudaStream_t s)
{
	if (GS_UNLIKELY(!real))
		return NO_RUNTIME;
	GS_GRAPH_HOOK(cudaError_t, cudaSuccess, per_thread, real(exec, s), graph_launched(exec));
}

GS_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s)
{
	return launch(REAL(cudaGraphLaunch), false, exec, s);
}

GS_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t s)
{
	return launch(REAL(cudaGraphLaunch_ptsz), true, exec, s);
}

/* Forgotten before the real call: once destroyed, the handle may be
 * given to a new graph by another thread. */
static inline cudaError_t destroy(cudaError_t (*real)(void *), void *h)
{
	cudaError_t r;
	bool outer;

	if (GS_UNLIKELY(!real))
		return NO_RUNTIME;
	calls_family(GS_CALL_GRAPH);
	outer = hook_enter();
	if (outer && h)
		graph_destroyed(h);
	r = real(h);
	hook_leave();
	return r;
}

GS_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
	return destroy((cudaError_t(*)(void *))REAL(cudaGraphExecDestroy), exec);
}

GS_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
	return destroy((cudaError_t(*)(void *))REAL(cudaGraphDestroy), g);
}

GS_EXPORT cudaError_t cudaDeviceGraphMemTrim(int device)
{
	__typeof__(&cudaDeviceGraphMemTrim) real = REAL(cudaDeviceGraphMemTrim);

	if (GS_UNLIKELY(!real))
		return NO_RUNTIME;
	GS_GRAPH_HOOK(cudaError_t, cudaSuccess, false, real(device), graph_trimmed());
}
