/* SPDX-License-Identifier: MIT */
/*
 * Named libc10_cuda.so (tests/python/pool/), for the pretend PyTorch's
 * real pool (FAKE_TORCH_POOL=1, fake_torch/torch): segments are asked of
 * the fake runtime from a function whose name holds
 * "DeviceCachingAllocator", as PyTorch's own are from
 * c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator, so that
 * both sides of gpuspy judge them the PyTorch pool's segments
 * (src/common/frame_rules.c).
 */
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

int c10_DeviceCachingAllocator_malloc(void **p, size_t size);
int c10_DeviceCachingAllocator_free(void *p);
int c10_mem_get_info(size_t *free_bytes, size_t *total_bytes);

__attribute__((noinline)) int c10_DeviceCachingAllocator_malloc(void **p, size_t size)
{
	return (int)cudaMalloc(p, size);
}

__attribute__((noinline)) int c10_DeviceCachingAllocator_free(void *p)
{
	return (int)cudaFree(p);
}

int c10_mem_get_info(size_t *free_bytes, size_t *total_bytes)
{
	return (int)cudaMemGetInfo(free_bytes, total_bytes);
}
