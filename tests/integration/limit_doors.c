/* SPDX-License-Identifier: MIT */
/*
 * GPUSPY_LIMIT on every allocation door, for tests/integration/limit.py.
 * Holds HOLD bytes (cudaMalloc), prints what cudaMemGetInfo,
 * cuMemGetInfo_v2 and cuDeviceTotalMem_v2 say, then asks ASK bytes of
 * every allocating entry point, each through its door: the runtime's
 * symbols, the driver's, dlsym on a libcuda handle, cuGetProcAddress_v2.
 * Each line says the call's code and whether the out-pointer was left
 * untouched; a "reached" line says how many allocation calls the driver
 * itself saw (the fake's own count), apart, since a refusal of gpuspy's
 * never reaches it.  Pinned host memory is asked too (never capped).
 * Then, as a program that catches an out-of-memory and goes on, it frees
 * its hold and asks ASK again, which must succeed.
 *
 * With "race THREADS ROUNDS" instead: ROUNDS times, THREADS threads ask
 * ASK at once through cudaMalloc; it prints how many succeeded each round
 * (under a limit that has room for one ASK, one), and frees them.
 *
 * Usage: limit_doors HOLD ASK | limit_doors HOLD ASK race THREADS ROUNDS
 * Built twice: with the shared runtime (limit_doors) and the static one
 * (limit_doors_static), whose runtime reaches the driver by
 * cuGetProcAddress only.
 */
#include <pthread.h>

#include "prog.h"

/* the fake driver's count of allocation calls (tests/fake/fake_cuda.c) */
unsigned long long gpuspy_fake_alloc_calls(void);
void hold_memory(size_t size);

static void *held;
static unsigned long long calls_before;

__attribute__((noinline)) void hold_memory(size_t size)
{
	rt_ok(cudaMalloc(&held, size), "cudaMalloc");
}

static void reached(const char *what)
{
	unsigned long long now = gpuspy_fake_alloc_calls();

	fprintf(stderr, "limit_doors: %s reached the driver: %llu\n", what, now - calls_before);
	calls_before = now;
}

static const char *left(const void *p, const void *sentinel)
{
	return p == sentinel ? "untouched" : "set";
}

/* A runtime call: CALL's code, the pointer, the count; freed when it succeeded. */
#define RT_TRY(name, ptrvar, call, freecall)                                                       \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		printf("limit_doors: %s -> %d (%s), pointer %s\n", name, (int)e_,                  \
		       cudaGetErrorString(e_), left(ptrvar, &sentinel));                           \
		reached(name);                                                                     \
		if (e_ == cudaSuccess)                                                             \
			rt_ok(freecall, "free");                                                   \
	} while (0)

#define CU_TRY(name, ptrvar, call, freecall)                                                       \
	do {                                                                                       \
		CUresult r_ = (call);                                                              \
		printf("limit_doors: %s -> %d, pointer %s\n", name, (int)r_,                       \
		       (ptrvar) == dsentinel ? "untouched" : "set");                               \
		reached(name);                                                                     \
		if (r_ == CUDA_SUCCESS)                                                            \
			cu_ok(freecall, "free");                                                   \
	} while (0)

static char sentinel;

static void info(const char *when)
{
	size_t f = 0, t = 0, dt = 0;

	rt_ok(cudaMemGetInfo(&f, &t), "cudaMemGetInfo");
	printf("limit_doors: %s: cudaMemGetInfo free %zu total %zu\n", when, f, t);
	cu_ok(cuMemGetInfo_v2(&f, &t), "cuMemGetInfo_v2");
	printf("limit_doors: %s: cuMemGetInfo_v2 free %zu total %zu\n", when, f, t);
	cu_ok(cuDeviceTotalMem_v2(&dt, 0), "cuDeviceTotalMem_v2");
	printf("limit_doors: %s: cuDeviceTotalMem_v2 %zu\n", when, dt);
}

