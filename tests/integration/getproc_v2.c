/* SPDX-License-Identifier: MIT */
/*
 * Door: cuGetProcAddress_v2, found with dlsym, as every CUDA 13 cudart and
 * PyTorch's cudaGetDriverEntryPointByVersion reach the driver.  Also
 * fetches cuGetProcAddress through itself, as cudart does, and allocates
 * through that second-hand lookup.
 * Usage: getproc_v2 SIZE COUNT SELF_SIZE
 * Leaks COUNT x SIZE from leak_getproc() and SELF_SIZE from
 * leak_getproc_self().
 */
#include "prog.h"

typedef typeof(cuGetProcAddress_v2) get_proc_fn;

static struct {
	struct ctx_fns ctx;
	typeof(cuMemAlloc_v2) *mem_alloc;
	typeof(cuMemFree_v2) *mem_free;
} drv;

void leak_getproc(size_t size, size_t count);
void leak_getproc_self(get_proc_fn *self, size_t size);
void churn(void);

static void get(get_proc_fn *gp, const char *name, int version, void *slot)
{
	getproc_v2(gp, name, version, 0, slot);
}

/* Lookups that must fail, and fail the same way under any hook. */
static void show_miss(get_proc_fn *gp, const char *name, int version)
{
	CUdriverProcAddressQueryResult status = -1;
	void *p = &p;
	CUresult r = gp(name, &p, version, 0, &status);

	printf("getproc_v2: '%s'@%d -> %d, status %d, pointer %s\n", name, version, (int)r,
	       (int)status, p ? "set" : "NULL");
}

__attribute__((noinline)) void leak_getproc(size_t size, size_t count)
{
	CUdeviceptr p;

	for (size_t i = 0; i < count; i++)
		cu_ok(drv.mem_alloc(&p, size), "cuMemAlloc");
}

__attribute__((noinline)) void leak_getproc_self(get_proc_fn *self, size_t size)
{
	typeof(cuMemAlloc_v2) *mem_alloc;
	CUdeviceptr p;

	get(self, "cuMemAlloc", 12000, &mem_alloc);
	cu_ok(mem_alloc(&p, size), "cuMemAlloc via self lookup");
}

__attribute__((noinline)) void churn(void)
{
	CUdeviceptr p[3];

	for (int i = 0; i < 3; i++)
		cu_ok(drv.mem_alloc(&p[i], 3000 + i), "cuMemAlloc");
	for (int i = 0; i < 3; i++)
		cu_ok(drv.mem_free(p[i]), "cuMemFree");
}

int main(int argc, char **argv)
{
	void *h = open_driver();
	get_proc_fn *gp, *self;

	load_sym(h, "cuGetProcAddress_v2", &gp);
	show_miss(gp, "", 12000);
	show_miss(gp, "cuNoSuchFunction", 12000);
	show_miss(gp, "cuMemAlloc", 3010);

	get(gp, "cuInit", 2000, &drv.ctx.init);
	get(gp, "cuDeviceGet", 2000, &drv.ctx.device_get);
	get(gp, "cuDevicePrimaryCtxRetain", 7000, &drv.ctx.primary_ctx_retain);
	get(gp, "cuCtxSetCurrent", 4000, &drv.ctx.ctx_set_current);
	get(gp, "cuMemAlloc", 12000, &drv.mem_alloc);
	get(gp, "cuMemFree", 12000, &drv.mem_free);
	get(gp, "cuGetProcAddress", 12000, &self);

	make_current(&drv.ctx);
	churn();
	leak_getproc(arg_size(argc, argv, 1), arg_size(argc, argv, 2));
	leak_getproc_self(self, arg_size(argc, argv, 3));
	churn();
	printf("getproc_v2: done\n");
	return 0;
}
