/* SPDX-License-Identifier: MIT */
/*
 * Runtime entry points (cuda*), for programs and libraries that call a
 * shared libcudart by PLT, as PyTorch does.  gpuspy's definitions are
 * unversioned, so they interpose cudaMalloc@libcudart.so.13 too, and
 * RTLD_NEXT finds the real ones.  A static cudart (nvcc's default, CuPy)
 * never reaches these; its allocations are seen at the driver, where the
 * runtime's own nested driver call is skipped when we get here first.
 * One wrapper per runtime row of cuda_entries.h.
 */
#include <dlfcn.h>

#include "core.h"
#include "cuda_abi.h"
#include "real.h"
#include "shapes.h"

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
static __attribute__((noinline)) void *rt_real_find(enum rt_fn f, const void *caller)
{
	void *p = real_dlsym(RTLD_NEXT, rt_names[f]);
	Dl_info info;

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

/* Found once: then one load, inline in the wrapper. */
static inline void *rt_real(enum rt_fn f, const void *caller)
{
	void *p = atomic_load_explicit(&rt_real_fn[f], memory_order_acquire);

	return GS_LIKELY(p) ? p : rt_real_find(f, caller);
}

/*
 * ---- the wrappers, one per row ----
 * Each looks its real function up first, in the exported function itself
 * (its caller is the program).  The rest, the count at the runtime door
 * included, is the row's shape (shapes.h), as for the driver's.
 */
#define HOOK(name, before, after, entry, ...)                                                      \
	GS_EXPORT cudaError_t name(GS_CUDA_PARAMS(__VA_ARGS__))                                    \
	{                                                                                          \
		__typeof__(&name) real;                                                            \
		struct gs_hook h;                                                                  \
                                                                                                   \
		real = (__typeof__(&name))rt_real(R_##name, __builtin_return_address(0));          \
		if (before(&h, &entry, GS_DOOR_RUNTIME, real != NULL))                             \
			h.r = real(GS_CUDA_ARGS(__VA_ARGS__));                                     \
		return after(&h);                                                                  \
	}
#define HOOKS(name, side, shape, api, kind, family, ...)                                           \
	HOOK(name, GS_BEFORE_##shape, GS_AFTER_##shape, GS_ENTRY(side, api, kind, family),         \
	     __VA_ARGS__)

GS_CUDA_RUNTIME_ENTRIES(HOOKS)
#undef HOOKS
#undef HOOK

/* A per-thread (_ptsz) form has its plain twin's type, which
 * cuda_runtime_api.h checks (cuda_abi.h), when it has its own
 * declaration only. */
#define SAME_TYPE(name, side, shape, api, ...)                                                     \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&name), __typeof__(&api)),          \
		       #name " has the type of " #api);
GS_CUDA_RUNTIME_ENTRIES(SAME_TYPE)
#undef SAME_TYPE
