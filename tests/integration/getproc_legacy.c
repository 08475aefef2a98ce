/* SPDX-License-Identifier: MIT */
/*
 * Door: the legacy 4-argument cuGetProcAddress (CUDA 11.3 to 11.8
 * runtimes), found with dlsym(handle, "cuGetProcAddress").
 * Usage: getproc_legacy SIZE COUNT
 * Leaks COUNT x SIZE from leak_legacy().
 */
#include "prog.h"

typedef typeof(cuGetProcAddress) get_proc_fn;

static struct {
	struct ctx_fns ctx;
	typeof(cuMemAlloc_v2) *mem_alloc;
	typeof(cuMemFree_v2) *mem_free;
} drv;

void leak_legacy(size_t size, size_t count);
void churn(void);

static void get(get_proc_fn *gp, const char *name, void *slot)
{
	void *p = NULL;

	cu_ok(gp(name, &p, 11030, 0), name);
	if (!p)
		exit(PROG_FAIL);
	memcpy(slot, &p, sizeof(p));
}

__attribute__((noinline)) void leak_legacy(size_t size, size_t count)
{
	CUdeviceptr p;

	for (size_t i = 0; i < count; i++)
		cu_ok(drv.mem_alloc(&p, size), "cuMemAlloc");
}

__attribute__((noinline)) void churn(void)
{
	CUdeviceptr p[2];

	for (int i = 0; i < 2; i++)
		cu_ok(drv.mem_alloc(&p[i], 777), "cuMemAlloc");
	for (int i = 0; i < 2; i++)
		cu_ok(drv.mem_free(p[i]), "cuMemFree");
}

int main(int argc, char **argv)
{
	void *h = open_driver();
	get_proc_fn *gp;
	void *p = &p;
	CUresult r;

	load_sym(h, "cuGetProcAddress", &gp);
	r = gp("cuNoSuchFunction", &p, 11030, 0);
	printf("getproc_legacy: cuNoSuchFunction -> %d, pointer %s\n", (int)r, p ? "set" : "NULL");
	get(gp, "cuInit", &drv.ctx.init);
	get(gp, "cuDeviceGet", &drv.ctx.device_get);
	get(gp, "cuDevicePrimaryCtxRetain", &drv.ctx.primary_ctx_retain);
	get(gp, "cuCtxSetCurrent", &drv.ctx.ctx_set_current);
	get(gp, "cuMemAlloc", &drv.mem_alloc);
	get(gp, "cuMemFree", &drv.mem_free);

	make_current(&drv.ctx);
	churn();
	leak_legacy(arg_size(argc, argv, 1), arg_size(argc, argv, 2));
	churn();
	printf("getproc_legacy: done\n");
	return 0;
}
