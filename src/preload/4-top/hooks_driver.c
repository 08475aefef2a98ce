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
 * report can say how allocations arrived, all made from the driver's rows
 * of cuda_entries.h; what each does around the real call is its shape's
 * (shapes.h), and it returns the real call's result unchanged.
 */
#include <dlfcn.h>
#include <string.h>

#include "core.h"
#include "cuda_abi.h"
#include "driver.h"
#include "real.h"
#include "shapes.h"
#include "start.h"
#include "state.h"
#include "torch_probe.h"

/*
 * ---- the wrappers: three entry points per row, one per door ----
 * The door is the entry point's; the rest, the door's count included, is
 * the row's shape, the same for each door (and for the runtime's rows).
 */
#define DOOR(name, before, after, entry, door, linkage, suffix, ...)                               \
	linkage CUresult name##suffix(GS_CUDA_PARAMS(__VA_ARGS__))                                 \
	{                                                                                          \
		__typeof__(&name) real;                                                            \
		struct gs_hook h;                                                                  \
                                                                                                   \
		real = REAL(name);                                                                 \
		if (before(&h, &entry, GS_DOOR_##door, real != NULL))                              \
			h.r = real(GS_CUDA_ARGS(__VA_ARGS__));                                     \
		return after(&h);                                                                  \
	}
#define DOORS(name, side, shape, api, kind, family, ...)                                           \
	DOOR(name, GS_BEFORE_##shape, GS_AFTER_##shape, GS_ENTRY(side, api, kind, family), DRIVER, \
	     GS_EXPORT, , __VA_ARGS__)                                                             \
	DOOR(name, GS_BEFORE_##shape, GS_AFTER_##shape, GS_ENTRY(side, api, kind, family), DLSYM,  \
	     static, __dlsym, __VA_ARGS__)                                                         \
	DOOR(name, GS_BEFORE_##shape, GS_AFTER_##shape, GS_ENTRY(side, api, kind, family),         \
	     GETPROC, static, __getproc, __VA_ARGS__)

GS_CUDA_DRIVER_ENTRIES(DOORS)
#undef DOORS
#undef DOOR

/* A per-thread (_ptsz) form has its plain twin's type, which cuda.h
 * checks (cuda_abi.h), when it has its own declaration only. */
#define SAME_TYPE(name, side, shape, api, ...)                                                     \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&name), __typeof__(&api)),          \
		       #name " has the type of " #api);
GS_CUDA_DRIVER_ENTRIES(SAME_TYPE)
#undef SAME_TYPE

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
	/* PyTorch's view, armed before its first block */
	if (atomic_load(&drv_bound) && gs_warm())
		torch_cuda_starting();
}

/*
 * A pointer the real cuGetProcAddress returned: every one is the address
 * of an exported libcuda symbol, so first bind the real functions from
 * the library that pointer lives in, then swap in the matching wrapper.
 */
void *driver_wrap_pointer(void *p)
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
