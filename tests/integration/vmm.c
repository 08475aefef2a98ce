/* SPDX-License-Identifier: MIT */
/*
 * Virtual memory management, as PyTorch's expandable segments and JAX use
 * it: a large address reservation (not memory), physical handles from
 * cuMemCreate mapped into it, some unmapped and released again.
 * Usage: vmm HANDLES RELEASED
 * Creates HANDLES handles of the granularity (2 MiB) in leak_vmm(),
 * releases RELEASED of them in release_some() and leaks the rest.
 */
#include "prog.h"

#define RESERVE_BYTES ((size_t)1 << 30)

void leak_vmm(CUdeviceptr va, CUmemGenericAllocationHandle *h, size_t n, size_t gran);
void release_some(CUdeviceptr va, CUmemGenericAllocationHandle *h, size_t n, size_t gran);
void churn(CUdeviceptr va, size_t gran);

static CUmemAllocationProp prop = {
	.type = CU_MEM_ALLOCATION_TYPE_PINNED,
	.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
};

static void map_rw(CUdeviceptr va, size_t size, CUmemGenericAllocationHandle h)
{
	CUmemAccessDesc access = {
		.location = prop.location,
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};

	cu_ok(cuMemMap(va, size, 0, h, 0), "cuMemMap");
	cu_ok(cuMemSetAccess(va, size, &access, 1), "cuMemSetAccess");
}

__attribute__((noinline)) void leak_vmm(CUdeviceptr va, CUmemGenericAllocationHandle *h, size_t n,
					size_t gran)
{
	for (size_t i = 0; i < n; i++) {
		cu_ok(cuMemCreate(&h[i], gran, &prop, 0), "cuMemCreate");
		map_rw(va + i * gran, gran, h[i]);
	}
}

__attribute__((noinline)) void release_some(CUdeviceptr va, CUmemGenericAllocationHandle *h,
					    size_t n, size_t gran)
{
	for (size_t i = 0; i < n; i++) {
		cu_ok(cuMemUnmap(va + i * gran, gran), "cuMemUnmap");
		cu_ok(cuMemRelease(h[i]), "cuMemRelease");
	}
}

/* Released while still mapped: the memory goes at the unmap, as in CUDA. */
__attribute__((noinline)) void churn(CUdeviceptr va, size_t gran)
{
	CUmemGenericAllocationHandle h;

	cu_ok(cuMemCreate(&h, 2 * gran, &prop, 0), "cuMemCreate");
	map_rw(va, 2 * gran, h);
	cu_ok(cuMemRelease(h), "cuMemRelease");
	cu_ok(cuMemUnmap(va, 2 * gran), "cuMemUnmap");
}

int main(int argc, char **argv)
{
	size_t n = arg_size(argc, argv, 1), released = arg_size(argc, argv, 2), gran;
	size_t free_bytes, total;
	CUmemGenericAllocationHandle *h, bad;
	CUdeviceptr va, scratch;

	if (released > n || !(h = calloc(n, sizeof(*h))))
		return PROG_FAIL;
	driver_context();
	cu_ok(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
	      "cuMemGetAllocationGranularity");
	printf("vmm: granularity %zu\n", gran);
	printf("vmm: cuMemCreate of half the granularity -> %d\n",
	       (int)cuMemCreate(&bad, gran / 2, &prop, 0));
	cu_ok(cuMemAddressReserve(&va, RESERVE_BYTES, 0, 0, 0), "cuMemAddressReserve");
	cu_ok(cuMemAddressReserve(&scratch, 4 * gran, 0, 0, 0), "cuMemAddressReserve");
	if (n * gran > RESERVE_BYTES)
		return PROG_FAIL;
	churn(scratch, gran);
	leak_vmm(va, h, n, gran);
	release_some(va, h, released, gran);
	churn(scratch, gran);
	cu_ok(cuMemAddressFree(scratch, 4 * gran), "cuMemAddressFree");
	/* Reservations are no memory; released handles are gone once unmapped. */
	cu_ok(cuMemGetInfo_v2(&free_bytes, &total), "cuMemGetInfo_v2");
	printf("vmm: memory in use %zu\n", total - free_bytes);
	printf("vmm: done\n");
	free(h);
	return 0;
}
