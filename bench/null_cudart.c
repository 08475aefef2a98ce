/* SPDX-License-Identifier: MIT */
/*
 * A null CUDA runtime for bench/contention-bench: cudaMalloc hands out
 * addresses from a per-thread bump pointer and cudaFree forgets them, with
 * no lock and no shared line, so that threads allocating at once meet only
 * in what a tracker adds.  (The fake runtime and driver of tests/fake keep
 * every block on one list under one mutex: right for the tests, but their
 * own contention would hide gpuspy's.)  Addresses are never reused.  Built
 * as libcudart.so.13 in its own directory, found through LD_LIBRARY_PATH.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_abi.h"

static atomic_uint next_region;
static __thread uintptr_t next_addr, region_end;

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	if (!devPtr)
		return cudaErrorInvalidValue;
	if (next_addr + size + 512 > region_end || !next_addr) {
		/* 1 TiB of addresses per thread, far from anything mapped */
		uintptr_t r = (uintptr_t)atomic_fetch_add(&next_region, 1) + 1;

		next_addr = r << 40;
		region_end = next_addr + ((uintptr_t)1 << 40);
	}
	*devPtr = (void *)next_addr;
	next_addr += (size + 511) & ~(size_t)511;
	return cudaSuccess;
}

cudaError_t cudaFree(void *devPtr)
{
	(void)devPtr;
	return cudaSuccess;
}

/* What gpuspy asks the driver on every allocation. */
CUresult cuCtxGetDevice(CUdevice *device)
{
	*device = 0;
	return CUDA_SUCCESS;
}
