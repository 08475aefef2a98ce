/* SPDX-License-Identifier: MIT */
/*
 * A program linked with a static cudart, like nvcc's default: its cuda*
 * symbols are hidden, so only the driver doors (the runtime's own
 * cuGetProcAddress lookups) can see its allocations.
 * Usage: static_runtime SIZE COUNT
 * Leaks COUNT x SIZE from leak_static().
 */
#include "prog.h"

void leak_static(size_t size, size_t count);
void churn(void);

__attribute__((noinline)) void leak_static(size_t size, size_t count)
{
	void *p;

	for (size_t i = 0; i < count; i++)
		rt_ok(cudaMalloc(&p, size), "cudaMalloc");
}

__attribute__((noinline)) void churn(void)
{
	void *p[4], *h;

	for (int i = 0; i < 4; i++)
		rt_ok(cudaMalloc(&p[i], 4096 << i), "cudaMalloc");
	rt_ok(cudaMallocHost(&h, 1024), "cudaMallocHost");
	for (int i = 0; i < 4; i++)
		rt_ok(cudaFree(p[i]), "cudaFree");
	rt_ok(cudaFreeHost(h), "cudaFreeHost");
}

int main(int argc, char **argv)
{
	churn();
	leak_static(arg_size(argc, argv, 1), arg_size(argc, argv, 2));
	churn();
	printf("static_runtime: done\n");
	return 0;
}
