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
 *   GPUSPY_FAKE_MEM_ELSEWHERE=B  bytes of each device held by other processes:
 *                             never free to this one (cuMemGetInfo, allocations)
 *   GPUSPY_FAKE_OOM_SIZE=B    every device, pitch, managed, async, pool or
 *                             cuMemCreate allocation of at least B bytes fails
 *                             with CUDA_ERROR_OUT_OF_MEMORY
 *   GPUSPY_FAKE_OOM_NTH=N     the Nth allocation call of the process fails with
 *                             CUDA_ERROR_OUT_OF_MEMORY; 1-based, counting every
 *                             call above plus pinned host allocations, failed
 *                             ones included, once its arguments were accepted
 *   GPUSPY_FAKE_EXIT_TEARDOWN=1  once the process's exit handlers ran, the
 *                             graph-memory attributes are refused with
 *                             CUDA_ERROR_DEINITIALIZED, as a driver that the
 *                             runtime's exit handler shut down
 *   GPUSPY_FAKE_DEVICE_VA=1   device and managed pointers span their size:
 *                             the lowest free range of a device address
 *                             space of their own (first fit, 256-byte
 *                             aligned, reused after a free), so that live
 *                             allocations never overlap, as a real driver's
 *                             (a heap block's address spans a few bytes)
 * A failed allocation leaves its out-pointer untouched, as the driver does.
 *
 * CUDA graphs, as far as their memory goes: a memory-alloc node gets its
 * address when it is added (a fresh one, from the reserved-range bump
 * allocator) and its memory only when an executable graph holding it is
 * launched; a free node, cuMemFree or cuMemFreeAsync gives it back
 * (cuGraphAddNode makes these two nodes, and no other type).  A
 * relaunch while the graph's own allocations are still live fails, unless
 * the graph was instantiated with AUTO_FREE_ON_LAUNCH.  Streams made by
 * cuStreamCreate can be captured: cuMemAllocAsync and cuMemFreeAsync on a
 * capturing stream add nodes to the capture's graph and allocate nothing.
 * Each device's graph pool keeps what its graphs once used (reserved)
 * until cuDeviceGraphMemTrim, as the driver's does.
 */
#include <pthread.h>
#include <stdatomic.h>
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
	BLK_GRAPH,   /* a graph allocation made resident by a launch */
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
	size_t elsewhere;	    /* held by other processes */
	size_t oom_size;	    /* 0: off */
	unsigned long long oom_nth; /* 0: off */
	bool exit_teardown;
	bool device_va;
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

/* Graphs: nodes in the order they were added; an executable graph copies them. */
struct gnode {
	bool is_free; /* a free node; else an alloc node */
	CUdeviceptr dptr;
	size_t size;
	int dev;
};

struct fgraph {
	struct fgraph *next;
	struct gnode *nodes;
	size_t n, cap;
	bool is_exec;	/* an executable graph */
	bool auto_free; /* is_exec: instantiated with AUTO_FREE_ON_LAUNCH */
};

struct fstream {
	struct fstream *next;
	struct fgraph *capture; /* the graph being captured into, or NULL */
	cuuint64_t capture_id;
};

static struct fgraph *graphs; /* graphs and executable graphs */
static struct fstream *streams;
static cuuint64_t next_capture_id = 1;
static uintptr_t next_node = 1;
static struct {
	unsigned long long used, used_high, reserved, reserved_high;
} graph_mem[FAKE_MAX_DEVICES];
static atomic_bool torn_down; /* GPUSPY_FAKE_EXIT_TEARDOWN: exit handlers ran */

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
	cfg.elsewhere = env_number("GPUSPY_FAKE_MEM_ELSEWHERE", 0);
	if (cfg.elsewhere > cfg.mem_total)
		cfg.elsewhere = cfg.mem_total;
	cfg.oom_size = env_number("GPUSPY_FAKE_OOM_SIZE", 0);
	cfg.oom_nth = env_number("GPUSPY_FAKE_OOM_NTH", 0);
	cfg.exit_teardown = env_number("GPUSPY_FAKE_EXIT_TEARDOWN", 0) != 0;
	cfg.device_va = env_number("GPUSPY_FAKE_DEVICE_VA", 0) != 0;
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
	if (size > cfg.mem_total - cfg.elsewhere - dev_used[dev])
		return CUDA_ERROR_OUT_OF_MEMORY;
	return CUDA_SUCCESS;
}

