/* SPDX-License-Identifier: MIT */
/*
 * A fake CUDA 13 runtime, built both as libcudart.so.13 (symbols versioned
 * libcudart.so.13, like NVIDIA's) and as a static library (like nvcc's
 * default static cudart, whose symbols the program does not export).
 *
 * What matters for gpuspy is how it reaches the driver, which is exactly
 * how the real cudart does it: dlopen("libcuda.so.1"), dlsym of
 * cuGetProcAddress_v2 only, a probe, cuInit, then cuGetProcAddress looked
 * up *through itself*, and every driver entry point resolved eagerly
 * through that self-looked-up pointer.  A driver function is never called
 * by its linked name.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cuda_abi.h"

#define FAKE_CUDART_VERSION 13000
#define FAKE_MAX_DEVICES    16

/* The driver as this runtime sees it: pointers from cuGetProcAddress only. */
static struct {
	typeof(cuGetProcAddress_v2) *get_proc;
	typeof(cuGetProcAddress) *get_proc_legacy;
	typeof(cuInit) *init;
	typeof(cuDriverGetVersion) *driver_get_version;
	typeof(cuDeviceGetCount) *device_get_count;
	typeof(cuDeviceGet) *device_get;
	typeof(cuDevicePrimaryCtxRetain) *primary_ctx_retain;
	typeof(cuCtxSetCurrent) *ctx_set_current;
	typeof(cuCtxSynchronize) *ctx_synchronize;
	typeof(cuStreamSynchronize) *stream_synchronize;
	typeof(cuMemGetInfo_v2) *mem_get_info;
	typeof(cuMemAlloc_v2) *mem_alloc;
	typeof(cuMemFree_v2) *mem_free;
	typeof(cuMemAllocPitch_v2) *mem_alloc_pitch;
	typeof(cuMemAllocManaged) *mem_alloc_managed;
	typeof(cuMemAllocHost_v2) *mem_alloc_host;
	typeof(cuMemHostAlloc) *mem_host_alloc;
	typeof(cuMemFreeHost) *mem_free_host;
	typeof(cuMemAllocAsync) *mem_alloc_async;
	typeof(cuMemAllocAsync) *mem_alloc_async_ptsz;
	typeof(cuMemFreeAsync) *mem_free_async;
	typeof(cuMemFreeAsync) *mem_free_async_ptsz;
	typeof(cuMemAllocFromPoolAsync) *mem_alloc_from_pool_async;
	typeof(cuMemAllocFromPoolAsync) *mem_alloc_from_pool_async_ptsz;
	typeof(cuDeviceGetDefaultMemPool) *device_get_default_mem_pool;
	typeof(cuStreamCreate) *stream_create;
	typeof(cuStreamDestroy_v2) *stream_destroy;
	typeof(cuStreamBeginCapture_v2) *stream_begin_capture;
	typeof(cuStreamEndCapture) *stream_end_capture;
	typeof(cuGraphCreate) *graph_create;
	typeof(cuGraphAddMemAllocNode) *graph_add_mem_alloc_node;
	typeof(cuGraphAddMemFreeNode) *graph_add_mem_free_node;
	typeof(cuGraphAddNode_v2) *graph_add_node;
	typeof(cuGraphInstantiateWithFlags) *graph_instantiate;
	typeof(cuGraphInstantiateWithParams) *graph_instantiate_with_params;
	typeof(cuGraphInstantiateWithParams) *graph_instantiate_with_params_ptsz;
	typeof(cuGraphLaunch) *graph_launch;
	typeof(cuGraphLaunch) *graph_launch_ptsz;
	typeof(cuGraphExecDestroy) *graph_exec_destroy;
	typeof(cuGraphDestroy) *graph_destroy;
	typeof(cuDeviceGraphMemTrim) *device_graph_mem_trim;
	typeof(cuDeviceGetGraphMemAttribute) *device_get_graph_mem_attribute;
} drv;

