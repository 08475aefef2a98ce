/* SPDX-License-Identifier: MIT */
/*
 * CUDA graph memory nodes, through one door (the first argument):
 *   driver   PLT calls of the driver's cu* symbols
 *   runtime  PLT calls of the runtime's cuda* symbols
 *   dlsym    dlopen("libcuda.so.1") + dlsym
 *   getproc  cuGetProcAddress_v2; getproc_ptsz asks for the per-thread
 *            default-stream forms (cuGraphLaunch_ptsz, cuMemAllocAsync_ptsz...)
 *   legacy   the 4-argument cuGetProcAddress
 * Usage: graph_mem DOOR A B C D E R
 * Each graph is launched three times unless said otherwise:
 *   graph_free_node(A)    an alloc node and a free node of it
 *   graph_cudafree(B)     an alloc node, freed by cuMemFree/cudaFree after each launch
 *   graph_left(C)         an alloc node, AUTO_FREE_ON_LAUNCH: each relaunch frees the
 *                         last launch's memory; the third launch's is left (leaked)
 *   graph_captured(D)     stream capture of an async alloc and its async free
 *   graph_captured_left(E) stream capture of an async alloc, launched once, left
 *   graph_reserved(R)     an alloc node in a graph never instantiated (no memory)
 * then cuDeviceGraphMemTrim, and the device's graph-memory attributes are printed.
 */
#include <stdbool.h>
#include <stddef.h>

#include "prog.h"

/* The driver's signatures; the runtime door goes through the rt_* adapters. */
static struct {
	struct ctx_fns ctx;
	typeof(cuGraphCreate) *graph_create;
	typeof(cuGraphAddMemAllocNode) *add_alloc;
	typeof(cuGraphAddMemFreeNode) *add_free;
	typeof(cuGraphInstantiateWithFlags) *instantiate;
	typeof(cuGraphLaunch) *launch;
	typeof(cuGraphExecDestroy) *exec_destroy;
	typeof(cuGraphDestroy) *graph_destroy;
	typeof(cuDeviceGraphMemTrim) *trim;
	typeof(cuDeviceGetGraphMemAttribute) *attr;
	typeof(cuStreamCreate) *stream_create;
	typeof(cuStreamBeginCapture_v2) *begin_capture;
	typeof(cuStreamEndCapture) *end_capture;
	typeof(cuMemAllocAsync) *alloc_async;
	typeof(cuMemFreeAsync) *free_async;
	typeof(cuMemFree_v2) *mem_free;
} d;

void graph_free_node(size_t size);
void graph_cudafree(size_t size);
void graph_left(size_t size);
void graph_captured(size_t size);
void graph_captured_left(size_t size);
void graph_reserved(size_t size);

static CUdeviceptr add_alloc(CUgraph g, size_t size)
{
	CUDA_MEM_ALLOC_NODE_PARAMS p;
	CUgraphNode n;

	memset(&p, 0, sizeof(p));
	p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.poolProps.location.id = 0;
	p.bytesize = size;
	cu_ok(d.add_alloc(&n, g, NULL, 0, &p), "add alloc node");
	return p.dptr;
}

static CUgraph new_graph(void)
{
	CUgraph g;

	cu_ok(d.graph_create(&g, 0), "graph create");
	return g;
}

static void run(CUgraph g, unsigned long long flags, int launches)
{
	CUgraphExec e;

	cu_ok(d.instantiate(&e, g, flags), "instantiate");
	for (int i = 0; i < launches; i++)
		cu_ok(d.launch(e, NULL), "launch");
	cu_ok(d.exec_destroy(e), "exec destroy");
	cu_ok(d.graph_destroy(g), "graph destroy");
}

__attribute__((noinline)) void graph_free_node(size_t size)
{
	CUgraph g = new_graph();
	CUdeviceptr p = add_alloc(g, size);
	CUgraphNode n;

	cu_ok(d.add_free(&n, g, NULL, 0, p), "add free node");
	run(g, 0, 3);
}

__attribute__((noinline)) void graph_cudafree(size_t size)
{
	CUgraph g = new_graph();
	CUdeviceptr p = add_alloc(g, size);
	CUgraphExec e;

	cu_ok(d.instantiate(&e, g, 0), "instantiate");
	for (int i = 0; i < 3; i++) {
		cu_ok(d.launch(e, NULL), "launch");
		cu_ok(d.mem_free(p), "free");
	}
	cu_ok(d.exec_destroy(e), "exec destroy");
	cu_ok(d.graph_destroy(g), "graph destroy");
}

__attribute__((noinline)) void graph_left(size_t size)
{
	CUgraph g = new_graph();
	CUgraphExec e;

	add_alloc(g, size);
	cu_ok(d.instantiate(&e, g, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH), "instantiate");
	cu_ok(d.launch(e, NULL), "launch");
	/* Without AUTO_FREE_ON_LAUNCH a relaunch over live memory fails. */
	cu_ok(d.launch(e, NULL), "relaunch");
	cu_ok(d.launch(e, NULL), "relaunch");
	cu_ok(d.exec_destroy(e), "exec destroy");
	cu_ok(d.graph_destroy(g), "graph destroy");
}

