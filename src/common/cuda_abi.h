/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver and runtime declarations gpuspy needs.
 *
 * With the real toolkit headers (GPUSPY_HAVE_CUDA_H) every hook and every
 * function of the fake driver is compiled against NVIDIA's own prototypes,
 * so a signature that drifts fails to compile.  Without them, this file
 * declares the small subset used, with the same names, layouts and values
 * as CUDA 13's cuda.h / cuda_runtime_api.h.  Nothing here links anything:
 * the preload library never has a NEEDED entry on a CUDA library.
 */
#ifndef GPUSPY_CUDA_ABI_H
#define GPUSPY_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_entries.h"

#ifdef GPUSPY_HAVE_CUDA_H

#include <cuda.h>
#include <cuda_runtime_api.h>

/* cuda.h renames the legacy 4-argument lookup, and the legacy
 * 1-argument cuStreamBeginCapture, to their _v2 forms. */
#undef cuGetProcAddress
#undef cuStreamBeginCapture

#else /* built-in subset */

typedef int CUresult;
enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_NOT_FOUND = 500,
};

typedef uint64_t cuuint64_t;
typedef unsigned long long CUdeviceptr;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef unsigned long long CUmemGenericAllocationHandle;

typedef enum CUmemAllocationType_enum {
	CU_MEM_ALLOCATION_TYPE_INVALID = 0,
	CU_MEM_ALLOCATION_TYPE_PINNED = 1,
} CUmemAllocationType;

typedef enum CUmemAllocationHandleType_enum {
	CU_MEM_HANDLE_TYPE_NONE = 0,
} CUmemAllocationHandleType;

typedef enum CUmemLocationType_enum {
	CU_MEM_LOCATION_TYPE_INVALID = 0,
	CU_MEM_LOCATION_TYPE_DEVICE = 1,
} CUmemLocationType;

typedef struct CUmemLocation_st {
	CUmemLocationType type;
	int id;
} CUmemLocation;

typedef struct CUmemAllocationProp_st {
	CUmemAllocationType type;
	CUmemAllocationHandleType requestedHandleTypes;
	CUmemLocation location;
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType;
		unsigned char gpuDirectRDMACapable;
		unsigned short usage;
		unsigned char reserved[4];
	} allocFlags;
} CUmemAllocationProp;

typedef enum CUdriverProcAddressQueryResult_enum {
	CU_GET_PROC_ADDRESS_SUCCESS = 0,
	CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
	CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
} CUdriverProcAddressQueryResult;

enum {
	CU_GET_PROC_ADDRESS_DEFAULT = 0,
	CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1 << 0,
	CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 1 << 1,
};

enum { CU_MEMHOSTALLOC_PORTABLE = 0x01 };
enum { CU_MEM_ATTACH_GLOBAL = 0x1 };

typedef enum cudaError {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
} cudaError_t;

typedef struct CUstream_st *cudaStream_t;
typedef struct CUmemPoolHandle_st *cudaMemPool_t;

struct cudaPitchedPtr {
	void *ptr;
	size_t pitch;
	size_t xsize;
	size_t ysize;
};

struct cudaExtent {
	size_t width;
	size_t height;
	size_t depth;
};

#define cudaMemAttachGlobal	       0x01
#define cudaHostAllocDefault	       0x00

/* Also used by the fake driver and runtime and the integration programs (tests/). */
enum {
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_SUPPORTED = 801,
};
enum { CU_MEM_ATTACH_HOST = 0x2 };
#define CU_MEMHOSTALLOC_DEVICEMAP      0x02
#define CU_MEMHOSTALLOC_WRITECOMBINED  0x04

typedef enum CUmemAllocationGranularity_flags_enum {
	CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0x0,
	CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 0x1,
} CUmemAllocationGranularity_flags;

typedef enum CUmemAccess_flags_enum {
	CU_MEM_ACCESS_FLAGS_PROT_NONE = 0x0,
	CU_MEM_ACCESS_FLAGS_PROT_READ = 0x1,
	CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3,
} CUmemAccess_flags;

typedef struct CUmemAccessDesc_st {
	CUmemLocation location;
	CUmemAccess_flags flags;
} CUmemAccessDesc;

/* More cudaError_t values, typed so that they convert without warnings. */
#define cudaErrorInitializationError   ((cudaError_t)3)
#define cudaErrorInsufficientDriver    ((cudaError_t)35)
#define cudaErrorNoDevice	       ((cudaError_t)100)
#define cudaErrorInvalidDevice	       ((cudaError_t)101)
#define cudaErrorDeviceUninitialized   ((cudaError_t)201)
#define cudaErrorInvalidResourceHandle ((cudaError_t)400)
#define cudaErrorSymbolNotFound	       ((cudaError_t)500)
#define cudaErrorNotSupported	       ((cudaError_t)801)
#define cudaErrorUnknown	       ((cudaError_t)999)

