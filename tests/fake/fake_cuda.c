/* SPDX-License-Identifier: MIT */
/*
 * A fake libcuda.so.1: no GPU, but the entry points, return codes and
 * cuGetProcAddress lookup rules of NVIDIA's CUDA 13 driver wherever a test
 * can see them.  It is compiled against the real cuda.h when present, so a
 * signature that drifts fails to build.
 *
 * Device pointers are the addresses of small heap blocks: unique while live
 * and reused after a free, as a real allocator's are.  Programs must never
 * dereference them.  Pinned host memory is real, writable memory.  VMM
 * handles are never reused; reserved address ranges come from a bump
 * allocator high in the address space and are never mapped for real.
 *
 * Environment, read once by cuInit:
 *   GPUSPY_FAKE_DEVICES=N     number of devices (default 1, at most 16)
 *   GPUSPY_FAKE_MEM_TOTAL=B   bytes of memory per device (default 80 GiB)
 *   GPUSPY_FAKE_OOM_SIZE=B    every device, pitch, managed, async, pool or
 *                             cuMemCreate allocation of at least B bytes fails
 *                             with CUDA_ERROR_OUT_OF_MEMORY
 *   GPUSPY_FAKE_OOM_NTH=N     the Nth allocation call of the process fails with
 *                             CUDA_ERROR_OUT_OF_MEMORY; 1-based, counting every
 *                             call above plus pinned host allocations, failed
 *                             ones included, once its arguments were accepted
 * A failed allocation leaves its out-pointer untouched, as the driver does.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_abi.h"

#define FAKE_DRIVER_VERSION 13000
#define FAKE_MAX_DEVICES    16
#define FAKE_GRANULARITY    ((size_t)2 << 20)
#define FAKE_PITCH_ALIGN    512
/* Where reserved VA ranges start: canonical user space no one maps. */
#define FAKE_VA_BASE 0x600000000000ull

enum block_kind {
	BLK_DEVICE, /* cuMemAlloc*, cuMemAllocPitch, async and pool memory */
	BLK_MANAGED,
	BLK_HOST,    /* pinned host memory: addr is a real malloc'd buffer */
	BLK_PHYS,    /* cuMemCreate handle: addr is the handle */
	BLK_RESERVE, /* cuMemAddressReserve range */
	BLK_MAP,     /* one cuMemMap of a handle into a reserved range */
};

struct block {
	struct block *next;
	enum block_kind kind;
	uintptr_t addr;
	size_t size;
	int dev;	    /* device whose memory it uses, -1 for none */
	unsigned int maps;  /* BLK_PHYS: live mappings */
	bool released;	    /* BLK_PHYS: cuMemRelease called, maps pending */
	struct block *phys; /* BLK_MAP: the handle mapped */
};

struct fake_ctx {
	int dev;
	int retained;
};

struct fake_pool {
	int dev;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

/* Read once by cuInit, constant afterwards. */
static struct {
	int devices;
	size_t mem_total;
	size_t oom_size;	    /* 0: off */
	unsigned long long oom_nth; /* 0: off */
} cfg;

/* Everything below is protected by `lock`. */
static bool initialized;
static struct block *blocks;
static size_t dev_used[FAKE_MAX_DEVICES];
static unsigned long long alloc_calls;
static CUmemGenericAllocationHandle next_handle = 0x10000;
static CUdeviceptr next_va = FAKE_VA_BASE;
static struct fake_ctx ctxs[FAKE_MAX_DEVICES];
static struct fake_pool pools[FAKE_MAX_DEVICES];

/* The current context is per thread, as in the real driver. */
static __thread struct fake_ctx *cur_ctx;

static unsigned long long env_number(const char *name, unsigned long long dflt)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return dflt;
	v = strtoull(s, &end, 0);
	if (*end) {
		fprintf(stderr, "fake libcuda: ignoring %s=%s\n", name, s);
		return dflt;
	}
	return v;
}

static void config_read(void)
{
	unsigned long long n = env_number("GPUSPY_FAKE_DEVICES", 1);

	cfg.devices = n > FAKE_MAX_DEVICES ? FAKE_MAX_DEVICES : (int)n;
	cfg.mem_total = env_number("GPUSPY_FAKE_MEM_TOTAL", 80ull << 30);
	cfg.oom_size = env_number("GPUSPY_FAKE_OOM_SIZE", 0);
	cfg.oom_nth = env_number("GPUSPY_FAKE_OOM_NTH", 0);
	for (int i = 0; i < FAKE_MAX_DEVICES; i++) {
		ctxs[i].dev = i;
		pools[i].dev = i;
	}
}

