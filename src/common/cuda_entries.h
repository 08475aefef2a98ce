/* SPDX-License-Identifier: MIT */
/*
 * Every CUDA entry point libgpuspy.so wraps, one row each: the one list.
 * From it come the prototypes (cuda_abi.h: checked against NVIDIA's own
 * headers when they are installed), the wrappers and their doors
 * (src/preload/4-top/hooks_driver.c, hooks_runtime.c), the names and the
 * tables of the real functions (driver.h), the reported API names
 * (core.h), and the check that the fake driver and runtime export every
 * one (tests/fake/exports.c).  Adding an entry point is one row; a body
 * that no row has yet is one shape (src/preload/4-top/shapes.h).
 *
 * X(name, side, shape, api, kind, family, parameter types...), the
 * driver's rows first (GS_CUDA_DRIVER_ENTRIES), then the runtime's
 * (GS_CUDA_RUNTIME_ENTRIES); GS_CUDA_ENTRIES is both.
 *
 *   name    the exported symbol
 *   side    DRIVER (cu*, returns CUresult) or RUNTIME (cuda*, cudaError_t)
 *   shape   what its hook does around the real call (shapes.h)
 *   api     what a call site it makes is reported as: the entry point
 *           itself, or for a per-thread-stream (_ptsz) form its plain
 *           twin, whose type it must have (checked by the hooks)
 *   kind    the memory it allocates or frees: DEVICE, MANAGED, PINNED,
 *           VMM, or NONE
 *   family  the calls counter (enum gs_call) it also counts in: NONE,
 *           PER_THREAD, VMM, GRAPH, GRAPH_PER_THREAD, LOOKUP_V1, LOOKUP_V2
 *
 * The wrappers name their parameters a0, a1, ... in this order; a shape
 * says which of them it reads.
 */
#ifndef GPUSPY_CUDA_ENTRIES_H
#define GPUSPY_CUDA_ENTRIES_H

/* clang-format off */
#define GS_CUDA_ENTRIES(X) GS_CUDA_DRIVER_ENTRIES(X) GS_CUDA_RUNTIME_ENTRIES(X)