/*
 * Resolved eagerly through the self-looked-up cuGetProcAddress, with the
 * version each name is asked at by the real runtime.  Stream-ordered calls
 * are asked twice, plain and per-thread (flags 2), as cudart does.
 */
/* clang-format off */
static const struct want {
	const char *name;
	int version;
	cuuint64_t flags;
	void *slot;
} wants[] = {
	{ "cuDriverGetVersion", 2020, 0, &drv.driver_get_version },
	{ "cuDeviceGetCount", 2000, 0, &drv.device_get_count },
	{ "cuDeviceGet", 2000, 0, &drv.device_get },
	{ "cuDevicePrimaryCtxRetain", 7000, 0, &drv.primary_ctx_retain },
	{ "cuCtxSetCurrent", 4000, 0, &drv.ctx_set_current },
	{ "cuCtxSynchronize", 2000, 0, &drv.ctx_synchronize },
	{ "cuStreamSynchronize", 2000, 0, &drv.stream_synchronize },
	{ "cuMemGetInfo", 3020, 0, &drv.mem_get_info },
	{ "cuMemAlloc", 3020, 0, &drv.mem_alloc },
	{ "cuMemFree", 3020, 0, &drv.mem_free },
	{ "cuMemAllocPitch", 3020, 0, &drv.mem_alloc_pitch },
	{ "cuMemAllocManaged", 6000, 0, &drv.mem_alloc_managed },
	{ "cuMemAllocHost", 3020, 0, &drv.mem_alloc_host },
	{ "cuMemHostAlloc", 2020, 0, &drv.mem_host_alloc },
	{ "cuMemFreeHost", 2000, 0, &drv.mem_free_host },
	{ "cuMemAllocAsync", 11020, 0, &drv.mem_alloc_async },
	{ "cuMemAllocAsync", 11020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	  &drv.mem_alloc_async_ptsz },
	{ "cuMemFreeAsync", 11020, 0, &drv.mem_free_async },
	{ "cuMemFreeAsync", 11020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	  &drv.mem_free_async_ptsz },
	{ "cuMemAllocFromPoolAsync", 11020, 0, &drv.mem_alloc_from_pool_async },
	{ "cuMemAllocFromPoolAsync", 11020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	  &drv.mem_alloc_from_pool_async_ptsz },
	{ "cuDeviceGetDefaultMemPool", 11020, 0, &drv.device_get_default_mem_pool },
	{ "cuStreamCreate", 2000, 0, &drv.stream_create },
	{ "cuStreamDestroy", 4000, 0, &drv.stream_destroy },
	{ "cuStreamBeginCapture", 10010, 0, &drv.stream_begin_capture },
	{ "cuStreamEndCapture", 10000, 0, &drv.stream_end_capture },
	{ "cuGraphCreate", 10000, 0, &drv.graph_create },
	{ "cuGraphAddMemAllocNode", 11040, 0, &drv.graph_add_mem_alloc_node },
	{ "cuGraphAddMemFreeNode", 11040, 0, &drv.graph_add_mem_free_node },
	{ "cuGraphAddNode", 12030, 0, &drv.graph_add_node },
	{ "cuGraphInstantiate", 12000, 0, &drv.graph_instantiate },
	{ "cuGraphInstantiateWithParams", 12000, 0, &drv.graph_instantiate_with_params },
	{ "cuGraphInstantiateWithParams", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	  &drv.graph_instantiate_with_params_ptsz },
	{ "cuGraphLaunch", 10000, 0, &drv.graph_launch },
	{ "cuGraphLaunch", 10000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	  &drv.graph_launch_ptsz },
	{ "cuGraphExecDestroy", 10000, 0, &drv.graph_exec_destroy },
	{ "cuGraphDestroy", 10000, 0, &drv.graph_destroy },
	{ "cuDeviceGraphMemTrim", 11040, 0, &drv.device_graph_mem_trim },
	{ "cuDeviceGetGraphMemAttribute", 11040, 0, &drv.device_get_graph_mem_attribute },
};
/* clang-format on */

