// cudaMalloc3D on a real GPU, for scripts/gpu-check case malloc3d
// (tests/gpu/malloc3d_check.py): leaks one 3D allocation from
// leak_volume() and frees another, and prints what the runtime returned,
// so that the check can compare gpuspy's figures with the pitch.
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

__attribute__((noinline)) cudaPitchedPtr leak_volume(size_t w, size_t h, size_t d)
{
	cudaPitchedPtr p;
	CHECK(cudaMalloc3D(&p, make_cudaExtent(w, h, d)));
	CHECK(cudaMemset3D(p, 0, make_cudaExtent(w, h, d)));
	return p;
}

__attribute__((noinline)) void balanced_volume(void)
{
	cudaPitchedPtr p;
	CHECK(cudaMalloc3D(&p, make_cudaExtent(1000, 10, 10)));
	CHECK(cudaFree(p.ptr));
}

int main(void)
{
	const size_t w = 1500, h = 300, d = 20;
	cudaPitchedPtr p;

	balanced_volume();
	p = leak_volume(w, h, d);
	CHECK(cudaDeviceSynchronize());
	std::printf("malloc3d: width %zu height %zu depth %zu pitch %zu\n", w, h, d, p.pitch);
	// The context is destroyed here so compute-sanitizer reports leaks.
	CHECK(cudaDeviceReset());
	return 0;
}