#define GS_CUDA_DRIVER_ENTRIES(X) \
/* name                               side     shape               api                             kind     family            parameter types */ \
X(cuMemAlloc_v2,                      DRIVER,  alloc,              cuMemAlloc_v2,                  DEVICE,  NONE,             CUdeviceptr *, size_t) \
X(cuMemFree_v2,                       DRIVER,  free,               cuMemFree_v2,                   DEVICE,  NONE,             CUdeviceptr) \
X(cuMemAllocAsync,                    DRIVER,  async,              cuMemAllocAsync,                DEVICE,  NONE,             CUdeviceptr *, size_t, CUstream) \
X(cuMemAllocAsync_ptsz,               DRIVER,  async,              cuMemAllocAsync,                DEVICE,  PER_THREAD,       CUdeviceptr *, size_t, CUstream) \
X(cuMemAllocFromPoolAsync,            DRIVER,  pool,               cuMemAllocFromPoolAsync,        DEVICE,  NONE,             CUdeviceptr *, size_t, CUmemoryPool, CUstream) \
X(cuMemAllocFromPoolAsync_ptsz,       DRIVER,  pool,               cuMemAllocFromPoolAsync,        DEVICE,  PER_THREAD,       CUdeviceptr *, size_t, CUmemoryPool, CUstream) \
X(cuMemFreeAsync,                     DRIVER,  free_async,         cuMemFreeAsync,                 DEVICE,  NONE,             CUdeviceptr, CUstream) \
X(cuMemFreeAsync_ptsz,                DRIVER,  free_async,         cuMemFreeAsync,                 DEVICE,  PER_THREAD,       CUdeviceptr, CUstream) \
X(cuMemAllocManaged,                  DRIVER,  alloc,              cuMemAllocManaged,              MANAGED, NONE,             CUdeviceptr *, size_t, unsigned int) \
X(cuMemAllocPitch_v2,                 DRIVER,  pitch,              cuMemAllocPitch_v2,             DEVICE,  NONE,             CUdeviceptr *, size_t *, size_t, size_t, unsigned int) \
X(cuMemCreate,                        DRIVER,  vmm_create,         cuMemCreate,                    VMM,     VMM,              CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long) \
X(cuMemRelease,                       DRIVER,  vmm_release,        cuMemRelease,                   VMM,     VMM,              CUmemGenericAllocationHandle) \
X(cuMemMap,                           DRIVER,  vmm_map,            cuMemMap,                       VMM,     VMM,              CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long) \
X(cuMemUnmap,                         DRIVER,  vmm_unmap,          cuMemUnmap,                     VMM,     VMM,              CUdeviceptr, size_t) \
X(cuMemAddressReserve,                DRIVER,  reserve,            cuMemAddressReserve,            NONE,    VMM,              CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long) \
X(cuMemAddressFree,                   DRIVER,  unreserve,          cuMemAddressFree,               NONE,    VMM,              CUdeviceptr, size_t) \
X(cuMemHostAlloc,                     DRIVER,  alloc,              cuMemHostAlloc,                 PINNED,  NONE,             void **, size_t, unsigned int) \
X(cuMemAllocHost_v2,                  DRIVER,  alloc,              cuMemAllocHost_v2,              PINNED,  NONE,             void **, size_t) \
X(cuMemFreeHost,                      DRIVER,  free,               cuMemFreeHost,                  PINNED,  NONE,             void *) \
X(cuGraphAddMemAllocNode,             DRIVER,  graph_alloc_node,   cuGraphAddMemAllocNode,         DEVICE,  GRAPH,            CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUDA_MEM_ALLOC_NODE_PARAMS *) \
X(cuGraphAddMemFreeNode,              DRIVER,  graph_free_node,    cuGraphAddMemFreeNode,          DEVICE,  GRAPH,            CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUdeviceptr) \
X(cuGraphAddNode_v2,                  DRIVER,  add_node,           cuGraphAddNode_v2,              DEVICE,  GRAPH,            CUgraphNode *, CUgraph, const CUgraphNode *, const CUgraphEdgeData *, size_t, CUgraphNodeParams *) \
X(cuGraphInstantiateWithFlags,        DRIVER,  instantiate,        cuGraphInstantiateWithFlags,    NONE,    GRAPH,            CUgraphExec *, CUgraph, unsigned long long) \
X(cuGraphInstantiateWithParams,       DRIVER,  instantiate_params, cuGraphInstantiateWithParams,   NONE,    GRAPH,            CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *) \
X(cuGraphInstantiateWithParams_ptsz,  DRIVER,  instantiate_params, cuGraphInstantiateWithParams,   NONE,    GRAPH_PER_THREAD, CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *) \
X(cuGraphLaunch,                      DRIVER,  launch,             cuGraphLaunch,                  NONE,    GRAPH,            CUgraphExec, CUstream) \
X(cuGraphLaunch_ptsz,                 DRIVER,  launch,             cuGraphLaunch,                  NONE,    GRAPH_PER_THREAD, CUgraphExec, CUstream) \
X(cuGraphExecDestroy,                 DRIVER,  destroy,            cuGraphExecDestroy,             NONE,    GRAPH,            CUgraphExec) \
X(cuGraphDestroy,                     DRIVER,  destroy,            cuGraphDestroy,                 NONE,    GRAPH,            CUgraph) \
X(cuDeviceGraphMemTrim,               DRIVER,  trim,               cuDeviceGraphMemTrim,           NONE,    GRAPH,            CUdevice) \
X(cuStreamBeginCapture,               DRIVER,  capture_begin,      cuStreamBeginCapture,           NONE,    NONE,             CUstream) \
X(cuStreamBeginCapture_ptsz,          DRIVER,  capture_begin,      cuStreamBeginCapture,           NONE,    NONE,             CUstream) \
X(cuStreamBeginCapture_v2,            DRIVER,  capture_begin,      cuStreamBeginCapture_v2,        NONE,    NONE,             CUstream, CUstreamCaptureMode) \
X(cuStreamBeginCapture_v2_ptsz,       DRIVER,  capture_begin,      cuStreamBeginCapture_v2,        NONE,    NONE,             CUstream, CUstreamCaptureMode) \
X(cuStreamBeginCaptureToGraph,        DRIVER,  capture_begin,      cuStreamBeginCaptureToGraph,    NONE,    NONE,             CUstream, CUgraph, const CUgraphNode *, const CUgraphEdgeData *, size_t, CUstreamCaptureMode) \
X(cuStreamBeginCaptureToGraph_ptsz,   DRIVER,  capture_begin,      cuStreamBeginCaptureToGraph,    NONE,    NONE,             CUstream, CUgraph, const CUgraphNode *, const CUgraphEdgeData *, size_t, CUstreamCaptureMode) \
X(cuMemGetInfo_v2,                    DRIVER,  mem_info,           cuMemGetInfo_v2,                NONE,    NONE,             size_t *, size_t *) \
X(cuDeviceTotalMem_v2,                DRIVER,  total_mem,          cuDeviceTotalMem_v2,            NONE,    NONE,             size_t *, CUdevice) \
X(cuGetProcAddress,                   DRIVER,  lookup,             cuGetProcAddress,               NONE,    LOOKUP_V1,        const char *, void **, int, cuuint64_t) \
X(cuGetProcAddress_v2,                DRIVER,  lookup,             cuGetProcAddress_v2,            NONE,    LOOKUP_V2,        const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *)