/* Allocation calls that reached this driver, refused ones included: a test
 * tells by it that a refusal never came here. */
unsigned long long gpuspy_fake_alloc_calls(void);

unsigned long long gpuspy_fake_alloc_calls(void)
{
	unsigned long long n;

	pthread_mutex_lock(&lock);
	n = alloc_calls;
	pthread_mutex_unlock(&lock);
	return n;
}

/* GPUSPY_FAKE_DEVICE_VA: where device and managed pointers lie, apart from
 * the reserved ranges' bump allocator. */
#define FAKE_DEVICE_VA_BASE 0x700000000000ull

/* Lock held.  The lowest 256-byte aligned address from which SIZE bytes
 * overlap no live device or managed block: first fit, by moving past each
 * block in the way until none is (quadratic, for tests' few blocks). */
static uintptr_t device_va(size_t size)
{
	uintptr_t at = FAKE_DEVICE_VA_BASE;
	bool moved = true;

	while (moved) {
		moved = false;
		for (const struct block *b = blocks; b; b = b->next)
			if ((b->kind == BLK_DEVICE || b->kind == BLK_MANAGED) &&
			    b->addr < at + size && at < b->addr + b->size) {
				at = (b->addr + b->size + 255) & ~(uintptr_t)255;
				moved = true;
			}
	}
	return at;
}

