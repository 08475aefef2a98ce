// CUDA graph memory in the style of NVIDIA's graphMemoryFootprint sample,
// for scripts/gpu-check (case graph-mem): device memory comes only from
// graph memory nodes, graphs are launched repeatedly, memory is freed by
// free nodes, by cudaFree, or left; cudaDeviceGraphMemTrim gives the pool
// back.  Prints the driver's graph-memory attributes after each phase and
// what gpuspy must count, for graph_check.py.
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

static const size_t MiB = (size_t)1 << 20;

__global__ void fill(char *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = 1;
}

static void phase(const char *name)
{
	static const cudaGraphMemAttributeType attrs[4] = {
		cudaGraphMemAttrUsedMemCurrent, cudaGraphMemAttrUsedMemHigh,
		cudaGraphMemAttrReservedMemCurrent, cudaGraphMemAttrReservedMemHigh};
	unsigned long long v[4];

	CHECK(cudaDeviceSynchronize());
	for (int i = 0; i < 4; i++)
		CHECK(cudaDeviceGetGraphMemAttribute(0, attrs[i], &v[i]));
	std::printf("graph_mem: %s used_current %llu used_high %llu reserved_current %llu "
		    "reserved_high %llu\n",
		    name, v[0], v[1], v[2], v[3]);
}

static cudaGraphNode_t alloc_node(cudaGraph_t g, size_t size, void **ptr)
{
	cudaMemAllocNodeParams p = {};
	cudaGraphNode_t n;

	p.poolProps.allocType = cudaMemAllocationTypePinned;
	p.poolProps.location.type = cudaMemLocationTypeDevice;
	p.poolProps.location.id = 0;
	p.bytesize = size;
	CHECK(cudaGraphAddMemAllocNode(&n, g, nullptr, 0, &p));
	*ptr = p.dptr;
	return n;
}

static cudaGraphNode_t kernel_node(cudaGraph_t g, cudaGraphNode_t dep, void *ptr, size_t size)
{
	void *args[] = {&ptr, &size};
	cudaKernelNodeParams k = {};
	cudaGraphNode_t n;

	k.func = (void *)fill;
	k.gridDim = dim3(1024);
	k.blockDim = dim3(256);
	k.kernelParams = args;
	CHECK(cudaGraphAddKernelNode(&n, g, &dep, 1, &k));
	return n;
}

// An alloc node, a kernel writing it, a free node: LAUNCHES allocations and
// as many frees at one site.
extern "C" __attribute__((noinline)) void graph_free_node(size_t size, int launches, cudaStream_t s)
{
	cudaGraph_t g;
	cudaGraphExec_t e;
	cudaGraphNode_t f;
	void *p;

	CHECK(cudaGraphCreate(&g, 0));
	// the node's address is known once alloc_node() returned: not in the
	// same call's arguments, whose order C++ leaves open
	cudaGraphNode_t an = alloc_node(g, size, &p);
	cudaGraphNode_t k = kernel_node(g, an, p, size);
	CHECK(cudaGraphAddMemFreeNode(&f, g, &k, 1, p));
	CHECK(cudaGraphInstantiate(&e, g, 0));
	for (int i = 0; i < launches; i++)
		CHECK(cudaGraphLaunch(e, s));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaGraphExecDestroy(e));
	CHECK(cudaGraphDestroy(g));
}

// N alloc nodes and no free node: after each launch the memory is freed by
// cudaFree, except after the last, where KEEP of them are left.
extern "C" __attribute__((noinline)) void graph_cudafree(size_t size, int n, int launches, int keep,
					      cudaStream_t s)
{
	cudaGraph_t g;
	cudaGraphExec_t e;
	void *p[8];

	CHECK(cudaGraphCreate(&g, 0));
	for (int i = 0; i < n; i++) {
		cudaGraphNode_t an = alloc_node(g, size, &p[i]);

		kernel_node(g, an, p[i], size);
	}
	CHECK(cudaGraphInstantiate(&e, g, 0));
	for (int l = 0; l < launches; l++) {
		CHECK(cudaGraphLaunch(e, s));
		CHECK(cudaStreamSynchronize(s));
		if (l == 0)
			phase("after-first-launch");
		for (int i = 0; i < n - (l + 1 == launches ? keep : 0); i++)
			CHECK(cudaFree(p[i]));
	}
	CHECK(cudaGraphExecDestroy(e));
	CHECK(cudaGraphDestroy(g));
}

// Stream capture of cudaMallocAsync, a kernel and cudaFreeAsync.
extern "C" __attribute__((noinline)) void graph_captured(size_t size, int launches, cudaStream_t s)
{
	cudaGraph_t g;
	cudaGraphExec_t e;
	char *p;

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CHECK(cudaMallocAsync((void **)&p, size, s));
	fill<<<1024, 256, 0, s>>>(p, size);
	CHECK(cudaFreeAsync(p, s));
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaGraphInstantiate(&e, g, 0));
	for (int i = 0; i < launches; i++)
		CHECK(cudaGraphLaunch(e, s));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaGraphExecDestroy(e));
	CHECK(cudaGraphDestroy(g));
}

int main()
{
	const size_t a = 64 * MiB, b = 192 * MiB, c = 32 * MiB;
	const int a_launches = 4, b_nodes = 3, b_launches = 3, b_keep = 1, c_launches = 3;
	cudaStream_t s;

	CHECK(cudaSetDevice(0));
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	graph_free_node(a, a_launches, s);
	phase("after-free-node");
	graph_cudafree(b, b_nodes, b_launches, b_keep, s);
	phase("after-cudafree");
	graph_captured(c, c_launches, s);
	phase("after-captured");
	CHECK(cudaDeviceGraphMemTrim(0));
	phase("after-trim");
	// What gpuspy must say: allocations and frees per site, the leak, the
	// largest set of graph memory live at once (all of graph_cudafree's).
	std::printf("graph_mem: expect graph_free_node %d/%d graph_cudafree %d/%d "
		    "graph_captured %d/%d leaked %zu in %d peak %zu\n",
		    a_launches, a_launches, b_nodes * b_launches, b_nodes * b_launches - b_keep,
		    c_launches, c_launches, b * b_keep, b_keep, b * b_nodes);
	CHECK(cudaStreamDestroy(s));
	return 0;
}
