/* SPDX-License-Identifier: MIT */
/* Named libc10_cuda.so, loaded by tests/python/fake_torch: how libgpuspy
 * tells a process that has PyTorch's CUDA library (src/preload/3-out/torch_probe.c).
 * With FAKE_TORCH_SEGMENTS=1 the pretend pool takes its segments from the
 * fake runtime through this library's alloc_block, under the name of the
 * caching allocator's (c10::cuda::CUDACachingAllocator::Native::
 * DeviceCachingAllocator), which is how gpuspy tells PyTorch's pool
 * segments (src/common/pools.c). */
#include <stddef.h>

#include "cuda_abi.h"

int gpuspy_fake_c10_cuda;

/* torch._C._cuda_init's part: the runtime's first call, which binds the
 * driver (the pretend torch.cuda._lazy_init calls it first). */
int c10_cuda_init(void);

int c10_cuda_init(void)
{
	int n = 0;

	return cudaGetDeviceCount(&n) == cudaSuccess ? n : -1;
}

/* A segment of SIZE bytes for the pool, kept; 0, or -1. */
int alloc_block(size_t size) __asm__(
	"_ZN3c104cuda20CUDACachingAllocator6Native22DeviceCachingAllocator11alloc_blockEm");

int alloc_block(size_t size)
{
	void *p;

	return cudaMalloc(&p, size) == cudaSuccess ? 0 : -1;
}
