// A CUDA C program that leaks known amounts from named functions, for
// scripts/gpu-check: gpuspy's figures are compared with compute-sanitizer's.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                                           \
	do {                                                                               \
		cudaError_t e_ = (x);                                                      \
		if (e_ != cudaSuccess) {                                                   \
			std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));      \
			std::exit(1);                                                      \
		}                                                                          \
	} while (0)

__global__ void fill(float *p, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = 1.0f;
}

// 3 allocations, 3 MiB + 4096 bytes in all.
__attribute__((noinline)) void leak_buffers(void)
{
	void *p;
	CHECK(cudaMalloc(&p, 1 << 20));
	CHECK(cudaMalloc(&p, 2 << 20));
	CHECK(cudaMalloc(&p, 4096));
}

// 1 allocation of 5000 bytes, made through the driver-facing pitch call.
__attribute__((noinline)) void leak_one_more(void)
{
	void *p;
	CHECK(cudaMalloc(&p, 5000));
}

__attribute__((noinline)) void balanced_work(void)
{
	for (int i = 0; i < 10; i++) {
		float *p;
		size_t n = (size_t)(i + 1) << 18;
		CHECK(cudaMalloc(&p, n * sizeof(float)));
		fill<<<(unsigned)((n + 255) / 256), 256>>>(p, n);
		CHECK(cudaDeviceSynchronize());
		CHECK(cudaFree(p));
	}
}

int main(void)
{
	balanced_work();
	leak_buffers();
	leak_one_more();
	CHECK(cudaDeviceSynchronize());
	std::printf("leak: expected 3 + 1 allocations, %d bytes\n", (1 << 20) + (2 << 20) + 4096 + 5000);
	// The context is destroyed here so compute-sanitizer reports leaks.
	CHECK(cudaDeviceReset());
	return 0;
}
