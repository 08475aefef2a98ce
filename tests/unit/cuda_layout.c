/* SPDX-License-Identifier: MIT */
/*
 * The layouts of the graph-memory structs of src/common/cuda_abi.h, one
 * line per struct, member and constant: compiled once against NVIDIA's
 * headers (GPUSPY_HAVE_CUDA_H) and once against the built-in subset, so
 * that check_layout.sh can compare the two.  A hook reads these structs
 * where the program wrote them: a subset that drifted from CUDA 13's
 * layout reads the wrong bytes on a machine without the headers (CI's),
 * and nothing else would say so.
 */
#include <stddef.h>
#include <stdio.h>

#include "cuda_abi.h"

#define SIZE(T)	     printf("%s size %zu\n", #T, sizeof(T))
#define MEMBER(T, m) printf("%s.%s at %zu size %zu\n", #T, #m, offsetof(T, m), sizeof(((T *)0)->m))
#define VALUE(c)     printf("%s = %lld\n", #c, (long long)(c))

int main(void)
{
	SIZE(CUmemPoolProps);
	MEMBER(CUmemPoolProps, allocType);
	MEMBER(CUmemPoolProps, handleTypes);
	MEMBER(CUmemPoolProps, location.type);
	MEMBER(CUmemPoolProps, location.id);
	MEMBER(CUmemPoolProps, win32SecurityAttributes);
	MEMBER(CUmemPoolProps, maxSize);
	MEMBER(CUmemPoolProps, usage);
	MEMBER(CUmemPoolProps, reserved);

	SIZE(CUDA_MEM_ALLOC_NODE_PARAMS);
	MEMBER(CUDA_MEM_ALLOC_NODE_PARAMS, poolProps);
	MEMBER(CUDA_MEM_ALLOC_NODE_PARAMS, accessDescs);
	MEMBER(CUDA_MEM_ALLOC_NODE_PARAMS, accessDescCount);
	MEMBER(CUDA_MEM_ALLOC_NODE_PARAMS, bytesize);
	MEMBER(CUDA_MEM_ALLOC_NODE_PARAMS, dptr);

	SIZE(CUDA_MEM_ALLOC_NODE_PARAMS_v2);
	MEMBER(CUDA_MEM_ALLOC_NODE_PARAMS_v2, poolProps);
	MEMBER(CUDA_MEM_ALLOC_NODE_PARAMS_v2, accessDescs);
	MEMBER(CUDA_MEM_ALLOC_NODE_PARAMS_v2, accessDescCount);
	MEMBER(CUDA_MEM_ALLOC_NODE_PARAMS_v2, bytesize);
	MEMBER(CUDA_MEM_ALLOC_NODE_PARAMS_v2, dptr);

	SIZE(CUDA_MEM_FREE_NODE_PARAMS);
	MEMBER(CUDA_MEM_FREE_NODE_PARAMS, dptr);

	SIZE(CUgraphNodeType);
	VALUE(CU_GRAPH_NODE_TYPE_EMPTY);
	VALUE(CU_GRAPH_NODE_TYPE_MEM_ALLOC);
	VALUE(CU_GRAPH_NODE_TYPE_MEM_FREE);
	SIZE(CUgraphNodeParams);
	MEMBER(CUgraphNodeParams, type);
	MEMBER(CUgraphNodeParams, reserved0);
	MEMBER(CUgraphNodeParams, reserved1);
	MEMBER(CUgraphNodeParams, alloc);
	MEMBER(CUgraphNodeParams, alloc.bytesize);
	MEMBER(CUgraphNodeParams, alloc.dptr);
	MEMBER(CUgraphNodeParams, free);
	MEMBER(CUgraphNodeParams, free.dptr);
	MEMBER(CUgraphNodeParams, reserved2);

	SIZE(struct cudaMemPoolProps);
	MEMBER(struct cudaMemPoolProps, allocType);
	MEMBER(struct cudaMemPoolProps, handleTypes);
	MEMBER(struct cudaMemPoolProps, location.type);
	MEMBER(struct cudaMemPoolProps, location.id);
	MEMBER(struct cudaMemPoolProps, win32SecurityAttributes);
	MEMBER(struct cudaMemPoolProps, maxSize);
	MEMBER(struct cudaMemPoolProps, usage);
	MEMBER(struct cudaMemPoolProps, reserved);

	SIZE(struct cudaMemAllocNodeParams);
	MEMBER(struct cudaMemAllocNodeParams, poolProps);
	MEMBER(struct cudaMemAllocNodeParams, accessDescs);
	MEMBER(struct cudaMemAllocNodeParams, accessDescCount);
	MEMBER(struct cudaMemAllocNodeParams, bytesize);
	MEMBER(struct cudaMemAllocNodeParams, dptr);

	SIZE(struct cudaMemAllocNodeParamsV2);
	MEMBER(struct cudaMemAllocNodeParamsV2, poolProps);
	MEMBER(struct cudaMemAllocNodeParamsV2, accessDescs);
	MEMBER(struct cudaMemAllocNodeParamsV2, accessDescCount);
	MEMBER(struct cudaMemAllocNodeParamsV2, bytesize);
	MEMBER(struct cudaMemAllocNodeParamsV2, dptr);

	SIZE(struct cudaMemFreeNodeParams);
	MEMBER(struct cudaMemFreeNodeParams, dptr);

	SIZE(enum cudaGraphNodeType);
	VALUE(cudaGraphNodeTypeEmpty);
	VALUE(cudaGraphNodeTypeMemAlloc);
	VALUE(cudaGraphNodeTypeMemFree);
	SIZE(struct cudaGraphNodeParams);
	MEMBER(struct cudaGraphNodeParams, type);
	MEMBER(struct cudaGraphNodeParams, reserved0);
	MEMBER(struct cudaGraphNodeParams, reserved1);
	MEMBER(struct cudaGraphNodeParams, alloc);
	MEMBER(struct cudaGraphNodeParams, alloc.bytesize);
	MEMBER(struct cudaGraphNodeParams, alloc.dptr);
	MEMBER(struct cudaGraphNodeParams, free);
	MEMBER(struct cudaGraphNodeParams, free.dptr);
	MEMBER(struct cudaGraphNodeParams, reserved2);
	return 0;
}