static CUgraph capture(size_t size, bool with_free)
{
	CUstream s;
	CUdeviceptr p;
	CUgraph g;

	cu_ok(d.stream_create(&s, 0), "stream create");
	cu_ok(d.begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), "begin capture");
	cu_ok(d.alloc_async(&p, size, s), "captured alloc");
	if (with_free)
		cu_ok(d.free_async(p, s), "captured free");
	cu_ok(d.end_capture(s, &g), "end capture");
	return g;
}

__attribute__((noinline)) void graph_captured(size_t size)
{
	run(capture(size, true), 0, 3);
}

__attribute__((noinline)) void graph_captured_left(size_t size)
{
	run(capture(size, false), 0, 1);
}

__attribute__((noinline)) void graph_reserved(size_t size)
{
	add_alloc(new_graph(), size);
}

/* ---- the runtime door: the same calls, as cuda* ---- */

static CUresult rt(cudaError_t e)
{
	return e == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult rt_graph_create(CUgraph *g, unsigned int flags)
{
	return rt(cudaGraphCreate(g, flags));
}

static CUresult rt_add_alloc(CUgraphNode *n, CUgraph g, const CUgraphNode *deps, size_t nd,
			     CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	struct cudaMemAllocNodeParams q;
	CUresult r;

	memset(&q, 0, sizeof(q));
	q.poolProps.allocType = cudaMemAllocationTypePinned;
	q.poolProps.location.type = cudaMemLocationTypeDevice;
	q.poolProps.location.id = p->poolProps.location.id;
	q.bytesize = p->bytesize;
	r = rt(cudaGraphAddMemAllocNode(n, g, deps, nd, &q));
	p->dptr = (CUdeviceptr)(uintptr_t)q.dptr;
	return r;
}

static CUresult rt_add_free(CUgraphNode *n, CUgraph g, const CUgraphNode *deps, size_t nd,
			    CUdeviceptr p)
{
	return rt(cudaGraphAddMemFreeNode(n, g, deps, nd, (void *)(uintptr_t)p));
}

static CUresult rt_instantiate(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	return rt(cudaGraphInstantiate(e, g, flags));
}

static CUresult rt_launch(CUgraphExec e, CUstream s)
{
	return rt(cudaGraphLaunch(e, s));
}

static CUresult rt_exec_destroy(CUgraphExec e)
{
	return rt(cudaGraphExecDestroy(e));
}

static CUresult rt_graph_destroy(CUgraph g)
{
	return rt(cudaGraphDestroy(g));
}

static CUresult rt_trim(CUdevice dev)
{
	return rt(cudaDeviceGraphMemTrim(dev));
}

static CUresult rt_attr(CUdevice dev, CUgraphMem_attribute a, void *v)
{
	return rt(cudaDeviceGetGraphMemAttribute(dev, (enum cudaGraphMemAttributeType)a, v));
}

static CUresult rt_stream_create(CUstream *s, unsigned int flags)
{
	return rt(cudaStreamCreate(s));
}

static CUresult rt_begin_capture(CUstream s, CUstreamCaptureMode mode)
{
	return rt(cudaStreamBeginCapture(s, (enum cudaStreamCaptureMode)mode));
}

static CUresult rt_end_capture(CUstream s, CUgraph *g)
{
	return rt(cudaStreamEndCapture(s, g));
}

static CUresult rt_alloc_async(CUdeviceptr *p, size_t size, CUstream s)
{
	void *q = NULL;
	CUresult r = rt(cudaMallocAsync(&q, size, s));

	*p = (CUdeviceptr)(uintptr_t)q;
	return r;
}

static CUresult rt_free_async(CUdeviceptr p, CUstream s)
{
	return rt(cudaFreeAsync((void *)(uintptr_t)p, s));
}

static CUresult rt_mem_free(CUdeviceptr p)
{
	return rt(cudaFree((void *)(uintptr_t)p));
}

static void use_runtime(void)
{
	d.graph_create = rt_graph_create;
	d.add_alloc = rt_add_alloc;
	d.add_free = rt_add_free;
	d.instantiate = rt_instantiate;
	d.launch = rt_launch;
	d.exec_destroy = rt_exec_destroy;
	d.graph_destroy = rt_graph_destroy;
	d.trim = rt_trim;
	d.attr = rt_attr;
	d.stream_create = rt_stream_create;
	d.begin_capture = rt_begin_capture;
	d.end_capture = rt_end_capture;
	d.alloc_async = rt_alloc_async;
	d.free_async = rt_free_async;
	d.mem_free = rt_mem_free;
	rt_ok(cudaSetDevice(0), "cudaSetDevice");
}

/* ---- the driver's doors ---- */

static void use_plt(void)
{
	d.graph_create = cuGraphCreate;
	d.add_alloc = cuGraphAddMemAllocNode;
	d.add_free = cuGraphAddMemFreeNode;
	d.instantiate = cuGraphInstantiateWithFlags;
	d.launch = cuGraphLaunch;
	d.exec_destroy = cuGraphExecDestroy;
	d.graph_destroy = cuGraphDestroy;
	d.trim = cuDeviceGraphMemTrim;
	d.attr = cuDeviceGetGraphMemAttribute;
	d.stream_create = cuStreamCreate;
	d.begin_capture = cuStreamBeginCapture_v2;
	d.end_capture = cuStreamEndCapture;
	d.alloc_async = cuMemAllocAsync;
	d.free_async = cuMemFreeAsync;
	d.mem_free = cuMemFree_v2;
	driver_context();
}

/* Every name with the version the real cudart asks it at; cuGraphInstantiate
 * at 12000 is cuGraphInstantiateWithFlags. */
static const struct {
	const char *name, *exported;
	int version;
	bool stream; /* has a per-thread form */
	size_t offset;
} names[] = {
#define N(name, exported, version, stream, field)                                                  \
	{                                                                                          \
		name, exported, version, stream, offsetof(__typeof__(d), field)                    \
	}
	N("cuInit", "cuInit", 2000, false, ctx.init),
	N("cuDeviceGet", "cuDeviceGet", 2000, false, ctx.device_get),
	N("cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", 7000, false,
	  ctx.primary_ctx_retain),
	N("cuCtxSetCurrent", "cuCtxSetCurrent", 4000, false, ctx.ctx_set_current),
	N("cuGraphCreate", "cuGraphCreate", 10000, false, graph_create),
	N("cuGraphAddMemAllocNode", "cuGraphAddMemAllocNode", 11040, false, add_alloc),
	N("cuGraphAddMemFreeNode", "cuGraphAddMemFreeNode", 11040, false, add_free),
	N("cuGraphInstantiate", "cuGraphInstantiateWithFlags", 12000, false, instantiate),
	N("cuGraphLaunch", "cuGraphLaunch", 10000, true, launch),
	N("cuGraphExecDestroy", "cuGraphExecDestroy", 10000, false, exec_destroy),
	N("cuGraphDestroy", "cuGraphDestroy", 10000, false, graph_destroy),
	N("cuDeviceGraphMemTrim", "cuDeviceGraphMemTrim", 11040, false, trim),
	N("cuDeviceGetGraphMemAttribute", "cuDeviceGetGraphMemAttribute", 11040, false, attr),
	N("cuStreamCreate", "cuStreamCreate", 2000, false, stream_create),
	N("cuStreamBeginCapture", "cuStreamBeginCapture_v2", 10010, true, begin_capture),
	N("cuStreamEndCapture", "cuStreamEndCapture", 10000, false, end_capture),
	N("cuMemAllocAsync", "cuMemAllocAsync", 11020, true, alloc_async),
	N("cuMemFreeAsync", "cuMemFreeAsync", 11020, true, free_async),
	N("cuMemFree", "cuMemFree_v2", 3020, false, mem_free),
#undef N
};

static void use_lookups(void *h, const char *door)
{
	typeof(cuGetProcAddress_v2) *gp2 = NULL;
	typeof(cuGetProcAddress) *gp1 = NULL;
	bool ptsz = !strcmp(door, "getproc_ptsz");

	if (!strcmp(door, "legacy"))
		load_sym(h, "cuGetProcAddress", &gp1);
	else if (strcmp(door, "dlsym"))
		load_sym(h, "cuGetProcAddress_v2", &gp2);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		cuuint64_t flags =
			ptsz && names[i].stream ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
		void *slot = (char *)&d + names[i].offset;
		void *p = NULL;

		if (gp2) {
			getproc_v2(gp2, names[i].name, names[i].version, flags, slot);
			continue;
		}
		if (gp1) {
			cu_ok(gp1(names[i].name, &p, names[i].version, flags), names[i].name);
			memcpy(slot, &p, sizeof(p));
			continue;
		}
		load_sym(h, names[i].exported, slot);
	}
	make_current(&d.ctx);
}

int main(int argc, char **argv)
{
	static const CUgraphMem_attribute attrs[4] = {
		CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT,
		CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
		CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT,
		CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH,
	};
	const char *door = argc > 1 ? argv[1] : "";
	cuuint64_t v[4];

	if (!strcmp(door, "runtime"))
		use_runtime();
	else if (!strcmp(door, "driver"))
		use_plt();
	else
		use_lookups(open_driver(), door);
	graph_free_node(arg_size(argc, argv, 2));
	graph_cudafree(arg_size(argc, argv, 3));
	graph_left(arg_size(argc, argv, 4));
	graph_captured(arg_size(argc, argv, 5));
	graph_captured_left(arg_size(argc, argv, 6));
	graph_reserved(arg_size(argc, argv, 7));
	cu_ok(d.trim(0), "trim");
	for (int i = 0; i < 4; i++)
		cu_ok(d.attr(0, attrs[i], &v[i]), "graph mem attribute");
	printf("graph_mem: used %llu, high %llu, reserved %llu, reserved high %llu\n",
	       (unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)v[2],
	       (unsigned long long)v[3]);
	return 0;
}