static pthread_once_t bind_once = PTHREAD_ONCE_INIT;
static cudaError_t bind_error;

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primary[FAKE_MAX_DEVICES]; /* retained once per process */

/* The device of this thread; -1 until its first call that needs one. */
static __thread int thread_dev = -1;

static cudaError_t rt_error(CUresult r)
{
	/* clang-format off */
	static const struct {
		CUresult cu;
		cudaError_t rt;
	} map[] = {
		{ CUDA_SUCCESS, cudaSuccess },
		{ CUDA_ERROR_INVALID_VALUE, cudaErrorInvalidValue },
		{ CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation },
		{ CUDA_ERROR_NOT_INITIALIZED, cudaErrorInitializationError },
		{ CUDA_ERROR_NO_DEVICE, cudaErrorNoDevice },
		{ CUDA_ERROR_INVALID_DEVICE, cudaErrorInvalidDevice },
		{ CUDA_ERROR_INVALID_CONTEXT, cudaErrorDeviceUninitialized },
		{ CUDA_ERROR_INVALID_HANDLE, cudaErrorInvalidResourceHandle },
		{ CUDA_ERROR_NOT_FOUND, cudaErrorSymbolNotFound },
		{ CUDA_ERROR_NOT_SUPPORTED, cudaErrorNotSupported },
	};
	/* clang-format on */

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].cu == r)
			return map[i].rt;
	return cudaErrorUnknown;
}

static bool lookup(typeof(cuGetProcAddress_v2) *get_proc, const char *name, int version,
		   cuuint64_t flags, void *slot)
{
	CUdriverProcAddressQueryResult status;
	void *pfn = NULL;

	if (get_proc(name, &pfn, version, flags, &status) != CUDA_SUCCESS ||
	    status != CU_GET_PROC_ADDRESS_SUCCESS || !pfn)
		return false;
	/* memcpy: the slot is a function pointer, pfn an object pointer. */
	memcpy(slot, &pfn, sizeof(pfn));
	return true;
}

static void bind_driver(void)
{
	typeof(cuGetProcAddress_v2) *boot;
	CUdriverProcAddressQueryResult status;
	void *handle, *sym, *pfn;
	int version = 0;

	/* Never closed: the driver stays for the life of the process. */
	handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	sym = handle ? dlsym(handle, "cuGetProcAddress_v2") : NULL;
	if (!sym) {
		bind_error = cudaErrorInsufficientDriver;
		return;
	}
	memcpy(&boot, &sym, sizeof(sym));

	/* The probe the real runtime makes first; its answer is not used. */
	boot("", &pfn, FAKE_CUDART_VERSION, 0, &status);
	if (!lookup(boot, "cuInit", 2000, 0, &drv.init) ||
	    !lookup(boot, "cuGetProcAddress", 11030, 0, &drv.get_proc_legacy) ||
	    !lookup(boot, "cuGetProcAddress", 12000, 0, &drv.get_proc)) {
		bind_error = cudaErrorInsufficientDriver;
		return;
	}
	/* From here on only the self-looked-up pointer is used. */
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		const struct want *w = &wants[i];

		if (!lookup(drv.get_proc, w->name, w->version, w->flags, w->slot)) {
			bind_error = cudaErrorInsufficientDriver;
			return;
		}
	}
	bind_error = rt_error(drv.init(0));
	if (bind_error == cudaSuccess &&
	    (drv.driver_get_version(&version) != CUDA_SUCCESS || version < FAKE_CUDART_VERSION))
		bind_error = cudaErrorInsufficientDriver;
}

static cudaError_t rt_init(void)
{
	pthread_once(&bind_once, bind_driver);
	return bind_error;
}

