/* SPDX-License-Identifier: MIT */
/* A small library a Python script calls through ctypes (which releases
 * the GIL): it allocates through the fake runtime and keeps the memory. */
#include <stddef.h>

#include "cuda_abi.h"

int pyalloc_leak(size_t size, int count);

int pyalloc_leak(size_t size, int count)
{
	for (int i = 0; i < count; i++) {
		void *p;

		if (cudaMalloc(&p, size) != cudaSuccess)
			return -1;
	}
	return 0;
}
