// SPDX-License-Identifier: MIT
/*
 * Pool hits of CUDA's stream-ordered allocator, for bench/gpu-hot-path:
 * THREADS threads, each on a stream of its own, make PAIRS
 * cudaMallocAsync/cudaFreeAsync pairs of SIZE bytes from the device's
 * default memory pool, whose release threshold is set to keep what it
 * has: after the warm-up every allocation is served from the pool, no
 * driver allocation, which is where a wrapper's own cost shows most.
 * The threads start together (a barrier); the time is from the first
 * thread's start to the last thread's end, streams synchronized.
 * Prints one line: "threads=T pairs=N wall_s=S pairs_per_s=P ns_per_pair=X"
 * (ns_per_pair: wall time per pair of one thread, wall * T / N).
 * With "queries", each pair also makes the driver calls gpuspy's hooks
 * made around one until 25f61d7, which now makes them only once a capture
 * began, or on several devices (without gpuspy: what those calls cost by
 * themselves):
 * the stream's capture state after the allocation and before the free
 * (cuStreamGetCaptureInfo_v3, src/preload/2-record/driver.c) and the current
 * device (cuCtxGetDevice).
 *   gpu_pool THREADS PAIRS [SIZE [queries]]
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int pairs;
static size_t size = 1 << 20;
static pthread_barrier_t start_line;
static volatile int failed;
static CUresult (*capture_info)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
				const CUgraphNode **, const CUgraphEdgeData **, size_t *);
static CUresult (*ctx_device)(CUdevice *);

struct lane {
	pthread_t thread;
	double start, end;
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int pair(cudaStream_t s)
{
	void *p = NULL;
	CUstreamCaptureStatus st;
	CUgraph g;
	CUdevice d;

	if (cudaMallocAsync(&p, size, s) != cudaSuccess)
		return -1;
	if (capture_info) {
		capture_info((CUstream)s, &st, NULL, &g, NULL, NULL, NULL);
		ctx_device(&d);
		capture_info((CUstream)s, &st, NULL, &g, NULL, NULL, NULL);
	}
	if (cudaFreeAsync(p, s) != cudaSuccess)
		return -1;
	return 0;
}

static void *run(void *arg)
{
	struct lane *l = (struct lane *)arg;
	cudaStream_t s;

	if (cudaSetDevice(0) != cudaSuccess ||
	    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
		failed = 1;
		pthread_barrier_wait(&start_line);
		return NULL;
	}
	/* the pool holds a block for this stream before the timed pairs */
	for (int i = 0; i < 1000; i++)
		if (pair(s) != 0)
			failed = 1;
	cudaStreamSynchronize(s);
	pthread_barrier_wait(&start_line);
	l->start = now();
	for (int i = 0; i < pairs && !failed; i++)
		if (pair(s) != 0)
			failed = 1;
	cudaStreamSynchronize(s);
	l->end = now();
	cudaStreamDestroy(s);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	cudaMemPool_t pool;
	uint64_t keep = UINT64_MAX;
	struct lane *lanes;
	double first, last;

	pairs = argc > 2 ? atoi(argv[2]) : 200000;
	if (argc > 3)
		size = strtoull(argv[3], NULL, 0);
	if (argc > 4) {
		void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

		if (!cuda) {
			cudaFree(0); /* the runtime loads the driver */
			cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		}
		capture_info = cuda ? (decltype(capture_info))dlsym(cuda, "cuStreamGetCaptureInfo_v3") : NULL;
		ctx_device = cuda ? (decltype(ctx_device))dlsym(cuda, "cuCtxGetDevice") : NULL;
		if (!capture_info || !ctx_device) {
			fprintf(stderr, "gpu_pool: the driver's query functions not found\n");
			return 1;
		}
	}
	if (threads < 1 || pairs < 1) {
		fprintf(stderr, "usage: gpu_pool THREADS PAIRS [SIZE]\n");
		return 2;
	}
	if (cudaSetDevice(0) != cudaSuccess || cudaDeviceGetDefaultMemPool(&pool, 0) != cudaSuccess ||
	    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) {
		fprintf(stderr, "gpu_pool: no CUDA device or memory pool\n");
		return 1;
	}
	lanes = (struct lane *)calloc((size_t)threads, sizeof(*lanes));
	pthread_barrier_init(&start_line, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++)
		pthread_create(&lanes[i].thread, NULL, run, &lanes[i]);
	for (int i = 0; i < threads; i++)
		pthread_join(lanes[i].thread, NULL);
	if (failed) {
		fprintf(stderr, "gpu_pool: an allocation failed\n");
		return 1;
	}
	first = lanes[0].start;
	last = lanes[0].end;
	for (int i = 1; i < threads; i++) {
		first = lanes[i].start < first ? lanes[i].start : first;
		last = lanes[i].end > last ? lanes[i].end : last;
	}
	printf("threads=%d pairs=%lld wall_s=%.6f pairs_per_s=%.0f ns_per_pair=%.1f\n", threads,
	       (long long)threads * pairs, last - first, (double)threads * pairs / (last - first),
	       (last - first) * 1e9 / pairs);
	return 0;
}
