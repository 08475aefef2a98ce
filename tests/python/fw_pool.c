/* SPDX-License-Identifier: MIT */
/*
 * The pool of the pretend JAX (tests/python/fake_fw/jax), built into its
 * xla_extension.so: XLA's BFC allocator grows its pool by a region from
 * the driver, under tsl::BFCAllocator::Extend, which is how gpuspy tells
 * a segment of XLA's pool (src/common/pools.c) - here by the dynamic
 * symbol the process sees, mangled as the real one is.
 */
#include <stddef.h>

#include "cuda_abi.h"

/* tsl::BFCAllocator::Extend(unsigned long, unsigned long): a region of
 * BYTES from the driver, kept; 0, or -1 when the driver refused. */
int bfc_extend(size_t alignment, size_t bytes) __asm__("_ZN3tsl12BFCAllocator6ExtendEmm");

int bfc_extend(size_t alignment, size_t bytes)
{
	static int ready;
	CUdeviceptr p;

	(void)alignment;
	if (!ready) {
		CUdevice dev;
		CUcontext ctx;

		if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
		    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
		    cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
			return -1;
		ready = 1;
	}
	return cuMemAlloc_v2(&p, bytes) == CUDA_SUCCESS ? 0 : -1;
}