static bool dev_valid(CUdevice dev)
{
	return dev >= 0 && dev < cfg.devices;
}

static bool ctx_valid(const struct fake_ctx *c)
{
	return c >= ctxs && c < ctxs + cfg.devices;
}

static bool pool_valid(const struct fake_pool *p)
{
	return p >= pools && p < pools + cfg.devices;
}

/*
 * Lock held.  The one gate every allocation passes once its arguments were
 * accepted: counts the call, applies the injected failures and the device's
 * capacity.  dev < 0 is host memory, which only GPUSPY_FAKE_OOM_NTH hits.
 */
static CUresult admit(size_t size, int dev)
{
	alloc_calls++;
	if (cfg.oom_nth && alloc_calls == cfg.oom_nth)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (dev < 0)
		return CUDA_SUCCESS;
	if (cfg.oom_size && size >= cfg.oom_size)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (size > cfg.mem_total - dev_used[dev])
		return CUDA_ERROR_OUT_OF_MEMORY;
	return CUDA_SUCCESS;
}

/* Lock held. */
static struct block *block_add(enum block_kind kind, size_t size, int dev)
{
	struct block *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->kind = kind;
	b->addr = (uintptr_t)b;
	b->size = size;
	b->dev = dev;
	b->next = blocks;
	blocks = b;
	if (dev >= 0)
		dev_used[dev] += size;
	return b;
}

/* Lock held.  Returns the link pointing at the block, for unlinking. */
static struct block **block_find(enum block_kind kind, uintptr_t addr)
{
	for (struct block **pp = &blocks; *pp; pp = &(*pp)->next)
		if ((*pp)->kind == kind && (*pp)->addr == addr)
			return pp;
	return NULL;
}

/* Lock held. */
static void block_remove(struct block **pp)
{
	struct block *b = *pp;

	*pp = b->next;
	if (b->dev >= 0)
		dev_used[b->dev] -= b->size;
	if (b->kind == BLK_HOST)
		free((void *)b->addr);
	free(b);
}

/* Lock held.  The device of the calling thread's context. */
static CUresult current_dev(int *dev)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!cur_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	*dev = cur_ctx->dev;
	return CUDA_SUCCESS;
}

static CUresult device_alloc(CUdeviceptr *dptr, size_t size, enum block_kind kind,
			     struct fake_pool *pool)
{
	struct block *b;
	CUresult r;
	int dev;

