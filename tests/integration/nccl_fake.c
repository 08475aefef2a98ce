/* SPDX-License-Identifier: MIT */
/*
 * Named libnccl_gpuspy_fake.so: the buffers a communicator allocates on
 * its rank's device at init, which gpuspy labels NCCL by the module's
 * name (src/common/frame_rules.c): library memory (ranks_prog.c).
 */
#include <stddef.h>

#include "cuda_abi.h"

int nccl_fake_init(size_t size);

__attribute__((noinline)) int nccl_fake_init(size_t size)
{
	void *p;

	return (int)cudaMalloc(&p, size);
}
