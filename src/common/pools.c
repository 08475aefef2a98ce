/* SPDX-License-Identifier: MIT */
/* Framework allocators that keep a pool (pools.h): one table, both sides. */
#include <string.h>

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
	enum pools_match fn;
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
	{ GS_POOL_TORCH, NULL, NULL, POOLS_CONTAINS, "DeviceCachingAllocator", NULL,
	  STREAM_ORDERED },
	{ GS_POOL_TORCH, "libc10_cuda.so", NULL, POOLS_UNKNOWN, NULL, NULL, STREAM_ORDERED },
	/* CuPy's default MemoryPool grows in cupy/cuda/memory.cpython-*
	 * under SingleDeviceMemoryPool; after cupy.cuda.set_allocator(None)
	 * the same module allocates once per array under no *MemoryPool*
	 * name, and MemoryAsyncPool goes through the driver's pool (the api
	 * tells) */
	{ GS_POOL_CUPY, "memory.cpython-", "/cupy/", POOLS_CONTAINS, "MemoryPool", NULL,
	  STREAM_ORDERED },
	{ GS_POOL_CUPY, "memory.cpython-", "/cupy/", POOLS_UNKNOWN, NULL, NULL, STREAM_ORDERED },
	/* XLA's BFC allocator (tsl::BFCAllocator, JAX's default, which
	 * TensorFlow shares) grows by regions through its sub-allocators:
	 * stream_executor's DeviceMemAllocator (cuMemAlloc_v2) or
	 * GpuVirtualMemAllocator (cuMemCreate).  The platform allocator
	 * (XLA_PYTHON_CLIENT_ALLOCATOR=platform) reaches cuMemAlloc_v2 from
	 * the same module, through none of them, once per buffer; its
	 * cuda_async allocator is stream-ordered, which APIS leaves out.
	 * JAX's CUDA plugin is xla_cuda_plugin.so */
	{ GS_POOL_XLA, NULL, NULL, POOLS_CONTAINS,
	  "BFCAllocator|DeviceMemAllocator::Alloc|GpuVirtualMemAllocator::Alloc",
	  "cuMemAlloc_v2|cuMemCreate", NULL },
	{ GS_POOL_XLA, "xla_cuda_plugin.so", NULL, POOLS_UNKNOWN, NULL, "cuMemAlloc_v2|cuMemCreate",
	  NULL },
};

/* Whether ALT (N bytes, "a::b::c") occurs in the mangled name S as its
 * nested-name parts do: "a1b1c", each part after the first led by its
 * length ("DeviceMemAllocator::Alloc" in
 * "_ZN15stream_executor18DeviceMemAllocator5AllocEbmm"). */
static bool in_mangled(const char *s, const char *alt, size_t n)
{
	char m[256];
	size_t k = 0;
	const char *p = alt, *end = alt + n;

	while (p < end) {
		const char *q = p;
		size_t len;

		while (q < end && !(q[0] == ':' && q + 1 < end && q[1] == ':'))
			q++;
		len = (size_t)(q - p);
		if (p != alt) {
			int w = 0;

			/* the part's length, in decimal */
			for (size_t x = len; x; x /= 10)
				w++;
			if (k + (size_t)w + len >= sizeof(m))
				return false;
			for (int d = w - 1, x = (int)len; d >= 0; d--, x /= 10)
				m[k + (size_t)d] = (char)('0' + x % 10);
			k += (size_t)w;
		} else if (len >= sizeof(m)) {
			return false;
		}
		memcpy(m + k, p, len);
		k += len;
		p = q < end ? q + 2 : q;
	}
	m[k] = '\0';
	return k && strstr(s, m) != NULL;
}

bool pools_match_alts(const char *s, const char *alts, enum pools_match how)
{
	size_t slen = strlen(s);
	bool mangled = strncmp(s, "_Z", 2) == 0;

	while (*alts) {
		size_t n = strcspn(alts, "|");

		switch (how) {
		case POOLS_EXACT:
			if (n == slen && strncmp(s, alts, n) == 0)
				return true;
			break;
		case POOLS_PREFIX:
			if (n <= slen && strncmp(s, alts, n) == 0)
				return true;
			break;
		case POOLS_CONTAINS:
			for (const char *p = s; (size_t)(p - s) + n <= slen; p++)
				if (strncmp(p, alts, n) == 0)
					return true;
			if (mangled && in_mangled(s, alts, n))
				return true;
			break;
		default:
			break;
		}
		alts += n;
		if (*alts == '|')
			alts++;
	}
	return false;
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int pools_frame(const char *api, const char *path, const char *function)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (rules[i].apis && !(api && pools_match_alts(api, rules[i].apis, POOLS_EXACT)))
			continue;
		if (rules[i].not_apis && api &&
		    pools_match_alts(api, rules[i].not_apis, POOLS_EXACT))
			continue;
		if ((rules[i].module || rules[i].dir) && !path)
			continue;
		if (rules[i].module &&
		    !pools_match_alts(basename_of(path), rules[i].module, POOLS_PREFIX))
			continue;
		if (rules[i].dir && !pools_match_alts(path, rules[i].dir, POOLS_CONTAINS))
			continue;
		if (rules[i].fn == POOLS_UNKNOWN ?
			    function != NULL :
			    rules[i].fn != POOLS_ANY &&
				    !(function &&
				      pools_match_alts(function, rules[i].names, rules[i].fn)))
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
