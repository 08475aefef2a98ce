/* SPDX-License-Identifier: MIT */
/*
 * CUDA graph memory nodes added by the generic node call (cuGraphAddNode,
 * cudaGraphAddNode), through one door (the first argument):
 *   driver   PLT calls of the driver's cu* symbols (cuGraphAddNode_v2)
 *   runtime  PLT calls of the runtime's cuda* symbols
 *   getproc  cuGetProcAddress_v2, "cuGraphAddNode" at 12030
 * Usage: graph_node DOOR A L
 *   node_freed(A)  an alloc node and a free node of it, both generic,
 *                  launched three times
 *   node_left(L)   a generic alloc node, launched once, left (leaked)
 *   node_other     an empty node, generic: not memory, and refused by the
 *                  fake driver (not faked), which the hook must pass on
 */
#include <stdbool.h>

#include "prog.h"

static bool runtime;

/* The driver's calls, by PLT or looked up. */
static struct {
	struct ctx_fns ctx;
	typeof(cuGraphCreate) *graph_create;
	typeof(cuGraphAddNode_v2) *add_node;
	typeof(cuGraphInstantiateWithFlags) *instantiate;
	typeof(cuGraphLaunch) *launch;
	typeof(cuGraphExecDestroy) *exec_destroy;
	typeof(cuGraphDestroy) *graph_destroy;
} d;

void node_freed(size_t size);
void node_left(size_t size);
void node_other(void);

static CUgraph new_graph(void)
{
	CUgraph g;

	if (runtime)
		rt_ok(cudaGraphCreate(&g, 0), "graph create");
	else
		cu_ok(d.graph_create(&g, 0), "graph create");
	return g;
}

/* An alloc node of SIZE on device 0, its address out. */
static CUgraphNode add_alloc(CUgraph g, size_t size, CUdeviceptr *dptr)
{
	CUgraphNode n;

	if (runtime) {
		struct cudaGraphNodeParams p;

		memset(&p, 0, sizeof(p));
		p.type = cudaGraphNodeTypeMemAlloc;
		p.alloc.poolProps.allocType = cudaMemAllocationTypePinned;
		p.alloc.poolProps.location.type = cudaMemLocationTypeDevice;
		p.alloc.poolProps.location.id = 0;
		p.alloc.bytesize = size;
		rt_ok(cudaGraphAddNode(&n, g, NULL, NULL, 0, &p), "add alloc node");
		*dptr = (CUdeviceptr)(uintptr_t)p.alloc.dptr;
	} else {
		CUgraphNodeParams p;

		memset(&p, 0, sizeof(p));
		p.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
		p.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
		p.alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		p.alloc.poolProps.location.id = 0;
		p.alloc.bytesize = size;
		cu_ok(d.add_node(&n, g, NULL, NULL, 0, &p), "add alloc node");
		*dptr = p.alloc.dptr;
	}
	return n;
}

/* A free node of DPTR, after DEP. */
static void add_free(CUgraph g, CUgraphNode dep, CUdeviceptr dptr)
{
	CUgraphNode n;

	if (runtime) {
		struct cudaGraphNodeParams p;

		memset(&p, 0, sizeof(p));
		p.type = cudaGraphNodeTypeMemFree;
		p.free.dptr = (void *)(uintptr_t)dptr;
		rt_ok(cudaGraphAddNode(&n, g, &dep, NULL, 1, &p), "add free node");
	} else {
		CUgraphNodeParams p;

		memset(&p, 0, sizeof(p));
		p.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
		p.free.dptr = dptr;
		cu_ok(d.add_node(&n, g, &dep, NULL, 1, &p), "add free node");
	}
}

static void run(CUgraph g, int launches)
{
	CUgraphExec e;

	if (runtime) {
		rt_ok(cudaGraphInstantiate(&e, g, 0), "instantiate");
		for (int i = 0; i < launches; i++)
			rt_ok(cudaGraphLaunch(e, NULL), "launch");
		rt_ok(cudaGraphExecDestroy(e), "exec destroy");
		rt_ok(cudaGraphDestroy(g), "graph destroy");
		return;
	}
	cu_ok(d.instantiate(&e, g, 0), "instantiate");
	for (int i = 0; i < launches; i++)
		cu_ok(d.launch(e, NULL), "launch");
	cu_ok(d.exec_destroy(e), "exec destroy");
	cu_ok(d.graph_destroy(g), "graph destroy");
}

