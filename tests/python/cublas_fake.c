/* SPDX-License-Identifier: MIT */
/*
 * Named libcublas_gpuspy_fake.so: memory a library holds for itself (a
 * workspace), which gpuspy labels cuBLAS by the module's name
 * (src/common/frame_rules.c) and counts outside a framework's pool.
 */
#include <stddef.h>

#include "cuda_abi.h"

int cublas_fake_workspace(size_t size);

__attribute__((noinline)) int cublas_fake_workspace(size_t size)
{
	void *p;

	return (int)cudaMalloc(&p, size);
}
