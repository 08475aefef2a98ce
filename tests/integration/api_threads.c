/* SPDX-License-Identifier: MIT */
/*
 * The live figures of the API (include/gpuspy.h) read while other threads
 * allocate and free from a few call sites, mark and fork: scopes open,
 * read and close, the sites are ranked with their names (waiting for the
 * naming thread) and the frameworks asked, on four threads at once.
 * Every figure must be consistent (a scope's peak at least its live bytes
 * before and now, nothing negative), and a child forked meanwhile must
 * find every API call answering -1 at once.  Run under
 * LD_PRELOAD=libgpuspy.so (and TSan: suite tsan); exits 0 when all held.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuspy.h"
#include "prog.h"

/* Pairs per allocating thread: bounded, since a sanitizer's runtime may
 * make every allocation a call site of its own; each reader makes ROUNDS
 * rounds at least, and goes on while they allocate. */
#define ALLOCATORS 3
#define PAIRS	   20000
#define READERS	   4
#define ROUNDS	   50

static atomic_int allocating = ALLOCATORS;
static atomic_int bad;

/* Distinct call sites: the switch's cases are distinct return addresses. */
static __attribute__((noinline)) void pair(unsigned i)
{
	void *p = NULL;
	size_t size = 4096 + (size_t)(i % 7) * 65536;

	switch (i % 4) {
	case 0:
		rt_ok(cudaMalloc(&p, size), "cudaMalloc");
		break;
	case 1:
		rt_ok(cudaMalloc(&p, size * 2), "cudaMalloc");
		break;
	case 2:
		rt_ok(cudaMallocManaged(&p, size, cudaMemAttachGlobal), "cudaMallocManaged");
		break;
	default:
		rt_ok(cudaMalloc(&p, size * 3), "cudaMalloc");
		break;
	}
	rt_ok(cudaFree(p), "cudaFree");
}

static void *allocator(void *arg)
{
	unsigned i = (unsigned)(uintptr_t)arg;

	for (unsigned k = 0; k < PAIRS; k++) {
		pair(i++);
		if (i % 64 == 0)
			gpuspy_mark("step");
	}
	atomic_fetch_sub(&allocating, 1);
	return NULL;
}

static void *reader(void *arg)
{
	struct gpuspy_site sites[8];
	struct gpuspy_framework fw[4];
	long long open[3] = { -1, -1, -1 };

	(void)arg;
	for (unsigned r = 0; r < ROUNDS || atomic_load(&allocating) > 0; r++) {
		struct gpuspy_scope_totals t;
		struct gpuspy_totals all;
		unsigned k = r % 3;
		int n;

		if (open[k] > 0) {
			if (gpuspy_scope_read(open[k], &t, sizeof(t)) != 0 ||
			    t.peak_bytes < t.live_bytes || t.peak_bytes < t.before_bytes ||
			    t.live_bytes < 0 || t.before_bytes < 0)
				atomic_fetch_add(&bad, 1);
			n = gpuspy_scope_sites(open[k], r % 2 ? 1 : -1, sites, 8, sizeof(sites[0]),
					       r % 10 == 0 ? 50 : 0);
			for (int i = 0; i < n; i++)
				if (!sites[i].name[0] || sites[i].live_bytes < 0 ||
				    (r % 2 ? sites[i].change_bytes <= 0 :
					     sites[i].change_bytes >= 0))
					atomic_fetch_add(&bad, 1);
			if (n < 0 || gpuspy_scope_close(open[k]) != 0)
				atomic_fetch_add(&bad, 1);
		}
		open[k] = gpuspy_scope_open();
		if (open[k] <= 0 || gpuspy_totals(&all, sizeof(all)) != 0 || all.live_bytes < 0 ||
		    all.peak_bytes < all.live_bytes)
			atomic_fetch_add(&bad, 1);
		n = gpuspy_sites(sites, 8, sizeof(sites[0]), r % 10 == 0 ? 50 : 0);
		if (n < 0 || gpuspy_frameworks(fw, 4, sizeof(fw[0])) < 0)
			atomic_fetch_add(&bad, 1);
	}
	for (unsigned k = 0; k < 3; k++)
		if (open[k] > 0 && gpuspy_scope_close(open[k]) != 0)
			atomic_fetch_add(&bad, 1);
	return NULL;
}

int main(void)
{
	pthread_t a[ALLOCATORS], r[READERS];
	struct gpuspy_totals t;
	int status, failed = 0;
	void *p;
	pid_t pid;

	rt_ok(cudaMalloc(&p, 1 << 20), "cudaMalloc");
	for (unsigned i = 0; i < ALLOCATORS; i++)
		if (pthread_create(&a[i], NULL, allocator, (void *)(uintptr_t)(i * 1000)) != 0)
			return PROG_FAIL;
	for (unsigned i = 0; i < READERS; i++)
		if (pthread_create(&r[i], NULL, reader, NULL) != 0)
			return PROG_FAIL;
	/* a child forked while the readers hold the API's locks */
	pid = fork();
	if (pid < 0)
		return PROG_FAIL;
	if (pid == 0) {
		struct gpuspy_site s;

		_exit(gpuspy_totals(&t, sizeof(t)) == -1 && gpuspy_scope_open() == -1 &&
				      gpuspy_sites(&s, 1, sizeof(s), 1000) == -1 ?
			      0 :
			      1);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "api_threads: the forked child's calls did not all answer -1\n");
		failed = 1;
	}
	for (unsigned i = 0; i < ALLOCATORS; i++)
		pthread_join(a[i], NULL);
	for (unsigned i = 0; i < READERS; i++)
		pthread_join(r[i], NULL);
	if (gpuspy_totals(&t, sizeof(t)) != 0 || t.live_bytes != 1 << 20 || !t.tracking) {
		fprintf(stderr, "api_threads: %lld bytes live at the end, not 1 MiB\n",
			t.live_bytes);
		failed = 1;
	}
	if (atomic_load(&bad)) {
		fprintf(stderr, "api_threads: %d inconsistent answers\n", atomic_load(&bad));
		failed = 1;
	}
	printf("api_threads: %d readers beside %d threads of %d allocations each\n", READERS,
	       ALLOCATORS, PAIRS);
	return failed;
}