#define GS_CUDA_RUNTIME_ENTRIES(X) \
/* name                               side     shape               api                             kind     family            parameter types */ \
X(cudaMalloc,                         RUNTIME, alloc,              cudaMalloc,                     DEVICE,  NONE,             void **, size_t) \
X(cudaFree,                           RUNTIME, free,               cudaFree,                       DEVICE,  NONE,             void *) \
X(cudaMallocAsync,                    RUNTIME, async,              cudaMallocAsync,                DEVICE,  NONE,             void **, size_t, cudaStream_t) \
X(cudaMallocAsync_ptsz,               RUNTIME, async,              cudaMallocAsync,                DEVICE,  PER_THREAD,       void **, size_t, cudaStream_t) \
X(cudaFreeAsync,                      RUNTIME, free_async,         cudaFreeAsync,                  DEVICE,  NONE,             void *, cudaStream_t) \
X(cudaFreeAsync_ptsz,                 RUNTIME, free_async,         cudaFreeAsync,                  DEVICE,  PER_THREAD,       void *, cudaStream_t) \
X(cudaMallocFromPoolAsync,            RUNTIME, pool,               cudaMallocFromPoolAsync,        DEVICE,  NONE,             void **, size_t, cudaMemPool_t, cudaStream_t) \
X(cudaMallocFromPoolAsync_ptsz,       RUNTIME, pool,               cudaMallocFromPoolAsync,        DEVICE,  PER_THREAD,       void **, size_t, cudaMemPool_t, cudaStream_t) \
X(cudaMallocManaged,                  RUNTIME, alloc,              cudaMallocManaged,              MANAGED, NONE,             void **, size_t, unsigned int) \
X(cudaMallocPitch,                    RUNTIME, pitch,              cudaMallocPitch,                DEVICE,  NONE,             void **, size_t *, size_t, size_t) \
X(cudaMalloc3D,                       RUNTIME, pitch3d,            cudaMalloc3D,                   DEVICE,  NONE,             struct cudaPitchedPtr *, struct cudaExtent) \
X(cudaMallocHost,                     RUNTIME, alloc,              cudaMallocHost,                 PINNED,  NONE,             void **, size_t) \
X(cudaHostAlloc,                      RUNTIME, alloc,              cudaHostAlloc,                  PINNED,  NONE,             void **, size_t, unsigned int) \
X(cudaFreeHost,                       RUNTIME, free,               cudaFreeHost,                   PINNED,  NONE,             void *) \
X(cudaGraphAddMemAllocNode,           RUNTIME, graph_alloc_node,   cudaGraphAddMemAllocNode,       DEVICE,  GRAPH,            cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, size_t, struct cudaMemAllocNodeParams *) \
X(cudaGraphAddMemFreeNode,            RUNTIME, graph_free_node,    cudaGraphAddMemFreeNode,        DEVICE,  GRAPH,            cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, size_t, void *) \
X(cudaGraphAddNode,                   RUNTIME, add_node,           cudaGraphAddNode,               DEVICE,  GRAPH,            cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, const cudaGraphEdgeData *, size_t, struct cudaGraphNodeParams *) \
X(cudaGraphInstantiate,               RUNTIME, instantiate,        cudaGraphInstantiate,           NONE,    GRAPH,            cudaGraphExec_t *, cudaGraph_t, unsigned long long) \
X(cudaGraphInstantiateWithFlags,      RUNTIME, instantiate,        cudaGraphInstantiateWithFlags,  NONE,    GRAPH,            cudaGraphExec_t *, cudaGraph_t, unsigned long long) \
X(cudaGraphInstantiateWithParams,     RUNTIME, instantiate_params, cudaGraphInstantiateWithParams, NONE,    GRAPH,            cudaGraphExec_t *, cudaGraph_t, cudaGraphInstantiateParams *) \
X(cudaGraphInstantiateWithParams_ptsz,RUNTIME, instantiate_params, cudaGraphInstantiateWithParams, NONE,    GRAPH_PER_THREAD, cudaGraphExec_t *, cudaGraph_t, cudaGraphInstantiateParams *) \
X(cudaGraphLaunch,                    RUNTIME, launch,             cudaGraphLaunch,                NONE,    GRAPH,            cudaGraphExec_t, cudaStream_t) \
X(cudaGraphLaunch_ptsz,               RUNTIME, launch,             cudaGraphLaunch,                NONE,    GRAPH_PER_THREAD, cudaGraphExec_t, cudaStream_t) \
X(cudaGraphExecDestroy,               RUNTIME, destroy,            cudaGraphExecDestroy,           NONE,    GRAPH,            cudaGraphExec_t) \
X(cudaGraphDestroy,                   RUNTIME, destroy,            cudaGraphDestroy,               NONE,    GRAPH,            cudaGraph_t) \
X(cudaDeviceGraphMemTrim,             RUNTIME, trim,               cudaDeviceGraphMemTrim,         NONE,    GRAPH,            int)
/* clang-format on */