static void doors(size_t ask)
{
	const CUdeviceptr dsentinel = (CUdeviceptr)(uintptr_t)&sentinel;
	typeof(cuMemAlloc_v2) *dl_alloc, *gp_alloc;
	typeof(cuMemCreate) *gp_create;
	typeof(cuGetProcAddress_v2) *gp;
	CUmemAllocationProp prop = { 0 };
	CUmemGenericAllocationHandle h = dsentinel;
	CUmemoryPool pool;
	CUdeviceptr d = dsentinel;
	void *p = &sentinel, *handle = open_driver();
	size_t pitch;

	/* the runtime's symbols (a static runtime's reach the driver through
	 * cuGetProcAddress alone) */
	RT_TRY("cudaMalloc", p, cudaMalloc(&p, ask), cudaFree(p));
	p = &sentinel;
	RT_TRY("cudaMallocManaged", p, cudaMallocManaged(&p, ask, 1), cudaFree(p));
	p = &sentinel;
	RT_TRY("cudaMallocPitch", p, cudaMallocPitch(&p, &pitch, 1024, ask / 1024), cudaFree(p));
	p = &sentinel;
	RT_TRY("cudaMallocAsync", p, cudaMallocAsync(&p, ask, NULL), cudaFreeAsync(p, NULL));
	p = &sentinel;
	{
		cudaMemPool_t mp;

		rt_ok(cudaDeviceGetDefaultMemPool(&mp, 0), "cudaDeviceGetDefaultMemPool");
		RT_TRY("cudaMallocFromPoolAsync", p, cudaMallocFromPoolAsync(&p, ask, mp, NULL),
		       cudaFreeAsync(p, NULL));
	}
	p = &sentinel;
	RT_TRY("cudaMallocHost", p, cudaMallocHost(&p, ask), cudaFreeHost(p));

	/* the driver's symbols */
	CU_TRY("cuMemAlloc_v2", d, cuMemAlloc_v2(&d, ask), cuMemFree_v2(d));
	d = dsentinel;
	CU_TRY("cuMemAllocManaged", d, cuMemAllocManaged(&d, ask, CU_MEM_ATTACH_GLOBAL),
	       cuMemFree_v2(d));
	d = dsentinel;
	CU_TRY("cuMemAllocPitch_v2", d, cuMemAllocPitch_v2(&d, &pitch, 1024, ask / 1024, 4),
	       cuMemFree_v2(d));
	d = dsentinel;
	CU_TRY("cuMemAllocAsync", d, cuMemAllocAsync(&d, ask, NULL), cuMemFreeAsync(d, NULL));
	d = dsentinel;
	cu_ok(cuDeviceGetDefaultMemPool(&pool, 0), "cuDeviceGetDefaultMemPool");
	CU_TRY("cuMemAllocFromPoolAsync", d, cuMemAllocFromPoolAsync(&d, ask, pool, NULL),
	       cuMemFreeAsync(d, NULL));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	CU_TRY("cuMemCreate", h, cuMemCreate(&h, ask, &prop, 0), cuMemRelease(h));

	/* dlsym on a libcuda handle, and cuGetProcAddress_v2 */
	load_sym(handle, "cuMemAlloc_v2", &dl_alloc);
	d = dsentinel;
	CU_TRY("dlsym cuMemAlloc_v2", d, dl_alloc(&d, ask), cuMemFree_v2(d));
	load_sym(handle, "cuGetProcAddress_v2", &gp);
	getproc_v2(gp, "cuMemAlloc", 12000, 0, &gp_alloc);
	getproc_v2(gp, "cuMemCreate", 12000, 0, &gp_create);
	d = dsentinel;
	CU_TRY("getproc cuMemAlloc", d, gp_alloc(&d, ask), cuMemFree_v2(d));
	h = dsentinel;
	CU_TRY("getproc cuMemCreate", h, gp_create(&h, ask, &prop, 0), cuMemRelease(h));
}

static size_t race_ask;
static pthread_barrier_t go;

static void *racer(void *arg)
{
	void **p = arg;

	pthread_barrier_wait(&go);
	if (cudaMalloc(p, race_ask) != cudaSuccess)
		*p = NULL;
	return NULL;
}

static void race(unsigned threads, unsigned rounds)
{
	pthread_t t[64];
	void *p[64];

	if (threads > 64)
		threads = 64;
	for (unsigned r = 0; r < rounds; r++) {
		unsigned ok = 0;

		pthread_barrier_init(&go, NULL, threads);
		for (unsigned i = 0; i < threads; i++)
			pthread_create(&t[i], NULL, racer, &p[i]);
		for (unsigned i = 0; i < threads; i++)
			pthread_join(t[i], NULL);
		pthread_barrier_destroy(&go);
		for (unsigned i = 0; i < threads; i++)
			if (p[i]) {
				ok++;
				rt_ok(cudaFree(p[i]), "cudaFree");
			}
		printf("limit_doors: round %u: %u of %u succeeded\n", r, ok, threads);
	}
}

int main(int argc, char **argv)
{
	size_t hold = arg_size(argc, argv, 1), ask = arg_size(argc, argv, 2);
	void *p;

	hold_memory(hold);
	calls_before = gpuspy_fake_alloc_calls();
	if (argc > 3 && strcmp(argv[3], "race") == 0) {
		race_ask = ask;
		race((unsigned)arg_size(argc, argv, 4), (unsigned)arg_size(argc, argv, 5));
		return 0;
	}
	info("holding");
	doors(ask);
	/* what a program does after an out-of-memory: frees, and goes on */
	rt_ok(cudaFree(held), "cudaFree");
	info("freed");
	calls_before = gpuspy_fake_alloc_calls();
	rt_ok(cudaMalloc(&p, ask), "cudaMalloc after the free");
	printf("limit_doors: asked again after freeing: ok\n");
	rt_ok(cudaFree(p), "cudaFree");
	return 0;
}
