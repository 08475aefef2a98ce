/* SPDX-License-Identifier: MIT */
/*
 * Door: dlopen("libcudart.so.13") + dlsym(handle, "cudaMalloc"), as
 * PaddlePaddle reaches the runtime (its dynload of libcudart).  The
 * program links no CUDA library; the runtime binds the driver through
 * cuGetProcAddress, as CUDA 13's does, and gpuspy must see each
 * allocation by the call site that made it.
 * Usage: cudart_dlopen SIZE COUNT
 * Leaks COUNT x SIZE from leak_cudart_dlopen(), after allocating and
 * freeing three blocks.
 */
#include "prog.h"

static struct {
	typeof(cudaMalloc) *malloc;
	typeof(cudaFree) *free;
} rt;

void leak_cudart_dlopen(size_t size, size_t count);

__attribute__((noinline)) void leak_cudart_dlopen(size_t size, size_t count)
{
	void *p;

	for (size_t i = 0; i < count; i++)
		rt_ok(rt.malloc(&p, size), "cudaMalloc");
}

int main(int argc, char **argv)
{
	void *h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL), *p[3];

	if (!h) {
		fprintf(stderr, "cudart_dlopen: %s\n", dlerror());
		return PROG_FAIL;
	}
	load_sym(h, "cudaMalloc", &rt.malloc);
	load_sym(h, "cudaFree", &rt.free);
	for (int i = 0; i < 3; i++)
		rt_ok(rt.malloc(&p[i], 4096), "cudaMalloc");
	for (int i = 0; i < 3; i++)
		rt_ok(rt.free(p[i]), "cudaFree");
	leak_cudart_dlopen(arg_size(argc, argv, 1), arg_size(argc, argv, 2));
	printf("cudart_dlopen: done\n");
	return 0;
}
