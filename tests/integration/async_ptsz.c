/* SPDX-License-Identifier: MIT */
/*
 * Stream-ordered allocation looked up with per-thread default stream
 * semantics (flags CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM), which
 * gives the _ptsz entry points, as cudart asks for them.
 * Usage: async_ptsz ASYNC_SIZE ASYNC_COUNT POOL_SIZE
 * Leaks ASYNC_COUNT x ASYNC_SIZE from leak_async() (cuMemAllocAsync_ptsz)
 * and POOL_SIZE from leak_pool() (cuMemAllocFromPoolAsync_ptsz).
 */
#include "prog.h"

#define PTDS CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM

typedef typeof(cuGetProcAddress_v2) get_proc_fn;

static struct {
	struct ctx_fns ctx;
	typeof(cuDeviceGetDefaultMemPool) *default_pool;
	typeof(cuMemPoolTrimTo) *pool_trim;
	typeof(cuStreamSynchronize) *stream_sync;
	typeof(cuMemAllocAsync) *alloc_async, *alloc_async_ptsz;
	typeof(cuMemFreeAsync) *free_async, *free_async_ptsz;
	typeof(cuMemAllocFromPoolAsync) *alloc_pool, *alloc_pool_ptsz;
} drv;

void leak_async(size_t size, size_t count);
void leak_pool(CUmemoryPool pool, size_t size);
void churn(CUmemoryPool pool);

static void get(get_proc_fn *gp, const char *name, cuuint64_t flags, void *slot)
{
	getproc_v2(gp, name, 12000, flags, slot);
}

/* Per-thread and legacy stream semantics must stay two entry points. */
static void show_distinct(const char *name, int distinct)
{
	printf("async_ptsz: %s per-thread lookup is %s\n", name,
	       distinct ? "distinct" : "THE SAME");
}

__attribute__((noinline)) void leak_async(size_t size, size_t count)
{
	CUdeviceptr p;

	for (size_t i = 0; i < count; i++)
		cu_ok(drv.alloc_async_ptsz(&p, size, NULL), "cuMemAllocAsync_ptsz");
}

__attribute__((noinline)) void leak_pool(CUmemoryPool pool, size_t size)
{
	CUdeviceptr p;

	cu_ok(drv.alloc_pool_ptsz(&p, size, pool, NULL), "cuMemAllocFromPoolAsync_ptsz");
}

__attribute__((noinline)) void churn(CUmemoryPool pool)
{
	CUdeviceptr a, b, c, d;

	cu_ok(drv.alloc_async(&a, 1 << 16, NULL), "cuMemAllocAsync");
	cu_ok(drv.alloc_async_ptsz(&b, 1 << 17, NULL), "cuMemAllocAsync_ptsz");
	cu_ok(drv.alloc_pool(&c, 1 << 18, pool, NULL), "cuMemAllocFromPoolAsync");
	cu_ok(drv.alloc_pool_ptsz(&d, 1 << 19, pool, NULL), "cuMemAllocFromPoolAsync_ptsz");
	/* Frees cross over: either form may free what the other allocated. */
	cu_ok(drv.free_async_ptsz(a, NULL), "cuMemFreeAsync_ptsz");
	cu_ok(drv.free_async(b, NULL), "cuMemFreeAsync");
	cu_ok(drv.free_async_ptsz(c, NULL), "cuMemFreeAsync_ptsz");
	cu_ok(drv.free_async(d, NULL), "cuMemFreeAsync");
	cu_ok(drv.stream_sync(NULL), "cuStreamSynchronize");
	cu_ok(drv.pool_trim(pool, 0), "cuMemPoolTrimTo");
}

int main(int argc, char **argv)
{
	void *h = open_driver();
	CUmemoryPool pool;
	get_proc_fn *gp;

	load_sym(h, "cuGetProcAddress_v2", &gp);
	get(gp, "cuInit", 0, &drv.ctx.init);
	get(gp, "cuDeviceGet", 0, &drv.ctx.device_get);
	get(gp, "cuDevicePrimaryCtxRetain", 0, &drv.ctx.primary_ctx_retain);
	get(gp, "cuCtxSetCurrent", 0, &drv.ctx.ctx_set_current);
	get(gp, "cuDeviceGetDefaultMemPool", 0, &drv.default_pool);
	get(gp, "cuMemPoolTrimTo", 0, &drv.pool_trim);
	get(gp, "cuStreamSynchronize", 0, &drv.stream_sync);
	get(gp, "cuMemAllocAsync", 0, &drv.alloc_async);
	get(gp, "cuMemAllocAsync", PTDS, &drv.alloc_async_ptsz);
	get(gp, "cuMemFreeAsync", 0, &drv.free_async);
	get(gp, "cuMemFreeAsync", PTDS, &drv.free_async_ptsz);
	get(gp, "cuMemAllocFromPoolAsync", 0, &drv.alloc_pool);
	get(gp, "cuMemAllocFromPoolAsync", PTDS, &drv.alloc_pool_ptsz);
	show_distinct("cuMemAllocAsync", drv.alloc_async != drv.alloc_async_ptsz);
	show_distinct("cuMemFreeAsync", drv.free_async != drv.free_async_ptsz);
	show_distinct("cuMemAllocFromPoolAsync", drv.alloc_pool != drv.alloc_pool_ptsz);

	make_current(&drv.ctx);
	cu_ok(drv.default_pool(&pool, 0), "cuDeviceGetDefaultMemPool");
	churn(pool);
	leak_async(arg_size(argc, argv, 1), arg_size(argc, argv, 2));
	leak_pool(pool, arg_size(argc, argv, 3));
	churn(pool);
	printf("async_ptsz: done\n");
	return 0;
}
