/* SPDX-License-Identifier: MIT */
/*
 * Door: PLT calls of runtime symbols, cudaMalloc@libcudart.so.13, as
 * PyTorch makes them.  Exits with status 3, to check it is passed on.
 * Usage: runtime_plt DEV_SIZE DEV_COUNT MANAGED_SIZE PITCH_WIDTH PITCH_HEIGHT
 *                    ASYNC_SIZE PINNED_SIZE WIDTH_3D HEIGHT_3D DEPTH_3D
 * Leaks DEV_COUNT x DEV_SIZE from leak_runtime_device(), MANAGED_SIZE from
 * leak_runtime_managed(), a pitched allocation from leak_runtime_pitch(),
 * ASYNC_SIZE from leak_runtime_async() (a per-thread-stream cudaMallocAsync),
 * PINNED_SIZE of pinned host memory from leak_pinned() and a cudaMalloc3D
 * of the 3D extent from leak_runtime_3d().
 */
#include "prog.h"

void leak_runtime_device(size_t size, size_t count);
void leak_runtime_managed(size_t size);
size_t leak_runtime_pitch(size_t width, size_t height);
void leak_runtime_async(size_t size);
size_t leak_runtime_3d(size_t width, size_t height, size_t depth);
void leak_pinned(size_t size);
void churn(void);

__attribute__((noinline)) void leak_runtime_device(size_t size, size_t count)
{
	void *p;

	for (size_t i = 0; i < count; i++)
		rt_ok(cudaMalloc(&p, size), "cudaMalloc");
}

__attribute__((noinline)) void leak_runtime_managed(size_t size)
{
	void *p;

	rt_ok(cudaMallocManaged(&p, size, cudaMemAttachGlobal), "cudaMallocManaged");
}

__attribute__((noinline)) size_t leak_runtime_pitch(size_t width, size_t height)
{
	size_t pitch;
	void *p;

	rt_ok(cudaMallocPitch(&p, &pitch, width, height), "cudaMallocPitch");
	return pitch;
}

__attribute__((noinline)) void leak_runtime_async(size_t size)
{
	void *p;

	rt_ok(cudaMallocAsync_ptsz(&p, size, NULL), "cudaMallocAsync_ptsz");
}

__attribute__((noinline)) size_t leak_runtime_3d(size_t width, size_t height, size_t depth)
{
	struct cudaPitchedPtr p;
	struct cudaExtent e = { width, height, depth };

	rt_ok(cudaMalloc3D(&p, e), "cudaMalloc3D");
	if (!p.ptr || p.pitch < width || p.xsize != width || p.ysize != height)
		exit(PROG_FAIL);
	return p.pitch;
}

/* Pinned memory is real host memory: the program may write it. */
__attribute__((noinline)) void leak_pinned(size_t size)
{
	void *p;

	rt_ok(cudaMallocHost(&p, size), "cudaMallocHost");
	memset(p, 0x5a, size);
}

__attribute__((noinline)) void churn(void)
{
	void *d, *m, *q, *a, *b, *c, *h1, *h2, *zero = &zero;
	struct cudaPitchedPtr v;
	struct cudaExtent e = { 100, 3, 2 };
	cudaMemPool_t pool;
	size_t pitch;

	rt_ok(cudaMalloc(&d, 1 << 20), "cudaMalloc");
	rt_ok(cudaMallocManaged(&m, 8192, cudaMemAttachGlobal), "cudaMallocManaged");
	rt_ok(cudaMallocPitch(&q, &pitch, 300, 7), "cudaMallocPitch");
	rt_ok(cudaMalloc3D(&v, e), "cudaMalloc3D");
	rt_ok(cudaMallocAsync(&a, 65536, NULL), "cudaMallocAsync");
	rt_ok(cudaMallocAsync_ptsz(&b, 65536, NULL), "cudaMallocAsync_ptsz");
	rt_ok(cudaDeviceGetDefaultMemPool(&pool, 0), "cudaDeviceGetDefaultMemPool");
	rt_ok(cudaMallocFromPoolAsync(&c, 4096, pool, NULL), "cudaMallocFromPoolAsync");
	rt_ok(cudaHostAlloc(&h1, 4096, cudaHostAllocDefault), "cudaHostAlloc");
	rt_ok(cudaMallocHost(&h2, 512), "cudaMallocHost");
	memset(h1, 1, 4096);
	memset(h2, 2, 512);
	/* The runtime gives NULL for 0 bytes and never asks the driver. */
	rt_ok(cudaMalloc(&zero, 0), "cudaMalloc 0");
	if (zero)
		exit(PROG_FAIL);
	rt_ok(cudaFreeHost(h2), "cudaFreeHost");
	rt_ok(cudaFreeHost(h1), "cudaFreeHost");
	rt_ok(cudaFreeAsync(c, NULL), "cudaFreeAsync");
	rt_ok(cudaFreeAsync_ptsz(b, NULL), "cudaFreeAsync_ptsz");
	rt_ok(cudaFreeAsync(a, NULL), "cudaFreeAsync");
	rt_ok(cudaStreamSynchronize(NULL), "cudaStreamSynchronize");
	rt_ok(cudaFree(v.ptr), "cudaFree");
	rt_ok(cudaFree(q), "cudaFree");
	rt_ok(cudaFree(m), "cudaFree");
	rt_ok(cudaFree(d), "cudaFree");
}

int main(int argc, char **argv)
{
	size_t pitch, pitch_3d;
	int dev = -1;

	rt_ok(cudaGetDevice(&dev), "cudaGetDevice");
	churn();
	leak_runtime_device(arg_size(argc, argv, 1), arg_size(argc, argv, 2));
	leak_runtime_managed(arg_size(argc, argv, 3));
	pitch = leak_runtime_pitch(arg_size(argc, argv, 4), arg_size(argc, argv, 5));
	leak_runtime_async(arg_size(argc, argv, 6));
	leak_pinned(arg_size(argc, argv, 7));
	pitch_3d = leak_runtime_3d(arg_size(argc, argv, 8), arg_size(argc, argv, 9),
				   arg_size(argc, argv, 10));
	churn();
	rt_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	printf("runtime_plt: device %d, pitch %zu, 3D pitch %zu\n", dev, pitch, pitch_3d);
	printf("runtime_plt: done, exiting with 3\n");
	return 3;
}
