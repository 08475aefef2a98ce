/* SPDX-License-Identifier: MIT */
/*
 * Driver functions fetched through the runtime with
 * cudaGetDriverEntryPointByVersion, as PyTorch's expandable segments do:
 * the runtime asks its self-looked-up cuGetProcAddress.
 * Usage: entry_point SIZE COUNT HANDLES
 * Leaks COUNT x SIZE with cuMemAlloc from leak_entry_alloc() and HANDLES
 * 2 MiB cuMemCreate handles from leak_entry_vmm().
 */
#include "prog.h"

static struct {
	typeof(cuMemAlloc_v2) *mem_alloc;
	typeof(cuMemFree_v2) *mem_free;
	typeof(cuMemCreate) *mem_create;
	typeof(cuMemRelease) *mem_release;
} drv;

void leak_entry_alloc(size_t size, size_t count);
void leak_entry_vmm(size_t handles);
void churn(void);

static const CUmemAllocationProp prop = {
	.type = CU_MEM_ALLOCATION_TYPE_PINNED,
	.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
};

static void get(const char *name, void *slot)
{
	enum cudaDriverEntryPointQueryResult status;
	void *p = NULL;

	rt_ok(cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &status), name);
	if (status != cudaDriverEntryPointSuccess || !p)
		exit(PROG_FAIL);
	memcpy(slot, &p, sizeof(p));
}

__attribute__((noinline)) void leak_entry_alloc(size_t size, size_t count)
{
	CUdeviceptr p;

	for (size_t i = 0; i < count; i++)
		cu_ok(drv.mem_alloc(&p, size), "cuMemAlloc");
}

__attribute__((noinline)) void leak_entry_vmm(size_t handles)
{
	CUmemGenericAllocationHandle h;

	for (size_t i = 0; i < handles; i++)
		cu_ok(drv.mem_create(&h, (size_t)2 << 20, &prop, 0), "cuMemCreate");
}

__attribute__((noinline)) void churn(void)
{
	CUmemGenericAllocationHandle h;
	CUdeviceptr p;

	cu_ok(drv.mem_alloc(&p, 4096), "cuMemAlloc");
	cu_ok(drv.mem_create(&h, (size_t)4 << 20, &prop, 0), "cuMemCreate");
	cu_ok(drv.mem_release(h), "cuMemRelease");
	cu_ok(drv.mem_free(p), "cuMemFree");
}

int main(int argc, char **argv)
{
	enum cudaDriverEntryPointQueryResult status;
	void *p = &p;

	/* The runtime gives its context to this thread; driver calls need one. */
	rt_ok(cudaFree(NULL), "cudaFree(NULL)");
	rt_ok(cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &p, 12000, cudaEnableDefault,
					       &status),
	      "cudaGetDriverEntryPointByVersion");
	printf("entry_point: cuNoSuchFunction status %d, pointer %s\n", (int)status,
	       p ? "set" : "NULL");
	get("cuMemAlloc", &drv.mem_alloc);
	get("cuMemFree", &drv.mem_free);
	get("cuMemCreate", &drv.mem_create);
	get("cuMemRelease", &drv.mem_release);
	churn();
	leak_entry_alloc(arg_size(argc, argv, 1), arg_size(argc, argv, 2));
	leak_entry_vmm(arg_size(argc, argv, 3));
	churn();
	printf("entry_point: done\n");
	return 0;
}