/* Retains the device's primary context (once per process) and makes it current. */
static cudaError_t activate(int dev)
{
	CUresult r = CUDA_SUCCESS;
	CUdevice cudev;
	CUcontext ctx;

	pthread_mutex_lock(&ctx_lock);
	ctx = primary[dev];
	if (!ctx) {
		r = drv.device_get(&cudev, dev);
		if (r == CUDA_SUCCESS)
			r = drv.primary_ctx_retain(&ctx, cudev);
		if (r == CUDA_SUCCESS)
			primary[dev] = ctx;
	}
	pthread_mutex_unlock(&ctx_lock);
	if (r == CUDA_SUCCESS)
		r = drv.ctx_set_current(ctx);
	if (r == CUDA_SUCCESS)
		thread_dev = dev;
	return rt_error(r);
}

/*
 * Entry of every call that touches a device: like the real runtime, a
 * thread gets device 0's primary context lazily, on its first such call.
 */
static cudaError_t rt_enter(void)
{
	cudaError_t err = rt_init();

	if (err || thread_dev >= 0)
		return err;
	return activate(0);
}

static void *to_ptr(CUdeviceptr p)
{
	return (void *)(uintptr_t)p;
}

static CUdeviceptr to_dptr(const void *p)
{
	return (CUdeviceptr)(uintptr_t)p;
}

/* ---- devices ---- */

cudaError_t cudaGetDeviceCount(int *count)
{
	cudaError_t err = rt_init();

	if (err)
		return err;
	if (!count)
		return cudaErrorInvalidValue;
	return rt_error(drv.device_get_count(count));
}

cudaError_t cudaSetDevice(int device)
{
	cudaError_t err = rt_init();
	int count;

	if (err)
		return err;
	err = rt_error(drv.device_get_count(&count));
	if (err)
		return err;
	if (device < 0 || device >= count || device >= FAKE_MAX_DEVICES)
		return cudaErrorInvalidDevice;
	return activate(device);
}

cudaError_t cudaGetDevice(int *device)
{
	cudaError_t err = rt_enter();

	if (err)
		return err;
	if (!device)
		return cudaErrorInvalidValue;
	*device = thread_dev;
	return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
	cudaError_t err = rt_enter();

	return err ? err : rt_error(drv.ctx_synchronize());
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	cudaError_t err = rt_enter();

	return err ? err : rt_error(drv.stream_synchronize((CUstream)stream));
}

cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
	cudaError_t err = rt_enter();

	return err ? err : rt_error(drv.mem_get_info(free, total));
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
	cudaError_t err = rt_enter();
	CUmemoryPool pool;

	if (err)
		return err;
	if (!memPool)
		return cudaErrorInvalidValue;
	err = rt_error(drv.device_get_default_mem_pool(&pool, device));
	if (!err)
		*memPool = (cudaMemPool_t)pool;
	return err;
}

/* ---- device and managed memory ---- */

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	cudaError_t err = rt_enter();
	CUdeviceptr p;

	if (err)
		return err;
	if (!devPtr)
		return cudaErrorInvalidValue;
	/* The real runtime hands out NULL for 0 bytes without asking the driver. */
	if (!size) {
		*devPtr = NULL;
		return cudaSuccess;
	}
	err = rt_error(drv.mem_alloc(&p, size));
	if (!err)
		*devPtr = to_ptr(p);
	return err;
}

cudaError_t cudaFree(void *devPtr)
{
	/* cudaFree(NULL) is the idiom to create the context: enter first. */
	cudaError_t err = rt_enter();

	if (err || !devPtr)
		return err;
	return rt_error(drv.mem_free(to_dptr(devPtr)));
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	cudaError_t err = rt_enter();
	CUdeviceptr p;

	if (err)
		return err;
	if (!devPtr || !size)
		return cudaErrorInvalidValue;
	err = rt_error(drv.mem_alloc_managed(&p, size, flags));
	if (!err)
		*devPtr = to_ptr(p);
	return err;
}

cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
	cudaError_t err = rt_enter();
	CUdeviceptr p;

	if (err)
		return err;
	if (!devPtr || !pitch)
		return cudaErrorInvalidValue;
	err = rt_error(drv.mem_alloc_pitch(&p, pitch, width, height, 4));
	if (!err)
		*devPtr = to_ptr(p);
	return err;
}