enum cudaDriverEntryPointQueryResult {
	cudaDriverEntryPointSuccess = 0,
	cudaDriverEntryPointSymbolNotFound = 1,
	cudaDriverEntryPointVersionNotSufficent = 2,
};

enum cudaGetDriverEntryPointFlags {
	cudaEnableDefault = 0x0,
	cudaEnableLegacyStream = 0x1,
	cudaEnablePerThreadDefaultStream = 0x2,
};

/* CUDA graphs: memory nodes, instantiation, launch, stream capture. */
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphEdgeData_st CUgraphEdgeData;
#define CU_STREAM_LEGACY	       ((CUstream)0x1)
#define CU_STREAM_PER_THREAD	       ((CUstream)0x2)

typedef struct CUmemPoolProps_st {
	CUmemAllocationType allocType;
	CUmemAllocationHandleType handleTypes;
	CUmemLocation location;
	void *win32SecurityAttributes;
	size_t maxSize;
	unsigned short usage;
	unsigned char reserved[54];
} CUmemPoolProps;

typedef struct CUDA_MEM_ALLOC_NODE_PARAMS_v1_st {
	CUmemPoolProps poolProps;
	const struct CUmemAccessDesc_st *accessDescs;
	size_t accessDescCount;
	size_t bytesize;
	CUdeviceptr dptr;
} CUDA_MEM_ALLOC_NODE_PARAMS;

/* The generic node of cuGraphAddNode: only its memory nodes are read. */
typedef enum CUgraphNodeType_enum {
	CU_GRAPH_NODE_TYPE_EMPTY = 5,
	CU_GRAPH_NODE_TYPE_MEM_ALLOC = 10,
	CU_GRAPH_NODE_TYPE_MEM_FREE = 11,
} CUgraphNodeType;

typedef struct CUDA_MEM_ALLOC_NODE_PARAMS_v2_st {
	CUmemPoolProps poolProps;
	const struct CUmemAccessDesc_st *accessDescs;
	size_t accessDescCount;
	size_t bytesize;
	CUdeviceptr dptr;
} CUDA_MEM_ALLOC_NODE_PARAMS_v2;

typedef struct CUDA_MEM_FREE_NODE_PARAMS_st {
	CUdeviceptr dptr;
} CUDA_MEM_FREE_NODE_PARAMS;

/* The other members of the union (kernel, memcpy, ...) are not needed:
 * reserved1 gives it its size. */
typedef struct CUgraphNodeParams_st {
	CUgraphNodeType type;
	int reserved0[3];
	union {
		long long reserved1[29];
		CUDA_MEM_ALLOC_NODE_PARAMS_v2 alloc;
		CUDA_MEM_FREE_NODE_PARAMS free;
	};
	long long reserved2;
} CUgraphNodeParams;

typedef enum CUgraphInstantiateResult_enum {
	CUDA_GRAPH_INSTANTIATE_SUCCESS = 0,
	CUDA_GRAPH_INSTANTIATE_ERROR = 1,
} CUgraphInstantiateResult;

typedef struct CUDA_GRAPH_INSTANTIATE_PARAMS_st {
	cuuint64_t flags;
	CUstream hUploadStream;
	CUgraphNode hErrNode_out;
	CUgraphInstantiateResult result_out;
} CUDA_GRAPH_INSTANTIATE_PARAMS;

enum { CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH = 1 };

typedef enum CUgraphMem_attribute_enum {
	CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT,
	CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
	CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT,
	CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH,
} CUgraphMem_attribute;

typedef enum CUstreamCaptureStatus_enum {
	CU_STREAM_CAPTURE_STATUS_NONE = 0,
	CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
	CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
} CUstreamCaptureStatus;

typedef enum CUstreamCaptureMode_enum {
	CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
	CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
	CU_STREAM_CAPTURE_MODE_RELAXED = 2,
} CUstreamCaptureMode;

typedef struct CUgraph_st *cudaGraph_t;
typedef struct CUgraphNode_st *cudaGraphNode_t;
typedef struct CUgraphExec_st *cudaGraphExec_t;

struct cudaMemPoolProps {
	int allocType;
	int handleTypes;
	struct {
		int type;
		int id;
	} location;
	void *win32SecurityAttributes;
	size_t maxSize;
	unsigned short usage;
	unsigned char reserved[54];
};