/* What an entry point of each side returns. */
#define GS_CUDA_RESULT_DRIVER  CUresult
#define GS_CUDA_RESULT_RUNTIME cudaError_t

/*
 * A wrapper's parameters, from a row's types: GS_CUDA_PARAMS(T0, T1)
 * is "T0 a0, T1 a1", GS_CUDA_ARGS(T0, T1) is "a0, a1".  Up to six.
 */
#define GS_CUDA_COUNT(...)			       GS_CUDA_COUNT_(__VA_ARGS__, 6, 5, 4, 3, 2, 1, 0)
#define GS_CUDA_COUNT_(_1, _2, _3, _4, _5, _6, n, ...) n
#define GS_CUDA_CAT(a, b)			       GS_CUDA_CAT_(a, b)
#define GS_CUDA_CAT_(a, b)			       a##b
#define GS_CUDA_PARAMS(...)			       GS_CUDA_CAT(GS_CUDA_PARAMS_, GS_CUDA_COUNT(__VA_ARGS__))(__VA_ARGS__)
#define GS_CUDA_PARAMS_1(t0)			       t0 a0
#define GS_CUDA_PARAMS_2(t0, t1)		       t0 a0, t1 a1
#define GS_CUDA_PARAMS_3(t0, t1, t2)		       t0 a0, t1 a1, t2 a2
#define GS_CUDA_PARAMS_4(t0, t1, t2, t3)	       t0 a0, t1 a1, t2 a2, t3 a3
#define GS_CUDA_PARAMS_5(t0, t1, t2, t3, t4)	       t0 a0, t1 a1, t2 a2, t3 a3, t4 a4
#define GS_CUDA_PARAMS_6(t0, t1, t2, t3, t4, t5)       t0 a0, t1 a1, t2 a2, t3 a3, t4 a4, t5 a5
#define GS_CUDA_ARGS(...)			       GS_CUDA_CAT(GS_CUDA_ARGS_, GS_CUDA_COUNT(__VA_ARGS__))
#define GS_CUDA_ARGS_1				       a0
#define GS_CUDA_ARGS_2				       a0, a1
#define GS_CUDA_ARGS_3				       a0, a1, a2
#define GS_CUDA_ARGS_4				       a0, a1, a2, a3
#define GS_CUDA_ARGS_5				       a0, a1, a2, a3, a4
#define GS_CUDA_ARGS_6				       a0, a1, a2, a3, a4, a5

#endif /* GPUSPY_CUDA_ENTRIES_H */
