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
#include "real.h"
#include "record.h"

/* No runtime in the process behind us: what cudart says before init. */
#define NO_RUNTIME ((cudaError_t)3) /* cudaErrorInitializationError */

#define RUNTIME_WRAPPED(X)                                                                         \
	X(cudaMalloc)                                                                              \
	X(cudaFree)                                                                                \
	X(cudaMallocAsync)                                                                         \
	X(cudaMallocAsync_ptsz)                                                                    \
	X(cudaFreeAsync)                                                                           \
	X(cudaFreeAsync_ptsz)                                                                      \
	X(cudaMallocFromPoolAsync)                                                                 \
	X(cudaMallocFromPoolAsync_ptsz)                                                            \
	X(cudaMallocManaged)                                                                       \
	X(cudaMallocPitch)                                                                         \
	X(cudaMallocHost)                                                                          \
	X(cudaHostAlloc)                                                                           \
	X(cudaFreeHost)

enum rt_fn {
#define RT_ENUM(n) R_##n,
	RUNTIME_WRAPPED(RT_ENUM)
#undef RT_ENUM
		R_COUNT,
};

static const char *const rt_names[R_COUNT] = {
#define RT_NAME(n) [R_##n] = #n,
	RUNTIME_WRAPPED(RT_NAME)
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

/* Only valid in the exported function itself: its caller is the program. */
#define REAL(name) ((__typeof__(&(name)))rt_real(R_##name, __builtin_return_address(0)))

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

#define ALLOC_BODY(name, api, kind, ptr, size, ...)                                                \
	do {                                                                                       \
		__typeof__(&name) real = REAL(name);                                               \
		bool outer;                                                                        \
		if (GS_UNLIKELY(!real))                                                            \
			return NO_RUNTIME;                                                         \
		outer = hook_enter();                                                              \
		return done_alloc(real(__VA_ARGS__), outer, api, kind, (void **)(ptr), size);      \
	} while (0)

GS_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	ALLOC_BODY(cudaMalloc, GS_API_cudaMalloc, GS_KIND_DEVICE, devPtr, size, devPtr, size);
}

GS_EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t s)
{
	ALLOC_BODY(cudaMallocAsync, GS_API_cudaMallocAsync, GS_KIND_DEVICE, devPtr, size, devPtr,
		   size, s);
}

GS_EXPORT cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t s)
{
	ALLOC_BODY(cudaMallocAsync_ptsz, GS_API_cudaMallocAsync, GS_KIND_DEVICE, devPtr, size,
		   devPtr, size, s);
}

GS_EXPORT cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool,
					      cudaStream_t s)
{
	ALLOC_BODY(cudaMallocFromPoolAsync, GS_API_cudaMallocFromPoolAsync, GS_KIND_DEVICE, ptr,
		   size, ptr, size, pool, s);
}

GS_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t pool,
						   cudaStream_t s)
{
	ALLOC_BODY(cudaMallocFromPoolAsync_ptsz, GS_API_cudaMallocFromPoolAsync, GS_KIND_DEVICE,
		   ptr, size, ptr, size, pool, s);
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

GS_EXPORT cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t s)
{
	cudaError_t (*real)(void *, cudaStream_t) = REAL(cudaFreeAsync);

	if (GS_UNLIKELY(!real))
		return NO_RUNTIME;
	GS_FREE_HOOK(cudaError_t, cudaSuccess, GS_SPACE_DEVPTR, devPtr, real(devPtr, s));
}

GS_EXPORT cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t s)
{
	cudaError_t (*real)(void *, cudaStream_t) = REAL(cudaFreeAsync_ptsz);

	if (GS_UNLIKELY(!real))
		return NO_RUNTIME;
	GS_FREE_HOOK(cudaError_t, cudaSuccess, GS_SPACE_DEVPTR, devPtr, real(devPtr, s));
}

GS_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
	cudaError_t (*real)(void *) = REAL(cudaFreeHost);

	if (GS_UNLIKELY(!real))
		return NO_RUNTIME;
	GS_FREE_HOOK(cudaError_t, cudaSuccess, GS_SPACE_HOSTPTR, ptr, real(ptr));
}