__attribute__((noinline)) void node_freed(size_t size)
{
	CUgraph g = new_graph();
	CUdeviceptr p;
	CUgraphNode n = add_alloc(g, size, &p);

	add_free(g, n, p);
	run(g, 3);
}

__attribute__((noinline)) void node_left(size_t size)
{
	CUgraph g = new_graph();
	CUdeviceptr p;

	add_alloc(g, size, &p);
	run(g, 1);
}

/* Its error comes back as the fake gave it, and the graph holds nothing. */
__attribute__((noinline)) void node_other(void)
{
	CUgraph g = new_graph();
	CUgraphNode n;

	if (runtime) {
		struct cudaGraphNodeParams p;
		cudaError_t e;

		memset(&p, 0, sizeof(p));
		p.type = cudaGraphNodeTypeEmpty;
		e = cudaGraphAddNode(&n, g, NULL, NULL, 0, &p);
		if (e != cudaErrorNotSupported) {
			fprintf(stderr, "empty node: %d, not cudaErrorNotSupported\n", (int)e);
			exit(PROG_FAIL);
		}
		rt_ok(cudaGraphDestroy(g), "graph destroy");
	} else {
		CUgraphNodeParams p;
		CUresult r;

		memset(&p, 0, sizeof(p));
		p.type = CU_GRAPH_NODE_TYPE_EMPTY;
		r = d.add_node(&n, g, NULL, NULL, 0, &p);
		if (r != CUDA_ERROR_NOT_SUPPORTED) {
			fprintf(stderr, "empty node: %d, not CUDA_ERROR_NOT_SUPPORTED\n", (int)r);
			exit(PROG_FAIL);
		}
		cu_ok(d.graph_destroy(g), "graph destroy");
	}
}

static void use_plt(void)
{
	d.graph_create = cuGraphCreate;
	d.add_node = cuGraphAddNode_v2;
	d.instantiate = cuGraphInstantiateWithFlags;
	d.launch = cuGraphLaunch;
	d.exec_destroy = cuGraphExecDestroy;
	d.graph_destroy = cuGraphDestroy;
	driver_context();
}

/* With the versions the real cudart asks them at: cuGraphAddNode at
 * 12030 is cuGraphAddNode_v2, cuGraphInstantiate at 12000
 * cuGraphInstantiateWithFlags. */
static void use_getproc(void)
{
	typeof(cuGetProcAddress_v2) *gp = NULL;

	load_sym(open_driver(), "cuGetProcAddress_v2", &gp);
	getproc_v2(gp, "cuInit", 2000, 0, &d.ctx.init);
	getproc_v2(gp, "cuDeviceGet", 2000, 0, &d.ctx.device_get);
	getproc_v2(gp, "cuDevicePrimaryCtxRetain", 7000, 0, &d.ctx.primary_ctx_retain);
	getproc_v2(gp, "cuCtxSetCurrent", 4000, 0, &d.ctx.ctx_set_current);
	getproc_v2(gp, "cuGraphCreate", 10000, 0, &d.graph_create);
	getproc_v2(gp, "cuGraphAddNode", 12030, 0, &d.add_node);
	getproc_v2(gp, "cuGraphInstantiate", 12000, 0, &d.instantiate);
	getproc_v2(gp, "cuGraphLaunch", 10000, 0, &d.launch);
	getproc_v2(gp, "cuGraphExecDestroy", 10000, 0, &d.exec_destroy);
	getproc_v2(gp, "cuGraphDestroy", 10000, 0, &d.graph_destroy);
	make_current(&d.ctx);
}

int main(int argc, char **argv)
{
	const char *door = argc > 1 ? argv[1] : "";

	if (!strcmp(door, "runtime")) {
		runtime = true;
		rt_ok(cudaSetDevice(0), "cudaSetDevice");
	} else if (!strcmp(door, "driver")) {
		use_plt();
	} else if (!strcmp(door, "getproc")) {
		use_getproc();
	} else {
		fprintf(stderr, "graph_node: unknown door '%s'\n", door);
		return PROG_FAIL;
	}
	node_freed(arg_size(argc, argv, 2));
	node_left(arg_size(argc, argv, 3));
	node_other();
	printf("graph_node: done\n");
	return 0;
}
