/* SPDX-License-Identifier: MIT */
/*
 * Door: dlopen("libcuda.so.1") + dlsym(handle, ...), as JAX/XLA, cuDNN and
 * cuBLASLt reach the driver.  A handle-scoped dlsym never sees LD_PRELOAD
 * symbols, so only a dlsym hook can catch these.
 * Usage: dlsym SIZE COUNT
 * Leaks COUNT x SIZE from leak_dlsym().
 */
#include "prog.h"

static struct {
	struct ctx_fns ctx;
	typeof(cuMemAlloc_v2) *mem_alloc;
	typeof(cuMemFree_v2) *mem_free;
} drv;

void leak_dlsym(size_t size, size_t count);
void churn(void);

__attribute__((noinline)) void leak_dlsym(size_t size, size_t count)
{
	CUdeviceptr p;

	for (size_t i = 0; i < count; i++)
		cu_ok(drv.mem_alloc(&p, size), "cuMemAlloc_v2");
}

__attribute__((noinline)) void churn(void)
{
	CUdeviceptr p[3];

	for (int i = 0; i < 3; i++)
		cu_ok(drv.mem_alloc(&p[i], 12345), "cuMemAlloc_v2");
	for (int i = 0; i < 3; i++)
		cu_ok(drv.mem_free(p[i]), "cuMemFree_v2");
}

int main(int argc, char **argv)
{
	void *h = open_driver();

	load_sym(h, "cuInit", &drv.ctx.init);
	load_sym(h, "cuDeviceGet", &drv.ctx.device_get);
	load_sym(h, "cuDevicePrimaryCtxRetain", &drv.ctx.primary_ctx_retain);
	load_sym(h, "cuCtxSetCurrent", &drv.ctx.ctx_set_current);
	load_sym(h, "cuMemAlloc_v2", &drv.mem_alloc);
	load_sym(h, "cuMemFree_v2", &drv.mem_free);
	/* An unknown name stays unknown under any hook. */
	printf("dlsym: cuNoSuchFunction %s\n",
	       dlsym(h, "cuNoSuchFunction") ? "found" : "not found");

	make_current(&drv.ctx);
	churn();
	leak_dlsym(arg_size(argc, argv, 1), arg_size(argc, argv, 2));
	churn();
	printf("dlsym: done\n");
	return 0;
}