	if (!dptr || !size)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	r = current_dev(&dev);
	if (r == CUDA_SUCCESS && pool) {
		if (pool_valid(pool))
			dev = pool->dev;
		else
			r = CUDA_ERROR_INVALID_VALUE;
	}
	if (r == CUDA_SUCCESS)
		r = admit(size, dev);
	if (r == CUDA_SUCCESS) {
		b = block_add(kind, size, dev);
		if (b)
			*dptr = b->addr;
		else
			r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static CUresult device_free(CUdeviceptr dptr)
{
	struct block **pp;
	CUresult r = CUDA_SUCCESS;

	pthread_mutex_lock(&lock);
	if (!initialized) {
		r = CUDA_ERROR_NOT_INITIALIZED;
	} else if (dptr) {
		pp = block_find(BLK_DEVICE, dptr);
		if (!pp)
			pp = block_find(BLK_MANAGED, dptr);
		if (pp)
			block_remove(pp);
		else
			r = CUDA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static CUresult host_alloc(void **pp, size_t size)
{
	struct block *b;
	void *mem;
	CUresult r;
	int dev;

	if (!pp || !size)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	r = current_dev(&dev);
	if (r == CUDA_SUCCESS)
		r = admit(size, -1);
	if (r == CUDA_SUCCESS) {
		mem = malloc(size);
		b = mem ? block_add(BLK_HOST, size, -1) : NULL;
		if (b) {
			b->addr = (uintptr_t)mem;
			*pp = mem;
		} else {
			free(mem);
			r = CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/* Lock held.  Physical memory goes once it is both released and unmapped. */
static void phys_maybe_destroy(struct block *phys)
{
	if (phys->released && !phys->maps)
		block_remove(block_find(BLK_PHYS, phys->addr));
}

static CUresult get_proc(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
			 CUdriverProcAddressQueryResult *symbolStatus);

/* ---- initialization, devices, contexts ---- */

CUresult cuInit(unsigned int Flags)
{
	if (Flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_once(&config_once, config_read);
	pthread_mutex_lock(&lock);
	initialized = true;
	pthread_mutex_unlock(&lock);
	return cfg.devices ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

CUresult cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = FAKE_DRIVER_VERSION;
	return CUDA_SUCCESS;
}

/* Reads `initialized` unlocked: it only ever goes from false to true. */
static CUresult check_init(void)
{
	return __atomic_load_n(&initialized, __ATOMIC_ACQUIRE) ? CUDA_SUCCESS :
								 CUDA_ERROR_NOT_INITIALIZED;
}

CUresult cuDeviceGetCount(int *count)
{
	CUresult r = check_init();

	if (r)
		return r;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = cfg.devices;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	CUresult r = check_init();

	if (r)
		return r;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_valid(ordinal))
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CUresult r = check_init();

	if (r)
		return r;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "gpuspy fake GPU %d", dev);
	return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	CUresult r = check_init();

	if (r)
		return r;
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*bytes = cfg.mem_total;
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult r = check_init();

	if (r)
		return r;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	ctxs[dev].retained++;
	pthread_mutex_unlock(&lock);
	*pctx = (CUcontext)&ctxs[dev];
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	CUresult r = check_init();

	if (r)
		return r;
	if (!dev_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	if (ctxs[dev].retained > 0)
		ctxs[dev].retained--;
	else
		r = CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_unlock(&lock);
	return r;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	struct fake_ctx *c = (struct fake_ctx *)ctx;
	CUresult r = check_init();

	if (r)
		return r;
	if (c && !ctx_valid(c))
		return CUDA_ERROR_INVALID_CONTEXT;
	cur_ctx = c;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	CUresult r = check_init();

	if (r)
		return r;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = (CUcontext)cur_ctx;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
	CUresult r = check_init();

	if (r)
		return r;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!cur_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	*device = cur_ctx->dev;
	return CUDA_SUCCESS;
}

/* Nothing is ever queued: synchronizing only checks there is a context. */
static CUresult synchronize(void)
{
	CUresult r = check_init();

	if (r)
		return r;
	return cur_ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuCtxSynchronize(void)
{
	return synchronize();
}

CUresult cuStreamSynchronize(CUstream hStream)
{
	return synchronize();
}

CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
{
	CUresult r;
	int dev;

	if (!free || !total)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	r = current_dev(&dev);
	if (r == CUDA_SUCCESS) {
		*total = cfg.mem_total;
		*free = cfg.mem_total - dev_used[dev];
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/* ---- device, managed and stream-ordered memory ---- */

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	return device_alloc(dptr, bytesize, BLK_DEVICE, NULL);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
			    unsigned int ElementSizeBytes)
{
	size_t pitch = (WidthInBytes + FAKE_PITCH_ALIGN - 1) / FAKE_PITCH_ALIGN * FAKE_PITCH_ALIGN;
	CUresult r;

	if (!pPitch || !WidthInBytes || !Height ||
	    (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
		return CUDA_ERROR_INVALID_VALUE;
	r = device_alloc(dptr, pitch * Height, BLK_DEVICE, NULL);
	if (r == CUDA_SUCCESS)
		*pPitch = pitch;
	return r;
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	return device_alloc(dptr, bytesize, BLK_MANAGED, NULL);
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	return device_free(dptr);
}

/*
 * Stream-ordered calls complete at once: no work is ever queued, so the
 * legacy and per-thread default streams cannot be told apart here.  They
 * are still distinct entry points, as in the real driver.
 */
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return device_alloc(dptr, bytesize, BLK_DEVICE, NULL);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return device_alloc(dptr, bytesize, BLK_DEVICE, NULL);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
				 CUstream hStream)
{
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	return device_alloc(dptr, bytesize, BLK_DEVICE, (struct fake_pool *)pool);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
				      CUstream hStream)
{
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	return device_alloc(dptr, bytesize, BLK_DEVICE, (struct fake_pool *)pool);
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	return device_free(dptr);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	return device_free(dptr);
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	CUresult r = check_init();

	if (r)
		return r;
	if (!pool_out)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*pool_out = (CUmemoryPool)&pools[dev];
	return CUDA_SUCCESS;
}

/* Freed memory goes straight back to the device, so there is never anything to trim. */
CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	CUresult r = check_init();

	if (r)
		return r;
	return pool_valid((struct fake_pool *)pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- pinned host memory ---- */

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	if (Flags & ~(unsigned int)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
				    CU_MEMHOSTALLOC_WRITECOMBINED))
		return CUDA_ERROR_INVALID_VALUE;
	return host_alloc(pp, bytesize);
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return host_alloc(pp, bytesize);
}

CUresult cuMemFreeHost(void *p)
{
	struct block **pp;
	CUresult r = check_init();

	if (r || !p)
		return r;
	pthread_mutex_lock(&lock);
	pp = block_find(BLK_HOST, (uintptr_t)p);
	if (pp)
		block_remove(pp);
	else
		r = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&lock);
	return r;
}

/* ---- virtual memory management ---- */

CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
				       CUmemAllocationGranularity_flags option)
{
	CUresult r = check_init();

	if (r)
		return r;
	if (!granularity || !prop)
		return CUDA_ERROR_INVALID_VALUE;
	*granularity = FAKE_GRANULARITY;
	return CUDA_SUCCESS;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
		     const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct block *b;
	CUresult r = check_init();

	if (r)
		return r;
	if (!handle || !prop || flags || !size || size % FAKE_GRANULARITY ||
	    prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_valid(prop->location.id))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	r = admit(size, prop->location.id);
	if (r == CUDA_SUCCESS) {
		b = block_add(BLK_PHYS, size, prop->location.id);
		if (b) {
			b->addr = next_handle++;
			*handle = b->addr;
		} else {
			r = CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	pthread_mutex_unlock(&lock);
	return r;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct block **pp;
	CUresult r = check_init();

	if (r)
		return r;
	pthread_mutex_lock(&lock);
	pp = block_find(BLK_PHYS, handle);
	if (pp && !(*pp)->released) {
		(*pp)->released = true;
		phys_maybe_destroy(*pp);
	} else {
		r = CUDA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
			     unsigned long long flags)
{
	struct block *b;
	CUresult r = check_init();

	if (r)
		return r;
	if (!ptr || !size || size % FAKE_GRANULARITY || (alignment & (alignment - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	if (alignment < FAKE_GRANULARITY)
		alignment = FAKE_GRANULARITY;
	/* `addr` is only a hint; the real driver may ignore it too. */
	pthread_mutex_lock(&lock);
	b = block_add(BLK_RESERVE, size, -1);
	if (b) {
		next_va = (next_va + alignment - 1) & ~(CUdeviceptr)(alignment - 1);
		b->addr = next_va;
		next_va += size;
		*ptr = b->addr;
	} else {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	struct block **pp;
	CUresult r = check_init();

	if (r)
		return r;
	pthread_mutex_lock(&lock);
	pp = block_find(BLK_RESERVE, ptr);
	if (pp && (*pp)->size == size)
		block_remove(pp);
	else
		r = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&lock);
	return r;
}

/* Lock held.  Is [ptr, ptr+size) inside one reserved range? */
static bool va_reserved(CUdeviceptr ptr, size_t size)
{
	for (struct block *b = blocks; b; b = b->next)
		if (b->kind == BLK_RESERVE && ptr >= b->addr && ptr + size <= b->addr + b->size)
			return true;
	return false;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
		  unsigned long long flags)
{
	struct block **pp, *phys, *m;
	CUresult r = check_init();

	if (r)
		return r;
	if (flags || !size || size % FAKE_GRANULARITY || ptr % FAKE_GRANULARITY)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	pp = block_find(BLK_PHYS, handle);
	/* The block, not the link: block_add below may change the link. */
	phys = pp ? *pp : NULL;
	if (!phys || phys->released || offset + size > phys->size || !va_reserved(ptr, size)) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		m = block_add(BLK_MAP, size, -1);
		if (m) {
			m->addr = ptr;
			m->phys = phys;
			phys->maps++;
		} else {
			r = CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/* Unmaps every mapping inside [ptr, ptr+size); at least one must be there. */
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	struct block **pp, *m, *phys;
	CUresult r = check_init();
	bool any = false;

	if (r)
		return r;
	pthread_mutex_lock(&lock);
	pp = &blocks;
	while (*pp) {
		m = *pp;
		if (m->kind != BLK_MAP || m->addr < ptr || m->addr + m->size > ptr + size) {
			pp = &m->next;
			continue;
		}
		phys = m->phys;
		block_remove(pp);
		phys->maps--;
		phys_maybe_destroy(phys);
		any = true;
		/* `pp` may have been a link inside the handle just destroyed. */
		pp = &blocks;
	}
	pthread_mutex_unlock(&lock);
	return any ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	CUresult r = check_init();

	if (r)
		return r;
	return desc && count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- symbol lookup ---- */

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
			     CUdriverProcAddressQueryResult *symbolStatus)
{
	return get_proc(symbol, pfn, cudaVersion, flags, symbolStatus);
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	return get_proc(symbol, pfn, cudaVersion, flags, NULL);
}

/*
 * What cuGetProcAddress knows.  A name may have several rows: the one with
 * the highest `since` not above the caller's cudaVersion wins, and a
 * per-thread row wins over a plain one when the caller asks for per-thread
 * semantics.  Every pointer is the address of an exported symbol of this
 * library, as with the real driver; -Bsymbolic-functions makes sure it is
 * our own address even when LD_PRELOAD interposes the name.
 */
struct proc {
	const char *name;
	int since;	 /* lowest cudaVersion this row answers */
	bool per_thread; /* answers CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
	void *fn;
};

/* clang-format off */
#define SELF(f)			{ #f, 0, false, (void *)f }
#define SINCE(name, v, f)	{ name, v, false, (void *)f }
#define PTSZ(name, f)		{ name, 0, true, (void *)f }

static const struct proc procs[] = {
	SELF(cuInit),
	SELF(cuDriverGetVersion),
	SELF(cuDeviceGetCount),
	SELF(cuDeviceGet),
	SELF(cuDeviceGetName),
	SINCE("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
	SELF(cuDeviceTotalMem_v2),
	SELF(cuDevicePrimaryCtxRetain),
	SINCE("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
	SELF(cuDevicePrimaryCtxRelease_v2),
	SELF(cuCtxSetCurrent),
	SELF(cuCtxGetCurrent),
	SELF(cuCtxGetDevice),
	SELF(cuCtxSynchronize),
	SELF(cuStreamSynchronize),
	SINCE("cuMemGetInfo", 3020, cuMemGetInfo_v2),
	SELF(cuMemGetInfo_v2),
	SINCE("cuMemAlloc", 3020, cuMemAlloc_v2),
	SELF(cuMemAlloc_v2),
	SINCE("cuMemAllocPitch", 3020, cuMemAllocPitch_v2),
	SELF(cuMemAllocPitch_v2),
	SELF(cuMemAllocManaged),
	SINCE("cuMemFree", 3020, cuMemFree_v2),
	SELF(cuMemFree_v2),
	SELF(cuMemAllocAsync),
	PTSZ("cuMemAllocAsync", cuMemAllocAsync_ptsz),
	SELF(cuMemAllocAsync_ptsz),
	SELF(cuMemAllocFromPoolAsync),
	PTSZ("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync_ptsz),
	SELF(cuMemAllocFromPoolAsync_ptsz),
	SELF(cuMemFreeAsync),
	PTSZ("cuMemFreeAsync", cuMemFreeAsync_ptsz),
	SELF(cuMemFreeAsync_ptsz),
	SELF(cuDeviceGetDefaultMemPool),
	SELF(cuMemPoolTrimTo),
	SELF(cuMemHostAlloc),
	SINCE("cuMemAllocHost", 3020, cuMemAllocHost_v2),
	SELF(cuMemAllocHost_v2),
	SELF(cuMemFreeHost),
	SELF(cuMemGetAllocationGranularity),
	SELF(cuMemCreate),
	SELF(cuMemRelease),
	SELF(cuMemAddressReserve),
	SELF(cuMemAddressFree),
	SELF(cuMemMap),
	SELF(cuMemUnmap),
	SELF(cuMemSetAccess),
	SELF(cuGetProcAddress),
	SINCE("cuGetProcAddress", 12000, cuGetProcAddress_v2),
	SELF(cuGetProcAddress_v2),
};
/* clang-format on */

static CUresult get_proc(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
			 CUdriverProcAddressQueryResult *symbolStatus)
{
	const bool per_thread = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	const struct proc *best = NULL;
	bool known = false;

	if (!symbol || !pfn ||
	    flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
				  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		const struct proc *p = &procs[i];

		if (strcmp(p->name, symbol))
			continue;
		known = true;
		if (p->since > cudaVersion || (p->per_thread && !per_thread))
			continue;
		if (!best || p->per_thread > best->per_thread ||
		    (p->per_thread == best->per_thread && p->since > best->since))
			best = p;
	}
	*pfn = best ? best->fn : NULL;
	if (symbolStatus && best)
		*symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
	else if (symbolStatus && known)
		*symbolStatus = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
	else if (symbolStatus)
		*symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return best ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