/*
 * As documented: at least width x height x depth bytes of linear memory,
 * each row padded to the returned pitch; xsize and ysize are the extent's
 * width and height.  The driver sees one pitched allocation of
 * height x depth rows.
 */
cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
	cudaError_t err = rt_enter();
	CUdeviceptr p;
	size_t pitch;

	if (err)
		return err;
	if (!pitchedDevPtr)
		return cudaErrorInvalidValue;
	err = rt_error(
		drv.mem_alloc_pitch(&p, &pitch, extent.width, extent.height * extent.depth, 4));
	if (err)
		return err;
	pitchedDevPtr->ptr = to_ptr(p);
	pitchedDevPtr->pitch = pitch;
	pitchedDevPtr->xsize = extent.width;
	pitchedDevPtr->ysize = extent.height;
	return cudaSuccess;
}

/* ---- stream-ordered memory: the _ptsz forms use the per-thread lookups ---- */

static cudaError_t malloc_async(typeof(cuMemAllocAsync) *fn, void **devPtr, size_t size,
				cudaStream_t stream)
{
	cudaError_t err = rt_enter();
	CUdeviceptr p;

	if (err)
		return err;
	if (!devPtr)
		return cudaErrorInvalidValue;
	err = rt_error(fn(&p, size, (CUstream)stream));
	if (!err)
		*devPtr = to_ptr(p);
	return err;
}

static cudaError_t malloc_from_pool(typeof(cuMemAllocFromPoolAsync) *fn, void **ptr, size_t size,
				    cudaMemPool_t pool, cudaStream_t stream)
{
	cudaError_t err = rt_enter();
	CUdeviceptr p;

	if (err)
		return err;
	if (!ptr)
		return cudaErrorInvalidValue;
	err = rt_error(fn(&p, size, (CUmemoryPool)pool, (CUstream)stream));
	if (!err)
		*ptr = to_ptr(p);
	return err;
}

static cudaError_t free_async(typeof(cuMemFreeAsync) *fn, void *devPtr, cudaStream_t stream)
{
	cudaError_t err = rt_enter();

	return err ? err : rt_error(fn(to_dptr(devPtr), (CUstream)stream));
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
	return malloc_async(drv.mem_alloc_async, devPtr, size, hStream);
}

cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
	return malloc_async(drv.mem_alloc_async_ptsz, devPtr, size, hStream);
}

cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool,
				    cudaStream_t stream)
{
	return malloc_from_pool(drv.mem_alloc_from_pool_async, ptr, size, memPool, stream);
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
					 cudaStream_t stream)
{
	return malloc_from_pool(drv.mem_alloc_from_pool_async_ptsz, ptr, size, memPool, stream);
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
	return free_async(drv.mem_free_async, devPtr, hStream);
}

cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
	return free_async(drv.mem_free_async_ptsz, devPtr, hStream);
}

/* ---- pinned host memory ---- */

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	cudaError_t err = rt_enter();

	return err ? err : rt_error(drv.mem_alloc_host(ptr, size));
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	cudaError_t err = rt_enter();

	return err ? err : rt_error(drv.mem_host_alloc(pHost, size, flags));
}

cudaError_t cudaFreeHost(void *ptr)
{
	cudaError_t err = rt_enter();

	if (err || !ptr)
		return err;
	return rt_error(drv.mem_free_host(ptr));
}

/* ---- streams, capture and graphs: the driver's, handle for handle ---- */

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	cudaError_t err = rt_enter();

	return err ? err : rt_error(drv.stream_create((CUstream *)pStream, 0));
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	cudaError_t err = rt_enter();

	return err ? err : rt_error(drv.stream_destroy((CUstream)stream));
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	cudaError_t err = rt_enter();

	return err ? err :
		     rt_error(
			     drv.stream_begin_capture((CUstream)stream, (CUstreamCaptureMode)mode));
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
	cudaError_t err = rt_enter();

	return err ? err : rt_error(drv.stream_end_capture((CUstream)stream, (CUgraph *)pGraph));
}

cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
	cudaError_t err = rt_enter();

	return err ? err : rt_error(drv.graph_create((CUgraph *)pGraph, flags));
}

cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
				     const cudaGraphNode_t *pDependencies, size_t numDependencies,
				     struct cudaMemAllocNodeParams *nodeParams)
{
	CUDA_MEM_ALLOC_NODE_PARAMS p = { 0 };
	cudaError_t err = rt_enter();

	if (err)
		return err;
	if (!nodeParams)
		return cudaErrorInvalidValue;
	p.poolProps.allocType = (CUmemAllocationType)nodeParams->poolProps.allocType;
	p.poolProps.handleTypes = (CUmemAllocationHandleType)nodeParams->poolProps.handleTypes;
	p.poolProps.location.type = (CUmemLocationType)nodeParams->poolProps.location.type;
	p.poolProps.location.id = nodeParams->poolProps.location.id;
	p.bytesize = nodeParams->bytesize;
	err = rt_error(drv.graph_add_mem_alloc_node((CUgraphNode *)pGraphNode, (CUgraph)graph,
						    (const CUgraphNode *)pDependencies,
						    numDependencies, &p));
	if (!err)
		nodeParams->dptr = to_ptr(p.dptr);
	return err;
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
				    const cudaGraphNode_t *pDependencies, size_t numDependencies,
				    void *dptr)
{
	cudaError_t err = rt_enter();

	return err ? err :
		     rt_error(drv.graph_add_mem_free_node((CUgraphNode *)pGraphNode, (CUgraph)graph,
							  (const CUgraphNode *)pDependencies,
							  numDependencies, to_dptr(dptr)));
}

/* The generic node, its memory types translated to the driver's; the
 * other types are not faked. */
cudaError_t cudaGraphAddNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
			     const cudaGraphNode_t *pDependencies,
			     const cudaGraphEdgeData *dependencyData, size_t numDependencies,
			     struct cudaGraphNodeParams *nodeParams)
{
	CUgraphNodeParams p = { 0 };
	cudaError_t err = rt_enter();

	if (err)
		return err;
	if (!nodeParams)
		return cudaErrorInvalidValue;
	switch (nodeParams->type) {
	case cudaGraphNodeTypeMemAlloc:
		p.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
		p.alloc.poolProps.allocType =
			(CUmemAllocationType)nodeParams->alloc.poolProps.allocType;
		p.alloc.poolProps.handleTypes =
			(CUmemAllocationHandleType)nodeParams->alloc.poolProps.handleTypes;
		p.alloc.poolProps.location.type =
			(CUmemLocationType)nodeParams->alloc.poolProps.location.type;
		p.alloc.poolProps.location.id = nodeParams->alloc.poolProps.location.id;
		p.alloc.bytesize = nodeParams->alloc.bytesize;
		break;
	case cudaGraphNodeTypeMemFree:
		p.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
		p.free.dptr = to_dptr(nodeParams->free.dptr);
		break;
	default:
		return cudaErrorNotSupported;
	}
	err = rt_error(drv.graph_add_node(
		(CUgraphNode *)pGraphNode, (CUgraph)graph, (const CUgraphNode *)pDependencies,
		(const CUgraphEdgeData *)dependencyData, numDependencies, &p));
	if (!err && p.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
		nodeParams->alloc.dptr = to_ptr(p.alloc.dptr);
	return err;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
				 unsigned long long flags)
{
	cudaError_t err = rt_enter();

	return err ? err :
		     rt_error(drv.graph_instantiate((CUgraphExec *)pGraphExec, (CUgraph)graph,
						    flags));
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
					  unsigned long long flags)
{
	return cudaGraphInstantiate(pGraphExec, graph, flags);
}

static cudaError_t instantiate_params(typeof(cuGraphInstantiateWithParams) *fn,
				      cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
				      cudaGraphInstantiateParams *params)
{
	CUDA_GRAPH_INSTANTIATE_PARAMS p = { 0 };
	cudaError_t err = rt_enter();

	if (err)
		return err;
	if (!params)
		return cudaErrorInvalidValue;
	p.flags = params->flags;
	p.hUploadStream = (CUstream)params->uploadStream;
	err = rt_error(fn((CUgraphExec *)pGraphExec, (CUgraph)graph, &p));
	params->errNode_out = (cudaGraphNode_t)p.hErrNode_out;
	params->result_out = (typeof(params->result_out))p.result_out;
	return err;
}

cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
					   cudaGraphInstantiateParams *instantiateParams)
{
	return instantiate_params(drv.graph_instantiate_with_params, pGraphExec, graph,
				  instantiateParams);
}

cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
						cudaGraphInstantiateParams *instantiateParams)
{
	return instantiate_params(drv.graph_instantiate_with_params_ptsz, pGraphExec, graph,
				  instantiateParams);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	cudaError_t err = rt_enter();

	return err ? err : rt_error(drv.graph_launch((CUgraphExec)graphExec, (CUstream)stream));
}

cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	cudaError_t err = rt_enter();

	return err ? err :
		     rt_error(drv.graph_launch_ptsz((CUgraphExec)graphExec, (CUstream)stream));
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
	cudaError_t err = rt_enter();

	return err ? err : rt_error(drv.graph_exec_destroy((CUgraphExec)graphExec));
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
	cudaError_t err = rt_enter();

	return err ? err : rt_error(drv.graph_destroy((CUgraph)graph));
}

cudaError_t cudaDeviceGraphMemTrim(int device)
{
	cudaError_t err = rt_enter();
	CUdevice d;

	if (err)
		return err;
	err = rt_error(drv.device_get(&d, device));
	return err ? err : rt_error(drv.device_graph_mem_trim(d));
}

cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr,
					   void *value)
{
	cudaError_t err = rt_enter();
	CUdevice d;

	if (err)
		return err;
	err = rt_error(drv.device_get(&d, device));
	return err ? err :
		     rt_error(drv.device_get_graph_mem_attribute(d, (CUgraphMem_attribute)attr,
								 value));
}

/* ---- errors and driver entry points ---- */

const char *cudaGetErrorString(cudaError_t error)
{
	/* clang-format off */
	static const struct {
		cudaError_t err;
		const char *text;
	} texts[] = {
		{ cudaSuccess, "no error" },
		{ cudaErrorInvalidValue, "invalid argument" },
		{ cudaErrorMemoryAllocation, "out of memory" },
		{ cudaErrorInitializationError, "initialization error" },
		{ cudaErrorInsufficientDriver,
		  "CUDA driver version is insufficient for CUDA runtime version" },
		{ cudaErrorNoDevice, "no CUDA-capable device is detected" },
		{ cudaErrorInvalidDevice, "invalid device ordinal" },
		{ cudaErrorDeviceUninitialized, "invalid device context" },
		{ cudaErrorInvalidResourceHandle, "invalid resource handle" },
		{ cudaErrorSymbolNotFound, "named symbol not found" },
		{ cudaErrorNotSupported, "operation not supported" },
		{ cudaErrorUnknown, "unknown error" },
	};
	/* clang-format on */

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		if (texts[i].err == error)
			return texts[i].text;
	return "unrecognized error code";
}

/*
 * As documented: a name the driver does not know is no error, only a NULL
 * pointer and a status.  The cudaEnable* flags have the CU_GET_PROC_ADDRESS_*
 * values, and the query results the CU_GET_PROC_ADDRESS_* ones.
 */
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
					     unsigned int cudaVersion, unsigned long long flags,
					     enum cudaDriverEntryPointQueryResult *driverStatus)
{
	CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	cudaError_t err = rt_init();
	CUresult r;

	if (err)
		return err;
	if (!symbol || !funcPtr)
		return cudaErrorInvalidValue;
	r = drv.get_proc(symbol, funcPtr, (int)cudaVersion, flags, &status);
	if (driverStatus)
		*driverStatus = (enum cudaDriverEntryPointQueryResult)status;
	return r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_FOUND ? cudaSuccess : rt_error(r);
}
