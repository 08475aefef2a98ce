/* SPDX-License-Identifier: MIT */
/* Framework allocators that keep a pool (pools.h): one table, both sides. */
#include <string.h>

#include "alts.h"
#include "names.h"
#include "pools.h"

static const struct {
	const char *label, *title;
	int fw;
} pools[GS_POOL_COUNT] = {
	[GS_POOL_TORCH] = { "PyTorch caching allocator", "PyTorch", GS_FW_PYTORCH },
	[GS_POOL_CUPY] = { "CuPy memory pool", "CuPy", GS_FW_CUPY },
	[GS_POOL_XLA] = { "XLA allocator", "JAX/XLA", GS_FW_JAX },
};

/* The stream-ordered entry points: a framework that allocates through
 * them (PyTorch's backend:cudaMallocAsync, CuPy's MemoryAsyncPool) asks
 * the driver's pool for every tensor, so each site is a tensor's. */
#define STREAM_ORDERED                                                                             \
	"cudaMallocAsync|cudaMallocFromPoolAsync|cuMemAllocAsync|cuMemAllocFromPoolAsync"

/* A site is a segment of POOL when one of its native frames, noise or not,
 * matches a row: its module's basename starts with one of MODULE (NULL:
 * any), its path contains one of DIR (NULL: any), its function matches
 * NAMES as FN says, and its api is one of APIS (NULL: any) and none of
 * NOT_APIS.  A named function says which path the framework took; a frame
 * in the framework's module without a name (a library without symbols)
 * cannot, and is taken for its default, the pool. */
static const struct {
	enum gs_pool pool;
	const char *module;
	const char *dir;
	enum alts_how fn;
	const char *names;
	const char *apis;
	const char *not_apis;
} rules[] = {
	/* PyTorch's caching allocator takes every segment (cudaMalloc, or
	 * cuMemCreate with expandable_segments) under its per-device
	 * c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator.
	 * With PYTORCH_NO_CUDA_MEMORY_CACHING=1, NativeCachingAllocator
	 * calls cudaMalloc itself, once per tensor: no pool, although in
	 * the same namespace and library.  Neither is the cudaMallocAsync
	 * backend (CudaMallocAsyncAllocator, there too): the api tells */
	{ GS_POOL_TORCH, NULL, NULL, ALTS_CONTAINS_MANGLED, "DeviceCachingAllocator", NULL,
	  STREAM_ORDERED },
	{ GS_POOL_TORCH, "libc10_cuda.so", NULL, ALTS_UNKNOWN, NULL, NULL, STREAM_ORDERED },
	/* CuPy's default MemoryPool grows in cupy/cuda/memory.cpython-*
	 * under SingleDeviceMemoryPool; after cupy.cuda.set_allocator(None)
	 * the same module allocates once per array under no *MemoryPool*
	 * name, and MemoryAsyncPool goes through the driver's pool (the api
	 * tells) */
	{ GS_POOL_CUPY, "memory.cpython-", "/cupy/", ALTS_CONTAINS_MANGLED, "MemoryPool", NULL,
	  STREAM_ORDERED },
	{ GS_POOL_CUPY, "memory.cpython-", "/cupy/", ALTS_UNKNOWN, NULL, NULL, STREAM_ORDERED },
	/* XLA's BFC allocator (tsl::BFCAllocator, JAX's default, which
	 * TensorFlow shares) grows by regions through its sub-allocators:
	 * stream_executor's DeviceMemAllocator (cuMemAlloc_v2) or
	 * GpuVirtualMemAllocator (cuMemCreate).  The platform allocator
	 * (XLA_PYTHON_CLIENT_ALLOCATOR=platform) reaches cuMemAlloc_v2 from
	 * the same module, through none of them, once per buffer; its
	 * cuda_async allocator is stream-ordered, which APIS leaves out.
	 * JAX's CUDA plugin is xla_cuda_plugin.so */
	{ GS_POOL_XLA, NULL, NULL, ALTS_CONTAINS_MANGLED,
	  "BFCAllocator|DeviceMemAllocator::Alloc|GpuVirtualMemAllocator::Alloc",
	  "cuMemAlloc_v2|cuMemCreate", NULL },
	{ GS_POOL_XLA, "xla_cuda_plugin.so", NULL, ALTS_UNKNOWN, NULL, "cuMemAlloc_v2|cuMemCreate",
	  NULL },
};

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int pools_frame(const char *api, const char *path, const char *function)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (rules[i].apis && !(api && alts_match(api, rules[i].apis, ALTS_EXACT)))
			continue;
		if (rules[i].not_apis && api && alts_match(api, rules[i].not_apis, ALTS_EXACT))
			continue;
		if ((rules[i].module || rules[i].dir) && !path)
			continue;
		if (rules[i].module && !alts_match(basename_of(path), rules[i].module, ALTS_PREFIX))
			continue;
		if (rules[i].dir && !alts_match(path, rules[i].dir, ALTS_CONTAINS_MANGLED))
			continue;
		if (rules[i].fn == ALTS_UNKNOWN ?
			    function != NULL :
			    rules[i].fn != ALTS_ANY &&
				    !(function &&
				      alts_match(function, rules[i].names, rules[i].fn)))
			continue;
		return rules[i].pool;
	}
	return GS_POOL_NONE;
}

const char *pools_label(int pool)
{
	return pool >= 0 && pool < GS_POOL_COUNT ? pools[pool].label : NULL;
}

const char *pools_title(int pool)
{
	return pool >= 0 && pool < GS_POOL_COUNT ? pools[pool].title : NULL;
}

int pools_framework(int pool)
{
	return pool >= 0 && pool < GS_POOL_COUNT ? pools[pool].fw : -1;
}

int pools_of_framework(int fw)
{
	for (int p = 0; p < GS_POOL_COUNT; p++)
		if (pools[p].fw == fw)
			return p;
	return GS_POOL_NONE;
}