struct cudaMemAllocNodeParams {
	struct cudaMemPoolProps poolProps;
	const void *accessDescs;
	size_t accessDescCount;
	size_t bytesize;
	void *dptr;
};

typedef struct cudaGraphEdgeData_st cudaGraphEdgeData;

enum cudaGraphNodeType {
	cudaGraphNodeTypeEmpty = 0x05,
	cudaGraphNodeTypeMemAlloc = 0x0a,
	cudaGraphNodeTypeMemFree = 0x0b,
};

struct cudaMemAllocNodeParamsV2 {
	struct cudaMemPoolProps poolProps;
	const void *accessDescs;
	size_t accessDescCount;
	size_t bytesize;
	void *dptr;
};

struct cudaMemFreeNodeParams {
	void *dptr;
};

struct cudaGraphNodeParams {
	enum cudaGraphNodeType type;
	int reserved0[3];
	union {
		long long reserved1[29];
		struct cudaMemAllocNodeParamsV2 alloc;
		struct cudaMemFreeNodeParams free;
	};
	long long reserved2;
};

typedef struct cudaGraphInstantiateParams_st {
	unsigned long long flags;
	cudaStream_t uploadStream;
	cudaGraphNode_t errNode_out;
	int result_out;
} cudaGraphInstantiateParams;

enum cudaGraphMemAttributeType {
	cudaGraphMemAttrUsedMemCurrent = 0x0,
	cudaGraphMemAttrUsedMemHigh = 0x1,
	cudaGraphMemAttrReservedMemCurrent = 0x2,
	cudaGraphMemAttrReservedMemHigh = 0x3,
};

enum cudaStreamCaptureStatus {
	cudaStreamCaptureStatusNone = 0,
	cudaStreamCaptureStatusActive = 1,
	cudaStreamCaptureStatusInvalidated = 2,
};

enum cudaStreamCaptureMode {
	cudaStreamCaptureModeGlobal = 0,
	cudaStreamCaptureModeThreadLocal = 1,
	cudaStreamCaptureModeRelaxed = 2,
};

enum { cudaGraphInstantiateFlagAutoFreeOnLaunch = 1 };
enum { cudaMemAllocationTypePinned = 1 };
enum { cudaMemLocationTypeDevice = 1 };
enum { CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900 };
enum { CUDA_ERROR_DEINITIALIZED = 4 };
#endif /* GPUSPY_HAVE_CUDA_H */

#ifndef GPUSPY_HAVE_CUDA_H
CUresult cuInit(unsigned int Flags);
CUresult cuDriverGetVersion(int *driverVersion);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetCount(int *count);
CUresult cuCtxGetDevice(CUdevice *device);
CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags);
CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value);
CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
				   cuuint64_t *id_out, CUgraph *graph_out,
				   const CUgraphNode **dependencies_out,
				   const CUgraphEdgeData **edgeData_out,
				   size_t *numDependencies_out);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaDeviceSynchronize(void);

/* Also used by the fake driver and runtime and the integration programs (tests/). */
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxGetCurrent(CUcontext *pctx);
CUresult cuCtxSynchronize(void);
CUresult cuStreamSynchronize(CUstream hStream);
CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev);
CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep);
CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
				       CUmemAllocationGranularity_flags option);
CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count);
CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags);
CUresult cuStreamDestroy_v2(CUstream hStream);
CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode);
CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph);

cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaMemGetInfo(size_t *free, size_t *total);
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device);
const char *cudaGetErrorString(cudaError_t error);
cudaError_t cudaStreamCreate(cudaStream_t *pStream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph);
cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags);
cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr,
					   void *value);
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
					     unsigned int cudaVersion, unsigned long long flags,
					     enum cudaDriverEntryPointQueryResult *driverStatus);
#endif

/*
 * The entry points gpuspy wraps (cuda_entries.h), declared from their
 * rows: with NVIDIA's headers a row whose types drift from the real
 * prototype fails to compile here; without them these are the
 * declarations.  They include what cuda.h does not declare in an
 * ordinary build: the per-thread default stream (_ptsz) forms and the
 * legacy 4-argument cuGetProcAddress.
 */
#define GS_CUDA_PROTOTYPE(name, side, shape, api, kind, family, ...)                               \
	GS_CUDA_RESULT_##side name(__VA_ARGS__);
GS_CUDA_ENTRIES(GS_CUDA_PROTOTYPE)
#undef GS_CUDA_PROTOTYPE

#endif /* GPUSPY_CUDA_ABI_H */