/* Lock held. */
static struct block *block_add(enum block_kind kind, size_t size, int dev)
{
	struct block *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->kind = kind;
	b->addr = cfg.device_va && (kind == BLK_DEVICE || kind == BLK_MANAGED) ? device_va(size) :
										 (uintptr_t)b;
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
		if (!pp && (pp = block_find(BLK_GRAPH, dptr)))
			graph_mem[(*pp)->dev].used -= (*pp)->size;
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

static void teardown(void)
{
	atomic_store(&torn_down, true);
}

static void config_read_once(void)
{
	config_read();
	/* registered by the first cuInit, as the runtime registers its own */
	if (cfg.exit_teardown)
		atexit(teardown);
}

CUresult cuInit(unsigned int Flags)
{
	if (Flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_once(&config_once, config_read_once);
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

/* Device N sits at PCI 0000:(0x10 + N):00.0, as the fake NVML's GPU 0 does
 * at 0x10 (tests/fake/nvml). */
CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	CUresult r = check_init();

	if (r)
		return r;
	if (!pciBusId || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(pciBusId, (size_t)len, "0000:%02X:00.0", 0x10 + dev);
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
		*free = cfg.mem_total - cfg.elsewhere - dev_used[dev];
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
static CUresult graph_add(struct fgraph *g, bool is_free, CUdeviceptr dptr, size_t size, int dev);
static struct fstream *stream_find(CUstream s);
static bool graph_address(CUdeviceptr dptr);

/* Lock held.  The graph S is capturing into, or NULL. */
static struct fgraph *capturing(CUstream s)
{
	struct fstream *st = stream_find(s);

	return st ? st->capture : NULL;
}

/* Lock held.  A fresh address for a graph allocation. */
static CUdeviceptr graph_va(size_t size)
{
	CUdeviceptr p = (next_va + 255) & ~(CUdeviceptr)255;

	next_va = p + size;
	return p;
}

static CUresult async_alloc(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	struct fgraph *g;
	CUdeviceptr p;
	CUresult r;
	int dev;

	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	g = capturing(hStream);
	if (!g) {
		pthread_mutex_unlock(&lock);
		return device_alloc(dptr, bytesize, BLK_DEVICE, NULL);
	}
	r = current_dev(&dev);
	if (r == CUDA_SUCCESS) {
		p = graph_va(bytesize);
		r = graph_add(g, false, p, bytesize, dev);
		if (r == CUDA_SUCCESS)
			*dptr = p;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static CUresult async_free(CUdeviceptr dptr, CUstream hStream)
{
	struct fgraph *g;
	CUresult r;

	pthread_mutex_lock(&lock);
	g = capturing(hStream);
	if (!g) {
		pthread_mutex_unlock(&lock);
		return device_free(dptr);
	}
	r = graph_address(dptr) ? graph_add(g, true, dptr, 0, -1) : CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&lock);
	return r;
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return async_alloc(dptr, bytesize, hStream);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return async_alloc(dptr, bytesize, hStream);
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
	return async_free(dptr, hStream);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	return async_free(dptr, hStream);
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

/* ---- streams, capture and graphs ---- */

/* Lock held.  Only streams made by cuStreamCreate: the legacy and
 * per-thread default streams cannot be captured. */
static struct fstream *stream_find(CUstream s)
{
	for (struct fstream *st = streams; st; st = st->next)
		if ((CUstream)st == s)
			return st;
	return NULL;
}

/* Lock held. */
static struct fgraph *graph_find(const void *h, bool is_exec)
{
	for (struct fgraph *g = graphs; g; g = g->next)
		if (g == h && g->is_exec == is_exec)
			return g;
	return NULL;
}

/* Lock held.  Was DPTR handed out by an alloc node of a graph still there? */
static bool graph_address(CUdeviceptr dptr)
{
	for (struct fgraph *g = graphs; g; g = g->next)
		for (size_t i = 0; i < g->n; i++)
			if (!g->nodes[i].is_free && g->nodes[i].dptr == dptr)
				return true;
	return false;
}

/* Lock held. */
static CUresult graph_add(struct fgraph *g, bool is_free, CUdeviceptr dptr, size_t size, int dev)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 8;
		struct gnode *nodes = realloc(g->nodes, cap * sizeof(*nodes));

		if (!nodes)
			return CUDA_ERROR_OUT_OF_MEMORY;
		g->nodes = nodes;
		g->cap = cap;
	}
	g->nodes[g->n++] = (struct gnode){ is_free, dptr, size, dev };
	return CUDA_SUCCESS;
}

/* Lock held. */
static struct fgraph *graph_new(void)
{
	struct fgraph *g = calloc(1, sizeof(*g));

	if (g) {
		g->next = graphs;
		graphs = g;
	}
	return g;
}

/* Lock held. */
static void graph_unlink(struct fgraph *g)
{
	for (struct fgraph **pp = &graphs; *pp; pp = &(*pp)->next)
		if (*pp == g) {
			*pp = g->next;
			break;
		}
	for (struct fstream *st = streams; st; st = st->next)
		if (st->capture == g)
			st->capture = NULL;
	free(g->nodes);
	free(g);
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	struct fstream *st;
	CUresult r = check_init();

	if (r)
		return r;
	if (!phStream || Flags > 1)
		return CUDA_ERROR_INVALID_VALUE;
	st = calloc(1, sizeof(*st));
	if (!st)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&lock);
	st->next = streams;
	streams = st;
	pthread_mutex_unlock(&lock);
	*phStream = (CUstream)st;
	return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
	CUresult r = check_init();

	if (r)
		return r;
	pthread_mutex_lock(&lock);
	r = CUDA_ERROR_INVALID_HANDLE;
	for (struct fstream **pp = &streams; *pp; pp = &(*pp)->next)
		if ((CUstream)*pp == hStream) {
			struct fstream *st = *pp;

			*pp = st->next;
			free(st);
			r = CUDA_SUCCESS;
			break;
		}
	pthread_mutex_unlock(&lock);
	return r;
}

CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
	struct fstream *st;
	CUresult r = check_init();

	if (r)
		return r;
	if (mode > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	st = stream_find(hStream);
	if (!st)
		r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	else if (st->capture)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (!(st->capture = graph_new()))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else
		st->capture_id = next_capture_id++;
	pthread_mutex_unlock(&lock);
	return r;
}

/* The other forms of a capture's beginning: the legacy one-argument
 * form (global mode), the per-thread forms (the fake's streams know no
 * per-thread default stream: the same stream), and capturing into a
 * graph of the caller's, which the fake does not do. */
CUresult cuStreamBeginCapture(CUstream hStream)
{
	return cuStreamBeginCapture_v2(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CUresult cuStreamBeginCapture_ptsz(CUstream hStream)
{
	return cuStreamBeginCapture_v2(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
	return cuStreamBeginCapture_v2(hStream, mode);
}

CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
				     const CUgraphNode *dependencies,
				     const CUgraphEdgeData *dependencyData, size_t numDependencies,
				     CUstreamCaptureMode mode)
{
	(void)hStream, (void)hGraph, (void)dependencies, (void)dependencyData,
		(void)numDependencies, (void)mode;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
					  const CUgraphNode *dependencies,
					  const CUgraphEdgeData *dependencyData,
					  size_t numDependencies, CUstreamCaptureMode mode)
{
	return cuStreamBeginCaptureToGraph(hStream, hGraph, dependencies, dependencyData,
					   numDependencies, mode);
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	struct fstream *st;
	CUresult r = check_init();

	if (r)
		return r;
	if (!phGraph)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	st = stream_find(hStream);
	if (st && st->capture) {
		*phGraph = (CUgraph)st->capture;
		st->capture = NULL;
	} else {
		r = CUDA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
				   cuuint64_t *id_out, CUgraph *graph_out,
				   const CUgraphNode **dependencies_out,
				   const CUgraphEdgeData **edgeData_out,
				   size_t *numDependencies_out)
{
	struct fstream *st;
	CUresult r = check_init();

	if (r)
		return r;
	if (!captureStatus_out)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	st = stream_find(hStream);
	if (!st && hStream != NULL && hStream != CU_STREAM_LEGACY &&
	    hStream != CU_STREAM_PER_THREAD) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else {
		*captureStatus_out = st && st->capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE :
							 CU_STREAM_CAPTURE_STATUS_NONE;
		if (st && st->capture) {
			if (id_out)
				*id_out = st->capture_id;
			if (graph_out)
				*graph_out = (CUgraph)st->capture;
			if (dependencies_out)
				*dependencies_out = NULL;
			if (edgeData_out)
				*edgeData_out = NULL;
			if (numDependencies_out)
				*numDependencies_out = 0;
		}
	}
	pthread_mutex_unlock(&lock);
	return r;
}

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	struct fgraph *g;
	CUresult r = check_init();

	if (r)
		return r;
	if (!phGraph || flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	g = graph_new();
	pthread_mutex_unlock(&lock);
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*phGraph = (CUgraph)g;
	return CUDA_SUCCESS;
}

CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
				const CUgraphNode *dependencies, size_t numDependencies,
				CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
	struct fgraph *g;
	CUdeviceptr p;
	CUresult r = check_init();

	if (r)
		return r;
	if (!phGraphNode || !nodeParams || !nodeParams->bytesize ||
	    (numDependencies && !dependencies) ||
	    nodeParams->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    nodeParams->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_valid(nodeParams->poolProps.location.id))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	g = graph_find(hGraph, false);
	if (!g) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		p = graph_va(nodeParams->bytesize);
		r = graph_add(g, false, p, nodeParams->bytesize, nodeParams->poolProps.location.id);
		if (r == CUDA_SUCCESS) {
			nodeParams->dptr = p;
			*phGraphNode = (CUgraphNode)next_node++;
		}
	}
	pthread_mutex_unlock(&lock);
	return r;
}

CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph,
			       const CUgraphNode *dependencies, size_t numDependencies,
			       CUdeviceptr dptr)
{
	struct fgraph *g;
	CUresult r = check_init();

	if (r)
		return r;
	if (!phGraphNode || (numDependencies && !dependencies))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	g = graph_find(hGraph, false);
	if (!g || !graph_address(dptr)) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		for (size_t i = 0; i < g->n; i++)
			if (g->nodes[i].is_free && g->nodes[i].dptr == dptr)
				r = CUDA_ERROR_INVALID_VALUE; /* freed twice in one graph */
		if (r == CUDA_SUCCESS)
			r = graph_add(g, true, dptr, 0, -1);
		if (r == CUDA_SUCCESS)
			*phGraphNode = (CUgraphNode)next_node++;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/*
 * The generic node: a memory node as the two calls above make it (this
 * library's own, -Bsymbolic-functions, never a preloaded wrapper of
 * them), its edge data ignored; the other node types are not faked.
 */
CUresult cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
			   const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
			   size_t numDependencies, CUgraphNodeParams *nodeParams)
{
	CUDA_MEM_ALLOC_NODE_PARAMS p = { 0 };
	CUresult r = check_init();

	if (r)
		return r;
	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	switch (nodeParams->type) {
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
		p.poolProps = nodeParams->alloc.poolProps;
		p.accessDescs = nodeParams->alloc.accessDescs;
		p.accessDescCount = nodeParams->alloc.accessDescCount;
		p.bytesize = nodeParams->alloc.bytesize;
		r = cuGraphAddMemAllocNode(phGraphNode, hGraph, dependencies, numDependencies, &p);
		if (r == CUDA_SUCCESS)
			nodeParams->alloc.dptr = p.dptr;
		return r;
	case CU_GRAPH_NODE_TYPE_MEM_FREE:
		return cuGraphAddMemFreeNode(phGraphNode, hGraph, dependencies, numDependencies,
					     nodeParams->free.dptr);
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

static CUresult instantiate(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
	struct fgraph *g, *e;
	CUresult r = check_init();

	if (r)
		return r;
	if (!phGraphExec || flags & ~0xfull)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	g = graph_find(hGraph, false);
	e = g ? graph_new() : NULL;
	if (!g) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else if (!e) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		e->is_exec = true;
		e->auto_free = flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH;
		for (size_t i = 0; i < g->n && r == CUDA_SUCCESS; i++)
			r = graph_add(e, g->nodes[i].is_free, g->nodes[i].dptr, g->nodes[i].size,
				      g->nodes[i].dev);
		if (r == CUDA_SUCCESS)
			*phGraphExec = (CUgraphExec)e;
		else
			graph_unlink(e);
	}
	pthread_mutex_unlock(&lock);
	return r;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
				     unsigned long long flags)
{
	return instantiate(phGraphExec, hGraph, flags);
}

static CUresult instantiate_params(CUgraphExec *phGraphExec, CUgraph hGraph,
				   CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
	CUresult r;

	if (!params)
		return CUDA_ERROR_INVALID_VALUE;
	r = instantiate(phGraphExec, hGraph, params->flags);
	params->hErrNode_out = NULL;
	params->result_out =
		r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
	return r;
}

CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
				      CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
	return instantiate_params(phGraphExec, hGraph, instantiateParams);
}

CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
					   CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
	return instantiate_params(phGraphExec, hGraph, instantiateParams);
}

/* Lock held.  The allocation of a graph at DPTR, made resident by a launch. */
static struct block **graph_block(CUdeviceptr dptr)
{
	return block_find(BLK_GRAPH, dptr);
}

static void graph_mem_high(int dev)
{
	if (graph_mem[dev].used > graph_mem[dev].used_high)
		graph_mem[dev].used_high = graph_mem[dev].used;
	if (graph_mem[dev].used > graph_mem[dev].reserved)
		graph_mem[dev].reserved = graph_mem[dev].used;
	if (graph_mem[dev].reserved > graph_mem[dev].reserved_high)
		graph_mem[dev].reserved_high = graph_mem[dev].reserved;
}

/*
 * The graph's allocations first, then its frees, as a graph whose free
 * nodes depend on its alloc nodes runs.  Nothing is changed when the
 * launch fails.
 */
static CUresult launch(CUgraphExec hGraphExec)
{
	struct block **pp, *b;
	struct fgraph *e;
	CUresult r = check_init();

	if (r)
		return r;
	pthread_mutex_lock(&lock);
	e = graph_find(hGraphExec, true);
	if (!e)
		r = CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; e && i < e->n && r == CUDA_SUCCESS; i++)
		if (!e->nodes[i].is_free && graph_block(e->nodes[i].dptr) && !e->auto_free)
			r = CUDA_ERROR_INVALID_VALUE; /* its last launch's memory is still live */
	for (size_t i = 0; e && i < e->n && r == CUDA_SUCCESS; i++) {
		const struct gnode *n = &e->nodes[i];

		if (n->is_free)
			continue;
		if ((pp = graph_block(n->dptr))) {
			graph_mem[n->dev].used -= (*pp)->size;
			block_remove(pp);
		}
		b = block_add(BLK_GRAPH, n->size, n->dev);
		if (!b) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
			break;
		}
		b->addr = n->dptr;
		graph_mem[n->dev].used += n->size;
		graph_mem_high(n->dev);
	}
	for (size_t i = 0; e && i < e->n && r == CUDA_SUCCESS; i++) {
		if (!e->nodes[i].is_free || !(pp = graph_block(e->nodes[i].dptr)))
			continue;
		graph_mem[(*pp)->dev].used -= (*pp)->size;
		block_remove(pp);
	}
	pthread_mutex_unlock(&lock);
	return r;
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	return launch(hGraphExec);
}

CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return launch(hGraphExec);
}

/* Allocations the executable graph made stay live: only a free gives them back. */
CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	struct fgraph *e;
	CUresult r = check_init();

	if (r)
		return r;
	pthread_mutex_lock(&lock);
	e = graph_find(hGraphExec, true);
	if (e)
		graph_unlink(e);
	else
		r = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&lock);
	return r;
}

CUresult cuGraphDestroy(CUgraph hGraph)
{
	struct fgraph *g;
	CUresult r = check_init();

	if (r)
		return r;
	pthread_mutex_lock(&lock);
	g = graph_find(hGraph, false);
	if (g)
		graph_unlink(g);
	else
		r = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&lock);
	return r;
}

/* The pool gives back what no live graph allocation uses. */
CUresult cuDeviceGraphMemTrim(CUdevice device)
{
	CUresult r = check_init();

	if (r)
		return r;
	if (!dev_valid(device))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	graph_mem[device].reserved = graph_mem[device].used;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
	cuuint64_t v;
	CUresult r = check_init();

	if (r)
		return r;
	if (atomic_load(&torn_down))
		return CUDA_ERROR_DEINITIALIZED;
	if (!dev_valid(device))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	switch (attr) {
	case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
		v = graph_mem[device].used;
		break;
	case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
		v = graph_mem[device].used_high;
		break;
	case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT:
		v = graph_mem[device].reserved;
		break;
	case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
		v = graph_mem[device].reserved_high;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_unlock(&lock);
	if (r == CUDA_SUCCESS)
		memcpy(value, &v, sizeof(v));
	return r;
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
	SELF(cuDeviceGetPCIBusId),
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
	SELF(cuStreamCreate),
	SINCE("cuStreamDestroy", 4000, cuStreamDestroy_v2),
	SELF(cuStreamDestroy_v2),
	SELF(cuStreamBeginCapture),
	PTSZ("cuStreamBeginCapture", cuStreamBeginCapture_ptsz),
	SELF(cuStreamBeginCapture_ptsz),
	SINCE("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2),
	{ "cuStreamBeginCapture", 10010, true, (void *)cuStreamBeginCapture_v2_ptsz },
	SELF(cuStreamBeginCapture_v2),
	SELF(cuStreamBeginCapture_v2_ptsz),
	SELF(cuStreamBeginCaptureToGraph),
	PTSZ("cuStreamBeginCaptureToGraph", cuStreamBeginCaptureToGraph_ptsz),
	SELF(cuStreamBeginCaptureToGraph_ptsz),
	SELF(cuStreamEndCapture),
	SINCE("cuStreamGetCaptureInfo", 12030, cuStreamGetCaptureInfo_v3),
	SELF(cuStreamGetCaptureInfo_v3),
	SELF(cuGraphCreate),
	SELF(cuGraphAddMemAllocNode),
	SELF(cuGraphAddMemFreeNode),
	SINCE("cuGraphAddNode", 12030, cuGraphAddNode_v2),
	SELF(cuGraphAddNode_v2),
	SINCE("cuGraphInstantiate", 12000, cuGraphInstantiateWithFlags),
	SELF(cuGraphInstantiateWithFlags),
	SELF(cuGraphInstantiateWithParams),
	PTSZ("cuGraphInstantiateWithParams", cuGraphInstantiateWithParams_ptsz),
	SELF(cuGraphInstantiateWithParams_ptsz),
	SELF(cuGraphLaunch),
	PTSZ("cuGraphLaunch", cuGraphLaunch_ptsz),
	SELF(cuGraphLaunch_ptsz),
	SELF(cuGraphExecDestroy),
	SELF(cuGraphDestroy),
	SELF(cuDeviceGraphMemTrim),
	SELF(cuDeviceGetGraphMemAttribute),
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
